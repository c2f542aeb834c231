"""The word lists: compiled at build time from pyspellchecker's data, loaded without it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from papersift import lexicon
from papersift.errors import InstallationError
from papersift.quality import assess_text


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("wordlists")
    lexicon.compile_wordlists(target)
    return target


@pytest.mark.slow
def test_compiled_lists_hold_exactly_the_packages_words_and_ranks(compiled: Path) -> None:
    """Every word of every language's table is in the trie and nothing else is; the language
    profile is each table's 3,000 most frequent words."""
    lex = lexicon.lexicon.__wrapped__(compiled)
    union: set[str] = set()
    for bit, language in enumerate(lexicon.LANGUAGES):
        table = lexicon.frequencies(language)
        assert all(word in lex.words for word in table), language
        union.update(table)
        top = lexicon.common_words(table)
        assert len(top) == 3000
        assert all(lex.common_mask[word] >> bit & 1 for word in top)
        assert min(table[w] for w in top) >= max(table[w] for w in table.keys() - set(top))
    assert len(lex.words) == len(union)
    assert len(lexicon.arabic_words.__wrapped__(compiled)) == len(lexicon.frequencies("ar"))
    assert lexicon.is_current(compiled)


def test_installed_lists_are_current_with_the_installed_package() -> None:
    """The build step ran for the pyspellchecker that is installed (a stale list says so)."""
    assert lexicon.is_current(), f"stale word lists in {lexicon.DATA_DIR}: run `{lexicon.BUILD_COMMAND}`"


def test_a_changed_source_makes_the_lists_stale(compiled: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert lexicon.is_current(compiled)
    monkeypatch.setattr(lexicon, "FORMAT_VERSION", lexicon.FORMAT_VERSION + 1)
    assert not lexicon.is_current(compiled)


def test_judging_a_page_never_reads_the_packages_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cold start maps the compiled files; reading pyspellchecker's JSON costs seconds."""

    def forbidden(language: str) -> dict[str, int]:
        raise AssertionError(f"read pyspellchecker's {language} table at run time")

    monkeypatch.setattr(lexicon, "frequencies", forbidden)
    lexicon.lexicon.cache_clear()
    lexicon.arabic_words.cache_clear()
    try:
        english = assess_text("The committee approved the annual budget for the public library and the school. " * 3)
        arabic = assess_text("تنص المادة الأولى من هذا القانون على أن تلتزم الدولة بحماية حقوق المواطنين " * 3)
    finally:
        lexicon.lexicon.cache_clear()
        lexicon.arabic_words.cache_clear()
    assert (english.language, english.suspect) == ("en", False)
    assert (arabic.language, arabic.suspect) == ("ar", False)


def test_missing_lists_raise_an_installation_error_naming_the_build_command(tmp_path: Path) -> None:
    with pytest.raises(InstallationError, match=re.escape(lexicon.BUILD_COMMAND)):
        lexicon.lexicon.__wrapped__(tmp_path)
    with pytest.raises(InstallationError, match=re.escape(lexicon.BUILD_COMMAND)):
        lexicon.arabic_words.__wrapped__(tmp_path)


def test_every_common_word_is_in_the_word_trie() -> None:
    """quality._word_evidence counts a common word as known without asking the trie."""
    lex = lexicon.lexicon()
    assert [word for word in lex.common_mask if word not in lex.words] == []
