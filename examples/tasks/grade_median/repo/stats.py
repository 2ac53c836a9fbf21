"""Descriptive statistics for lists of scores."""


def mean(scores):
    """Arithmetic mean."""
    if not scores:
        raise ValueError("no scores")
    return sum(scores) / len(scores)


def median(scores):
    """Middle value; for an even count, the mean of the two middle values."""
    if not scores:
        raise ValueError("no scores")
    ranked = sorted(scores)
    mid = len(ranked) // 2
    if len(ranked) % 2:
        return ranked[mid]
    return (ranked[mid] + ranked[mid + 1]) / 2


def spread(scores):
    """Highest minus lowest score."""
    if not scores:
        raise ValueError("no scores")
    return max(scores) - min(scores)
