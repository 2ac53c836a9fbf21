// Hidden tests of cart.js.
const { subtotal, discountFor, shippingFor, cartTotal } = require('../cart.js')

console.assert(discountFor(10000) === 1000)
console.assert(discountFor(5000) === 250 && discountFor(20000) === 3000)
console.assert(discountFor(9999) === 500 && discountFor(4999) === 0)
console.assert(discountFor(10001) === 1000 && discountFor(25000) === 3750)
console.assert(cartTotal([{ price: 2500, qty: 4 }]) === 9000)
console.assert(cartTotal([{ price: 5000, qty: 1 }, { price: 4999, qty: 1 }]) === 9499)
console.assert(cartTotal([{ price: 1000, qty: 5 }]) === 4750 + 499)
console.assert(shippingFor(4999) === 499 && shippingFor(5000) === 0)
console.assert(cartTotal([]) === 0 && subtotal([]) === 0)
