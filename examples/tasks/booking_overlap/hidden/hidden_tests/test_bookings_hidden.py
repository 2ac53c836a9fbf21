import unittest

from bookings import BookingConflict, Calendar
from intervals import overlaps


class OverlapHiddenTest(unittest.TestCase):
    def test_shared_end_day(self):
        self.assertTrue(overlaps((1, 5), (5, 9)))
        self.assertTrue(overlaps((5, 9), (1, 5)))

    def test_single_days(self):
        self.assertTrue(overlaps((3, 3), (3, 3)))
        self.assertTrue(overlaps((3, 3), (1, 3)))
        self.assertFalse(overlaps((3, 3), (4, 4)))

    def test_adjacent_ranges_do_not_overlap(self):
        self.assertFalse(overlaps((1, 4), (5, 9)))
        self.assertFalse(overlaps((5, 9), (1, 4)))

    def test_booking_starting_on_last_day_clashes(self):
        cal = Calendar()
        cal.add("2024-03-01..2024-03-05", "ana")
        with self.assertRaises(BookingConflict):
            cal.add("2024-03-05..2024-03-07", "bo")
        self.assertEqual(cal.add("2024-03-06..2024-03-07", "bo"), 2)

    def test_same_single_day_clashes(self):
        cal = Calendar()
        cal.add("2024-04-02..2024-04-02", "ana")
        with self.assertRaises(BookingConflict):
            cal.add("2024-04-02..2024-04-02", "bo")


if __name__ == "__main__":
    unittest.main()
