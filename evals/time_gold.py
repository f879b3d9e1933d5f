"""Score time normalisation on our own gold set (tests/fixtures/time_gold.jsonl).

    python -m evals.time_gold [--gold PATH] [--show-errors]

Each gold line is one expression inside a sentence: the text, the expression as said
(`form`), the event time (`base`), the speaker's zone and the expected start instant with
its granularity. An expression counts as right when the found expression overlapping the
form has the expected start to the stated granularity (compared on the speaker's wall
clock); for a found deadline the instant compared is its limit (the day "月底前" names is
the day its deadline falls on). A line may also say the `kind` expected (point, range,
deadline, duration), the exact `deadline` instant (compared to the second: it must be exact)
and, for a duration, its `end` (to the granularity); then those must hold as well. The same
sentences go through dateparser alone (search_dates with the event time as RELATIVE_BASE) for
comparison (it gives no kinds, so it is scored on the instant alone); the figures are printed
per language and modality, and per kind and tense where the set says them.
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from state.core.language import language_mix
from state.time.extract import normalise_times

GOLD = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "time_gold.jsonl"


@dataclass(frozen=True, slots=True)
class GoldItem:
    id: str
    lang: str
    modality: str
    text: str
    form: str
    base: datetime
    tz: str
    start: datetime
    granularity: str
    kind: str | None = None
    deadline: datetime | None = None
    end: datetime | None = None
    tense: str | None = None  # "past" / "future": the line tests an ambiguous date read by its tense

    @property
    def span(self) -> tuple[int, int]:
        begin = self.text.find(self.form)
        return begin, begin + len(self.form)


def load_gold(path: Path = GOLD) -> list[GoldItem]:
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            row["base"] = datetime.fromisoformat(row["base"])
            for key in ("start", "deadline", "end"):
                if row.get(key) is not None:
                    row[key] = datetime.fromisoformat(row[key])
            items.append(GoldItem(**row))
    return items


def floor_to(value: datetime, granularity: str) -> tuple[int, ...]:
    """The instant truncated to the granularity, as a comparable tuple."""
    parts = (value.year, value.month, value.day, value.hour, value.minute)
    keep = {"year": 1, "month": 2, "week": 3, "day": 3, "range": 3, "hour": 4, "minute": 5, "second": 5}
    return parts[: keep[granularity]]


@dataclass(frozen=True, slots=True)
class Hit:
    """One expression a system found, on the speaker's wall clock."""

    span: tuple[int, int]
    form: str
    start: datetime
    kind: str | None = None
    deadline: datetime | None = None
    end: datetime | None = None

    @property
    def anchor(self) -> datetime:
        """The instant the expression is about: a deadline's limit, otherwise its start."""
        return self.deadline if self.deadline is not None else self.start


Found = list[Hit]


def ours(item: GoldItem) -> Found:
    zone = ZoneInfo(item.tz)
    found = normalise_times(item.text, item.base, language_mix(item.text), timezone=item.tz)
    return [
        Hit(
            t.span,
            t.original_form,
            t.start.astimezone(zone),
            t.kind,
            None if t.deadline is None else t.deadline.astimezone(zone),
            t.end.astimezone(zone),
        )
        for t in found
    ]


def dateparser_only(item: GoldItem) -> Found:
    from dateparser.search import search_dates

    zone = ZoneInfo(item.tz)
    base = item.base.astimezone(zone).replace(tzinfo=None)
    settings = {"RELATIVE_BASE": base, "RETURN_AS_TIMEZONE_AWARE": False}
    languages = ["zh", "en"] if item.lang == "zh" else ["en"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hits = search_dates(item.text, languages=languages, settings=settings) or []
    out: Found = []
    cursor = 0
    for form, point in hits:
        begin = item.text.find(form, cursor)
        if begin >= 0:
            cursor = begin + len(form)
            out.append(Hit((begin, begin + len(form)), form, point.replace(tzinfo=zone)))
    return out


def judge(item: GoldItem, found: Found) -> tuple[bool, bool, str]:
    """(start right, form exactly right, what was found) for one gold item."""
    a, b = item.span
    best = max(found, key=lambda f: min(b, f.span[1]) - max(a, f.span[0]), default=None)
    if best is None or min(b, best.span[1]) - max(a, best.span[0]) <= 0:
        return False, False, "nothing found"
    zone = ZoneInfo(item.tz)
    expected = item.start.astimezone(zone)
    right = floor_to(best.anchor, item.granularity) == floor_to(expected, item.granularity)
    if best.kind is None:  # a system without kinds (dateparser): scored on the instant alone
        return right, best.form == item.form, f"{best.form!r} → {best.anchor.isoformat()}"
    if item.kind is not None:
        right = right and best.kind == item.kind
    if item.deadline is not None:
        right = right and best.deadline == item.deadline.astimezone(zone)
    if item.end is not None:
        right = (
            right
            and best.end is not None
            and floor_to(best.end, item.granularity) == floor_to(item.end.astimezone(zone), item.granularity)
        )
    what = f"{best.form!r} → {best.anchor.isoformat()}"
    if best.kind is not None:
        until = f", end {best.end.isoformat()}" if best.kind == "duration" and best.end else ""
        what += f" [{best.kind}{until}]"
    return right, best.form == item.form, what


def score(items: list[GoldItem], system: Callable[[GoldItem], Found]) -> tuple[dict[str, list[int]], list[str]]:
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    errors = []
    for item in items:
        right, exact, what = judge(item, system(item))
        keys = [item.lang, f"{item.lang}/{item.modality}"]
        if item.kind is not None:
            keys.append(f"kind/{'deadline+duration' if item.kind in ('deadline', 'duration') else item.kind}")
        if item.tense is not None:
            keys.append("tense/" + item.tense)
        for key in keys:
            tally[key][0] += right
            tally[key][1] += exact
            tally[key][2] += 1
        if not right:
            want = f"{item.start.isoformat()} ({item.granularity})"
            if item.kind is not None:
                want += f" [{item.kind}" + (f", deadline {item.deadline.isoformat()}" if item.deadline else "") + "]"
            errors.append(f"{item.id} {item.text!r} [{item.form}] expected {want}; got {what}")
    return tally, errors


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, default=GOLD)
    parser.add_argument("--show-errors", action="store_true")
    args = parser.parse_args(argv)
    items = load_gold(args.gold)
    results = {name: score(items, system) for name, system in (("ours", ours), ("dateparser", dateparser_only))}
    print(f"time gold set: {args.gold} ({len(items)} expressions)")
    print(f"{'subset':<24} {'n':>4}  {'ours':>7} {'(form)':>7}  {'dateparser':>10}")
    for key in sorted(results["ours"][0]):
        r_ok, r_form, n = results["ours"][0][key]
        d_ok = results["dateparser"][0][key][0]
        print(f"{key:<24} {n:>4}  {r_ok / n:>7.1%} {r_form / n:>7.1%}  {d_ok / n:>10.1%}")
    total_ok = sum(results["ours"][0][lang][0] for lang in ("zh", "en") if lang in results["ours"][0])
    print(f"{'all':<24} {len(items):>4}  {total_ok / max(1, len(items)):>7.1%}")
    if args.show_errors:
        for name, (_, errors) in results.items():
            print(f"\n{name} errors ({len(errors)}):")
            print("\n".join(errors))


if __name__ == "__main__":
    main()
