"""Stock levels and reorder rules."""

from dataclasses import dataclass


@dataclass
class Item:
    sku: str
    on_hand: int  # units on the shelf
    on_order: int  # units ordered from the supplier, not yet delivered
    reorder_point: int  # a reorder is due when stock falls to this level
    capacity: int  # most units the shelf holds


def available(item):
    """Units on the shelf plus units already on their way."""
    return item.on_hand + item.on_order


def needs_reorder(item):
    """True when stock, counting open orders, is at or below the reorder point."""
    return available(item) <= item.reorder_point


def reorder_quantity(item):
    """Units to order so the shelf is full once all orders arrive (0 if none is due)."""
    if not needs_reorder(item):
        return 0
    return item.capacity - item.on_hand
