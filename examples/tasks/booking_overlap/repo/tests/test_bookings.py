import unittest

from bookings import BookingConflict, Calendar


class CalendarTest(unittest.TestCase):
    def test_separate_bookings(self):
        cal = Calendar()
        self.assertEqual(cal.add("2024-03-01..2024-03-04", "ana"), 4)
        self.assertEqual(cal.add("2024-03-10..2024-03-12", "bo"), 3)
        self.assertEqual(cal.booked_days(), 7)

    def test_clash_is_rejected(self):
        cal = Calendar()
        cal.add("2024-03-01..2024-03-05", "ana")
        with self.assertRaises(BookingConflict):
            cal.add("2024-03-03..2024-03-08", "bo")
        self.assertEqual(cal.booked_days(), 5)


if __name__ == "__main__":
    unittest.main()
