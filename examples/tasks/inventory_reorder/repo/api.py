"""Request handling for the reorder service; records are decoded JSON objects."""

from stock import Item, available, reorder_quantity

FIELDS = ("sku", "on_hand", "on_order", "reorder_point", "capacity")


def parse_item(record):
    """Build an Item from a record, checking every field."""
    missing = [name for name in FIELDS if name not in record]
    if missing:
        raise ValueError(f"missing fields: {', '.join(missing)}")
    counts = {}
    for name in FIELDS[1:]:
        value = record[name]
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        counts[name] = value
    if counts["reorder_point"] >= counts["capacity"]:
        raise ValueError("reorder_point must be below capacity")
    return Item(sku=str(record["sku"]), **counts)


def check_order(item, quantity):
    """Refuse an order that would overfill the shelf; returns the quantity."""
    if quantity < 0 or available(item) + quantity > item.capacity:
        raise ValueError(f"order of {quantity} for {item.sku} exceeds capacity {item.capacity}")
    return quantity


def reorder_report(records):
    """[{"sku": ..., "order": units}] for every item that needs reordering."""
    report = []
    for record in records:
        item = parse_item(record)
        quantity = reorder_quantity(item)
        if quantity:
            report.append({"sku": item.sku, "order": check_order(item, quantity)})
    return report
