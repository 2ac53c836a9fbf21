"""Plain-text invoices."""

from pricing import invoice_total, line_amount
from validate import check_coupon, check_line


def format_cents(cents):
    """Format integer cents as a decimal amount: 1234 -> "12.34"."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def render(lines, coupon=0):
    """Validate the order and return the invoice text."""
    lines = [check_line(line) for line in lines]
    coupon = check_coupon(coupon)
    rows = [f"{q} x {format_cents(u)} = {format_cents(line_amount((q, u)))}" for q, u in lines]
    if coupon:
        rows.append(f"coupon -{format_cents(coupon)}")
    rows.append(f"TOTAL {format_cents(invoice_total(lines, coupon))}")
    return "\n".join(rows)
