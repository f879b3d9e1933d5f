"""Score the hedge rules on a hand-written set (tests/fixtures/hedge_fresh.jsonl).

    python -m evals.hedges [--gold PATH] [--show-errors]

Each line is one segment with the speaker's role, whether it is hedged, and the promise it makes
(`weak`: a hedged promise, `firm`, or `none`). The tagger (lexicon default) tags the segment; it is
read as hedged when it says so (`hedged`: confidence below 0.5 and certainty at most 0.35 follow),
and as a weak promise when its commitment strength is 0.3. Printed per language: hedge
precision / recall / accuracy, weak-promise recall (a hedged promise gets strength 0.3) and how
many segments that are no weak promise got 0.3 anyway.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from state.tagging.lexicon import load_lexicon
from state.tagging.tagger import tag_segment

GOLD = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "hedge_fresh.jsonl"
WEAK = 0.3


@dataclass(frozen=True, slots=True)
class HedgeItem:
    id: str
    lang: str
    role: str
    text: str
    hedged: bool
    promise: str


def load_gold(path: Path = GOLD) -> list[HedgeItem]:
    return [HedgeItem(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass(frozen=True, slots=True)
class Verdict:
    item: HedgeItem
    hedged: bool
    uncertain: bool  # confidence < 0.5 and certainty ≤ 0.35
    strength: float

    @property
    def weak(self) -> bool:
        return abs(self.strength - WEAK) < 1e-9


def judge(items: list[HedgeItem]) -> list[Verdict]:
    lex = load_lexicon()
    out = []
    for item in items:
        tags = tag_segment(item.text, item.role, lex)
        uncertain = tags.confidence < 0.5 and tags.certainty <= 0.35
        out.append(Verdict(item, tags.hedged, uncertain, tags.commitment_strength))
    return out


def report(verdicts: list[Verdict]) -> dict[str, dict[str, float]]:
    """Per language and overall: hedge precision, recall, accuracy; weak-promise recall and false weak."""
    groups: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        groups[v.item.lang].append(v)
        groups["all"].append(v)
    out = {}
    for key, vs in sorted(groups.items()):
        tp = sum(v.hedged and v.item.hedged for v in vs)
        said = sum(v.hedged for v in vs)
        gold = sum(v.item.hedged for v in vs)
        weak_gold = [v for v in vs if v.item.promise == "weak"]
        out[key] = {
            "n": float(len(vs)),
            "hedge_precision": tp / said if said else 0.0,
            "hedge_recall": tp / gold if gold else 0.0,
            "hedge_accuracy": sum(v.hedged == v.item.hedged for v in vs) / len(vs),
            "uncertain_when_hedged": sum(v.uncertain for v in vs if v.item.hedged) / gold if gold else 0.0,
            "weak_promise_recall": sum(v.weak for v in weak_gold) / len(weak_gold) if weak_gold else 0.0,
            "false_weak": float(sum(v.weak for v in vs if v.item.promise != "weak")),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--gold", type=Path, default=GOLD)
    parser.add_argument("--show-errors", action="store_true")
    args = parser.parse_args(argv)
    verdicts = judge(load_gold(args.gold))
    print(f"hedge set: {args.gold} ({len(verdicts)} segments)")
    cols = ("hedge_precision", "hedge_recall", "hedge_accuracy", "uncertain_when_hedged", "weak_promise_recall")
    print(f"{'subset':<6} {'n':>3}  " + "  ".join(f"{c:>21}" for c in cols) + "  false_weak")
    for key, row in report(verdicts).items():
        figures = "  ".join(f"{row[c]:>21.1%}" for c in cols)
        print(f"{key:<6} {int(row['n']):>3}  {figures}  {int(row['false_weak'])}")
    if args.show_errors:
        for v in verdicts:
            promise_wrong = (v.item.promise == "weak") != v.weak
            if v.hedged != v.item.hedged or promise_wrong:
                print(
                    f"{v.item.id} {v.item.text!r} gold hedged={v.item.hedged} promise={v.item.promise}; "
                    f"got hedged={v.hedged} strength={v.strength}"
                )


if __name__ == "__main__":
    main()
