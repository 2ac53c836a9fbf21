import unittest

from report import report
from stats import median


class MedianHiddenTest(unittest.TestCase):
    def test_even_count(self):
        self.assertEqual(median([70, 80, 90, 100]), 85)
        self.assertEqual(median([100, 70, 90, 80]), 85)
        self.assertEqual(median([80, 85, 60, 99, 90, 70]), 82.5)

    def test_two_scores(self):
        self.assertEqual(median([60, 75]), 67.5)
        self.assertEqual(median([50, 50]), 50)

    def test_odd_count_unchanged(self):
        self.assertEqual(median([3, 1, 2]), 2)

    def test_report_even_course(self):
        courses = {"Algebra": [70, 80, 90, 100], "Art": [60, 75]}
        self.assertEqual(report(courses),
                         "Algebra: n=4 mean=85.0 median=85.0 spread=30\n"
                         "Art: n=2 mean=67.5 median=67.5 spread=15")


if __name__ == "__main__":
    unittest.main()
