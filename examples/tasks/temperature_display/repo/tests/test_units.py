import unittest

from units import convert, from_celsius, to_celsius


class UnitsTest(unittest.TestCase):
    def test_celsius_to_fahrenheit(self):
        self.assertEqual(from_celsius(100, "F"), 212)
        self.assertEqual(convert(-40, "C", "F"), -40)

    def test_kelvin(self):
        self.assertAlmostEqual(convert(300.15, "K", "C"), 27.0)
        self.assertAlmostEqual(convert(0, "C", "K"), 273.15)

    def test_identity(self):
        self.assertEqual(to_celsius(21.5, "C"), 21.5)

    def test_unknown_unit(self):
        with self.assertRaises(ValueError):
            convert(1, "C", "R")


if __name__ == "__main__":
    unittest.main()
