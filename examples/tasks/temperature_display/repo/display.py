"""Reading and printing temperatures written like "98.6 F"."""

from units import UNITS, convert

SYMBOLS = {"C": "°C", "F": "°F", "K": "K"}


def parse_reading(text):
    """"98.6 F" -> (98.6, "F"); the unit letter is case-insensitive."""
    parts = text.split()
    if len(parts) != 2 or parts[1].upper() not in UNITS:
        raise ValueError(f"expected '<number> <C|F|K>', got {text!r}")
    return float(parts[0]), parts[1].upper()


def show(text, unit):
    """Convert a reading to `unit`, formatted with one decimal and the unit symbol."""
    value, src = parse_reading(text)
    dst = unit.upper()
    return f"{convert(value, src, dst):.1f} {SYMBOLS[dst]}"
