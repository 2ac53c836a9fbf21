"""Summaries of temperature readings exported by the field sensors."""


def parse_line(line):
    """Parse "sensor_id,reading" into (sensor_id, float or None).

    An empty reading field means the sensor did not report and gives None.
    """
    sensor_id, _, field = line.strip().partition(",")
    if not sensor_id:
        raise ValueError(f"missing sensor id in {line!r}")
    field = field.strip()
    return sensor_id, (float(field) if field else None)


def mean_reading(readings):
    """Average of the readings, ignoring missing ones (None)."""
    kept = list(filter(None, readings))
    if not kept:
        raise ValueError("no readings")
    return sum(kept) / len(kept)


def summary(lines):
    """Map each sensor id to the mean of its readings, rounded to 0.1."""
    by_sensor = {}
    for line in lines:
        sensor_id, reading = parse_line(line)
        by_sensor.setdefault(sensor_id, []).append(reading)
    return {sid: round(mean_reading(rs), 1) for sid, rs in sorted(by_sensor.items())}
