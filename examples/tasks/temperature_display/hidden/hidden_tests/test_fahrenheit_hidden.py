import unittest

from display import show
from units import convert, to_celsius


class FahrenheitHiddenTest(unittest.TestCase):
    def test_fahrenheit_to_celsius(self):
        self.assertAlmostEqual(to_celsius(32, "F"), 0)
        self.assertAlmostEqual(to_celsius(212, "F"), 100)
        self.assertAlmostEqual(to_celsius(0, "F"), -160 / 9)
        self.assertAlmostEqual(to_celsius(-40, "F"), -40)

    def test_fahrenheit_round_trip(self):
        for f in (-40, 0, 50, 98.6, 451):
            with self.subTest(f=f):
                self.assertAlmostEqual(convert(f, "F", "F"), f)

    def test_fahrenheit_to_kelvin(self):
        self.assertAlmostEqual(convert(212, "F", "K"), 373.15)

    def test_show_fahrenheit(self):
        self.assertEqual(show("98.6 F", "C"), "37.0 °C")
        self.assertEqual(show("100 F", "C"), "37.8 °C")


if __name__ == "__main__":
    unittest.main()
