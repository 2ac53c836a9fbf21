// Shopping-cart arithmetic for the checkout page. Every amount is a whole number of cents.

// Discount tiers, highest first: `percent` off orders of `from` cents or more.
const TIERS = [
  { from: 20000, percent: 15 },
  { from: 10000, percent: 10 },
  { from: 5000, percent: 5 },
]
const FREE_SHIPPING_FROM = 5000
const SHIPPING_FEE = 499

// The price of one cart line: unit price times quantity.
function lineTotal(item) {
  if (!Number.isInteger(item.qty) || item.qty < 0) {
    throw new RangeError(`bad quantity: ${item.qty}`)
  }
  return item.price * item.qty
}

// The sum of every line of the cart.
function subtotal(items) {
  return items.reduce((sum, item) => sum + lineTotal(item), 0)
}

// The discount of the best tier the order reaches, rounded to the cent.
function discountFor(amount) {
  for (const tier of TIERS) {
    if (amount > tier.from) {
      return Math.round((amount * tier.percent) / 100)
    }
  }
  return 0
}

// Shipping is free from FREE_SHIPPING_FROM cents (after the discount), and for an empty cart.
function shippingFor(amount) {
  if (amount === 0 || amount >= FREE_SHIPPING_FROM) {
    return 0
  }
  return SHIPPING_FEE
}

// What the customer pays: the subtotal less the discount, plus shipping.
function cartTotal(items) {
  const sub = subtotal(items)
  const discounted = sub - discountFor(sub)
  return discounted + shippingFor(discounted)
}

module.exports = { lineTotal, subtotal, discountFor, shippingFor, cartTotal }
