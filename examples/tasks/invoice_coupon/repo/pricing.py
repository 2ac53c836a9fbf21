"""Invoice arithmetic. Amounts are integer cents."""


def line_amount(line):
    """Amount of one (quantity, unit_cents) line."""
    quantity, unit_cents = line
    return quantity * unit_cents


def invoice_total(lines, coupon=0):
    """Sum of the line amounts minus the coupon, taken once, never below zero."""
    total = 0
    for line in lines:
        total += max(line_amount(line) - coupon, 0)
    return total
