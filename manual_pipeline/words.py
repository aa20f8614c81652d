"""The word normalisation every part of nlmcs shares: lower-casing, one stemmer, one stop list.

Branavan, Silver & Barzilay (2011) lower-case and stem the manual's words and drop 50 stop words
and rare stems before building features; the manual artifact, the model features and the search
all call `stem` and `STOP_WORDS` from here so that a word means the same thing everywhere.
"""

from __future__ import annotations

from functools import lru_cache

import snowballstemmer

# Fifty function words that carry no game meaning. Negations ("not", "no") and quantity words
# ("more", "each") are deliberately kept: they change what a strategy sentence advises.
STOP_WORDS: frozenset[str] = frozenset(
    (
        "a", "an", "the", "and", "or", "but", "if", "of", "to", "in",
        "on", "at", "by", "for", "with", "from", "as", "into", "than", "then",
        "that", "this", "these", "those", "there", "it", "its", "is", "are", "was",
        "were", "be", "been", "has", "have", "had", "do", "does", "will", "would",
        "can", "also", "you", "your", "they", "their", "them", "we", "our", "which",
    )  # fmt: skip
)
assert len(STOP_WORDS) == 50, len(STOP_WORDS)

_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Lower-case `word` and reduce it with the Snowball English stemmer ("Cities" -> "citi")."""
    return _STEMMER.stemWord(word.lower())


def is_punctuation(text: str) -> bool:
    """True for a token with no letter or digit in it ("." , "--", "%", ")")."""
    return not any(ch.isalnum() for ch in text)
