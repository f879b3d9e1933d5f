import os
from pathlib import Path

import pytest
import yaml

from schemas.errors import ConfigurationError
from state.recall.config import DEFAULT_LEXICON, DEFAULT_WEIGHTS, load_tables, parse_tables, tables_file


def _docs() -> tuple[dict, dict]:
    return yaml.safe_load(DEFAULT_WEIGHTS.read_text()), yaml.safe_load(DEFAULT_LEXICON.read_text())


def test_packaged_tables_load_with_the_spec_weights() -> None:
    t = load_tables()
    assert (t.css.emotion_match, t.css.time_proximity, t.css.severity, t.css.resolution_gap) == (0.4, 0.25, 0.2, 0.15)
    assert t.css.commitment_strength == 0.1
    assert dict(t.severity) == {"high": 1.0, "medium": 0.6, "low": 0.3}
    assert {c.name for c in t.classes} == {"order", "logistics", "after_sales", "promotion", "account"}
    assert "on" in t.stopwords  # YAML 1.1 would read a bare `on` as True


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda w, lx: w.pop("css"), "section 'css'"),
        (lambda w, lx: w["css"].update(emotion_match="lots"), "a number is required"),
        (lambda w, lx: w["css"].update(emotion_match=1.5), "outside"),
        (lambda w, lx: w["validity"].update(on_verify_failure="ignore"), "downweight or drop"),
        (lambda w, lx: lx["classes"].update(weather={"keywords": [], "topics": []}), "unknown question classes"),
        (lambda w, lx: lx["classes"]["order"].update(keywords="order"), "list of strings"),
        (lambda w, lx: lx["query_emotion"].update(repeat=[1, 2]), "four numbers"),
        (lambda w, lx: lx["query_emotion"].pop("neutral"), "'neutral' vector"),
    ],
)
def test_bad_tables_fail_with_the_key_named(mutate, message: str) -> None:
    w, lx = _docs()
    mutate(w, lx)
    with pytest.raises(ConfigurationError, match=message):
        parse_tables(w, lx)


def test_unreadable_or_non_mapping_files_fail(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_tables(tmp_path / "missing.yaml", DEFAULT_LEXICON)
    bad = tmp_path / "list.yaml"
    bad.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigurationError, match="not a mapping"):
        load_tables(bad, DEFAULT_LEXICON)
    with pytest.raises(ConfigurationError, match="cannot read recall table"):
        tables_file(tmp_path / "missing.yaml", DEFAULT_LEXICON)


def _bump(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_hot_reload_picks_up_a_change_and_keeps_the_old_tables_on_a_typo(tmp_path: Path) -> None:
    weights = tmp_path / "w.yaml"
    lexicon = tmp_path / "l.yaml"
    weights.write_text(DEFAULT_WEIGHTS.read_text())
    lexicon.write_text(DEFAULT_LEXICON.read_text())
    hot = tables_file(weights, lexicon)
    assert hot.get().css.severity == 0.2
    w = yaml.safe_load(weights.read_text())
    w["css"]["severity"] = 0.3
    weights.write_text(yaml.safe_dump(w))
    _bump(weights)
    assert hot.get().css.severity == 0.3
    weights.write_text("css: [oops")
    _bump(weights)
    assert hot.get().css.severity == 0.3  # previous tables stay in force
    weights.unlink()
    assert hot.get().css.severity == 0.3
