import unittest

from paging import page_count, page_label, page_slice


class PagingHiddenTest(unittest.TestCase):
    def test_exact_multiple(self):
        self.assertEqual(page_count(20, 10), 2)
        self.assertEqual(page_count(9, 3), 3)
        self.assertEqual(page_count(1, 1), 1)

    def test_no_items(self):
        self.assertEqual(page_count(0, 10), 0)
        self.assertEqual(page_label(1, 0, 10), "No results")

    def test_last_page_is_never_empty(self):
        items = list(range(30))
        for per_page in range(1, 12):
            with self.subTest(per_page=per_page):
                last = page_count(len(items), per_page)
                self.assertTrue(page_slice(items, last, per_page))

    def test_label_exact_multiple(self):
        self.assertEqual(page_label(2, 20, 10), "Page 2 of 2")


if __name__ == "__main__":
    unittest.main()
