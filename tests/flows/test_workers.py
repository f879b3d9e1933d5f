"""The same archive under 1 and 2 workers of one process: the same memories in the embedded store.

Two workers share the process's store handle; this also guards the collection creation
race between their sink partitions.
"""

from __future__ import annotations

import json
from pathlib import Path

from flows.build import build_flow
from flows.io import paced_file_input
from flows.runtime import close_stores, embedder_for, execute, open_store, outputs_for, state_mirror_for
from flows.settings import Settings
from sinks.store.base import StoreFilter
from tests.conftest import event_dict


def _stored(tmp: Path, archive: Path, workers: int) -> dict[str, dict]:
    settings = Settings(
        embedder={"kind": "static"},
        store={"path": str(tmp / f"w{workers}")},
        deadletter={"path": str(tmp / f"dead{workers}.jsonl")},
        metrics={"path": str(tmp / f"m{workers}.jsonl")},
    )
    embedder = embedder_for(settings)
    outputs = outputs_for(settings, "replay", state_mirror_for(settings, "replay"), embedder)
    execute(
        build_flow(settings, paced_file_input(archive, None), outputs, embedder=embedder), settings, workers=workers
    )
    try:
        return {h.id: h.payload for h in open_store(settings).scroll(StoreFilter())}
    finally:
        close_stores()


def test_two_workers_store_what_one_worker_stores(tmp_path: Path) -> None:
    archive = tmp_path / "events.jsonl"
    lines = [
        json.dumps(
            event_dict(
                event_id=f"e{i}",
                session_id=f"s{i % 5}",
                ts=f"2026-01-01T08:{i:02d}:00Z",
                text=f"第{i}条：明天下午三点开会",
            ),
            ensure_ascii=False,
        )
        for i in range(30)
    ]
    archive.write_text("\n".join(lines) + "\n{broken\n", encoding="utf-8")
    one = _stored(tmp_path, archive, 1)
    assert len(one) == 30
    assert _stored(tmp_path, archive, 2) == one
