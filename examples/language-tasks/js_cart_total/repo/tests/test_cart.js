// Public tests of cart.js. Run: node tests/test_cart.js
const { lineTotal, subtotal, discountFor, cartTotal } = require('../cart.js')

function throws(f) {
  try {
    f()
  } catch (e) {
    return e instanceof RangeError
  }
  return false
}

console.assert(lineTotal({ price: 250, qty: 3 }) === 750)
console.assert(subtotal([{ price: 250, qty: 3 }, { price: 1999, qty: 1 }]) === 2749)
console.assert(discountFor(12000) === 1200 && discountFor(3000) === 0)
console.assert(cartTotal([{ price: 1500, qty: 2 }]) === 3499)
console.assert(throws(() => lineTotal({ price: 100, qty: -1 })))
