import unittest

from text import count_words, top_words, vocabulary_size


class TextTest(unittest.TestCase):
    def test_count_words(self):
        self.assertEqual(count_words("the cat and the hat"),
                         {"the": 2, "cat": 1, "and": 1, "hat": 1})

    def test_capitalised_words_are_lower_cased(self):
        self.assertEqual(count_words("Alice met Bob"), {"alice": 1, "met": 1, "bob": 1})

    def test_apostrophes_and_punctuation(self):
        self.assertEqual(count_words("it's late, it's dark!"), {"it's": 2, "late": 1, "dark": 1})

    def test_top_words(self):
        self.assertEqual(top_words("b a b c a b", 2), [("b", 3), ("a", 2)])
        self.assertEqual(top_words("", 3), [])

    def test_vocabulary_size(self):
        self.assertEqual(vocabulary_size("one two two three three three"), 3)


if __name__ == "__main__":
    unittest.main()
