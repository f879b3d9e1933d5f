"""A learned antecedent ranker over the rule resolver's candidates, measured leave-one-set-out.

    python -m evals.coref_ranker [--c 0.3] [--crosswoz]

Question: does a small learned model that picks a referring turn's entity among the candidates the
rule resolver already holds generalise to blind sets better than the rules themselves?

Candidates of a scored user turn: the distinct entities of the resolver's mention window when the
turn comes, plus the entities the turn's own anchors name or resolve to. Each candidate is
described by general features only (no word lists, no names): distance in turns and in mentions,
who said it last and who introduced it, how often it was said, whether it was salient, said early
in its sentence (a subject's place) or first in the dialogue, its type family, whether its type
agrees with the turn's first reference, string and head overlap with the turn, the kind of that
reference (pronoun, noun phrase, zero, none), the language, and what the rules chose (the rules'
first reference, their first named entity). A standardised logistic regression (or a small
gradient-boosted model) scores each candidate; the turn's pick is the best one.

Training is on the project's own sets only (tests/fixtures/coref_*.jsonl), never on the CrossWOZ
dev data. Each fresh set is held out in turn (its model trained on every other own set); the
rules are scored on the same turns, strictly (names equal, `evals.coref_own --strict`). With
`--crosswoz` one model trained on all own sets is also scored on the CrossWOZ dev referring turns
(current labels), beside the rules, with the cost of the features and of a linear scoring a turn.
Besides the logistic regression and the boosted trees on every feature, three variants are printed:
without the rules' pick (`rule_ref`, `rule_pick`), without any rule resolution (also
`resolved_here`), and the rules' pick with the learned one only where the rules chose nothing.
docs/write-time-filters.md has the table and the decision (measured, not shipped).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt

from evals.coref_crosswoz import DEFAULT as CROSSWOZ
from evals.coref_crosswoz import chosen_entity, current_labels, same_name
from schemas.memory import CorefAnchor
from state.core.language import clean_text, language_mix, split_sentences
from state.coref.lexicon import CorefLexicon, load_coref_lexicon
from state.coref.mentions import BARE_IDENTIFIER
from state.coref.resolver import CorefConfig, CorefState, CorefTurn, resolve_turn
from state.coref.window import Mention, compatibility

F = npt.NDArray[np.float64]
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
FRESH = tuple(FIXTURES / f"coref_fresh{n}.jsonl" for n in ("", "2", "3", "4", "5", "6", "7", "8", "9"))
OTHERS = (
    FIXTURES / "coref_holdout.jsonl",
    *(FIXTURES / f"coref_own_dev{n}.jsonl" for n in ("", "2", "3", "4", "5", "6")),
)
_CHINESE = re.compile(r"[\u4e00-\u9fff]")
_WORD = re.compile(r"[a-z0-9]+")
_T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
_PRONOUNS = frozenset(
    {"it", "its", "they", "them", "their", "he", "she", "him", "her", "his", "它", "他", "她", "他们", "它们"}
)

FEATURES: tuple[str, ...] = (
    "rule_ref",  # the rules' first resolved reference
    "rule_pick",  # the rules' pick for the turn (first reference, else first named)
    "named_here",  # named by the turn itself
    "named_first",  # the first entity the turn names
    "resolved_here",  # some reference of the turn resolved to it
    "in_window",  # held by the window when the turn came
    "turns_ago",  # log(1 + turns since it was last said)
    "rank",  # log(1 + its recency rank among the window's distinct entities)
    "count",  # log(1 + how often the window holds it)
    "last_by_user",  # last said by the user
    "introduced_by_user",  # first said by the user
    "previous_turn",  # said in the turn just before
    "salient",  # its last mention was salient (not listed in passing)
    "early",  # last said in the first fifth of its sentence (a subject's place)
    "first_in_dialogue",  # the first entity of the dialogue
    "person",
    "record",  # a record's number or code
    "untyped",
    "compat_agree",  # its type agrees with the turn's first reference (compatibility 2)
    "compat_untyped",  # compatibility 1
    "overlap",  # longest common substring with the turn's text, over its name's length
    "overlap_any",  # shares a word (en) or two characters (zh) with the turn
    "head_in",  # the first reference's head noun is in its name or kinds
    "ref_pronoun",  # the turn's first reference is a pronoun
    "ref_noun",  # … a noun phrase (这台路由器, the router)
    "ref_zero",  # … a zero anaphor
    "ref_none",  # the turn has no reference
    "pron_x_rank",  # pronoun × recency rank
    "none_x_named",  # no reference × named here
    "zh",  # the turn is Chinese
    "zh_x_overlap",
    "context",  # log(1 + the turn's content words or character pairs said around its mentions)
    "context_best",  # the candidate whose mentions' surroundings share the most with the turn
    "overlap_best",  # the candidate whose name shares the most with the turn
)
_STOP = frozenset(
    (  # noqa: SIM905
        "the and for you your can that this with what have will please are was from about does there they them "
        "its it's not but just how when then also would could should did has had our any all get got one"
    ).split()
)
_FUNCTION = frozenset("的了吗呢吧啊我你您他她它这那个是有在不也就都还要能会么")
_AROUND = 12  # characters either side of a Chinese mention; half as many words either side of an English one


@dataclass(frozen=True, slots=True)
class Case:
    """One scored turn: its candidates' names and features, the rules' pick and the expected name."""

    source: str
    candidates: tuple[str, ...]
    x: F
    rule: str | None
    expected: str
    cost_s: float = 0.0  # time taken to build the candidates' features


def _lcs(a: str, b: str) -> int:
    """Length of the longest common substring (case-folded, spaces dropped)."""
    a, b = "".join(a.lower().split()), "".join(b.lower().split())
    best, prev = 0, [0] * (len(b) + 1)
    for ca in a:
        cur = [0] * (len(b) + 1)
        for j, cb in enumerate(b):
            if ca == cb:
                cur[j + 1] = prev[j] + 1
                best = max(best, cur[j + 1])
        prev = cur
    return best


def _shares(entity: str, text: str) -> bool:
    if entity.isascii():
        words = {w for w in _WORD.findall(entity.lower()) if len(w) > 2}
        return bool(words & set(_WORD.findall(text.lower())))
    return _lcs(entity, text) >= 2


def _tokens(text: str) -> set[str]:
    """Content words (en, lower-cased, not function words) and pairs of Chinese characters (no function
    character in them) of a text."""
    words = {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOP}
    han = [c if _CHINESE.match(c) and c not in _FUNCTION else " " for c in text]
    pairs = {a + b for a, b in itertools.pairwise(han) if a != " " and b != " "}
    return words | pairs


def _around(m: Mention) -> str:
    """The words said around a mention in its sentence (its own name left out)."""
    a, b = m.span
    if m.sentence.isascii():
        before, after = m.sentence[:a].split()[-_AROUND // 2 :], m.sentence[b:].split()[: _AROUND // 2]
        return " ".join([*before, *after])
    return m.sentence[max(0, a - _AROUND) : a] + " " + m.sentence[b : b + _AROUND]


def candidate_features(
    window: Sequence[Mention],
    anchors: Sequence[CorefAnchor],
    text: str,
    turn: int,
    turn_of: dict[str, tuple[int, str]],
    lex: CorefLexicon,
) -> tuple[tuple[str, ...], F]:
    """The turn's candidates and their feature rows (`FEATURES`).

    `turn_of` maps a turn id to its index in the dialogue and its speaker."""
    rule_pick = chosen_entity(tuple(anchors))
    refs = [a for a in anchors if a.kind != "entity"]
    first_ref = next((a for a in refs if a.resolved_entity), refs[0] if refs else None)
    named = [a.resolved_entity for a in anchors if a.kind == "entity" and a.resolved_entity]
    resolved = {a.resolved_entity for a in refs if a.resolved_entity}
    entities: list[str] = []
    last: dict[str, Mention] = {}
    first: dict[str, Mention] = {}
    count: dict[str, int] = defaultdict(int)
    for said_m in window:
        count[said_m.entity] += 1
        first.setdefault(said_m.entity, said_m)
        last[said_m.entity] = said_m
    order = sorted(last, key=lambda e: -last[e].seq)
    rank = {e: i for i, e in enumerate(order)}
    dialogue_first = window[0].entity if window else (named[0] if named else None)
    for e in [*order, *named, *resolved]:
        if e not in entities:
            entities.append(e)
    ref_text = first_ref.mention.lower() if first_ref is not None else ""
    ref_type = first_ref.entity_type if first_ref is not None else None
    pronoun = first_ref is not None and ref_text in _PRONOUNS
    zero = first_ref is not None and first_ref.kind == "zero"
    none = first_ref is None
    noun = not (pronoun or zero or none)
    head = ref_text
    for p in (
        "这个",
        "那个",
        "这家",
        "那家",
        "这台",
        "那台",
        "这款",
        "那款",
        "这位",
        "那位",
        "这",
        "那",
        "the ",
        "that ",
        "this ",
    ):
        if head.startswith(p):
            head = head[len(p) :]
            break
    zh = _CHINESE.search(text) is not None
    said = _tokens(text)
    context: dict[str, set[str]] = defaultdict(set)
    for said_m in window:
        context[said_m.entity] |= _tokens(_around(said_m))
    shared = [len(said & context.get(e, set())) for e in entities]
    rows = []
    for k, e in enumerate(entities):
        m = last.get(e)
        types = m.types if m is not None else next((a.entity_type for a in anchors if a.resolved_entity == e), None)
        types_t: tuple[str, ...] = types if isinstance(types, tuple) else ((types,) if types else ())
        said_at = turn_of.get(m.turn_id, (turn, "user")) if m is not None else (turn, "user")
        intro = turn_of.get(first[e].turn_id, (turn, "user"))[1] if e in first else "user"
        kinds = m.kinds if m is not None else ()
        overlap = max([_lcs(e, text), *(_lcs(k, text) for k in kinds)]) / max(1, len("".join(e.split())))
        compat = compatibility(ref_type, types_t, lex) if first_ref is not None else 0
        r = math.log1p(rank.get(e, 0))
        rows.append(
            [
                float(first_ref is not None and first_ref.resolved_entity == e),
                float(rule_pick == e),
                float(e in named),
                float(bool(named) and named[0] == e),
                float(e in resolved),
                float(m is not None),
                math.log1p(max(0, turn - said_at[0])) if m is not None else 0.0,
                r,
                math.log1p(count.get(e, 0)),
                float(said_at[1] == "user"),
                float(intro == "user"),
                float(m is not None and turn - said_at[0] == 1),
                float(m is None or m.salient),
                float(m is not None and m.span[0] <= 0.2 * max(1, len(m.sentence))),
                float(e == dialogue_first),
                float("person" in types_t),
                float(types_t == (BARE_IDENTIFIER,) or bool(set(types_t) & lex.record_types)),
                float(not types_t),
                float(compat == 2),
                float(compat == 1),
                min(1.0, overlap),
                float(_shares(e, text) or any(_shares(k, text) for k in kinds)),
                float(len(head) >= 2 and (head in e.lower() or head in kinds)),
                float(pronoun),
                float(noun),
                float(zero),
                float(none),
                float(pronoun) * r,
                float(none and e in named),
                float(zh),
                float(zh) * min(1.0, overlap),
                math.log1p(shared[k]),
                float(shared[k] > 0 and shared[k] == max(shared) and shared.count(shared[k]) == 1),
                0.0,  # filled below
            ]
        )
    names = [row[FEATURES.index("overlap")] for row in rows]
    for row, value in zip(rows, names, strict=True):
        row[-1] = float(value > 0 and value == max(names) and names.count(value) == 1)
    return tuple(entities), np.array(rows, dtype=np.float64).reshape(len(rows), len(FEATURES))


def _case(
    source: str,
    state: CorefState | None,
    anchors: tuple[CorefAnchor, ...],
    text: str,
    turn: int,
    turn_of: dict[str, tuple[int, str]],
    expected: str,
    lex: CorefLexicon,
) -> Case:
    window = state.mentions if state is not None else ()
    t0 = time.perf_counter()
    entities, x = candidate_features(window, anchors, text, turn, turn_of, lex)
    return Case(source, entities, x, chosen_entity(anchors), expected, time.perf_counter() - t0)


def collect_own(gold: Path, lex: CorefLexicon) -> list[Case]:
    """The scored user turns of one own set, replayed through the rule resolver."""
    config, cases = CorefConfig(), []
    for line in gold.read_text(encoding="utf-8").splitlines():
        dialogue = json.loads(line)
        state: CorefState | None = None
        turn_of: dict[str, tuple[int, str]] = {}
        for i, (speaker, text, expected) in enumerate(dialogue["turns"]):
            turn_id = f"{dialogue['id']}/{i}"
            turn_of[turn_id] = (i, "user" if speaker == "user" else "agent")
            sentences = split_sentences(clean_text(text, language_mix(text)))
            before = state
            state, anchors = resolve_turn(
                state, CorefTurn(turn_id, _T0 + timedelta(seconds=30 * i), sentences), config, lex
            )
            if expected is not None and speaker == "user":
                cases.append(_case(gold.stem, before, anchors, text, i, turn_of, expected, lex))
    return cases


def collect_crosswoz(data: Path, lex: CorefLexicon) -> list[Case]:
    """The CrossWOZ dev referring turns (current labels), replayed through the rule resolver."""
    gold = {row["turn_id"]: row for row in map(json.loads, data.read_text(encoding="utf-8").splitlines())}
    current = current_labels(data, gold)
    sessions: dict[str, list[dict[str, str]]] = defaultdict(list)
    for line in (data.parent / "events.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        sessions[row["session_id"]].append(row)
    config, cases = CorefConfig(), []
    for turns in sessions.values():
        state: CorefState | None = None
        turn_of: dict[str, tuple[int, str]] = {}
        for i, row in enumerate(turns):
            turn_of[row["turn_id"]] = (i, "user" if row["speaker"] == "user" else "agent")
            text = clean_text(row["text"], language_mix(row["text"]))
            ts = datetime.fromisoformat(row["ts"]).replace(tzinfo=UTC)
            before = state
            state, anchors = resolve_turn(state, CorefTurn(row["turn_id"], ts, split_sentences(text)), config, lex)
            if row["turn_id"] in gold:
                cases.append(_case("crosswoz", before, anchors, row["text"], i, turn_of, current[row["turn_id"]], lex))
    return cases


class Ranker:
    """A candidate scorer trained on candidate rows (right name: 1) and the pick it makes."""

    def __init__(self, kind: str, c: float = 0.3, features: Sequence[str] = FEATURES) -> None:
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        self.kind = kind
        self.columns = [FEATURES.index(f) for f in features]
        if kind == "lr":
            self.model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))
        else:
            self.model = HistGradientBoostingClassifier(
                max_depth=3, max_iter=80, learning_rate=0.08, min_samples_leaf=20, l2_regularization=1.0, random_state=0
            )

    def fit(self, cases: Sequence[Case]) -> Ranker:
        rows = [c for c in cases if c.candidates]
        x = np.vstack([c.x[:, self.columns] for c in rows])
        y = np.concatenate([[float(same_name(e, c.expected)) for e in c.candidates] for c in rows])
        self.model.fit(x, y)
        return self

    def pick(self, case: Case) -> str | None:
        if not case.candidates:
            return None
        scores = self.model.predict_proba(case.x[:, self.columns])[:, 1]
        return case.candidates[int(np.argmax(scores))]

    def linear(self) -> tuple[F, F, F]:
        """A logistic regression's mean, scale and coefficients: what a shipped model would hold."""
        scaler, model = self.model.steps[0][1], self.model.steps[1][1]
        return scaler.mean_, scaler.scale_, model.coef_[0]


