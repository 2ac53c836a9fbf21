"""Word statistics for short texts."""

import re

WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


def count_words(text):
    """Map each lower-cased word of the text to the number of times it occurs."""
    counts = {}
    for word in WORD.findall(text):
        key = word.lower()
        counts[key] = counts.get(word, 0) + 1
    return counts


def top_words(text, n):
    """The n most frequent words as (word, count), most frequent first, ties A-Z."""
    ranking = sorted(count_words(text).items(), key=lambda pair: (-pair[1], pair[0]))
    return ranking[:n]


def vocabulary_size(text):
    """Number of distinct words, ignoring case."""
    return len(count_words(text))
