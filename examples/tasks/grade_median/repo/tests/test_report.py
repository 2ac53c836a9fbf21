import unittest

from report import letter, report


class ReportTest(unittest.TestCase):
    def test_letters(self):
        self.assertEqual([letter(s) for s in (95, 90, 89, 71, 60, 12)],
                         ["A", "A", "B", "C", "D", "F"])

    def test_report(self):
        courses = {"History": [60, 75, 90], "Algebra": [88, 92, 79, 65, 100]}
        self.assertEqual(report(courses),
                         "Algebra: n=5 mean=84.8 median=88.0 spread=35\n"
                         "History: n=3 mean=75.0 median=75.0 spread=30")


if __name__ == "__main__":
    unittest.main()
