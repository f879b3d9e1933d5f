"""Coreference accuracy on the CrossWOZ dev referring turns.

    python -m evals.coref_crosswoz [--data ../shared/data/dev/crosswoz/coref_entity.jsonl] [--show-errors N]
        [--labels raw|current] [--half A|B]

Replays every dialogue's turns (events.jsonl beside the data file) in order through the pure
coreference state (`state.coref.resolver.resolve_turn`, the same code the flow runs) and, for each
referring user turn of coref_entity.jsonl, compares the entity chosen for the turn with the gold
entity. The entity chosen for a turn is the first anaphor's referent (这家餐馆, 它, a zero anaphor),
else the first entity the turn names itself. Mentions are found by the generic name rules and the
lexicon, never from the labels. Names compare after NFKC and without spaces (（鼓楼店） = (鼓楼店)).

Two label sets are scored, always both:

* `raw`: `gold_entity` as shipped.
* `current`: the entity the dataset's own user-state annotation (labels.jsonl beside the data)
  says the user is pursuing at that turn: the name of the turn's domain filled most recently.
  `gold_entity` is the first name of the domain in the user state, so when a dialogue moves on
  to a second hotel (换一家…) the shipped label still names the first one: 221 of the 1,479
  labels (15 %) name an entity the dialogue has left ("这个酒店的地址" right after the agent
  recommended 北京美第奇精选酒店 is labelled 北京京仪大酒店). The `current` labels keep every other
  label as shipped.

The dialogues are split in two halves by a hash of the session id (`evals.stress_halves.half_of`):
`A` is where rules are tuned, `B` is held out and only reported. Both halves are printed, each
against both label sets; `--show-errors` reads half A only unless `--half B` is given.
"""

from __future__ import annotations

import argparse
import json
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from evals.devdata import dev_data_root
from evals.stress_halves import half_of
from schemas.memory import CorefAnchor
from state.core.language import clean_text, language_mix, split_sentences
from state.coref.lexicon import load_coref_lexicon
from state.coref.resolver import CorefConfig, CorefState, CorefTurn, resolve_turn

DEFAULT = dev_data_root() / "crosswoz" / "coref_entity.jsonl"


HALVES = ("A", "B")


@dataclass(frozen=True, slots=True)
class HalfScore:
    """Right answers of one half of the dialogues against the current and the shipped labels."""

    current: int
    raw: int
    total: int


@dataclass(frozen=True, slots=True)
class CorefScore:
    """Right answers against the shipped and the current labels, and how many labels differ."""

    raw: int
    current: int
    total: int
    relabelled: int
    halves: dict[str, HalfScore]


def chosen_entity(anchors: tuple[CorefAnchor, ...]) -> str | None:
    """The entity a turn is about: its first resolved reference, else the first entity it names."""
    for anchor in anchors:
        if anchor.kind != "entity" and anchor.resolved_entity:
            return anchor.resolved_entity
    for anchor in anchors:
        if anchor.kind == "entity" and anchor.resolved_entity:
            return anchor.resolved_entity
    return None


def same_name(a: str | None, b: str | None) -> bool:
    """Names equal up to character width and spaces: （鼓楼店） = (鼓楼店), 庆丰 八达岭店 = 庆丰八达岭店."""
    if a is None or b is None:
        return a is b
    return "".join(unicodedata.normalize("NFKC", a).split()) == "".join(unicodedata.normalize("NFKC", b).split())


