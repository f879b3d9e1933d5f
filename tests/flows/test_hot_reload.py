"""Editing the entity dictionary or a term file changes results in a running flow, no restart.

The source hands out the second turn only once the first turn's memory unit has reached the
sink and the data files have been edited, so the two turns run through the same flow (same
operators, same loaded lexicons) before and after the edit.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from bytewax.inputs import DynamicSource, StatelessSourcePartition

from flows.settings import CorefSettings, Settings, TermsSettings
from schemas.raw import RawRecord
from state.coref.lexicon import DEFAULT_ENTITIES, DEFAULT_LEXICON
from state.terms.whitelist import DEFAULT_AUTHORITY_FILE, DEFAULT_TERM_FILES
from tests.flows.support import BASE, Outputs, raw, run_flow, turn


class _Gated(StatelessSourcePartition[RawRecord]):
    def __init__(
        self, first: RawRecord, second: RawRecord, ready: Callable[[], bool], edit: Callable[[], None]
    ) -> None:
        self._first, self._second, self._ready, self._edit = first, second, ready, edit
        self._phase = 0

    def next_batch(self) -> list[RawRecord]:
        if self._phase == 0:
            self._phase = 1
            return [self._first]
        if self._phase == 1:
            if not self._ready():
                return []
            self._edit()
            self._phase = 2
            return [self._second]
        raise StopIteration

    def next_awake(self) -> datetime | None:
        return None if self._phase != 1 else datetime.now(tz=BASE.tzinfo) + timedelta(milliseconds=5)


class _GatedSource(DynamicSource[RawRecord]):
    def __init__(self, partition: _Gated) -> None:
        self._partition = partition

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _Gated:
        return self._partition


def _settings(tmp_path: Path) -> tuple[Settings, Path, Path]:
    entities = tmp_path / "entities.yaml"
    shutil.copy(DEFAULT_ENTITIES, entities)
    terms = tmp_path / "terms.txt"
    terms.write_text("\n".join(p.read_text(encoding="utf-8") for p in DEFAULT_TERM_FILES), encoding="utf-8")
    settings = Settings(
        coref=CorefSettings(lexicon_path=DEFAULT_LEXICON, entities_path=entities, reload_check_s=0),
        terms=TermsSettings(term_files=(terms,), authority_path=DEFAULT_AUTHORITY_FILE, reload_check_s=0),
    )
    return settings, entities, terms


def test_editing_dictionary_and_terms_changes_a_running_flow(tmp_path: Path) -> None:
    settings, entities, terms = _settings(tmp_path)
    text = "新版本先部署到灰度集群，Zanzibar 鉴权也一起上。"
    first, second = raw([turn("s", 0, text), turn("s", 1, text)])
    out = Outputs()

    def edit() -> None:
        with entities.open("a", encoding="utf-8") as f:
            f.write("  - {name: 灰度集群, type: infrastructure, class: environment, aliases: [灰度集群]}\n")
        with terms.open("a", encoding="utf-8") as f:
            f.write("\nZanzibar\n")

    run_flow(_GatedSource(_Gated(first, second, lambda: len(out.units) == 1, edit)), settings, out=out)

    before, after = out.by_turn()["s-t0"], out.by_turn()["s-t1"]
    assert "灰度集群" not in [a.resolved_entity for a in before.coref]
    assert "Zanzibar" not in before.terms
    anchor = next(a for a in after.coref if a.resolved_entity == "灰度集群")
    assert (anchor.kind, anchor.entity_type, anchor.confidence) == ("entity", "infrastructure", 1.0)
    assert before.terms == ("灰度", "集群", "鉴权")
    assert after.terms == ("灰度", "集群", "Zanzibar", "鉴权")
