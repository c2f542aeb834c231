"""Word lists for judging Latin-script text, taken from the maintained ``pyspellchecker`` package.

A text layer that keeps word shape but maps glyphs to the wrong letters (a substitution
cipher) can only be told from real text by asking "are these words?". The word lists are
the frequency dictionaries that ``pyspellchecker`` ships (built from OpenSubtitles and
Wiktionary); we read its gzipped JSON resources directly, because we only need membership
and ranks, not the spell checker.

Loading costs about 1.5 s and ~200 MB once per process (a Lambda container keeps it for all
its pages). :func:`lexicon` is an ``lru_cache``'d loader returning an immutable
:class:`Lexicon`: a read-only cache, not mutable global state.
"""

from __future__ import annotations

import gzip
import heapq
import json
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

#: Latin-script languages judged by dictionary (ISO 639-1), in tie-break order.
LANGUAGES: tuple[str, ...] = ("pt", "en", "es", "fr", "de", "it", "nl")
#: how many of each language's most frequent words decide the language of a page
_COMMON_WORDS = 3000
#: a letter pair (triple) is "plausible" when this many common words of any language contain it
_BIGRAM_MIN_WORDS = 10
_TRIGRAM_MIN_WORDS = 3


@dataclass(frozen=True)
class Lexicon:
    #: every word of every language, lower case
    words: frozenset[str]
    #: per language, its most frequent words: the profile that names a page's language
    common: Mapping[str, frozenset[str]]
    #: the same, inverted: word -> bit mask of the languages (bit i = LANGUAGES[i]) it is common in
    common_mask: Mapping[str, int]
    #: letter pairs (accents folded) that real words of these languages use; a cipher's
    #: text uses many others, a language we have no dictionary for mostly does not
    bigrams: frozenset[str]
    #: letter triples (accents folded, ``^``/``$`` marking word edges) that common words use
    trigrams: frozenset[str]

    def knows(self, word: str) -> bool:
        """Whether a lower-case word is a word, allowing the plurals some lists lack."""
        if word in self.words:
            return True
        if len(word) > 3 and word[-1] == "s":
            return word[:-1] in self.words or (word[-2] == "e" and word[:-2] in self.words)
        return False


def fold_accents(word: str) -> str:
    """``ação`` -> ``acao``: letter-pair statistics should not depend on diacritics."""
    if word.isascii():
        return word
    return "".join(ch for ch in unicodedata.normalize("NFD", word) if not unicodedata.combining(ch))


def _frequencies(language: str) -> dict[str, int]:
    resource = resources.files("spellchecker") / "resources" / f"{language}.json.gz"
    data: dict[str, int] = json.loads(gzip.decompress(resource.read_bytes()))
    return data


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The word lists, loaded once per process (read-only cache)."""
    words: set[str] = set()
    common: dict[str, frozenset[str]] = {}
    pairs: Counter[str] = Counter()
    triples: Counter[str] = Counter()
    for language in LANGUAGES:  # one list at a time: the peak stays near the final size
        frequencies = _frequencies(language)
        top = heapq.nlargest(_COMMON_WORDS, frequencies, key=frequencies.__getitem__)
        common[language] = frozenset(top)
        for word in top:
            folded = fold_accents(word)
            pairs.update(folded[i : i + 2] for i in range(len(folded) - 1))
            edged = f"^{folded}$"
            triples.update(edged[i : i + 3] for i in range(len(edged) - 2))
        words.update(frequencies)
        del frequencies
    bigrams = frozenset(pair for pair, n in pairs.items() if n >= _BIGRAM_MIN_WORDS and pair.isalpha())
    trigrams = frozenset(triple for triple, n in triples.items() if n >= _TRIGRAM_MIN_WORDS)
    frozen = frozenset(words)
    del words
    mask: dict[str, int] = {}
    for bit, language in enumerate(LANGUAGES):
        for word in common[language]:
            mask[word] = mask.get(word, 0) | 1 << bit
    return Lexicon(words=frozen, common=MappingProxyType(common), common_mask=MappingProxyType(mask),
                   bigrams=bigrams, trigrams=trigrams)


@lru_cache(maxsize=1)
def arabic_words() -> frozenset[str]:
    """Arabic word list, loaded only when an Arabic page shows up (read-only cache).

    A wrong ToUnicode map in an Arabic font swaps letters for other real Arabic letters, so
    no script check can see it; only "are these words?" can.
    """
    return frozenset(_frequencies("ar"))
