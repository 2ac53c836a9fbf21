"""Reservations of a shared room by whole days."""

from intervals import length, overlaps
from parse import format_range, parse_range


class BookingConflict(Exception):
    """Raised when a requested range clashes with an existing booking."""


class Calendar:
    def __init__(self):
        self.bookings = []

    def add(self, text, who):
        """Book the days in "START..END" (inclusive) for `who`; returns the day count."""
        days = parse_range(text)
        for other, holder in self.bookings:
            if overlaps(days, other):
                raise BookingConflict(f"{text} clashes with {format_range(other)} ({holder})")
        self.bookings.append((days, who))
        return length(days)

    def booked_days(self):
        """Total number of booked days."""
        return sum(length(days) for days, _ in self.bookings)
