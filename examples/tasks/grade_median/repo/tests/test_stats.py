import unittest

from stats import mean, median, spread


class StatsTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([70, 80, 90]), 80)

    def test_median_odd_count(self):
        self.assertEqual(median([70, 85, 90]), 85)
        self.assertEqual(median([90, 70, 85, 60, 100]), 85)
        self.assertEqual(median([42]), 42)

    def test_spread(self):
        self.assertEqual(spread([55, 91, 78]), 36)

    def test_empty_input(self):
        for fn in (mean, median, spread):
            with self.assertRaises(ValueError):
                fn([])


if __name__ == "__main__":
    unittest.main()
