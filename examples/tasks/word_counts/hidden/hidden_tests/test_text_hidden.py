import unittest

from text import count_words, top_words, vocabulary_size


class TextHiddenTest(unittest.TestCase):
    def test_mixed_case_is_one_word(self):
        self.assertEqual(count_words("the The THE"), {"the": 3})
        self.assertEqual(count_words("go Go"), {"go": 2})

    def test_sentence_starts(self):
        text = "The cat saw the dog. The end."
        self.assertEqual(top_words(text, 1), [("the", 3)])
        self.assertEqual(count_words(text)["the"], 3)

    def test_vocabulary_ignores_case(self):
        self.assertEqual(vocabulary_size("Red red RED blue"), 2)

    def test_total_is_preserved(self):
        text = "A a b B a A c"
        self.assertEqual(sum(count_words(text).values()), 7)


if __name__ == "__main__":
    unittest.main()
