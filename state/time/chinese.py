"""Chinese time expressions: jionlp's extractor with rewrites in front and fixes behind.

In front, colloquial short forms are rewritten into forms jionlp knows (今晚 → 今天晚上, 明早 →
明天早上, 3pm → 下午3点) with a character alignment so spans still point into the original text;
forms jionlp misses or reads differently are parsed by our own rules first: 月底/月初/月中 (the
last day; the 1st–5th; the 11th–20th; a bare 月初 / 月中 already over, said of what is not done, is the
next month's: 月初我要搬家 on the 30th), 这周末/下周末 (Saturday 00:00 to Sunday 23:59:59), a bare
这个月/下个月, 前两天 / 前几天 (the day two or three days back, not jionlp's span of the days before).
Behind, offsets are made points (半小时后 = the minute 30 minutes on; 一周后 = the day 7 days on;
三天以后 = that day), a bare clock hour 1–6 without 上午/凌晨/早 means the afternoon (三点开会 =
15:00), and a bare weekday already past this week means next week's.

jionlp raises ValueError on strings it cannot parse; that is caught where it is called and the
expression (or, for the extractor, the clause) is skipped rather than failing the turn. Strings
its time parser cannot read but handles itself are noted once at debug, not logged as errors.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import threading
from datetime import datetime, timedelta, tzinfo
from functools import lru_cache
from typing import Any

from schemas.memory import Granularity
from state.time import calendar as cal
from state.time.calendar import Found
from state.time.tense import clause_tense

log = logging.getLogger(__name__)

_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_NUMERAL = r"[0-9零〇一二两三四五六七八九十百几]+"


def chinese_number(text: str) -> float:
    """A number written in Chinese numerals or digits (半 = 0.5, 一个半 = 1.5).

    >>> [chinese_number(t) for t in ("二十五", "十", "两", "一个半", "半")]
    [25.0, 10.0, 2.0, 1.5, 0.5]
    """
    text = text.replace("个", "")
    half = 0.5 if text.endswith("半") else 0.0
    text = text.removesuffix("半")
    if not text:
        return half
    if text.isdigit():
        return float(text) + half
    total, current = 0, 0
    for ch in text:
        if ch in _DIGITS:
            current = _DIGITS[ch]
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        elif ch == "百":
            total += (current or 1) * 100
            current = 0
        elif ch == "几":
            current = 3  # 几天后: "a few" read as three
        else:
            msg = f"not a Chinese numeral: {text!r}"
            raise ValueError(msg)
    return float(total + current) + half


# jionlp's time parser is one shared instance that keeps each call's settings (time base,
# strictness …) on itself: two threads parsing at once (workers of one process, the responder's
# reflection beside the flow) read each other's settings and get wrong or empty results.
_JIONLP_LOCK = threading.Lock()


class _UnreadTimeNote(logging.Filter):
    """Where jionlp's time parser logs a string it cannot read.

    The parser handles such a string itself (it keeps no time for it, and the extractor moves on),
    but first logs the whole traceback as an ERROR through the root logger: every eval run and
    every worker's stderr would fill with tracebacks for text such as 周父亲一 or 五十九, and the
    root logger would get a stderr handler it was never given. Its log goes to a logger of its own
    instead, and this filter notes each such string once, at debug, here; the record is dropped.
    """

    _KEPT = 1024  # strings remembered as already noted

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        lines = record.getMessage().strip().splitlines()
        note = lines[-1] if lines else ""
        if note not in self._seen:
            if len(self._seen) < self._KEPT:
                self._seen.add(note)
            log.debug("jionlp could not read a time string and skipped it: %s", note)
        return False


@lru_cache(maxsize=1)
def _jionlp() -> Any:
    """Import jionlp lazily (about 0.5 s), keep its import banner off our stdout, and route its
    time parser's log of unreadable strings to a debug note (`_UnreadTimeNote`)."""
    with contextlib.redirect_stdout(io.StringIO()):
        import jionlp
        from jionlp.gadget import time_parser
    parser_log = logging.getLogger(f"{__name__}.jionlp")
    parser_log.addFilter(_UnreadTimeNote())
    time_parser.logging = parser_log  # the parser's module-level logger
    return jionlp


