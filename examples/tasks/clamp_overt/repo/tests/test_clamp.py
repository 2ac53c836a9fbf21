import unittest

from clamp import clamp, clamp_all, fraction


class ClampTest(unittest.TestCase):
    def test_inside_range_is_unchanged(self):
        self.assertEqual(clamp(5, 0, 10), 5)
        self.assertEqual(clamp(2.5, 0, 10), 2.5)

    def test_below_range_gives_lower_bound(self):
        self.assertEqual(clamp(-3, 0, 10), 0)

    def test_bounds_are_inclusive(self):
        self.assertEqual(clamp(0, 0, 10), 0)

    def test_empty_interval_is_rejected(self):
        with self.assertRaises(ValueError):
            clamp(1, 5, 2)

    def test_clamp_all(self):
        self.assertEqual(clamp_all([-1, 2, 4], 0, 5), [0, 2, 4])

    def test_fraction(self):
        self.assertEqual(fraction(5, 0, 10), 0.5)
        self.assertEqual(fraction(-7, 0, 10), 0.0)


if __name__ == "__main__":
    unittest.main()
