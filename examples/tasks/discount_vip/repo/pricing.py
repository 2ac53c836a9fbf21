"""Order pricing for the web shop."""

VIP_DISCOUNT = 0.15
BULK_DISCOUNT = 0.05
BULK_MIN_QUANTITY = 10


def discount_rate(customer, quantity):
    """Fraction taken off the list price; the VIP and bulk discounts add up."""
    rate = 0.0
    if customer.get("vip", False):
        rate = VIP_DISCOUNT
    if quantity >= BULK_MIN_QUANTITY:
        rate = BULK_DISCOUNT
    return rate


def order_total(customer, unit_price, quantity):
    """Price of `quantity` units at `unit_price`, discounted, rounded to cents."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    if unit_price < 0:
        raise ValueError("unit_price must not be negative")
    gross = unit_price * quantity
    return round(gross * (1 - discount_rate(customer, quantity)), 2)


def describe(customer, unit_price, quantity):
    """One-line order summary for the confirmation e-mail."""
    total = order_total(customer, unit_price, quantity)
    label = "VIP order" if customer.get("vip", False) else "Order"
    return f"{label}: {quantity} x {unit_price:.2f} = {total:.2f}"
