import unittest

from pricing import describe, discount_rate, order_total

REGULAR = {"name": "Ada"}
VIP = {"name": "Grace", "vip": True}


class PricingHiddenTest(unittest.TestCase):
    def test_vip_bulk_discounts_add_up(self):
        self.assertAlmostEqual(discount_rate(VIP, 12), 0.20)
        self.assertEqual(order_total(VIP, 10.0, 12), 96.0)

    def test_vip_at_bulk_threshold(self):
        self.assertEqual(order_total(VIP, 5.0, 10), 40.0)

    def test_vip_never_pays_more_for_more_units(self):
        self.assertLess(order_total(VIP, 10.0, 10), order_total(VIP, 10.0, 11))
        self.assertLessEqual(order_total(VIP, 10.0, 10) / 10, order_total(VIP, 10.0, 9) / 9)

    def test_non_vip_flag_false(self):
        self.assertEqual(order_total({"vip": False}, 10.0, 12), 114.0)

    def test_describe_vip_bulk(self):
        self.assertEqual(describe(VIP, 10.0, 12), "VIP order: 12 x 10.00 = 96.00")


if __name__ == "__main__":
    unittest.main()
