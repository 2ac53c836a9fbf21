import unittest

from api import reorder_report
from stock import Item, reorder_quantity


def record(sku, on_hand, on_order, reorder_point=20, capacity=100):
    return {"sku": sku, "on_hand": on_hand, "on_order": on_order,
            "reorder_point": reorder_point, "capacity": capacity}


class ReorderHiddenTest(unittest.TestCase):
    def test_open_orders_reduce_the_quantity(self):
        item = Item("E-500", on_hand=10, on_order=5, reorder_point=20, capacity=100)
        self.assertEqual(reorder_quantity(item), 85)

    def test_nothing_on_the_shelf(self):
        item = Item("F-600", on_hand=0, on_order=8, reorder_point=10, capacity=40)
        self.assertEqual(reorder_quantity(item), 32)

    def test_report_with_open_orders(self):
        records = [record("E-500", 10, 5), record("G-700", 3, 12, 15, 30), record("A-100", 50, 0)]
        self.assertEqual(reorder_report(records),
                         [{"sku": "E-500", "order": 85}, {"sku": "G-700", "order": 15}])

    def test_shelf_is_exactly_full_after_delivery(self):
        for on_hand, on_order in [(0, 0), (5, 5), (19, 1), (0, 20)]:
            with self.subTest(on_hand=on_hand, on_order=on_order):
                item = Item("H-800", on_hand, on_order, reorder_point=20, capacity=50)
                self.assertEqual(on_hand + on_order + reorder_quantity(item), 50)


if __name__ == "__main__":
    unittest.main()
