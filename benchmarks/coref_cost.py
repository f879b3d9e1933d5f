"""Per-turn cost of the coreference stage, with and without the entities no dictionary lists.

    python -m benchmarks.coref_cost [--data ../shared/data/dev] [--turns 2000]

Replays whole dialogues of dev sets (CrossWOZ and CPED in Chinese, DailyDialog and MELD in English,
`--turns` in all, an even share each) through the pure coreference state (`resolve_turn`, the code
the flow runs) after the taggers are loaded, and prints the per-turn wall and CPU time (one thread)
p50/p95/p99 and mean per language: the lexicon as shipped (products, organisations and people found from word tags)
against the same lexicon without them (the rules and dictionary alone). The taggers' per-text
cache is cleared between the two passes so that neither reads the other's work. Measures, asserts
nothing (the machine's load moves the figures).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from evals.devdata import dev_data_root
from state.core.language import clean_text, language_mix, split_sentences
from state.coref import taggers
from state.coref.lexicon import _NO_OPEN_NAMES, CorefLexicon, load_coref_lexicon
from state.coref.resolver import CorefConfig, CorefState, CorefTurn, resolve_turn

SETS = {"crosswoz": "zh", "cped": "zh", "dailydialog": "en", "meld": "en"}


def dialogues(data: Path, turns: int) -> list[tuple[str, list[dict[str, str]]]]:
    """(language, turns) per dialogue, whole dialogues, up to `turns` // len(SETS) turns per set."""
    out: list[tuple[str, list[dict[str, str]]]] = []
    for name, lang in SETS.items():
        path = data / name / "events.jsonl"
        if not path.exists():
            continue
        sessions: dict[str, list[dict[str, str]]] = defaultdict(list)
        taken = 0
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if row["session_id"] not in sessions and taken >= turns // len(SETS):
                    break
                sessions[row["session_id"]].append(row)
                taken += 1
        out.extend((lang, rows) for rows in sessions.values())
    return out


def replay(convs: list[tuple[str, list[dict[str, str]]]], lex: CorefLexicon) -> dict[tuple[str, str], list[float]]:
    """Milliseconds per turn, by (language, wall|cpu)."""
    config = CorefConfig()
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    for lang, rows in convs:
        state: CorefState | None = None
        for row in rows:
            text = clean_text(row["text"], language_mix(row["text"]))
            ts = datetime.fromisoformat(row["ts"]).replace(tzinfo=UTC)
            start, cpu = time.perf_counter(), time.process_time()
            turn = CorefTurn(row["turn_id"], ts, split_sentences(text))
            state, _ = resolve_turn(state, turn, config, lex)
            times[(lang, "wall")].append((time.perf_counter() - start) * 1000)
            times[(lang, "cpu")].append((time.process_time() - cpu) * 1000)
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=dev_data_root())
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args(argv)
    convs = dialogues(args.data, args.turns)
    if not convs:
        raise SystemExit(f"no dev dialogues under {args.data}")
    lex = load_coref_lexicon().get()
    taggers.warm_up()
    for label, lexicon in (("rules + dictionary only", replace(lex, open_names=_NO_OPEN_NAMES)), ("shipped", lex)):
        taggers.zh_tokens.cache_clear()
        taggers.en_tokens.cache_clear()
        times = replay(convs, lexicon)
        for (lang, clock), ms in sorted(times.items()):
            p50, p95, p99 = np.percentile(ms, [50, 95, 99])
            print(
                f"{label:24s} {lang} {clock:4s}: {len(ms)} turns, ms/turn p50 {p50:.2f} p95 {p95:.2f} p99 {p99:.2f} "
                f"mean {np.mean(ms):.2f}"
            )


if __name__ == "__main__":
    main()