# -- rewrites in front of jionlp, with alignment ------------------------------------------------


def _clock_rewrite(m: re.Match[str]) -> str:
    """3pm → 下午3点 (no half-day word when one is already said just before: 今晚8pm → 今晚8点)."""
    before = m.string[: m.start()].rstrip()
    if before and re.match(r"[A-Za-z]", before[-1]):
        return m.group(0)  # "tomorrow at 3pm" inside a Chinese turn: the English rules take it
    said = re.search(r"(上午|下午|晚上|早上|中午|晚|早)$", m.string[max(0, m.start() - 2) : m.start()])
    half = "" if said else ("下午" if m.group(3).lower().startswith("p") else "上午")
    return f"{half}{m.group(1)}点" + (f"{int(m.group(2))}分" if m.group(2) else "")


_REWRITES: list[tuple[re.Pattern[str], Any]] = [
    (re.compile(r"今晚"), "今天晚上"),
    (re.compile(r"明晚"), "明天晚上"),
    (re.compile(r"昨晚"), "昨天晚上"),
    (re.compile(r"明早"), "明天早上"),
    (re.compile(r"今早"), "今天早上"),
    # 最晚/最迟 (at the latest) are limit words, not 晚 (evening): jionlp would read 最晚周五 as Friday evening.
    (re.compile(r"最晚|最迟"), "，，"),
    (re.compile(r"明儿(?:个)?"), "明天"),
    (re.compile(r"今儿(?:个)?"), "今天"),
    (re.compile(r"(?<![\d:])\s*(\d{1,2})(?::([0-5]\d))?\s*(am|pm|a\.m\.|p\.m\.|AM|PM)(?![A-Za-z])"), _clock_rewrite),
]


