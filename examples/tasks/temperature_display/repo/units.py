"""Temperature conversion between Celsius (C), Fahrenheit (F) and Kelvin (K)."""

UNITS = ("C", "F", "K")


def to_celsius(temp, unit):
    """Convert a temperature given in `unit` to Celsius."""
    if unit == "C":
        return temp
    if unit == "F":
        return temp - 32 * 5 / 9
    if unit == "K":
        return temp - 273.15
    raise ValueError(f"unknown unit {unit!r}")


def from_celsius(temp, unit):
    """Convert a Celsius temperature to `unit`."""
    if unit == "C":
        return temp
    if unit == "F":
        return temp * 9 / 5 + 32
    if unit == "K":
        return temp + 273.15
    raise ValueError(f"unknown unit {unit!r}")


def convert(temp, src, dst):
    """Convert a temperature from unit `src` to unit `dst`."""
    return from_celsius(to_celsius(temp, src), dst)
