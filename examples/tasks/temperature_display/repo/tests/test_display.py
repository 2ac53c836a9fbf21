import unittest

from display import parse_reading, show


class DisplayTest(unittest.TestCase):
    def test_parse_reading(self):
        self.assertEqual(parse_reading("98.6 F"), (98.6, "F"))
        self.assertEqual(parse_reading(" 20 c "), (20.0, "C"))

    def test_parse_errors(self):
        for bad in ("20", "20 X", "warm C"):
            with self.assertRaises(ValueError):
                parse_reading(bad)

    def test_show(self):
        self.assertEqual(show("20 C", "F"), "68.0 °F")
        self.assertEqual(show("300.15 K", "c"), "27.0 °C")


if __name__ == "__main__":
    unittest.main()
