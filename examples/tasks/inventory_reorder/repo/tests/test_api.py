import unittest

from api import check_order, parse_item, reorder_report


def record(sku, on_hand, on_order, reorder_point=20, capacity=100):
    return {"sku": sku, "on_hand": on_hand, "on_order": on_order,
            "reorder_point": reorder_point, "capacity": capacity}


class ApiTest(unittest.TestCase):
    def test_report(self):
        records = [record("A-100", 50, 0), record("B-200", 20, 0), record("D-400", 0, 0, 5, 12)]
        self.assertEqual(reorder_report(records),
                         [{"sku": "B-200", "order": 80}, {"sku": "D-400", "order": 12}])

    def test_parse_item_rejects_bad_records(self):
        with self.assertRaises(ValueError):
            parse_item({"sku": "A-100"})
        with self.assertRaises(ValueError):
            parse_item(record("A-100", -1, 0))
        with self.assertRaises(ValueError):
            parse_item(record("A-100", 1, 0, reorder_point=100))

    def test_check_order_refuses_overfill(self):
        item = parse_item(record("B-200", 20, 0))
        self.assertEqual(check_order(item, 80), 80)
        with self.assertRaises(ValueError):
            check_order(item, 81)


if __name__ == "__main__":
    unittest.main()
