"""Coreference accuracy on the CrossWOZ dev referring turns.

    python -m evals.coref_crosswoz [--data ../shared/data/dev/crosswoz/coref_entity.jsonl] [--show-errors N]

Replays every dialogue's turns (events.jsonl beside the data file) in order through the pure
coreference state (`state.coref.resolve_turn`, the same code the flow runs) and, for each
referring user turn of coref_entity.jsonl, compares the entity chosen for the turn with
`gold_entity`. The entity chosen for a turn is the first anaphor's referent (这家餐馆, 它, a zero
anaphor), else the first entity the turn names itself. Mentions are found by the generic name
rules and the lexicon, never from the gold labels.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

from evals.devdata import dev_data_root
from schemas.memory import CorefAnchor
from state.coref import CorefConfig, CorefState, CorefTurn, resolve_turn
from state.coref_lexicon import load_coref_lexicon
from state.language import clean_text, language_mix, split_sentences

DEFAULT = dev_data_root() / "crosswoz" / "coref_entity.jsonl"


def chosen_entity(anchors: tuple[CorefAnchor, ...]) -> str | None:
    """The entity a turn is about: its first resolved reference, else the first entity it names."""
    for anchor in anchors:
        if anchor.kind != "entity" and anchor.resolved_entity:
            return anchor.resolved_entity
    for anchor in anchors:
        if anchor.kind == "entity" and anchor.resolved_entity:
            return anchor.resolved_entity
    return None


def evaluate(data: Path, *, show_errors: int = 0) -> tuple[int, int]:
    events_path = data.parent / "events.jsonl"
    gold = {row["turn_id"]: row for row in map(json.loads, data.read_text(encoding="utf-8").splitlines())}
    sessions: dict[str, list[dict[str, str]]] = defaultdict(list)
    for line in events_path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        sessions[row["session_id"]].append(row)
    lexicon = load_coref_lexicon().get()
    config = CorefConfig()
    right = total = 0
    errors: list[str] = []
    by_domain: Counter[str] = Counter()
    for turns in sessions.values():
        state: CorefState | None = None
        for row in turns:
            text = clean_text(row["text"], language_mix(row["text"]))
            ts = datetime.fromisoformat(row["ts"]).replace(tzinfo=UTC)
            state, anchors = resolve_turn(state, CorefTurn(row["turn_id"], ts, split_sentences(text)), config, lexicon)
            expected = gold.get(row["turn_id"])
            if expected is None:
                continue
            total += 1
            got = chosen_entity(anchors)
            if got == expected["gold_entity"]:
                right += 1
                by_domain[expected["domain"]] += 1
            elif len(errors) < show_errors:
                errors.append(f"{row['turn_id']} {row['text']!r}: expected {expected['gold_entity']!r}, got {got!r}")
    for line in errors:
        print(line)
    return right, total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT)
    parser.add_argument("--show-errors", type=int, default=0)
    args = parser.parse_args(argv)
    if not args.data.exists():
        raise SystemExit(f"no CrossWOZ data at {args.data} (dev data lives in ../shared/data/dev)")
    right, total = evaluate(args.data, show_errors=args.show_errors)
    print(f"CrossWOZ coreference: {right}/{total} referring turns resolved to the gold entity = {right / total:.1%}")


if __name__ == "__main__":
    main()
