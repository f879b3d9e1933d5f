"""Deadlines and durations: the limit a time expression sets, and lengths of time.

Three passes, both languages alike (cue words in `state/time/resources/time_cues.yaml`):

* `find_within` — a count of time that bounds a promise: 两天内, 三个工作日内, 48小时内, 一周之内,
  within 5 business days, in the next 24 hours. The deadline is the end of the last day counted
  (days, weeks, months) or the exact instant (hours, minutes); working days count Monday–Friday
  (`calendar.add_business_days`; public holidays are not known).
* `mark_deadlines` — a found point or range with a limit word around it: 12月20日前, 下午4点之前,
  截止到12月25日, 到月底为止, before December 20, by 4pm, no later than Friday, Friday at the
  latest. The deadline of a clock time is that instant (16:00, not 16:59:59); of a day, its end
  (a day named in a promise is included: 12月20日前 leaves the 20th); "before"/前 a span longer
  than a day (下周前, before next month) means before it starts, unless the span is an end
  (年底前, by the end of the month).
* `find_durations` — a length that is not a limit: 需要三个工作日, 等了三天, takes 3-5 business
  days, for two weeks, hasn't moved in 45 minutes. It runs from the event forward, or up to the
  event when said in the past.

A deadline expression runs from the event (`start`) to its limit (`end` = `deadline`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, tzinfo
from functools import lru_cache
from typing import Any

from schemas.memory import Granularity
from state.core.datafiles import packaged, read_data
from state.time import calendar as cal
from state.time.calendar import Found
from state.time.chinese import chinese_number
from state.time.english_atoms import PERFECT, negated_perfect_before, perfect_before, word_number
from state.time.tense import ambiguous_unit, clause_tense, move

_F = re.IGNORECASE
_ZH_NUM = r"(?:[0-9]{1,3}(?:\.[0-9]+)?|[零〇一二两三四五六七八九十百几]+)"
_EN_NUM = (
    r"(?:\d{1,3}|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ]"
    r"(?:one|two|three|four|five|six|seven|eight|nine)|a couple of|"
    r"a few|several|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|one|two|three|four|five|six|seven|eight|nine|an|a)"
)
_ZH_UNIT = r"(?P<biz>工作|个工作|自然|个自然)?(?P<u>日|天|小时|钟头|分钟|周|星期|礼拜|个月|年)"
_EN_UNIT = (
    r"(?:(?P<biz>business|working|calendar)\s+)?"
    r"(?P<u>minutes?|mins?|hours?|hrs?|days?|weeks?|fortnights?|months?|years?)\b"
)
# A range counts its upper end; its lower end may carry the unit too (1小时 - 2小时, 3到5个工作日).
_ZH_LOW = r"(?:工作日|个工作日|天|日|小时|个小时|钟头|分钟|周|星期|个星期|个月|年)?"
_ZH_COUNT = (
    rf"(?:(?P<lo>{_ZH_NUM})(?:个)?{_ZH_LOW}\s*(?:到|至|-|~|～|—)\s*)?(?P<n>{_ZH_NUM}|半)(?:个)?(?P<half>半)?{_ZH_UNIT}"
)
# "and a half" before or after the unit adds half of it: two and a half hours, an hour and a half. A tens
# word joined to a ones word by a hyphen is one number (twenty-five minutes), no range from twenty to five.
_EN_COUNT = (
    rf"(?:(?P<lo>\d{{1,3}}|{_EN_NUM})(?!(?<=ty)-[a-z])\s*(?:-|–|to|or)\s*)?"
    rf"(?P<n>{_EN_NUM}|half an?)(?P<half>\s+and a half)?\s+{_EN_UNIT}(?P<half2>\s+and a half\b)?"
)

_NO_DIGIT_BEFORE = r"(?<![0-9.零〇一二两三四五六七八九十百])"
_ZH_WITHIN = re.compile(rf"{_NO_DIGIT_BEFORE}{_ZH_COUNT}(?:之内|以内|内)")
_EN_WITHIN = re.compile(
    rf"\b(?:within|inside of|in the next|in the coming|over the next|in)\s+(?:the\s+next\s+)?{_EN_COUNT}", _F
)
# A duration: a count of time that no other pass took and that is no offset (三天后, two days ago).
_ZH_DURATION = re.compile(
    rf"{_NO_DIGIT_BEFORE}(?<![第每这那前后上下过])(?<!星期)(?<!礼拜){_ZH_COUNT}(?![前后以之内级纪龄代底初末中号日])"
)
_EN_DURATION = re.compile(
    rf"\b(?:for|takes?|took|taking|lasts?|lasted|need|needs|needed|about|around|approximately|roughly|"
    rf"waited|waiting|spent|spending|been|after|in)\s+"
    rf"(?:(?:about|around|approximately|roughly|the (?:past|last|next))\s+)?{_EN_COUNT}"
    rf"|\b(?P<lo2>\d{{1,3}})\s*(?:-|–|to)\s*(?P<n2>\d{{1,3}})\s+(?P<biz2>business|working)\s+days?\b"
    rf"|\b(?P<n3>\d{{1,3}}|{_EN_NUM})\s+(?P<biz3>business|working)\s+days?\b(?!\s+ago)",
    _F,
)
# Cheap gates: a count needs a unit word; most turns have none and skip the long patterns.
_ZH_GATE = re.compile(r"天|日|小时|钟头|分钟|周|星期|礼拜|个月|年")
_EN_GATE = re.compile(r"\b(?:min(?:ute)?|hour|hr|day|week|fortnight|month|year)s?\b", _F)
_EN_OFFSET_AFTER = re.compile(r"^\s+(?:ago|later|from now|from today|after|before|earlier)\b", _F)
_ZH_UNITS = {"日": "day", "天": "day", "小时": "hour", "钟头": "hour", "分钟": "minute"}
_ZH_UNITS |= {"周": "week", "星期": "week", "礼拜": "week", "个月": "month", "年": "year"}
# "be waiting" (I'll be waiting for 20 minutes, can you be waiting) is ahead, not a wait up to now.
_PAST_DURATION = re.compile(
    r"(等了|用了|花了|过了|已经|足足|整整|近|最近|过去|了\s*$)"
    r"|\b(for the (?:past|last)|waited|(?<!\bbe )waiting|been|took|lasted|ago|already)\b",
    _F,
)


# A perfect earlier in the length's clause ("I've been stuck in this queue for 25 minutes", "we have
# waited at the counter for an hour") says the length runs up to the event; "been" may sit far before it.
_PERFECT = re.compile(
    r"\bbeen\b|(?:\b(?:have|has|had)|['’](?:ve|d))\s+(?:\w+\s+)?(?:waited|sat|stood|stayed|spent|queued|held)\b", _F
)
# Any perfect before "for <length>" in its clause ("the HOA has ignored my complaint for two months", "they
# haven't answered for a week") looks back from the event, unless its verb sets a span ahead ("has booked
# the room for two nights", "has suspended the card for 30 days").
_PERFECT_AHEAD = re.compile(
    r"\b(?:booked|reserved|scheduled|planned|arranged|extended|postponed|delayed|pushed|moved|set|suspended|"
    r"blocked|banned|locked|frozen|paused|put|rented|leased|hired|approved|granted|offered|agreed|promised)\b",
    _F,
)
_TO_VERB = re.compile(r"\bto\s+[a-z]+\b", _F)
# A perfect of not doing ("have refused to sync", "has failed to load", "has declined to answer") with its
# to-verb is a state up to now, not a plan ahead: "for" a length after it looks back from the event.
_NOT_DOING = re.compile(r"\b(?:refused|failed|declined|neglected|ceased|stopped)$", _F)


def _perfect_length(text: str, own_clause: int, m: re.Match[str]) -> bool:
    """A "for" length after a perfect in its own clause whose verb does not set a span ahead."""
    if m.group(0)[:4].lower() != "for ":
        return False
    perfect = PERFECT.search(text, own_clause, m.start())
    if perfect is None or _PERFECT_AHEAD.search(perfect.group(0)):
        return False
    if _NOT_DOING.search(perfect.group(0)):
        return True
    return _TO_VERB.search(text, perfect.end(), m.start()) is None  # "has decided to stay for two weeks": ahead


# A length followed by "now" or "so far" ("on hold for 35 minutes now") runs up to the event; so does a
# Chinese one followed by a negation (三天没有更新, 两周都没回复, 一个月未处理: how long something has not happened).
_UP_TO_NOW = re.compile(r"^\s+(?:now|so far|already)\b|^(?:都|还|一直|仍|仍然)?(?:没有?|未)(?!问题|关系|事|必要)", _F)
# A length said in the present ("delivery takes 2 to 3 business days", "it needs a week") runs
# ahead of the event, whatever past word its clause holds elsewhere ("the courier said …").
_PRESENT_LENGTH = re.compile(r"^(?:takes?|needs?|lasts?)\b", _F)
# 中午 / 正午 as a limit (明天中午之前) means noon itself, not the end of the midday span.
_NOON = re.compile(r"(中午|正午)$")


# A past word before a count counts only in the count's own clause (最近物流会慢，大概要三天 is ahead).
_CLAUSE_MARK = re.compile(r"[，。；！？,;!?]")


@dataclass(frozen=True, slots=True)
class DeadlineCues:
    zh_after: re.Pattern[str]
    zh_before: re.Pattern[str]
    en_before: re.Pattern[str]
    en_not_before: re.Pattern[str]
    en_after: re.Pattern[str]
    inclusive_end: re.Pattern[str]
    exclusive: re.Pattern[str]


def parse_deadline_cues(raw: Any) -> DeadlineCues:
    """The `deadline` section of the time cue file, compiled."""
    section = raw["deadline"]
    return DeadlineCues(**{name: re.compile(str(section[name]), _F) for name in DeadlineCues.__slots__})


@lru_cache(maxsize=1)
def default_cues() -> DeadlineCues:
    return parse_deadline_cues(read_data(packaged("time_cues.yaml")))


def _amount(text: str, *, zh: bool) -> float:
    text = text.strip().lower()
    if text.startswith("half"):
        return 0.5
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    return chinese_number(text) if zh else word_number(text)


def _unit_of(word: str, *, zh: bool) -> str:
    if zh:
        return _ZH_UNITS[word]
    word = word.lower().rstrip("s")
    return {"min": "minute", "hr": "hour"}.get(word, word)


def _span_end(
    base: datetime, unit: str, amount: float, business: bool, zone: tzinfo | None = None
) -> tuple[datetime, Granularity]:
    """The instant `amount` units after `base`: exact for hours and minutes (elapsed time, across a
    clock change too), the end of the day otherwise."""
    if business:
        return cal.end_of_day(cal.add_business_days(base, max(1, round(amount)))), "day"
    if unit in ("hour", "minute"):
        return cal.elapsed(base, unit, amount, zone).replace(second=0, microsecond=0), "minute"
    return cal.end_of_day(cal.shift(base, unit, amount)), "day"


def _count(m: re.Match[str], *, zh: bool) -> tuple[str, float, bool]:
    """(unit, amount, business days?) of a count match; a range (3到5个工作日) counts its upper end."""
    groups = {k: v for k, v in m.groupdict().items() if v}
    n = groups.get("n") or groups.get("n2") or groups.get("n3") or "1"
    amount = _amount(n, zh=zh) + (0.5 if groups.get("half") or groups.get("half2") else 0.0)
    biz = (groups.get("biz") or groups.get("biz2") or groups.get("biz3") or "").lstrip("个")
    unit = _unit_of(groups["u"], zh=zh) if "u" in groups else "day"
    if unit == "fortnight":  # a fortnight is two weeks
        unit, amount = "week", amount * 2
    return unit, amount, biz in ("工作", "business", "working")


def _gated(text: str, zh: re.Pattern[str], en: re.Pattern[str]) -> list[tuple[re.Pattern[str], bool]]:
    """The (pattern, is Chinese) pairs worth running on `text`: those whose unit words it holds."""
    out = [(zh, True)] if _ZH_GATE.search(text) else []
    return [*out, (en, False)] if _EN_GATE.search(text) else out


def _free(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return all(span[1] <= a or span[0] >= b for a, b in taken)


def find_within(text: str, base: datetime, zone: tzinfo | None = None) -> list[Found]:
    """Count-bounded deadlines (两天内, within 5 business days), from `base` (naive local wall clock in
    `zone`; hours and minutes are elapsed time, so they count across a clock change).

    >>> [(f.form, f.deadline.isoformat()) for f in find_within("三个工作日内退款", datetime(2026, 12, 4, 9))]
    [('三个工作日内', '2026-12-09T23:59:59')]
    >>> [(f.form, f.deadline.isoformat()) for f in find_within("within 48 hours", datetime(2026, 12, 4, 9, 30))]
    [('within 48 hours', '2026-12-06T09:30:00')]
    """
    out: list[Found] = []
    for pattern, zh in _gated(text, _ZH_WITHIN, _EN_WITHIN):
        for m in pattern.finditer(text):
            try:
                unit, amount, business = _count(m, zh=zh)
            except (ValueError, KeyError):
                continue  # not a number after all (几十 of something)
            if not zh and not business and not re.match(r"(?i)within|inside|in the|over the", m.group(0)):
                continue  # "in 3 days" is a point (the day three days on), not a limit
            if not zh and m.group(0)[:3].lower() == "in " and negated_perfect_before(text, m.start()):
                continue  # "hasn't been processed in 3 business days": a length up to now, no limit
            if not _free(m.span(), [f.span for f in out]):
                continue
            limit, gran = _span_end(base, unit, amount, business, zone)
            out.append(Found(m.group(0), m.span(), base, limit, gran, "rules_deadline", "deadline", limit))
    return out


def _limit_of(found: Found, exclusive: bool, cues: DeadlineCues) -> tuple[datetime, Granularity]:
    """The instant a deadline on `found` falls at: a clock time itself, else the end of the span."""
    length = found.end - found.start
    if _NOON.search(found.form) and length <= timedelta(hours=6):
        return found.start.replace(hour=12, minute=0, second=0, microsecond=0), "minute"
    if length < timedelta(hours=1):
        return found.start.replace(second=0, microsecond=0), "minute"
    if length > timedelta(days=1) and exclusive and not cues.inclusive_end.search(found.form):
        return found.start - cal.ONE_SECOND, "day"
    return found.end, ("hour" if found.granularity in ("hour", "minute") else "day")


def mark_deadlines(text: str, base: datetime, found: list[Found], cues: DeadlineCues | None = None) -> list[Found]:
    """Turn each found point or range with a limit word next to it into a deadline.

    >>> from state.time.calendar import day_interval
    >>> day = Found("12月20日", (2, 8), *day_interval(datetime(2026, 12, 20)), "jionlp")
    >>> marked = mark_deadlines("请在12月20日前付款", datetime(2026, 11, 30), [day])
    >>> [(f.form, f.kind, f.deadline.isoformat()) for f in marked]
    [('12月20日前', 'deadline', '2026-12-20T23:59:59')]
    """
    cues = cues or default_cues()
    out: list[Found] = []
    for f in found:
        if f.kind not in ("point", "range"):
            out.append(f)
            continue
        a, b = f.span
        after_zh = cues.zh_after.match(text[b:])
        after_en = cues.en_after.match(text[b:])
        before = text[max(0, a - 40) : a]
        before_zh = cues.zh_before.search(before)
        before_en = None if cues.en_not_before.search(before) else cues.en_before.search(before)
        if not (after_zh or after_en or before_zh or before_en):
            out.append(f)
            continue
        marker = (after_zh.group(0) if after_zh else "") + (before_en.group(0) if before_en else "")
        start = a - (len(before_zh.group(0)) if before_zh else len(before_en.group(0)) if before_en else 0)
        end = b + (len(after_zh.group(0)) if after_zh else len(after_en.group(0)) if after_en else 0)
        start += len(text[start:a]) - len(text[start:a].lstrip())
        limit, gran = _limit_of(f, cues.exclusive.search(marker.strip()) is not None, cues)
        unit = ambiguous_unit(f.form)
        if unit is not None and limit < base:
            # a limit on a date said without its week, month or year ("周一之前", "by the 5th") lies
            # ahead, unless its clause is in the past; the limit word itself (之前) is no past cue
            unmarked = text[:start] + " " * (a - start) + text[a:b] + " " * (end - b) + text[end:]
            if clause_tense(unmarked, f.span) != "past":
                f = replace(f, start=move(f.start, unit, 1), end=move(f.end, unit, 1))
                limit = move(limit, unit, 1)
        out.append(
            replace(
                f,
                form=text[start:end],
                span=(start, end),
                start=min(base, limit),
                end=limit,
                granularity=gran,
                kind="deadline",
                deadline=limit,
            )
        )
    return out


def find_durations(text: str, base: datetime, taken: list[tuple[int, int]], zone: tzinfo | None = None) -> list[Found]:
    """Lengths of time no other pass took (需要三个工作日, for two weeks), from or up to `base`
    (hours and minutes as elapsed time in `zone`).

    >>> waited = find_durations("我等了三天", datetime(2026, 12, 4, 9), [])
    >>> [(f.form, f.start.isoformat(), f.end.isoformat()) for f in waited]
    [('三天', '2026-12-01T09:00:00', '2026-12-04T09:00:00')]
    """
    out: list[Found] = []
    for pattern, zh in _gated(text, _ZH_DURATION, _EN_DURATION):
        for m in pattern.finditer(text):
            if not _free(m.span(), taken + [f.span for f in out]):
                continue
            if not zh and _EN_OFFSET_AFTER.match(text[m.end() :]):
                continue
            try:
                unit, amount, business = _count(m, zh=zh)
            except (ValueError, KeyError):
                continue
            if zh and not business and not _duration_context(text, m):
                continue  # a bare 三天 / 24小时 without a word of duration is too often something else
            own_clause = max([0, *(c.end() for c in _CLAUSE_MARK.finditer(text, 0, m.start()))])
            clause = max(own_clause, m.start() - 12)
            near = _PAST_DURATION.search(text[clause : m.end() + 3]) is not None or bool(
                _UP_TO_NOW.match(text[m.end() :])
            )
            after = not zh and m.group(0)[:6].lower() == "after "
            if after and not perfect_before(text, m.start()):
                continue  # "after two days" ahead is a point (the atom pass's)
            unsaid = not zh and m.group(0)[:3].lower() == "in "
            if unsaid and not negated_perfect_before(text, m.start()):
                continue  # "in two days" is a point ahead; only "hasn't answered in two days" is a length
            present = not zh and _PRESENT_LENGTH.match(m.group(0)) is not None
            perfect = _PERFECT.search(text, own_clause, m.start()) is not None or _perfect_length(text, own_clause, m)
            past = after or unsaid or near or (not present and (perfect or clause_tense(text, m.span()) == "past"))
            if past:
                start, end = _span_back(base, unit, amount, business, zone), base
            else:
                start, end = base, _span_end(base, unit, amount, business, zone)[0]
            gran: Granularity = "day" if business else unit  # type: ignore[assignment]
            if unit == "hour" and amount != int(amount):
                gran = "minute"  # two and a half hours ends on the half hour
            begin = min(m.start(g) for g in ("lo", "n", "lo2", "n2", "n3") if m.groupdict().get(g))
            out.append(Found(text[begin : m.end()], (begin, m.end()), start, end, gran, "rules_duration", "duration"))
    return out


_ZH_DURATION_CUE = re.compile(
    r"(需要|需|要|得|花|用|等|持续|大概|大约|约|预计|时效|周期|耗时|历时|了|整整|足足|近|最近|过去|玩|时长|时间|有效期|已经)"
)


def _duration_context(text: str, m: re.Match[str]) -> bool:
    near = _ZH_DURATION_CUE.search(text[max(0, m.start() - 4) : m.end() + 2]) is not None
    return near or bool(_UP_TO_NOW.match(text[m.end() :]))


def _span_back(base: datetime, unit: str, amount: float, business: bool, zone: tzinfo | None = None) -> datetime:
    if business:
        return cal.add_business_days(base, -max(1, round(amount))).replace(hour=base.hour, minute=base.minute)
    return cal.elapsed(base, unit, -amount, zone)
