"""Word lists for judging text, compiled at build time from the maintained ``pyspellchecker``
package into files that load in milliseconds.

A text layer that keeps word shape but maps glyphs to the wrong letters (a substitution
cipher) can only be told from real text by asking "are these words?". The word lists are the
frequency dictionaries that ``pyspellchecker`` ships (built from OpenSubtitles and Wiktionary).
Reading its gzipped JSON and ranking it costs seconds and ~200 MB, too much for a cold start,
so :func:`compile_wordlists` does that once, when the package is built (``pip install``, the
Lambda layer build, the container image), and writes to ``papersift/data/``:

- ``words-latin.marisa``: every word of the dictionary languages (:data:`LANGUAGES`), one
  MARISA trie memory-mapped on first need (~4 MB, mapped in well under a millisecond). One
  trie, not one per language: every rule asks "a word of any of these languages?" (a page's
  language is only known from its words), so per-language tries would cost seven lookups a
  miss and save nothing, since mapping is free;
- ``words-latin.json``: each language's most frequent words as a word -> language bit mask
  (they name a page's language) and the letter pairs and triples those words use;
- ``words-ar.marisa``: the Arabic list, mapped only when an Arabic page shows up.

``python -m papersift.lexicon`` (re)builds them; it does nothing when they are current. The
loaders are ``lru_cache``'d and return immutable objects: a read-only cache, not mutable state.
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import marisa_trie

from papersift.errors import InstallationError

#: Latin-script languages judged by dictionary (ISO 639-1), in tie-break order.
LANGUAGES: tuple[str, ...] = ("pt", "en", "es", "fr", "de", "it", "nl")
#: how many of each language's most frequent words decide the language of a page
_COMMON_WORDS = 3000
#: a letter pair (triple) is "plausible" when this many common words of any language contain it
_BIGRAM_MIN_WORDS = 10
_TRIGRAM_MIN_WORDS = 3
#: bump when the compiled files change shape or content rules
FORMAT_VERSION = 1

DATA_DIR = Path(__file__).resolve().parent / "data"
_LATIN_TRIE = "words-latin.marisa"
_LATIN_TABLES = "words-latin.json"
_ARABIC_TRIE = "words-ar.marisa"
COMPILED_FILES = (_LATIN_TRIE, _LATIN_TABLES, _ARABIC_TRIE)
BUILD_COMMAND = "python -m papersift.lexicon"


@dataclass(frozen=True)
class Lexicon:
    #: every word of every language, lower case (a memory-mapped trie: ``in`` is the only use)
    words: marisa_trie.Trie
    #: word -> bit mask of the languages (bit i = LANGUAGES[i]) it is among the most frequent in;
    #: every one of these words is in ``words`` too (both come from the same frequency tables)
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


# -- loading (every process, on first need) ----------------------------------------------------


def _compiled(name: str, data_dir: Path) -> Path:
    path = data_dir / name
    if not path.is_file():
        raise InstallationError(
            f"compiled word list {path} is missing: build it with `{BUILD_COMMAND}` (pip install, "
            "scripts/build_layers.py and the container image build run it)"
        )
    return path


def _mapped_trie(path: Path) -> marisa_trie.Trie:
    trie = marisa_trie.Trie()
    trie.mmap(str(path))
    return trie


@lru_cache(maxsize=1)
def lexicon(data_dir: Path = DATA_DIR) -> Lexicon:
    """The Latin-script word lists, mapped once per process (read-only cache)."""
    tables = json.loads(_compiled(_LATIN_TABLES, data_dir).read_text(encoding="utf-8"))
    if tables["languages"] != list(LANGUAGES):  # the mask bits are positions in LANGUAGES
        raise InstallationError(f"compiled word lists are for {tables['languages']}: rebuild with `{BUILD_COMMAND}`")
    return Lexicon(words=_mapped_trie(_compiled(_LATIN_TRIE, data_dir)),
                   common_mask=MappingProxyType(tables["common_mask"]),
                   bigrams=frozenset(tables["bigrams"]), trigrams=frozenset(tables["trigrams"]))


@lru_cache(maxsize=1)
def arabic_words(data_dir: Path = DATA_DIR) -> marisa_trie.Trie:
    """Arabic word list, mapped only when an Arabic page shows up (read-only cache).

    A wrong ToUnicode map in an Arabic font swaps letters for other real Arabic letters, so
    no script check can see it; only "are these words?" can.
    """
    return _mapped_trie(_compiled(_ARABIC_TRIE, data_dir))


# -- compiling (at build time) ------------------------------------------------------------------


# the compiler's own imports are local: they stay off every process's cold start


def frequencies(language: str) -> dict[str, int]:
    """pyspellchecker's word -> frequency table for one language."""
    import gzip
    from importlib import resources

    resource = resources.files("spellchecker") / "resources" / f"{language}.json.gz"
    data: dict[str, int] = json.loads(gzip.decompress(resource.read_bytes()))
    return data


