"""The tagging lexicon as data: validation errors fail at start, edits hot-reload, broken edits are survived."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml

from schemas.errors import ConfigurationError
from state.core.hotfile import HotFile
from state.tagging.lexicon import DEFAULT_LEXICON, lexicon_file, load_lexicon, parse_lexicon


def _data() -> dict:
    return yaml.safe_load(DEFAULT_LEXICON.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("intent"), "missing section 'intent'"),
        (lambda d: d.pop("hedge"), "missing section 'hedge'"),
        (lambda d: d["intent"].update(classes=["a", "b"]), "intent.classes"),
        (
            lambda d: d["intent"]["cues"].append({"name": "x", "pattern": "(", "w": {"request": 1}}),
            "bad regular expression",
        ),
        (lambda d: d["intent"]["cues"].append({"name": "x", "pattern": 3, "w": {}}), "must be a string"),
        (
            lambda d: d["intent"]["cues"].append({"name": "x", "pattern": "a", "w": {"boss": 1}}),
            "unknown intent classes",
        ),
        (lambda d: d["intent"]["cues"].append({"name": "x", "pattern": "a", "w": [1]}), "mapping of class"),
        (lambda d: d["intent"]["cues"].append({"name": "x", "lang": "fr", "pattern": "a", "w": {}}), "lang must be"),
        (lambda d: d["emotion"].pop("stress"), "emotion.stress missing"),
        (lambda d: d["emotion"]["stress"].update(scope=[1]), "scope: expected a mapping"),
        (lambda d: d["emotion"]["stress"]["scope"].update(negation=["不"]), "language → pattern"),
        (lambda d: d["emotion"]["stress"]["scope"]["negation"].update(zh="("), "bad regular expression"),
        (lambda d: d["emotion"]["stress"].update(carry=0.5), "carry: expected a mapping"),
        (lambda d: d["emotion"]["stress"].update(carry={"weight": 1.0}), "must lie in"),
        (lambda d: d["intent"]["context_cues"].append({"name": "x", "pattern": "a", "w": {}}), "`after` must name"),
        (
            lambda d: d["intent"]["context_cues"].append({"name": "x", "after": ["boss"], "pattern": "a", "w": {}}),
            "unknown intents in `after`",
        ),
        (lambda d: d["intent"]["context_cues"].append(["x"]), "context_cues 3: expected a mapping"),
    ],
)
def test_invalid_lexicons_are_rejected(mutate, message: str) -> None:
    data = _data()
    mutate(data)
    with pytest.raises(ConfigurationError, match=message):
        parse_lexicon(data)


def test_top_level_must_be_a_mapping() -> None:
    with pytest.raises(ConfigurationError, match="mapping"):
        parse_lexicon(["not", "a", "mapping"])


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_lexicon(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("intent: [unclosed", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not valid YAML"):
        load_lexicon(bad)
    odd = tmp_path / "odd.yaml"
    odd.write_text(yaml.safe_dump({**_data(), "commitment_strength": [{"pattern": "x"}]}), encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"odd\.yaml"):
        load_lexicon(odd)
    with pytest.raises(ConfigurationError, match="cannot read"):
        HotFile(tmp_path / "nothing.yaml", load_lexicon)


def _touch_later(path: Path) -> None:
    stat = path.stat()
    os.utime(path, (stat.st_atime + 5, stat.st_mtime + 5))


def test_edits_hot_reload_and_broken_edits_keep_the_last_good_version(tmp_path: Path) -> None:
    path = tmp_path / "tagging.yaml"
    path.write_text(DEFAULT_LEXICON.read_text(encoding="utf-8"), encoding="utf-8")
    live = lexicon_file(path, check_every_s=0.0)
    assert live.get().role_weights["agent"] == -0.6
    data = _data()
    data["role_weights"]["agent"] = -0.5
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    _touch_later(path)
    assert live().role_weights["agent"] == -0.5
    path.write_text("intent: [broken", encoding="utf-8")
    _touch_later(path)
    assert live.get().role_weights["agent"] == -0.5  # the last good version keeps serving
    path.unlink()
    assert live.get().role_weights["agent"] == -0.5


def test_reload_checks_are_rate_limited(tmp_path: Path) -> None:
    path = tmp_path / "tagging.yaml"
    path.write_text(DEFAULT_LEXICON.read_text(encoding="utf-8"), encoding="utf-8")
    live = lexicon_file(path, check_every_s=3600.0)
    first = live.get()
    path.write_text("intent: [broken", encoding="utf-8")
    _touch_later(path)
    time.sleep(0.01)
    assert live.get() is first
