"""Parsing of day ranges such as "2024-03-01..2024-03-05" (both days included)."""

from datetime import date


def parse_day(text):
    """ISO date "YYYY-MM-DD" -> day number (proleptic Gregorian ordinal)."""
    try:
        return date.fromisoformat(text.strip()).toordinal()
    except ValueError:
        raise ValueError(f"not a date: {text!r}") from None


def parse_range(text):
    """"START..END" -> (first_day, last_day), both days included."""
    first, sep, last = text.partition("..")
    if not sep:
        raise ValueError(f"expected START..END, got {text!r}")
    start, end = parse_day(first), parse_day(last)
    if end < start:
        raise ValueError(f"range ends before it starts: {text!r}")
    return start, end


def format_range(days):
    """Inverse of parse_range."""
    start, end = days
    return f"{date.fromordinal(start)}..{date.fromordinal(end)}"
