"""Per-course grade reports."""

from stats import mean, median, spread


def letter(score):
    """Letter grade for a score out of 100."""
    for bound, grade in ((90, "A"), (80, "B"), (70, "C"), (60, "D")):
        if score >= bound:
            return grade
    return "F"


def summary_line(course, scores):
    """Course name, count, mean, median (one decimal) and spread."""
    return (f"{course}: n={len(scores)} mean={mean(scores):.1f} "
            f"median={median(scores):.1f} spread={spread(scores)}")


def report(courses):
    """One summary line per course of a {course: scores} mapping, sorted by name."""
    return "\n".join(summary_line(name, courses[name]) for name in sorted(courses))
