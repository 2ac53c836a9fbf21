"""Closed intervals of whole days: (start, end) pairs, start <= end, both included."""


def length(r1):
    """Number of days in the interval."""
    return r1[1] - r1[0] + 1


def contains(r1, day):
    """True when `day` lies in the interval."""
    return r1[0] <= day <= r1[1]


def overlaps(r1, r2):
    """True when the two intervals share at least one day."""
    return r1[0] < r2[1] and r2[0] < r1[1]
