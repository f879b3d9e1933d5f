"""Coreference on the project's own dialogues (tests/fixtures/coref_*.jsonl): a check outside CrossWOZ.

    python -m evals.coref_own [--gold tests/fixtures/coref_holdout.jsonl] [--show-errors]
    python -m evals.coref_own --fresh [--show-errors]    # tests/fixtures/coref_fresh.jsonl
    python -m evals.coref_own --gold FILE --window      # also: how many referents were found at all

Each line is one dialogue: `{"id", "turns": [[speaker, text, expected entity or null], …]}`,
written by the project (zh and en, travel and customer service). Every user turn with an
expected entity is scored like the CrossWOZ eval: the entity chosen for the turn is its first
resolved reference, else the first entity it names. It is right when it names the expected thing:
the same name, or the name with a person's title before it or a kind word after it (`same_referent`:
Dr. Helen Marsh for Helen Marsh, B207班 for B207), since the sets were written by different hands
and disagree on whether those words belong to the name; `--strict` asks for the name itself. The
score is printed in all and by language (a turn with a Chinese character counts as Chinese).

`coref_fresh.jsonl` (`--fresh`) is the fresh set: customer-service dialogues (e-commerce after-sales,
IT support, banking, telecom, hotels) about products, identifiers, people and organisations no
dictionary lists, written after entities were found from word tags and scored before any tuning
on it (docs/write-time-filters.md has the first score). `coref_fresh2.jsonl` and `coref_fresh3.jsonl`
(`--gold tests/fixtures/coref_fresh3.jsonl`: after-sales, IT support, banking, telecom, travel, food
delivery, healthcare) were each written after the previous set's fixes and scored once before any
fix they showed; so was `coref_fresh4.jsonl` (after-sales, IT support, banking, telecom, travel,
insurance, education, healthcare; half zh, half en), committed before the resolver ran on it.
`coref_fresh5.jsonl` (set 5: after-sales, IT support, banking, telecom, travel, food delivery,
healthcare, insurance, education, utilities, SaaS, car service, logistics; half zh, half en) was
written blind by hand, committed before the resolver ran on it. `coref_fresh6.jsonl` (set 6, 14
domains; `coref_fresh6.md` describes it and gives its first score) was written blind the same way.
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

from evals.coref_crosswoz import chosen_entity, same_name
from state.core.language import clean_text, language_mix, split_sentences
from state.coref.lexicon import load_coref_lexicon
from state.coref.resolver import CorefConfig, CorefState, CorefTurn, resolve_turn

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
DEFAULT = FIXTURES / "coref_holdout.jsonl"  # written after the rules were fixed; scored, never tuned on
FRESH = FIXTURES / "coref_fresh.jsonl"
_CHINESE = re.compile(r"[\u4e00-\u9fff]")
_T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


_TITLE = re.compile(r"^(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+")


@cache
def _kind_words() -> frozenset[str]:
    """The words the coreference lexicon knows as kinds of things (headset, plan, 鼠标, 班)."""
    lex = load_coref_lexicon().get()
    categories = {n for word in lex.categories.words() for hit in lex.categories.find(word) for n in hit.value}
    return frozenset(categories | set(lex.type_nouns.words()) | set(lex.open_names.zh_product_heads))


def same_referent(got: str | None, expected: str | None) -> bool:
    """The names a reader takes for the same thing: equal up to width and spaces (`same_name`), or one
    is the other with a title before a person's name (Dr. Helen Marsh), a kind word after the name of
    a product, plan or code (Bose QuietComfort Ultra headset, B207班) or before a code (case 88120).
    The sets disagree on whether such words belong to the name, so neither spelling is counted wrong;
    any other extra word still is.

    >>> same_referent("Dr. Helen Marsh", "Helen Marsh"), same_referent("B207", "B207班")
    (True, True)
    >>> same_referent("Notion Plus", "Notion AI add-on"), same_referent("Lemonade policy renews", "Lemonade policy")
    (False, False)
    """
    if same_name(got, expected):
        return True
    if got is None or expected is None:
        return False
    short, long = sorted((got, expected), key=len)
    if _TITLE.sub("", long) == short:
        return True
    if long.startswith(short):
        rest = long[len(short) :].strip().lower()
        return short[-1:].isascii() and short[-1:].isalnum() and rest in _kind_words()
    code = short.isascii() and " " not in short and any(c.isdigit() for c in short)
    label = long[: len(long) - len(short)].strip().lower()  # case 88120, 轻量服务器lhins-8k2f9
    return long.endswith(short) and code and label in _kind_words()


def evaluate(gold: Path, *, show_errors: bool = False) -> tuple[int, int]:
    """(right, total) referring turns of a set."""
    by_language = evaluate_by_language(gold, show_errors=show_errors)
    return sum(r for r, _ in by_language.values()), sum(t for _, t in by_language.values())


def evaluate_by_language(gold: Path, *, show_errors: bool = False, strict: bool = False) -> dict[str, tuple[int, int]]:
    """(right, total) referring turns of a set, by language (zh, en); `strict`: names must be equal."""
    same = same_name if strict else same_referent
    lexicon = load_coref_lexicon().get()
    config = CorefConfig()
    counts = {"zh": [0, 0], "en": [0, 0]}
    for line in gold.read_text(encoding="utf-8").splitlines():
        dialogue = json.loads(line)
        state: CorefState | None = None
        for i, (speaker, text, expected) in enumerate(dialogue["turns"]):
            sentences = split_sentences(clean_text(text, language_mix(text)))
            turn = CorefTurn(f"{dialogue['id']}/{i}", _T0 + timedelta(seconds=30 * i), sentences)
            state, anchors = resolve_turn(state, turn, config, lexicon)
            if expected is None or speaker != "user":
                continue
            got = chosen_entity(anchors)
            count = counts["zh" if _CHINESE.search(text) else "en"]
            count[0] += same(got, expected)
            count[1] += 1
            if show_errors and not same(got, expected):
                print(f"{dialogue['id']}/{i} {text!r}: expected {expected!r}, got {got!r}")
    return {lang: (right, total) for lang, (right, total) in counts.items() if total}


def in_window(gold: Path, *, strict: bool = False) -> tuple[int, int]:
    """(held, total) referring turns whose expected referent is among the window's mentions when the
    turn comes: what the choice of a referent can reach at best (the rest was never found or cut
    otherwise)."""
    same = same_name if strict else same_referent
    lexicon = load_coref_lexicon().get()
    config = CorefConfig()
    held = total = 0
    for line in gold.read_text(encoding="utf-8").splitlines():
        dialogue = json.loads(line)
        state: CorefState | None = None
        for i, (speaker, text, expected) in enumerate(dialogue["turns"]):
            window = state.mentions if state is not None else ()
            sentences = split_sentences(clean_text(text, language_mix(text)))
            turn = CorefTurn(f"{dialogue['id']}/{i}", _T0 + timedelta(seconds=30 * i), sentences)
            state, _ = resolve_turn(state, turn, config, lexicon)
            if expected is None or speaker != "user":
                continue
            total += 1
            held += any(same(m.entity, expected) for m in window)
    return held, total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, default=DEFAULT)
    parser.add_argument("--fresh", action="store_true", help=f"score {FRESH.name}")
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument("--strict", action="store_true", help="names must be equal (no title or kind word apart)")
    parser.add_argument("--window", action="store_true", help="also: referents among the window's mentions")
    args = parser.parse_args(argv)
    gold = FRESH if args.fresh else args.gold
    by_language = evaluate_by_language(gold, show_errors=args.show_errors, strict=args.strict)
    right, total = sum(r for r, _ in by_language.values()), sum(t for _, t in by_language.values())
    parts = ", ".join(f"{lang} {r}/{t} = {r / t:.1%}" for lang, (r, t) in by_language.items())
    print(f"own dialogues {gold.name}: {right}/{total} referring turns = {right / total:.1%} ({parts})")
    if args.window:
        held, n = in_window(gold, strict=args.strict)
        print(f"  referent among the window's mentions when the turn came: {held}/{n} = {held / n:.1%}")


if __name__ == "__main__":
    main()