def current_labels(data: Path, gold: dict[str, dict[str, str]]) -> dict[str, str]:
    """Per gold turn, the name of its domain the user state filled most recently (see the module doc)."""
    labels_path = data.parent / "labels.jsonl"
    if not labels_path.exists():
        return {turn_id: row["gold_entity"] for turn_id, row in gold.items()}
    by_dialogue: dict[str, list[tuple[int, dict[str, object]]]] = defaultdict(list)
    for line in labels_path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        dialogue, index = row["turn_id"].rsplit("/", 1)
        if index.isdigit():
            by_dialogue[dialogue].append((int(index), row))
    current: dict[str, str] = {}
    for rows in by_dialogue.values():
        filled: dict[tuple[str, str], int] = {}
        for index, row in sorted(rows, key=lambda r: r[0]):
            for _goal, domain, slot, value, *_ in row.get("user_state", []):  # type: ignore[attr-defined]
                if slot == "名称" and value:
                    filled.setdefault((domain, value), index)
            expected = gold.get(str(row["turn_id"]))
            if expected is not None:
                names = sorted((at, name) for (domain, name), at in filled.items() if domain == expected["domain"])
                current[str(row["turn_id"])] = names[-1][1] if names else expected["gold_entity"]
    return {turn_id: current.get(turn_id, row["gold_entity"]) for turn_id, row in gold.items()}


def evaluate(data: Path, *, show_errors: int = 0, labels: str = "current", errors_half: str = "A") -> CorefScore:
    events_path = data.parent / "events.jsonl"
    gold = {row["turn_id"]: row for row in map(json.loads, data.read_text(encoding="utf-8").splitlines())}
    current = current_labels(data, gold)
    sessions: dict[str, list[dict[str, str]]] = defaultdict(list)
    for line in events_path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        sessions[row["session_id"]].append(row)
    lexicon = load_coref_lexicon().get()
    config = CorefConfig()
    counts = {half: [0, 0, 0] for half in HALVES}  # current right, raw right, total
    errors: list[str] = []
    for session, turns in sessions.items():
        half = HALVES[half_of(session)]
        state: CorefState | None = None
        for row in turns:
            text = clean_text(row["text"], language_mix(row["text"]))
            ts = datetime.fromisoformat(row["ts"]).replace(tzinfo=UTC)
            state, anchors = resolve_turn(state, CorefTurn(row["turn_id"], ts, split_sentences(text)), config, lexicon)
            expected = gold.get(row["turn_id"])
            if expected is None:
                continue
            got = chosen_entity(anchors)
            counts[half][0] += same_name(got, current[row["turn_id"]])
            counts[half][1] += same_name(got, expected["gold_entity"])
            counts[half][2] += 1
            want = expected["gold_entity"] if labels == "raw" else current[row["turn_id"]]
            if half == errors_half and not same_name(got, want) and len(errors) < show_errors:
                errors.append(f"{row['turn_id']} {row['text']!r}: expected {want!r}, got {got!r}")
    for line in errors:
        print(line)
    relabelled = sum(not same_name(current[t], row["gold_entity"]) for t, row in gold.items())
    halves = {half: HalfScore(*counts[half]) for half in HALVES}
    raw_right = sum(h.raw for h in halves.values())
    current_right = sum(h.current for h in halves.values())
    return CorefScore(raw_right, current_right, len(gold), relabelled, halves)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT)
    parser.add_argument("--show-errors", type=int, default=0)
    parser.add_argument("--labels", choices=("raw", "current"), default="current", help="whose errors to show")
    parser.add_argument("--half", choices=HALVES, default="A", help="whose errors to show (A: tuning half)")
    args = parser.parse_args(argv)
    if not args.data.exists():
        raise SystemExit(f"no CrossWOZ data at {args.data} (dev data lives in ../shared/data/dev)")
    score = evaluate(args.data, show_errors=args.show_errors, labels=args.labels, errors_half=args.half)
    print(
        f"CrossWOZ coreference, {score.total} referring turns:\n"
        f"  current labels (user state's latest name of the domain; {score.relabelled} relabelled): "
        f"{score.current}/{score.total} = {score.current / score.total:.1%}\n"
        f"  shipped gold_entity labels: {score.raw}/{score.total} = {score.raw / score.total:.1%}"
    )
    for half, part in score.halves.items():
        role = "tuning" if half == "A" else "held out"
        print(
            f"  half {half} ({role}, {part.total} turns): current {part.current}/{part.total} = "
            f"{part.current / part.total:.1%}, shipped {part.raw}/{part.total} = {part.raw / part.total:.1%}"
        )


if __name__ == "__main__":
    main()
