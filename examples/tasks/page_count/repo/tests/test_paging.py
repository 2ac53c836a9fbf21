import unittest

from paging import page_count, page_label, page_slice


class PagingTest(unittest.TestCase):
    def test_page_count(self):
        self.assertEqual(page_count(25, 10), 3)
        self.assertEqual(page_count(1, 10), 1)
        self.assertEqual(page_count(7, 3), 3)

    def test_page_count_rejects_bad_input(self):
        with self.assertRaises(ValueError):
            page_count(5, 0)
        with self.assertRaises(ValueError):
            page_count(-1, 10)

    def test_page_slice(self):
        items = list(range(25))
        self.assertEqual(page_slice(items, 1, 10), list(range(10)))
        self.assertEqual(page_slice(items, 3, 10), [20, 21, 22, 23, 24])

    def test_page_label(self):
        self.assertEqual(page_label(2, 25, 10), "Page 2 of 3")


if __name__ == "__main__":
    unittest.main()
