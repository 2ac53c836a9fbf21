"""Input checks for invoice lines and coupons. Amounts are integer cents."""


def check_line(line):
    """Validate one (quantity, unit_cents) pair and return it."""
    quantity, unit_cents = line
    if not isinstance(quantity, int) or quantity <= 0:
        raise ValueError(f"quantity must be a positive integer, got {quantity!r}")
    if not isinstance(unit_cents, int) or unit_cents < 0:
        raise ValueError(f"unit price must be non-negative cents, got {unit_cents!r}")
    return line


def check_coupon(coupon):
    """Validate a coupon value in cents (0 means no coupon) and return it."""
    if not isinstance(coupon, int) or coupon < 0:
        raise ValueError(f"coupon must be non-negative cents, got {coupon!r}")
    return coupon
