"""Store benchmark: upsert throughput and filtered recall latency, qdrant-edge vs qdrant-client local.

Why: the performance budget (docs/design.md#performance-budget) asks for recall p95 <= 30 ms at
100,000 memories, and a plain vector memory's reference figure was taken on qdrant-client's
local mode (about 170 ms at 6,000) as the baseline to beat; this script measures both
embedded backends through the same `MemoryStore` adapters the flow uses, in one run.

    python -m benchmarks.store_bench --sizes 6000,10000,100000 --max-local 10000

Data: 384-dim random unit vectors; payloads are real MemoryUnit dumps spread over
`--tenants` x `--users` (so a tenant+user filter keeps 1/(tenants*users) of the points),
a third with no end of validity and the rest ending before or after the query instant.
Search: tenant+user match and valid_at, top 10, one query at a time. recall@10 is measured
against an exact numpy scan, so a fast but wrong backend shows up.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt

from schemas.memory import MemoryUnit, Validity, memory_id
from sinks.store.base import MemoryStore, StoredPoint, StoreFilter
from sinks.store.qdrant_client_store import QdrantClientStore
from sinks.store.qdrant_edge import QdrantEdgeStore

DIM = 384
T0 = datetime(2025, 1, 1, tzinfo=UTC)
VALID_AT = T0 + timedelta(days=30)


@dataclass(frozen=True, slots=True)
class Dataset:
    points: list[StoredPoint]
    matrix: npt.NDArray[np.float32]  # unit rows, aligned with points
    owners: npt.NDArray[np.int64]  # tenant*users + user per point
    valid: npt.NDArray[np.bool_]  # passes valid_at


@dataclass(frozen=True, slots=True)
class Row:
    backend: str
    size: int
    upsert_per_s: float
    p50_ms: float
    p95_ms: float
    recall: float
    note: str = ""


def make_dataset(n: int, tenants: int, users: int, seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((n, DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    owners = rng.integers(0, tenants * users, n)
    ends = rng.integers(-1, 3, n)  # -1: no end; 0: ended before VALID_AT; 1, 2: still valid
    points = []
    for i in range(n):
        t, u = divmod(int(owners[i]), users)
        end = None if ends[i] == -1 else VALID_AT + timedelta(days=-5 if ends[i] == 0 else int(ends[i]) * 10)
        unit = MemoryUnit(
            memory_id=memory_id(f"t{t}", f"s{u}", f"e{i}", 0),
            unit_index=0,
            tenant_id=f"t{t}",
            session_id=f"s{u}",
            user_id=f"u{u}",
            turn_id=f"turn{i}",
            event_id=f"e{i}",
            ts=T0 + timedelta(seconds=i),
            text=f"memory number {i}",
            source_text=f"memory number {i}, as said",
            confidence_score=float(rng.uniform(0.3, 1.0)),
            validity=Validity(validity_type="permanent" if end is None else "transient", effective_to=end),
        )
        points.append(StoredPoint(unit.memory_id, matrix[i], unit.model_dump(mode="json")))
    return Dataset(points, matrix, owners, ends != 0)


def _filter(owner: int, users: int) -> StoreFilter:
    t, u = divmod(owner, users)
    return StoreFilter(match={"tenant_id": f"t{t}", "user_id": f"u{u}"}, valid_at=VALID_AT.isoformat())


def exact_top10(data: Dataset, query: npt.NDArray[np.float32], owner: int) -> list[str]:
    keep = np.flatnonzero((data.owners == owner) & data.valid)
    order = keep[np.argsort(-(data.matrix[keep] @ query))[:10]]
    return [data.points[i].id for i in order]


def measure(
    name: str, store: MemoryStore, data: Dataset, args: argparse.Namespace, *, queries: int, note: str = ""
) -> tuple[Row, Callable[[], Row]]:
    """Upsert everything, then time searches; returns the row and a re-measure for later."""
    batch, users, seed = int(args.batch), int(args.users), int(args.seed)
    store.ensure_collection(DIM)
    started = time.perf_counter()
    for i in range(0, len(data.points), batch):
        store.upsert(data.points[i : i + batch])
    upsert_per_s = len(data.points) / (time.perf_counter() - started)

    def search_row(label: str, extra: str) -> Row:
        rng = np.random.default_rng(seed + 1)
        owners = rng.integers(0, int(data.owners.max()) + 1, queries + 5)
        vectors = rng.standard_normal((queries + 5, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        latencies: list[float] = []
        hits = 0.0
        for k in range(queries + 5):
            flt = _filter(int(owners[k]), users)
            t = time.perf_counter()
            found = store.search(vectors[k], flt, 10)
            elapsed = time.perf_counter() - t
            if k < 5:
                continue  # warm-up: first touches of mmaps and caches
            latencies.append(elapsed * 1000)
            truth = exact_top10(data, vectors[k], int(owners[k]))
            hits += len({h.id for h in found} & set(truth)) / max(1, len(truth))
        cuts = statistics.quantiles(latencies, n=20)
        return Row(label, len(data.points), upsert_per_s, statistics.median(latencies), cuts[18], hits / queries, extra)

    return search_row(name, note), lambda: search_row(name, note)


def run_size(n: int, args: argparse.Namespace, out: list[Row]) -> None:
    data = make_dataset(n, args.tenants, args.users, args.seed)
    with tempfile.TemporaryDirectory(prefix="store-bench-") as tmp:
        edge = QdrantEdgeStore(Path(tmp) / "edge")
        row, again = measure("edge", edge, data, args, queries=args.queries)
        out.append(row)
        if n <= args.optimize_max:
            started = time.perf_counter()
            edge.optimize()
            took = time.perf_counter() - started
            indexed = edge.indexed_vectors()
            after = again()
            out.append(
                Row(
                    "edge+optimize",
                    n,
                    row.upsert_per_s,
                    after.p50_ms,
                    after.p95_ms,
                    after.recall,
                    f"optimize {took:.1f}s, {indexed} in HNSW",
                )
            )
        else:
            nan = float("nan")
            out.append(
                Row("edge+optimize", n, nan, nan, nan, nan, "skipped: > --optimize-max (HNSW build takes minutes)")
            )
        edge.close()
        if n > args.max_local:
            out.append(
                Row("local", n, float("nan"), float("nan"), float("nan"), float("nan"), "skipped: > --max-local")
            )
            return
        local = QdrantClientStore.local(Path(tmp) / "local") if args.local_on_disk else QdrantClientStore.local(None)
        where = "on disk" if args.local_on_disk else "in memory"
        row, _ = measure("local", local, data, args, queries=args.local_queries, note=where)
        out.append(row)
        local.close()


def _fmt(x: float, spec: str) -> str:
    return "—" if math.isnan(x) else format(x, spec)  # NaN marks "not measured"


def render(rows: Sequence[Row], args: argparse.Namespace) -> str:
    lines = [
        f"{DIM}-dim unit vectors, {args.tenants} tenants x {args.users} users, "
        f"filter = tenant+user match + valid_at, top-10, upsert batches of {args.batch}, "
        f"{args.queries} edge / {args.local_queries} local queries per size; local mode capped at "
        f"{args.max_local} points (--max-local), {'on disk' if args.local_on_disk else 'in memory'}.",
        "",
        "| backend | points | upsert pts/s | search p50 ms | search p95 ms | recall@10 | note |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    lines += [
        f"| {r.backend} | {r.size:,} | {_fmt(r.upsert_per_s, ',.0f')} | {_fmt(r.p50_ms, '.2f')} | "
        f"{_fmt(r.p95_ms, '.2f')} | {_fmt(r.recall, '.3f')} | {r.note} |"
        for r in rows
    ]
    lines += [
        "",
        "Ratios edge/local at the same size (upsert > 1: edge writes faster; latency < 1: edge answers faster):",
        "",
        "| points | upsert edge/local | p50 edge/local | p95 edge/local |",
        "|---:|---:|---:|---:|",
    ]
    by = {(r.backend, r.size): r for r in rows}
    for size in sorted({r.size for r in rows}):
        e, lo = by.get(("edge", size)), by.get(("local", size))
        if e is None or lo is None or math.isnan(lo.p50_ms):
            lines.append(f"| {size:,} | — | — | — |")
            continue
        lines.append(
            f"| {size:,} | {e.upsert_per_s / lo.upsert_per_s:.1f} | {e.p50_ms / lo.p50_ms:.3f} | "
            f"{e.p95_ms / lo.p95_ms:.3f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="6000,10000,100000", help="comma-separated point counts")
    parser.add_argument("--max-local", type=int, default=10_000, help="largest size run on qdrant-client local mode")
    parser.add_argument("--optimize-max", type=int, default=10**9, help="largest size whose HNSW index is built")
    parser.add_argument("--local-on-disk", action="store_true", help="local mode in a folder instead of in memory")
    parser.add_argument("--tenants", type=int, default=2)
    parser.add_argument("--users", type=int, default=50, help="users per tenant")
    parser.add_argument("--queries", type=int, default=300, help="timed searches per size on edge")
    parser.add_argument("--local-queries", type=int, default=100, help="timed searches per size on local mode")
    parser.add_argument("--batch", type=int, default=64, help="points per upsert call")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for size in (int(s) for s in args.sizes.split(",")):
        run_size(size, args, rows)
        print(f"done {size:,}", file=sys.stderr, flush=True)
    print(render(rows, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