def common_words(table: Mapping[str, int]) -> list[str]:
    """A language's most frequent words, most frequent first (ties keep the package's order)."""
    import heapq

    return heapq.nlargest(_COMMON_WORDS, table, key=table.__getitem__)


def common_masks(common: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Word -> bit mask of the languages it is common in (bit i = ``LANGUAGES[i]``)."""
    mask: dict[str, int] = {}
    for bit, language in enumerate(LANGUAGES):
        for word in common[language]:
            mask[word] = mask.get(word, 0) | 1 << bit
    return mask


def letter_tables(common: Mapping[str, Sequence[str]]) -> tuple[list[str], list[str]]:
    """The letter pairs and edge-marked triples that enough common words of any language use."""
    pairs: Counter[str] = Counter()
    triples: Counter[str] = Counter()
    for top in common.values():
        for word in top:
            folded = fold_accents(word)
            pairs.update(folded[i : i + 2] for i in range(len(folded) - 1))
            edged = f"^{folded}$"
            triples.update(edged[i : i + 3] for i in range(len(edged) - 2))
    bigrams = sorted(pair for pair, n in pairs.items() if n >= _BIGRAM_MIN_WORDS and pair.isalpha())
    trigrams = sorted(triple for triple, n in triples.items() if n >= _TRIGRAM_MIN_WORDS)
    return bigrams, trigrams


def source_fingerprint() -> str:
    """What the compiled files are made from: the package's version and data, and our format."""
    import hashlib
    from importlib import metadata, resources

    digest = hashlib.sha256(f"format {FORMAT_VERSION}".encode())
    digest.update(metadata.version("pyspellchecker").encode())
    for language in (*LANGUAGES, "ar"):
        digest.update((resources.files("spellchecker") / "resources" / f"{language}.json.gz").read_bytes())
    return digest.hexdigest()


def is_current(data_dir: Path = DATA_DIR) -> bool:
    tables = data_dir / _LATIN_TABLES
    if not all((data_dir / name).is_file() for name in COMPILED_FILES):
        return False
    try:
        recorded: Any = json.loads(tables.read_text(encoding="utf-8")).get("source")
    except (OSError, ValueError):
        return False
    return bool(recorded == source_fingerprint())


def compile_wordlists(data_dir: Path = DATA_DIR) -> None:
    """Write the compiled lists into ``data_dir``, each through a temporary file and a rename,
    so a failed build never leaves a half-written list that looks current."""
    data_dir.mkdir(parents=True, exist_ok=True)
    words: set[str] = set()
    common: dict[str, list[str]] = {}
    for language in LANGUAGES:  # one table at a time: the peak stays near the final size
        table = frequencies(language)
        common[language] = common_words(table)
        words.update(table)
        del table
    bigrams, trigrams = letter_tables(common)
    _save_trie(words, data_dir / _LATIN_TRIE)
    del words
    _save_trie(frequencies("ar"), data_dir / _ARABIC_TRIE)
    tables = {"source": source_fingerprint(), "languages": list(LANGUAGES), "common_mask": common_masks(common),
              "bigrams": bigrams, "trigrams": trigrams}
    _replace(data_dir / _LATIN_TABLES, json.dumps(tables, ensure_ascii=False, separators=(",", ":")).encode())


def _save_trie(words: Any, path: Path) -> None:
    staging = path.with_name(path.name + ".tmp")
    marisa_trie.Trie(words).save(str(staging))
    staging.replace(path)


def _replace(path: Path, content: bytes) -> None:
    staging = path.with_name(path.name + ".tmp")
    staging.write_bytes(content)
    staging.replace(path)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog=BUILD_COMMAND, description="Compile the word lists from pyspellchecker.")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help=f"where to write them (default {DATA_DIR})")
    parser.add_argument("--force", action="store_true", help="rebuild even when they are current")
    args = parser.parse_args(argv)
    if is_current(args.data_dir) and not args.force:
        return 0
    compile_wordlists(args.data_dir)
    size = sum((args.data_dir / name).stat().st_size for name in COMPILED_FILES) / 1e6
    print(f"papersift.lexicon: word lists compiled into {args.data_dir} ({size:.1f} MB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
