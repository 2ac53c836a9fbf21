import unittest

from sensors import mean_reading, summary


class SensorsHiddenTest(unittest.TestCase):
    def test_zero_is_a_reading(self):
        self.assertEqual(mean_reading([0.0, 4.0]), 2.0)
        self.assertEqual(mean_reading([0, 3, None, 6]), 3.0)

    def test_only_zero_readings(self):
        self.assertEqual(mean_reading([0.0, 0.0, None]), 0.0)

    def test_below_freezing(self):
        self.assertEqual(mean_reading([-4.0, 0.0, 1.0]), -1.0)

    def test_missing_readings_still_ignored(self):
        self.assertEqual(mean_reading([None, -2.0, None]), -2.0)
        with self.assertRaises(ValueError):
            mean_reading([])

    def test_summary_with_zero(self):
        lines = ["t1,0.0", "t1,1.0", "t2,-0.6", "t2,", "t2,0"]
        self.assertEqual(summary(lines), {"t1": 0.5, "t2": -0.3})


if __name__ == "__main__":
    unittest.main()
