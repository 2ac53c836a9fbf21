import unittest

from pricing import invoice_total, line_amount


class PricingTest(unittest.TestCase):
    def test_line_amount(self):
        self.assertEqual(line_amount((3, 250)), 750)

    def test_total_without_coupon(self):
        self.assertEqual(invoice_total([(2, 300), (1, 450)]), 1050)
        self.assertEqual(invoice_total([]), 0)

    def test_coupon_on_single_line(self):
        self.assertEqual(invoice_total([(2, 300)], 500), 100)

    def test_total_never_negative(self):
        self.assertEqual(invoice_total([(1, 200)], 500), 0)


if __name__ == "__main__":
    unittest.main()
