"""Helpers for keeping numbers inside a range."""


def clamp(x, lo, hi):
    """Return x limited to the closed interval [lo, hi]."""
    if lo > hi:
        raise ValueError(f"empty interval: lo={lo} > hi={hi}")
    if x < lo:
        return lo
    return x


def clamp_all(values, lo, hi):
    """Clamp every value of an iterable; returns a new list."""
    return [clamp(v, lo, hi) for v in values]


def fraction(x, lo, hi):
    """Position of x within [lo, hi] as a number in [0.0, 1.0]."""
    if lo == hi:
        return 0.0
    return (clamp(x, lo, hi) - lo) / (hi - lo)