def _right(cases: Sequence[Case], picks: Sequence[str | None]) -> int:
    return sum(same_name(p, c.expected) for c, p in zip(cases, picks, strict=True))


WITHOUT_RULES = tuple(f for f in FEATURES if f not in ("rule_ref", "rule_pick"))
WITHOUT_RESOLUTION = tuple(f for f in WITHOUT_RULES if f != "resolved_here")
VARIANTS: dict[str, tuple[str, Sequence[str]]] = {
    "lr": ("lr", FEATURES),
    "gbm": ("gbm", FEATURES),
    "lr, no rule pick": ("lr", WITHOUT_RULES),
    "lr, no rule resolution": ("lr", WITHOUT_RESOLUTION),
    "rules, else lr": ("lr", FEATURES),  # the learned pick only where the rules chose nothing
}


def _picks(name: str, ranker: Ranker, cases: Sequence[Case]) -> list[str | None]:
    if name == "rules, else lr":
        return [c.rule if c.rule is not None else ranker.pick(c) for c in cases]
    return [ranker.pick(c) for c in cases]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--c", type=float, default=0.3, help="logistic regression's inverse regularisation")
    parser.add_argument("--crosswoz", action="store_true", help="also score models trained on all own sets on CrossWOZ")
    args = parser.parse_args(argv)
    lex = load_coref_lexicon().get()
    by_set = {p.stem: collect_own(p, lex) for p in (*FRESH, *OTHERS)}
    fresh = [p.stem for p in FRESH]
    head = "| held-out set | turns | reachable | rules | rules gave none | " + " | ".join(VARIANTS) + " |"
    print(head + "\n|" + "---|" * (head.count("|") - 1))
    sums: dict[str, list[float]] = defaultdict(list)
    for held in fresh:
        test = by_set[held]
        train = [c for s, cs in by_set.items() if s != held for c in cs]
        n = len(test)
        reach = sum(any(same_name(e, c.expected) for e in c.candidates) for c in test) / n
        rules = _right(test, [c.rule for c in test]) / n
        none = sum(c.rule is None for c in test)
        cells = [f"{held}", str(n), f"{reach:.1%}", f"{rules:.1%}", str(none)]
        sums["rules"].append(rules)
        for name, (kind, features) in VARIANTS.items():
            ranker = Ranker(kind, args.c, features).fit(train)
            score = _right(test, _picks(name, ranker, test)) / n
            sums[name].append(score)
            cells.append(f"{score:.1%} ({100 * (score - rules):+.1f})")
        print("| " + " | ".join(cells) + " |", flush=True)
    means = [f"{np.mean(sums[k]):.1%} ({100 * (np.mean(sums[k]) - np.mean(sums['rules'])):+.1f})" for k in VARIANTS]
    print(f"| mean | | | {np.mean(sums['rules']):.1%} | | " + " | ".join(means) + " |")
    own = [c for cs in by_set.values() for c in cs]
    costs = np.array([c.cost_s for c in own]) * 1e3
    print(f"features: p50 {np.percentile(costs, 50):.3f} ms, p95 {np.percentile(costs, 95):.3f} ms a turn (own sets)")
    if args.crosswoz:
        cross = collect_crosswoz(CROSSWOZ, lex)
        rules_right = _right(cross, [c.rule for c in cross])
        parts = [f"rules {rules_right / len(cross):.1%}"]
        for name, (kind, features) in VARIANTS.items():
            ranker = Ranker(kind, args.c, features).fit(own)
            parts.append(f"{name} {_right(cross, _picks(name, ranker, cross)) / len(cross):.1%}")
        mean, scale, coef = Ranker("lr", args.c).fit(own).linear()
        t0 = time.perf_counter()
        for c in cross:
            if c.candidates:
                int(np.argmax(((c.x - mean) / scale) @ coef))
        score_ms = (time.perf_counter() - t0) / len(cross) * 1e3
        costs = np.array([c.cost_s for c in cross]) * 1e3
        print(f"CrossWOZ ({len(cross)} turns, current labels, models trained on all own sets): " + ", ".join(parts))
        print(
            f"  cost a turn: features p50 {np.percentile(costs, 50):.3f} ms, p95 {np.percentile(costs, 95):.3f} ms; "
            f"linear scoring {score_ms:.4f} ms"
        )


if __name__ == "__main__":
    main()
