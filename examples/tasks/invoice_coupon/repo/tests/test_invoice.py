import unittest

from invoice import format_cents, render


class InvoiceTest(unittest.TestCase):
    def test_format_cents(self):
        self.assertEqual(format_cents(1234), "12.34")
        self.assertEqual(format_cents(5), "0.05")
        self.assertEqual(format_cents(-250), "-2.50")

    def test_render(self):
        text = render([(2, 300), (1, 450)])
        self.assertEqual(text, "2 x 3.00 = 6.00\n1 x 4.50 = 4.50\nTOTAL 10.50")

    def test_render_with_coupon(self):
        self.assertEqual(render([(2, 300)], coupon=500),
                         "2 x 3.00 = 6.00\ncoupon -5.00\nTOTAL 1.00")

    def test_invalid_input(self):
        with self.assertRaises(ValueError):
            render([(0, 300)])
        with self.assertRaises(ValueError):
            render([(1, 300)], coupon=-1)


if __name__ == "__main__":
    unittest.main()
