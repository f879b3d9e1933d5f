"""Intent macro-F1 on two halves of each dev set: decide on half A, report half B held out.

    python -m evals.intent_halves --data ../shared/data/dev                   # shipped default
    python -m evals.intent_halves --data DIR --head-weight 0,0.1,0.2           # the head's intent vote
    python -m evals.intent_halves --data DIR --lexicon my_tagging.yaml         # a candidate lexicon
    python -m evals.intent_halves --data DIR --sets dailydialog --errors 30    # half-A errors to read

A set's dialogues are split by a hash of the session id (`evals.stress_halves.half_of`, whole
dialogues so the dialogue context stays intact): `A` is where lexicon patterns and the head's
intent weight are chosen, `B` is held out and only reported. A change that helps A but not B is
reverted. For every `--head-weight` value it prints macro-F1 and per-class F1 on A, B and the full
set, then the weight best on A (mean over the sets) and what it scores on B. `--errors N` prints up
to N misread turns of half A only (gold, predicted, the cues that fired), so that reading errors
never looks at the held-out half.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import cast

from evals.stress_halves import half_of
from evals.tagger import INTENT_SETS, PRED_MAP, Predictions, Row, intent_report, iter_sets, predict
from state.tagging.lexicon import load_lexicon
from state.tagging.tagger import IntentHead, TagConfig, cue_text, rule_logits

HALVES = ("A", "B", "full")


def half_reports(name: str, rows: list[Row], preds: Predictions) -> dict[str, dict[str, object]]:
    """The set's intent report on half A, half B and in full."""
    out: dict[str, dict[str, object]] = {}
    for half in HALVES:
        keep = [i for i, row in enumerate(rows) if half == "full" or half_of(row.session) == HALVES.index(half)]
        out[half] = intent_report(name, [rows[i] for i in keep], [preds.labels[i] for i in keep])
    return out


def _line(name: str, label: str, reps: dict[str, dict[str, object]]) -> str:
    parts = [f"{name:<13} {label:<14}"]
    for half in HALVES:
        rep = reps[half]
        per = cast("dict[str, dict[str, float]]", rep["per_class"])
        classes = " ".join(f"{c[:4]} {v['f1']:.3f}" for c, v in per.items())
        parts.append(f"{half} {float(rep['macro_f1']):.4f} [{classes}]")  # type: ignore[arg-type]
    return "  ".join(parts)


def print_errors(name: str, rows: list[Row], preds: Predictions, n: int, lex_path: Path | None) -> None:
    """Up to `n` half-A turns whose mapped prediction differs from gold, sampled reproducibly."""
    lex = load_lexicon(lex_path) if lex_path else load_lexicon()
    mapping = PRED_MAP.get(name, {})
    wrong = [
        i
        for i, row in enumerate(rows)
        if half_of(row.session) == 0
        and row.labels.get("intent") is not None
        and mapping.get(preds.labels[i], preds.labels[i]) != row.labels["intent"]
    ]
    for i in sorted(random.Random(0).sample(wrong, min(n, len(wrong)))):  # noqa: S311 - a reproducible sample, not security
        row = rows[i]
        _, fired = rule_logits(cue_text(row.text), lex, None)
        print(f"  [{row.labels['intent']} → {preds.labels[i]}] {row.text[:160]!r}  cues={','.join(fired)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.intent_halves", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="folder holding the dev sets")
    parser.add_argument("--sets", default=",".join(INTENT_SETS), help="comma-separated")
    parser.add_argument("--head", default="default", help="'default' (shipped), 'none', or a trained head file")
    parser.add_argument("--head-weight", default="0", help="comma-separated intent blends of the head to compare")
    parser.add_argument("--lexicon", type=Path, default=None, help="a tagging lexicon other than the shipped one")
    parser.add_argument("--errors", type=int, default=0, help="print this many half-A errors per set")
    args = parser.parse_args(argv)
    from evals.embed_cache import CachedEmbedder
    from evals.heads import head_for
    from sinks.models.embedders import load_embedder
    from sinks.models.tagger_model import EmbeddingHead

    lex = load_lexicon(args.lexicon) if args.lexicon else load_lexicon()
    weights = [float(w) for w in args.head_weight.split(",")]
    head: IntentHead | None = head_for(args.head) if any(w > 0 for w in weights) else None
    if isinstance(head, EmbeddingHead):
        cached = CachedEmbedder(load_embedder(head.embedder_kind, head.embedder_model))
        head.bind(cached)
    scores: dict[float, list[tuple[float, float, float]]] = {w: [] for w in weights}
    for name, rows in iter_sets(args.data, tuple(n for n in args.sets.split(",") if n)):
        for w in weights:
            # Intent only: the head's emotion blend does not move intent, so it is left off here.
            preds = predict(rows, lex, head if w > 0 else None, TagConfig(head_weight=w), head_emotion_weight=0.0)
            reps = half_reports(name, rows, preds)
            print(_line(name, f"head_w={w:g}", reps), flush=True)
            scores[w].append(tuple(float(reps[h]["macro_f1"]) for h in HALVES))  # type: ignore[arg-type]
            if args.errors and w == weights[0]:
                print_errors(name, rows, preds, args.errors, args.lexicon)
    if isinstance(head, EmbeddingHead):
        cached.save()
    if len(weights) > 1:
        mean = {w: [sum(s[k] for s in v) / len(v) for k in range(3)] for w, v in scores.items() if v}
        best = max(mean, key=lambda w: mean[w][0])
        print(f"best on A (mean over sets): head_w={best:g}  →  A {mean[best][0]:.4f}  B {mean[best][1]:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
