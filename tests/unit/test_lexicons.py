"""Data files: hot reload, and every way a lexicon, dictionary or term file can be wrong."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from flows.settings import CorefSettings
from schemas.errors import ConfigurationError, LexiconError
from state.core.datafiles import text_loader
from state.core.hotfile import HotFile
from state.coref.lexicon import DEFAULT_ENTITIES, DEFAULT_LEXICON, WordIndex, load_coref_lexicon, parse_coref_lexicon
from state.coref.mentions import extract_mentions
from state.terms.whitelist import DEFAULT_AUTHORITY_FILE, DEFAULT_TERM_FILES, load_term_lexicon, parse_term_lexicon


class Ticker:
    """An injected monotonic clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_hot_file_rereads_only_after_the_check_interval(tmp_path: Path) -> None:
    path = tmp_path / "words.txt"
    path.write_text("a\n", encoding="utf-8")
    tick = Ticker()
    words = HotFile([path], text_loader(lambda texts: texts[0].split()), check_every_s=5, monotonic=tick)
    path.write_text("a\nb\n", encoding="utf-8")
    assert words.get() == ["a"]  # not checked yet
    tick.now = 6
    assert words.get() == ["a", "b"]
    assert words.reloads == 1
    assert words.paths == (path,)


def test_a_bad_edit_keeps_the_last_good_version(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    entities = tmp_path / "entities.yaml"
    shutil.copy(DEFAULT_ENTITIES, entities)
    handle = load_coref_lexicon(DEFAULT_LEXICON, entities, check_every_s=0)
    before = handle.get()
    entities.write_text("entities: [ {name: broken", encoding="utf-8")
    with caplog.at_level(logging.ERROR):
        assert handle.get() is before
    assert '"kept": "previous"' in caplog.text
    entities.unlink()
    assert handle.get() is before  # a deleted file too


def test_dictionary_edit_changes_the_anchor(tmp_path: Path) -> None:
    entities = tmp_path / "entities.yaml"
    entities.write_text("entities: []\n", encoding="utf-8")
    handle = load_coref_lexicon(DEFAULT_LEXICON, entities, check_every_s=0)
    text = "请在测试环境验证后再同步到生产环境。"
    assert not [m for m in extract_mentions(text, handle.get()) if m.dictionary]
    entities.write_text(
        "entities:\n  - {name: 测试环境, type: infrastructure, aliases: [测试环境]}\n", encoding="utf-8"
    )
    assert [(m.entity, m.types) for m in extract_mentions(text, handle.get()) if m.dictionary] == [
        ("测试环境", ("infrastructure",))
    ]


def test_missing_file_at_start_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(LexiconError, match="cannot read data file"):
        load_coref_lexicon(DEFAULT_LEXICON, tmp_path / "absent.yaml")
    assert issubclass(LexiconError, ConfigurationError)


def test_unreadable_bytes_are_a_lexicon_error(tmp_path: Path) -> None:
    path = tmp_path / "terms.txt"
    path.write_bytes(b"\xff\xfe\xfa")
    with pytest.raises(LexiconError, match="cannot read data file"):
        load_term_lexicon([path], DEFAULT_AUTHORITY_FILE)


@pytest.mark.parametrize(
    ("lexicon", "entities", "message"),
    [
        ("types: [", "entities: []", "not valid YAML"),
        ("types: {}", "entities: [{type: x}]", "malformed"),
        ("types: {a: {nouns: 3}}", "entities: []", "expected a list of strings"),
        ("identifiers: [{type: x, pattern: '('}]", "entities: []", "malformed"),
    ],
)
def test_malformed_lexicon_is_rejected(lexicon: str, entities: str, message: str) -> None:
    with pytest.raises(LexiconError, match=message):
        parse_coref_lexicon([lexicon, entities])


def test_term_lexicon_errors() -> None:
    with pytest.raises(LexiconError, match="no term files"):
        parse_term_lexicon([])
    with pytest.raises(LexiconError, match="empty"):
        parse_term_lexicon(["# only a comment\n", "老板\n"])


def test_shipped_term_list_is_large_and_bilingual() -> None:
    texts = [p.read_text(encoding="utf-8") for p in DEFAULT_TERM_FILES]
    lexicon = parse_term_lexicon([*texts, DEFAULT_AUTHORITY_FILE.read_text(encoding="utf-8")])
    assert len(lexicon) >= 1000
    words = lexicon.terms.words()
    assert sum(w.isascii() for w in words) >= 400
    assert sum(not w.isascii() for w in words) >= 400


def test_word_index_respects_ascii_word_boundaries() -> None:
    index = WordIndex({"API": 1, "IP": 2, "接口": 3})
    assert [h.word for h in index.find("rapid IP 变更, API接口")] == ["IP", "API", "接口"]
    assert WordIndex({}).find("anything") == []


def test_settings_reject_a_wide_window_narrower_than_the_window() -> None:
    with pytest.raises(ValueError, match="wide_window must be at least"):
        CorefSettings(window=60, wide_window=50)
