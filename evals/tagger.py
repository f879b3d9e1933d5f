"""Measure the tagger on the dev sets: intent macro-F1 and stress AUROC (docs/design.md#tagging).

    python -m evals.tagger --data ../shared/data/dev            # the shipped default
    python -m evals.tagger --data DIR --kfold                    # + k-fold heads as upper reference
    python -m evals.tagger --data DIR --head none                # lexicon and rules only

Intent: each dev set's mapped labels (`labels.jsonl`, field `intent`). Turns are tagged in
session order, so the dialogue context is the tagger's own previous prediction, as in the flow.
Predictions are mapped into each set's label space before scoring, because the sets do not
label every class we predict: `clarify` → question everywhere (no set labels clarify);
DailyDialog's *commissive* covers accepting and rejecting a request, so `refuse` → commitment
there; CPED has no commitment class, so `commitment` → neutral there and its 33
`commitment_candidate` (agreement) turns are left out. Macro-F1 is over the gold classes.
Stress: AUROC of the turn's stress (the highest of its memory units) against negative sentiment.
Every turn goes through the same stage as in the flow (tagging, entropy cut, the head's emotion
per unit); the speaker role is `customer` (the sets have no roles).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from evals.metrics import auroc, f1_table
from schemas.events import ConversationEvent
from sinks.models.embedders import load_embedder
from state.core.embedding import Embedder
from state.core.language import clean_text, language_mix, split_sentences
from state.normalise.segments import segment_sentences
from state.normalise.turn import Turn
from state.tagging.lexicon import TagLexicon, load_lexicon
from state.tagging.tagger import IntentHead, TagConfig, TagState, tag_turn
from state.units.assemble import units_from_turn
from state.units.emotion import CarryState, StressCarry, unit_emotion_turn
from state.units.entropy import EntropyConfig, EntropyState, advance, flush, load_entropy_table

INTENT_SETS = ("dailydialog", "xdailydialog", "cped")
STRESS_SETS = ("meld", "cped")
TARGETS = {"dailydialog": 0.65, "xdailydialog": 0.65, "cped": 0.50, "meld_stress": 0.75, "cped_stress": 0.65}
PRED_MAP = {
    "dailydialog": {"clarify": "question", "refuse": "commitment"},
    "xdailydialog": {"clarify": "question", "refuse": "commitment"},
    "cped": {"clarify": "question", "commitment": "neutral"},
}
GOLD_SKIP = {"cped": {"commitment_candidate"}}


@dataclass(frozen=True, slots=True)
class Row:
    session: str
    speaker: str
    text: str
    labels: dict[str, str]


def read_set(folder: Path) -> list[Row]:
    labels: dict[str, dict[str, str]] = {}
    with (folder / "labels.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            labels[rec["turn_id"]] = rec
    rows = []
    with (folder / "events.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            ev = json.loads(line)
            rows.append(Row(ev["session_id"], ev.get("speaker") or "", ev["text"], labels.get(ev["turn_id"], {})))
    return rows


def segments_of(text: str) -> list[str]:
    clean = clean_text(text, language_mix(text))
    return [s.text for s in segment_sentences(split_sentences(clean), source=clean)] or [text]


@dataclass
class Predictions:
    labels: list[str]
    stress: list[float]
    probs: list[tuple[float, ...]]


def predict(
    rows: list[Row],
    lex: TagLexicon,
    head: IntentHead | None,
    config: TagConfig,
    *,
    head_emotion_weight: float = 0.5,
    segment_embedder: Embedder | None = None,
    carry: StressCarry | None = None,
) -> Predictions:
    """Run the write-time stage as the flow does, session by session, on every turn.

    Tagging with the running dialogue context (the tagger's own previous prediction), the entropy
    cut with static segment vectors and the one-turn lookahead, then each memory unit's emotion
    (lexicon and head blended, the speaker's running stress carried in: `unit_emotion_turn`, the
    function the flow's unit_emotion step runs), turn by turn in session order. A turn's intent is
    its main intent; its stress the highest of its units. `carry` overrides the lexicon's.
    """
    seg_embedder = segment_embedder or load_embedder("static")
    table = load_entropy_table()
    ent_config = EntropyConfig(embedder_name=seg_embedder.name)
    out = Predictions([], [], [])
    results: dict[str, Turn] = {}
    tag_states: dict[str, TagState] = {}
    ent_states: dict[str, EntropyState] = {}
    base = datetime(2026, 1, 1, tzinfo=UTC)
    keys: list[str] = []
    for i, row in enumerate(rows):
        key = f"{row.session}\x1f{i}"
        keys.append(key)
        clean = clean_text(row.text, language_mix(row.text))
        event = ConversationEvent(
            event_id=key,
            session_id=row.session,
            ts=base + timedelta(seconds=15 * i),
            text=row.text,
            speaker=row.speaker or None,
        )
        turn = Turn(event=event, lang=language_mix(clean), text=clean, sentences=split_sentences(clean), times=())
        tag_states[row.session], tagged = tag_turn(tag_states.get(row.session), turn, config, lex, head)
        vectors = seg_embedder.passage([s.text for s in tagged.segments])
        ent_states[row.session], done = advance(ent_states.get(row.session), tagged, vectors, table, ent_config)
        results.update((t.event.event_id, t) for t in done)
    for state in ent_states.values():
        _, done = flush(state, table, ent_config)
        results.update((t.event.event_id, t) for t in done)
    carry_states: dict[str, CarryState] = {}
    for key in keys:
        turn = results[key]
        session = turn.event.session_id
        carry_states[session], turn = unit_emotion_turn(
            carry_states.get(session), turn, lex, head=head, head_weight=head_emotion_weight, carry=carry
        )
        units = units_from_turn(turn)
        out.labels.append(turn.turn_intent_label)
        out.probs.append(turn.turn_intent)
        out.stress.append(max(u.emotion.stress for u in units))
    return out


def intent_report(name: str, rows: list[Row], preds: list[str]) -> dict[str, object]:
    mapping = PRED_MAP.get(name, {})
    skip = GOLD_SKIP.get(name, set())
    gold, pred = [], []
    for row, p in zip(rows, preds, strict=True):
        g = row.labels.get("intent")
        if g is None or g in skip:
            continue
        gold.append(g)
        pred.append(mapping.get(p, p))
    table = f1_table(gold, pred)
    return {"set": name, "n": len(gold), "macro_f1": table["macro"], "per_class": table["per_class"]}


def stress_report(name: str, rows: list[Row], stress: list[float]) -> dict[str, object]:
    y = [row.labels.get("sentiment") == "negative" for row in rows]
    return {"set": name, "n": len(y), "auroc": auroc(np.array(y), np.array(stress))}


def iter_sets(data: Path, names: tuple[str, ...]) -> Iterator[tuple[str, list[Row]]]:
    for name in names:
        folder = data / name
        if (folder / "events.jsonl").exists() and (folder / "labels.jsonl").exists():
            yield name, read_set(folder)
        else:
            print(f"[skip] {folder} not found", file=sys.stderr)


def evaluate_sets(
    data: Path, head_name: str, names: tuple[str, ...], config: TagConfig, head_emotion_weight: float = 0.5
) -> tuple[list[dict[str, object]], dict[str, tuple[list[Row], Predictions]]]:
    """Intent macro-F1 and stress AUROC per dev set, and each set's rows with their predictions."""
    from evals.embed_cache import CachedEmbedder
    from evals.heads import head_for
    from sinks.models.tagger_model import EmbeddingHead

    lex = load_lexicon()
    head = head_for(head_name)
    if isinstance(head, EmbeddingHead):
        # Same vectors as the flow's, kept on disk between runs (var/eval_cache/).
        cached = CachedEmbedder(load_embedder(head.embedder_kind, head.embedder_model))
        head.bind(cached)
    results: list[dict[str, object]] = []
    cache: dict[str, tuple[list[Row], Predictions]] = {}
    for name, rows in iter_sets(data, names):
        started = time.perf_counter()
        # With the head off for intent (head_weight 0), a set without emotion labels gets the exact
        # same intent predictions without it: skip the embedding work there.
        needs_head = name in STRESS_SETS or config.head_weight > 0
        preds = predict(rows, lex, head if needs_head else None, config, head_emotion_weight=head_emotion_weight)
        per_turn_ms = (time.perf_counter() - started) / max(1, len(rows)) * 1e3
        cache[name] = (rows, preds)
        if name in INTENT_SETS:
            rep = intent_report(name, rows, preds.labels)
            rep.update(metric="intent_macro_f1", target=TARGETS[name], ms_per_turn=round(per_turn_ms, 3))
            results.append(rep)
        if name in STRESS_SETS:
            rep = stress_report(name, rows, preds.stress)
            rep.update(metric="stress_auroc", target=TARGETS[f"{name}_stress"])
            results.append(rep)
    if isinstance(head, EmbeddingHead):
        cached.save()
    return results, cache


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.tagger", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="folder holding the dev sets")
    parser.add_argument("--head", default="default", help="'default' (shipped), 'none', or a trained head file")
    parser.add_argument("--kfold", action="store_true", help="also k-fold heads per set (upper reference)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--embedder", default="static", help="embedder of the k-fold heads")
    parser.add_argument("--no-context", action="store_true", help="ignore the previous turn")
    parser.add_argument("--head-weight", type=float, default=0.0, help="intent blend of the head (default 0)")
    parser.add_argument("--head-emotion-weight", type=float, default=0.5, help="emotion blend per unit (default 0.5)")
    parser.add_argument("--sets", default=",".join(dict.fromkeys(INTENT_SETS + STRESS_SETS)), help="comma-separated")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from evals.heads import head_for

    results, cache = evaluate_sets(
        args.data,
        args.head,
        tuple(n for n in args.sets.split(",") if n),
        TagConfig(context=not args.no_context, head_weight=args.head_weight),
        args.head_emotion_weight,
    )
    if args.kfold:
        from evals.kfold import kfold_reports

        results.extend(kfold_reports(cache, args.folds, args.embedder))
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=1))
    else:
        print_results(results, head_name=getattr(head_for(args.head), "name", "none"))
    return 0


def print_results(results: list[dict[str, object]], head_name: str) -> None:
    print(f"tagger: lexicon + rules, head: {head_name}")
    for r in results:
        value = r.get("macro_f1", r.get("auroc"))
        line = f"{r['set']:<13} {r['metric']:<26} {value:.3f}"
        if "target" in r:
            line += f"  (target ≥ {r['target']:.2f}: {'met' if float(value) >= float(r['target']) else 'NOT met'})"  # type: ignore[arg-type]
        print(line)
        per = r.get("per_class")
        if isinstance(per, dict):
            print("              " + "  ".join(f"{k}: F1 {v['f1']:.3f} (n={v['support']})" for k, v in per.items()))
    own = [
        f"{r['set']} {c} F1 {r['per_class'][c]['f1']:.3f}"  # type: ignore[index]
        for r in results
        if r["metric"] == "intent_macro_f1"
        for c in ("commitment", "refuse")
        if c in r.get("per_class", {})  # type: ignore[operator]
    ]
    if own:
        print("commitment and refuse on their own: " + "; ".join(own))


if __name__ == "__main__":
    raise SystemExit(main())
