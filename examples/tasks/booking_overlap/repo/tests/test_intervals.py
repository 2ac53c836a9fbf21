import unittest

from intervals import contains, length, overlaps
from parse import format_range, parse_range


class IntervalsTest(unittest.TestCase):
    def test_length_counts_both_ends(self):
        self.assertEqual(length((10, 10)), 1)
        self.assertEqual(length((1, 5)), 5)

    def test_contains(self):
        self.assertTrue(contains((1, 5), 5))
        self.assertFalse(contains((1, 5), 6))

    def test_overlaps(self):
        self.assertTrue(overlaps((1, 5), (3, 8)))
        self.assertTrue(overlaps((1, 10), (3, 4)))
        self.assertFalse(overlaps((1, 5), (7, 9)))

    def test_parse_round_trip(self):
        days = parse_range("2024-02-28..2024-03-01")
        self.assertEqual(length(days), 3)
        self.assertEqual(format_range(days), "2024-02-28..2024-03-01")

    def test_parse_errors(self):
        for bad in ("2024-03-01", "2024-03-05..2024-03-01", "yesterday..today"):
            with self.assertRaises(ValueError):
                parse_range(bad)


if __name__ == "__main__":
    unittest.main()