def rewrite(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Rewrite colloquial forms; returns the new text and, per new char, its (start, end) in `text`.

    >>> new, align = rewrite("今晚8pm见")
    >>> new, align[0], align[-1]
    ('今天晚上8点见', (0, 2), (5, 6))
    """
    edits: list[tuple[int, int, str]] = []
    for pattern, repl in _REWRITES:
        for m in pattern.finditer(text):
            if any(m.start() < b and a < m.end() for a, b, _ in edits):
                continue
            new = repl if isinstance(repl, str) else repl(m)
            edits.append((m.start(), m.end(), new))
    edits.sort()
    out: list[str] = []
    align: list[tuple[int, int]] = []
    pos = 0
    for a, b, new in edits:
        for i in range(pos, a):
            out.append(text[i])
            align.append((i, i + 1))
        out.append(new)
        align.extend([(a, b)] * len(new))
        pos = b
    for i in range(pos, len(text)):
        out.append(text[i])
        align.append((i, i + 1))
    return "".join(out), align


# -- our own rules for forms jionlp misses ------------------------------------------------------

_SHIFT = {"": 0, "这个": 0, "这": 0, "本": 0, "上个": -1, "上": -1, "下个": 1, "下": 1, "下下个": 2, "下下": 2}
# A year before a numbered month binds to it: 明年一月底 is January of next year, 2031年3月中 that year's;
# a year word before a bare 月底 / 月初 (明年月底) is this month of that year.
_YEAR_WORDS = {"前年": -2, "去年": -1, "今年": 0, "本年": 0, "明年": 1, "来年": 1, "后年": 2}
_MONTH_PART = re.compile(
    rf"(?:(?P<yw>前年|去年|今年|本年|明年|来年|后年)(?=(?:{_NUMERAL})?月)|(?P<y>[0-9]{{4}})年(?=(?:{_NUMERAL})月))?"
    rf"(?:(?P<pre>下下个|下下|这个|上个|下个|本|上|下|这)|(?P<num>{_NUMERAL})(?=月))?月(?:月|份)?(?P<part>底|末|初|中)(?!旬)"
)
_WEEKEND = re.compile(r"(?P<pre>下下个|下下|这个|上个|下个|本|上|下|这)?(?:周末|礼拜末)")
_BARE_MONTH = re.compile(rf"(?P<pre>下下个|这个|上个|下个|本|上|下)月(?!{_NUMERAL}|[号日初底末中份旬])")
# A bare day of the month (31号) that the event's month lacks: jionlp finds nothing for it.
_BARE_DAY = re.compile(
    r"(?<![0-9零〇一二两三四五六七八九十月周期拜第])(?P<d>[0-9]{1,2}|[二三]?十[一二三四五六七八九]?)[号日](?![内前后以之])"
)

# 前两天 / 前几天 / 前些天 (a couple of / a few days ago), which jionlp reads as a span of the days before.
# 提前两天 (two days ahead), 之前 / 以前 / 目前 and X的前两天 (two days before X) are other words.
_DAYS_BACK = re.compile(r"(?<![提之以目的])前(?P<n>两|几|些)(?:天|日子|日)(?![内里以之前后])")
_VAGUE_COUNTS = {"两": 2, "几": 3, "些": 3}


def _days_back(m: re.Match[str], base: datetime) -> tuple[datetime, datetime, Granularity]:
    """The day a vague count of days back names (几 and 些 read as three, as 几天后 is), unless the
    clause is said ahead (开课前两天会通知您: two days before the class starts).

    >>> _days_back(_DAYS_BACK.search("我前两天买的"), datetime(2032, 5, 13, 14, 20))[0].isoformat()
    '2032-05-11T00:00:00'
    """
    if clause_tense(m.string, m.span()) == "future":
        msg = "days before a time ahead, not days ago"
        raise ValueError(msg)
    return cal.day_interval(base - timedelta(days=_VAGUE_COUNTS[m.group("n")]))


# 后半夜 / 下半夜 (the small hours) without a day word before it: 00:00–06:00 of the night the clause
# means. Said of what is done, or in the morning with no tense, it is the night just gone (today's);
# else the coming one (tonight's, tomorrow's date), unless the small hours are still on.
_SMALL_HOURS = re.compile(r"(?<![天日晚今明昨])(?:后半夜|下半夜)")


def _small_hours(m: re.Match[str], base: datetime) -> tuple[datetime, datetime, Granularity]:
    """The start of the small hours 后半夜 names, an hour point.

    >>> _small_hours(_SMALL_HOURS.search("后半夜停电了"), datetime(2035, 8, 29, 7, 50))[0].isoformat()
    '2035-08-29T00:00:00'
    >>> _small_hours(_SMALL_HOURS.search("后半夜会下雨"), datetime(2035, 8, 29, 21))[0].isoformat()
    '2035-08-30T00:00:00'
    """
    tense = clause_tense(m.string, m.span())
    day = cal.day_start(base)
    if tense != "past" and not (tense is None and base.hour < 12) and base.hour >= 6:
        day += timedelta(days=1)
    return day, day + timedelta(hours=6) - cal.ONE_SECOND, "hour"


def _month_part(m: re.Match[str], base: datetime) -> tuple[datetime, datetime, Granularity]:
    if m.group("num"):
        month = int(chinese_number(m.group("num")))
        if not 1 <= month <= 12:
            msg = f"month {month} out of range"
            raise ValueError(msg)
        years = _YEAR_WORDS[m.group("yw")] if m.group("yw") else int(m.group("y")) - base.year if m.group("y") else 0
        months = month - base.month + 12 * years
    else:  # 下个月底; 明年月底: this month's end, in the year named
        months = _SHIFT[m.group("pre") or ""] + 12 * (_YEAR_WORDS[m.group("yw")] if m.group("yw") else 0)
    part = m.group("part")
    if part in ("底", "末"):
        return cal.month_end_day(base, months)
    start, end = _early_or_mid(base, months, part)
    bare = not (m.group("num") or m.group("pre") or m.group("yw") or m.group("y"))
    if bare and end < base and clause_tense(m.string, m.span()) != "past":
        start, end = _early_or_mid(base, months + 1, part)  # 月初 said on the 30th: the coming month's start
    return start, end, "range"


def _early_or_mid(base: datetime, months: int, part: str) -> tuple[datetime, datetime]:
    """月初 (the 1st–5th) or 月中 (the 11th–20th) of the month `months` on from the one holding `base`."""
    first, _, _ = cal.month_interval(base, months)
    if part == "初":
        return first, first + timedelta(days=5) - cal.ONE_SECOND
    mid = first + timedelta(days=10)
    return mid, mid + timedelta(days=10) - cal.ONE_SECOND


def _missing_day(m: re.Match[str], base: datetime) -> tuple[datetime, datetime, Granularity]:
    """31号 said in a month without a 31st: that day in the next month that has it (the tense pass
    may move it back to the latest past one). Days the month has are left to jionlp."""
    day = int(chinese_number(m.group("d")))
    if not 1 <= day <= 31 or day <= cal.month_days(base):
        msg = f"day {day} is jionlp's"
        raise ValueError(msg)
    return cal.day_interval(cal.month_with_day(base, day, 1))


def _own_rules(text: str, base: datetime) -> list[Found]:
    found: list[Found] = []
    rules = (
        (_MONTH_PART, _month_part),
        (_WEEKEND, lambda m, b: cal.weekend_interval(b, _SHIFT[m.group("pre") or ""])),
        (_BARE_MONTH, lambda m, b: cal.month_interval(b, _SHIFT[m.group("pre")])),
        (_BARE_DAY, _missing_day),
        (_DAYS_BACK, _days_back),
        (_SMALL_HOURS, _small_hours),
    )
    for pattern, handler in rules:
        for m in pattern.finditer(text):
            if any(m.start() < f.span[1] and f.span[0] < m.end() for f in found):
                continue
            try:
                start, end, gran = handler(m, base)
            except (ValueError, OverflowError):
                continue  # 十三月底, or past the calendar: not a date
            found.append(Found(m.group(0), m.span(), start, end, gran, "rules_zh"))
    return found


# -- fixes behind jionlp ----------------------------------------------------------------------------

_DELTA = re.compile(
    rf"^(?P<n>{_NUMERAL}|半)(?:个)?(?P<half>半)?(?P<u>分钟|分|小时|钟头|天|日|周|星期|礼拜|月|年)"
    r"(?P<dir>后|以后|之后|过后|前|以前|之前)$"
)
_UNITS = {
    "分钟": "minute",
    "分": "minute",
    "小时": "hour",
    "钟头": "hour",
    "天": "day",
    "日": "day",
    "周": "week",
    "星期": "week",
    "礼拜": "week",
    "月": "month",
    "年": "year",
}
_PERIOD_WORD = re.compile(r"上午|早|凌晨|半夜|夜|下午|晚|中午|傍晚|午|黄昏")
_CLOCK = re.compile(r"[点时:：]")
_BARE_WEEKDAY = re.compile(r"^(?:周|星期|礼拜)[一二三四五六日天1-7]")


def _delta(form: str, base: datetime, zone: tzinfo | None = None) -> tuple[datetime, datetime, Granularity] | None:
    m = _DELTA.match(form)
    if m is None:
        return None
    try:
        amount = chinese_number(m.group("n") + ("半" if m.group("half") else ""))
    except ValueError:
        return None
    sign = -1.0 if "前" in m.group("dir") else 1.0
    return cal.delta_interval(base, _UNITS[m.group("u")], sign * amount, zone)


def _fix(form: str, start: datetime, end: datetime, base: datetime) -> tuple[datetime, datetime]:
    hour_long = end - start <= timedelta(hours=1)
    if _CLOCK.search(form) and not _PERIOD_WORD.search(form) and hour_long and 1 <= start.hour <= 6:
        start, end = start + timedelta(hours=12), end + timedelta(hours=12)
    if _BARE_WEEKDAY.match(form) and cal.day_start(start) < cal.day_start(base):
        start, end = start + timedelta(days=7), end + timedelta(days=7)
    return start, end


# 过去 as a verb ("[have] passed") before a count, not "the past N days".
_PASSED = re.compile(rf"^过去(?:了)?(?:{_NUMERAL}|半)")
_PASSED_BEFORE = ("已经", "已", "都", "又")

_LIMIT_SUFFIX = re.compile(r"(?:之前|以前|前|为止|之内|以内|内)$")


def _limit_stem(form: str, span: tuple[int, int], base: datetime) -> Found | None:
    """12月20日前 / 下午4点之前 / 本周之内: the time the limit is on, its span without the suffix.

    jionlp reads these as a span from the time base to the end of the named time; the deadline
    pass (`state.time.deadline`) reads the suffix again, after the span, and sets the exact limit.
    """
    stem = _LIMIT_SUFFIX.sub("", form)
    if stem == form or not stem:
        return None
    point = parse_point(stem, base)
    if point is None:
        return None
    start, end = _fix(stem, *point, base)
    return Found(stem, (span[0], span[0] + len(stem)), start, end, _granularity(start, end), "jionlp")


_OPEN_END = re.compile(r"(?:开始|起|以后|之后|过后|后)$")
# 从上周四开始 / 自从11月3号以来 / 从下周一起: jionlp reads a span from the date to now (or on without
# end); what is said is the date itself, a point. The cue words stay in the text around it, where the
# validity pass reads them as a start.
_SINCE = re.compile(r"^从(?!.*(?:到|至|-|~|～|—))(?P<stem>.+?)(?:开始|以来|起)?$")


def _since_point(form: str, span: tuple[int, int], base: datetime) -> Found | None:
    m = _SINCE.match(form)
    if m is None:
        return None
    stem = m.group("stem")
    point = parse_point(stem, base)
    if point is None:
        return None
    start, end = _fix(stem, *point, base)
    begin = span[0] + m.start("stem")
    return Found(stem, (begin, begin + len(stem)), start, end, _granularity(start, end), "jionlp")


def parse_point(form: str, base: datetime) -> tuple[datetime, datetime] | None:
    """jionlp's parse_time on one expression; None where jionlp raises ValueError (it does on strings it cannot read).

    >>> parse_point("明天下午三点", datetime(2026, 3, 4))[0].isoformat()
    '2026-03-05T15:00:00'
    >>> parse_point("月底", datetime(2026, 3, 4)) is None
    True
    """
    try:
        with _JIONLP_LOCK:
            result = _jionlp().parse_time(form, time_base=base)
    except ValueError:
        return None
    times = result.get("time") if isinstance(result, dict) else None
    if result.get("type") not in ("time_point", "time_span") or not isinstance(times, list) or "inf" in times:
        return None
    try:
        return datetime.fromisoformat(times[0]), datetime.fromisoformat(times[1])
    except ValueError:
        return None  # jionlp prints years < 1000 ("9999年内" → '999-01-01') outside ISO 8601: not a time here


def _close_open_span(form: str, span: tuple[int, int], base: datetime, zone: tzinfo | None = None) -> Found | None:
    """下周开始 / 晚上11点以后 / 五分钟之后开始: the instant the open span starts from, without the suffix."""
    stem = form
    while True:
        delta = _delta(stem, base, zone)
        if delta is not None:
            return Found(stem, (span[0], span[0] + len(stem)), *delta, "jionlp")
        shorter = _OPEN_END.sub("", stem)
        if shorter == stem or not shorter:
            return None
        stem = shorter
        point = parse_point(stem, base)
        if point is not None:
            start, end = _fix(stem, *point, base)
            return Found(stem, (span[0], span[0] + len(stem)), start, end, _granularity(start, end), "jionlp")


def _parse_jionlp(text: str, base: datetime) -> list[dict[str, Any]]:
    """jionlp's extractor; on ValueError retry clause by clause, dropping only the clause that fails."""
    jionlp = _jionlp()
    try:
        with _JIONLP_LOCK:
            found: list[dict[str, Any]] = jionlp.ner.extract_time(text, time_base=base, with_parsing=True)
    except ValueError as exc:
        log.debug("jionlp rejected %r: %s; retrying by clause", text, exc)
        found = []
        for clause in re.finditer(r"[^，。！？；,.!?;\s]+", text):
            try:
                with _JIONLP_LOCK:
                    part: list[dict[str, Any]] = jionlp.ner.extract_time(
                        clause.group(0), time_base=base, with_parsing=True
                    )
            except ValueError:
                continue  # this clause holds no parsable time for jionlp
            for item in part:
                item["offset"] = [item["offset"][0] + clause.start(), item["offset"][1] + clause.start()]
            found.extend(part)
    return found


def parse_chinese(text: str, base: datetime, zone: tzinfo | None = None) -> list[Found]:
    """Chinese time expressions in `text`, from `base` (naive wall clock of the speaker, in `zone`:
    三小时后 is elapsed time there, across a clock change too).

    >>> found = parse_chinese("月底前把半小时后的会议纪要发我", datetime(2026, 3, 4, 10, 15))
    >>> [(f.form, f.start.isoformat()) for f in found]
    [('月底', '2026-03-31T00:00:00'), ('半小时后', '2026-03-04T10:45:00')]
    """
    own = _own_rules(text, base)
    masked = list(text)
    for f in own:
        masked[f.span[0] : f.span[1]] = "，" * (f.span[1] - f.span[0])
    new, align = rewrite("".join(masked))
    out = list(own)
    for item in _parse_jionlp(new, base):
        detail = item.get("detail") or {}
        a, b = item["offset"]
        span = (align[a][0], align[b - 1][1])
        form = text[span[0] : span[1]]
        if _PASSED.match(form) and (text[span[1] : span[1] + 1] == "了" or text[: span[0]].endswith(_PASSED_BEFORE)):
            continue  # 已经过去三天了: three days have passed, a length up to now (`find_durations`)
        try:
            delta = _delta(form, base, zone)
        except (ValueError, OverflowError):
            continue  # "9999年后": past the calendar, not a time here
        if delta is not None:
            out.append(Found(form, span, *delta, "jionlp"))
            continue
        try:
            limited = _limit_stem(form, span, base)
        except (ValueError, OverflowError):
            continue  # the limit's time is past the calendar
        if limited is not None:
            out.append(limited)
            continue
        times = detail.get("time")
        if detail.get("type") not in ("time_point", "time_span") or not isinstance(times, list) or len(times) != 2:
            continue  # periods and bare durations are not instants
        try:
            since = _since_point(form, span, base) if detail.get("type") == "time_span" else None
        except (ValueError, OverflowError):
            continue
        if since is not None:
            out.append(since)
            continue
        if "inf" in times:
            try:
                closed = _close_open_span(form, span, base, zone)
            except (ValueError, OverflowError):
                continue
            if closed is not None:
                out.append(closed)
            continue
        try:
            parsed = datetime.fromisoformat(times[0]), datetime.fromisoformat(times[1])
        except ValueError:
            continue  # jionlp prints years < 1000 ("100年" → '100-01-01') outside ISO 8601: not a time here
        try:
            start, end = _fix(form, *parsed, base)
        except (ValueError, OverflowError):
            continue  # shifting it leaves the calendar
        out.append(Found(form, span, start, end, _granularity(start, end), "jionlp"))
    return sorted(out, key=lambda f: f.span)


def _granularity(start: datetime, end: datetime) -> Granularity:
    seconds = (end - start).total_seconds() + 1
    for limit, name in (
        (1, "second"),
        (60, "minute"),
        (3600, "hour"),
        (86400, "day"),
        (7 * 86400, "week"),
        (31 * 86400, "month"),
        (366 * 86400, "year"),
    ):
        if seconds <= limit:
            return name  # type: ignore[return-value]
    return "range"
