import unittest

from stock import Item, needs_reorder, reorder_quantity


class StockTest(unittest.TestCase):
    def test_no_reorder_above_reorder_point(self):
        item = Item("A-100", on_hand=50, on_order=0, reorder_point=20, capacity=100)
        self.assertFalse(needs_reorder(item))
        self.assertEqual(reorder_quantity(item), 0)

    def test_reorder_fills_the_shelf(self):
        item = Item("B-200", on_hand=20, on_order=0, reorder_point=20, capacity=100)
        self.assertTrue(needs_reorder(item))
        self.assertEqual(reorder_quantity(item), 80)

    def test_open_orders_postpone_reorder(self):
        item = Item("C-300", on_hand=10, on_order=30, reorder_point=20, capacity=60)
        self.assertFalse(needs_reorder(item))
        self.assertEqual(reorder_quantity(item), 0)


if __name__ == "__main__":
    unittest.main()
