import unittest

from pricing import describe, discount_rate, order_total

REGULAR = {"name": "Ada"}
VIP = {"name": "Grace", "vip": True}


class PricingTest(unittest.TestCase):
    def test_regular_small_order(self):
        self.assertEqual(order_total(REGULAR, 10.0, 3), 30.0)

    def test_regular_bulk_order(self):
        self.assertEqual(discount_rate(REGULAR, 12), 0.05)
        self.assertEqual(order_total(REGULAR, 10.0, 12), 114.0)

    def test_vip_small_order(self):
        self.assertEqual(discount_rate(VIP, 2), 0.15)
        self.assertEqual(order_total(VIP, 20.0, 2), 34.0)

    def test_invalid_quantity(self):
        with self.assertRaises(ValueError):
            order_total(REGULAR, 10.0, 0)

    def test_describe(self):
        self.assertEqual(describe(VIP, 20.0, 2), "VIP order: 2 x 20.00 = 34.00")


if __name__ == "__main__":
    unittest.main()
