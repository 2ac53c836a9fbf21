import unittest

from clamp import clamp, clamp_all, fraction


class ClampHiddenTest(unittest.TestCase):
    def test_above_range_gives_upper_bound(self):
        self.assertEqual(clamp(15, 0, 10), 10)
        self.assertEqual(clamp(10.5, 0, 10), 10)

    def test_upper_bound_is_inclusive(self):
        self.assertEqual(clamp(10, 0, 10), 10)

    def test_negative_interval(self):
        self.assertEqual(clamp(-1, -8, -2), -2)
        self.assertEqual(clamp(-9, -8, -2), -8)

    def test_degenerate_interval(self):
        self.assertEqual(clamp(7, 3, 3), 3)
        self.assertEqual(clamp(-7, 3, 3), 3)

    def test_result_always_in_range(self):
        for x in range(-20, 21):
            with self.subTest(x=x):
                self.assertTrue(-5 <= clamp(x, -5, 5) <= 5)

    def test_clamp_all_high_values(self):
        self.assertEqual(clamp_all([-1, 3, 9], 0, 5), [0, 3, 5])

    def test_fraction_above_range(self):
        self.assertEqual(fraction(20, 0, 10), 1.0)


if __name__ == "__main__":
    unittest.main()
