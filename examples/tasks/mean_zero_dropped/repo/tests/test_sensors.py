import unittest

from sensors import mean_reading, parse_line, summary


class SensorsTest(unittest.TestCase):
    def test_parse_line(self):
        self.assertEqual(parse_line("t1,20.5\n"), ("t1", 20.5))
        self.assertEqual(parse_line("t2,"), ("t2", None))

    def test_parse_line_needs_sensor_id(self):
        with self.assertRaises(ValueError):
            parse_line(",3.0")

    def test_mean_of_readings(self):
        self.assertEqual(mean_reading([18.0, 20.0, 22.0]), 20.0)

    def test_missing_readings_are_ignored(self):
        self.assertEqual(mean_reading([None, 10.0, None, 14.0]), 12.0)

    def test_no_readings(self):
        with self.assertRaises(ValueError):
            mean_reading([None, None])

    def test_summary(self):
        lines = ["t1,20.0", "t2,5.5", "t1,", "t1,21.0", "t2,6.5"]
        self.assertEqual(summary(lines), {"t1": 20.5, "t2": 6.0})


if __name__ == "__main__":
    unittest.main()
