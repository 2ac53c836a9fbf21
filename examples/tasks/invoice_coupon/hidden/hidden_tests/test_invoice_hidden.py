import unittest

from invoice import render
from pricing import invoice_total


class InvoiceHiddenTest(unittest.TestCase):
    def test_coupon_taken_once_from_several_lines(self):
        self.assertEqual(invoice_total([(2, 300), (1, 400)], 500), 500)
        self.assertEqual(invoice_total([(1, 300), (1, 400)], 500), 200)

    def test_coupon_larger_than_a_line(self):
        self.assertEqual(invoice_total([(1, 100), (1, 100), (1, 1000)], 250), 950)

    def test_coupon_larger_than_invoice(self):
        self.assertEqual(invoice_total([(1, 300), (2, 100)], 900), 0)

    def test_no_coupon_unchanged(self):
        self.assertEqual(invoice_total([(1, 300), (1, 400)]), 700)

    def test_render_multi_line_coupon(self):
        text = render([(2, 300), (1, 400)], coupon=500)
        self.assertEqual(text.splitlines()[-1], "TOTAL 5.00")


if __name__ == "__main__":
    unittest.main()
