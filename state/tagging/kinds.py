"""The unit type of a clause segment and of a run of segments, and the recall topic a segment is
about, from the segment's intent label, the speaker's role, stress and the unit cues of the lexicon
(`unit_cues` in `state/tagging/resources/tagging.yaml`).

Customer-service types come first, in this order:

* a customer's problem report is a `complaint`: anger, damage or a defect, lateness, a wrong
  charge or item, a threat to escalate (each a cue family, named among the segment's cues), or
  plain high stress; said again ("又", "第三次", "again", "already told you") it is a
  `repeat_complaint`, also when the repetition sits in another segment of the same turn;
* a customer saying the problem is gone (修好了, 退款到账了, works now), or anyone saying the
  issue is closed (问题已解决, the ticket is resolved), is a `resolution_confirmation`;
* a promise that someone other than the speaker made, reported ("快递员说明天会送到",
  "Maria said she would send me a quote"), is a `third_party_commitment`, as is any commitment
  spoken in the third-party role;
* then the intent decides (request → `action_request`, commitment, question, clarification,
  refusal; a question asking for an action, "能帮我换一台吗", is a request), then progress
  reports (`status_update`), else `statement`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from state.normalise.segments import SegmentTags
from state.tagging.lexicon import TagLexicon
from state.tagging.rules import cue_langs

_KIND_OF_LABEL = {
    "request": "action_request",
    "commitment": "commitment",
    "question": "question",
    "clarify": "clarification",
    "refuse": "refusal",
}
COMPLAINT_FAMILY = "complaint"  # unit cue kinds named complaint_* are its families
REPEAT_CUE = "repeat"
COMPLAINT_STRESS = 0.7  # a customer segment this stressed is a complaint without a cue
# Complaint families that can name what a plain yes/no question is about ("Will I still be charged
# for the extra two hours?", "Will the late fee be removed?"): such a question asks, it does not complain.
_PLAIN_FAMILIES = frozenset({"complaint_billing", "complaint_damage", "complaint_lateness", "complaint_expectation"})
_YES_NO_AHEAD = re.compile(r"^(will|would|should|do|does|did|is|are|am) (i|we|the|my|it|this|that|there)\b")
_WH_MORE = re.compile(r"(怎么样|什么|哪|多少|几[点天个号]|\bwhat\b|\bwhich\b|\bhow\b)")
# An offer asked back ("Shall I do that?", "您看方便吗？"): a question, and so is the offer it closes.
_OFFER_ASK = re.compile(
    r"^(shall i|should i|do you want me to|would you like me to|要不要我|需要我)"
    r"|(您|你)看[^，。？]{0,4}(方便|可以|行|合适)吗[？?]?$"
)
OFFER_ASKED = "offer_asked"
# Something once done ("您之前开通过", "我以前用过"): a past experience, not progress on the case.
_ONCE_DONE = re.compile(r"(之前|以前|曾经|上次)[^，。！？]{0,8}过(?!了)")
# What stays a status after a lookup: a state the agent brought about ("全额退款已经给您申请了", "I've
# refunded it") or a process still under way ("退款在银行那边处理中", "已经发往您所在的城市").
_STILL_STATUS = re.compile(
    r"(为您|给您|帮您)|[\u4e00-\u9fff]中(?![国文心午])|已经?(发往|寄往|在路上|完成了)"
    r"|\b(i|we)('ve| have) (?!checked|looked)",
    re.I,
)
WISH = "wish"
REPORTED = "reported_speech"
_CLAUSE = re.compile(r"[，,;；]")
# Asking whether the company pays for something ("Will you pay the vet bill?", "Will you cover it?"):
# a question about what is covered, not an action asked for.
_WILL_YOU_PAY = re.compile(r"\bwill you (pay|cover|reimburse|compensate|refund)\b")
# "is that what you're saying?": the "what" of a clarification, not a question for information.
_WHAT_MEANT = re.compile(r"\bwhat you('re| are)? ?(saying|mean|meant)\b")
_ABLE = re.compile(r"\b(possible|able|allowed)\b")
_ASK_HOW = re.compile(r"(怎么|如何)(补偿|赔偿|赔|处理一下)")
_ZH_AGAIN = re.compile(r"又")  # "你们又让我交？": a repetition asked back is a repeat complaint
_PLEASE = re.compile(r"(请|麻烦|\bplease\b)")
# Which one, what: a question that asks for information, not whether it was understood.
_WHICH = re.compile(r"(哪|什么|多少|\bwhich\b|\bwhat\b)")

# When segments of one unit (or one turn) differ, the unit is typed by the most salient one.
KIND_RANK = (
    "repeat_complaint",
    "complaint",
    "resolution_confirmation",
    "action_request",
    "refusal",
    "third_party_commitment",
    "commitment",
    "question",
    "clarification",
    "status_update",
    "statement",
    "smalltalk",
)


def _cue(lex: TagLexicon, kind: str, text: str, langs: tuple[str, ...] | None = None) -> bool:
    by_lang = lex.unit_cues.get(kind, {})
    langs = langs if langs is not None else cue_langs(text)
    return any(p.search(text) for lang, p in by_lang.items() if lang in langs)


def complaint_families(text: str, lex: TagLexicon, langs: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The complaint cue families a text matches (`complaint_damage`, `complaint_lateness` …).

    >>> from state.tagging.lexicon import load_lexicon
    >>> complaint_families("快递晚了五天，里面的蛋糕都坏了，太让人生气了", load_lexicon())
    ('complaint_anger', 'complaint_damage', 'complaint_lateness')
    """
    prefix = COMPLAINT_FAMILY + "_"
    return tuple(sorted(kind for kind in lex.unit_cues if kind.startswith(prefix) and _cue(lex, kind, text, langs)))


def segment_kind(
    text: str, label: str, role: str, stress: float, lex: TagLexicon, *, own_promise: bool = True
) -> tuple[str, tuple[str, ...]]:
    """The unit type of a segment and the cues that decided it (`_segment_kind`), plus
    `reported_speech` where the segment quotes someone other than the speaker and the listener,
    which lets the turn give the promise after it to them (`settle_turn_kinds`).

    >>> from state.tagging.lexicon import load_lexicon
    >>> segment_kind("果园的老杨说没问题，", "neutral", "agent", 0.1, load_lexicon())
    ('statement', ('reported_speech',))
    """
    kind, cues = _segment_kind(text, label, role, stress, lex, own_promise=own_promise)
    if _cue(lex, REPORTED, text):
        if kind == "commitment" and "agent_future" in cues:
            return "third_party_commitment", (*cues, "third_party_promise", REPORTED)
        return kind, (*cues, REPORTED)
    return kind, cues


def _segment_kind(
    text: str, label: str, role: str, stress: float, lex: TagLexicon, *, own_promise: bool = True
) -> tuple[str, tuple[str, ...]]:
    """The unit type of a segment, and the cue names that decided it (explainability).

    `text` is the cue form (`state.tagging.rules.cue_text`). `own_promise`: a commitment cue fired
    on the segment's own words; a commitment read from the dialogue context alone (an answer
    after a request: "It's INV-20931.") is not stored as a commitment, nor is one asked.

    >>> from state.tagging.lexicon import load_lexicon
    >>> lex = load_lexicon()
    >>> segment_kind("谢谢", "neutral", "customer", 0.0, lex)
    ('smalltalk', ())
    >>> segment_kind("测试账号权限我们已开通", "neutral", "agent", 0.1, lex)
    ('status_update', ('status_done',))
    >>> segment_kind("i was charged twice again, this time for july.", "neutral", "customer", 0.2, lex)
    ('repeat_complaint', ('complaint_billing', 'repeat'))
    """
    stripped = text.strip(" ，,。.!！~～")
    langs = cue_langs(text)

    def has(kind: str, on: str = text) -> bool:
        return _cue(lex, kind, on, langs)

    customer = role != "agent"
    asked = label == "question" or "?" in text or "？" in text
    repeat = (REPEAT_CUE,) if customer and has(REPEAT_CUE) else ()
    if (label == "neutral" and has("smalltalk", stripped)) or (not asked and has("courtesy")):
        return "smalltalk", ()
    if not asked and has(WISH, stripped):
        return "smalltalk", (WISH,)
    if customer and not asked and has("problem_gone") and not repeat:
        return "resolution_confirmation", ("resolution", "problem_gone")
    if customer:
        families = complaint_families(text, lex, langs)
        if asked and not repeat and _WILL_YOU_PAY.search(text):
            return "question", ("yes_no_question",)
        if asked and families and set(families) <= _PLAIN_FAMILIES and not repeat and _YES_NO_AHEAD.match(stripped):
            return "question", ("yes_no_question",)
        if has("repeat_contact"):
            return "repeat_complaint", (*families, "repeat_contact")
        if families:
            return ("repeat_complaint" if repeat else "complaint"), (*families, *repeat)
    if asked and has("clarification") and not _WHICH.search(_WHAT_MEANT.sub("", text)):
        return "clarification", ("clarification",)
    if asked and (label == "clarify" or (label == "request" and has("info_ask"))):
        return "question", ("info_question",)
    resolved = (customer and has("resolution_confirmation")) or has("resolution_closed")
    if resolved and not asked and not has("conditional"):
        return "resolution_confirmation", ("resolution",)
    if has("third_party_commitment") or (role == "third_party" and label == "commitment"):
        return "third_party_commitment", ("third_party_promise",)
    if has("refusal") and not asked:
        return "refusal", ("refusal",)
    if (
        label in ("question", "request")
        and asked
        and has("request_question")
        and (not has("wh_question") or _ASK_HOW.search(text))
    ):
        return "action_request", ("request_question", *repeat)
    if customer and asked and label == "request" and _YES_NO_AHEAD.match(stripped) and not _ABLE.search(text):
        return "question", ("yes_no_question",)
    if (
        asked
        and label == "request"
        and not has("request_question")
        and (has("wh_question") or _WH_MORE.search(text) or _OFFER_ASK.search(stripped))
    ):
        return "question", (OFFER_ASKED,) if _OFFER_ASK.search(stripped) else ("wh_question",)
    if customer and asked and repeat and _ZH_AGAIN.search(text):
        return "repeat_complaint", ("repeat_question",)
    if not asked and has("attribution"):
        return "statement", ("attribution",)
    if not customer and not asked and has("lookup") and not _STILL_STATUS.search(text):
        return "statement", ("lookup",)  # read back, before any state it names: "I've checked the board and …"
    if label in ("neutral", "commitment") and has("done_scheduled"):
        return "status_update", ("status_done", *repeat)
    if label in ("neutral", "commitment") and has("status_done") and not has("future"):
        return "status_update", ("status_done", *repeat)
    if not customer and not asked and label == "request" and has("agent_option") and not _PLEASE.search(text):
        return "statement", ("agent_option",)
    if not customer and not asked and has("generic"):
        return "statement", ("generic",)
    if not customer and label in ("neutral", "request", "commitment") and has("agent_commitment"):
        return "commitment", ("agent_commitment",)
    if not customer and not asked and has("forecast"):
        return "status_update", ("forecast",)
    if not customer and not asked and label in ("neutral", "commitment") and has("agent_future"):
        return "commitment", ("agent_future",)
    if customer and not asked and label in ("neutral", "commitment", "request") and has("customer_promise"):
        return "commitment", ("customer_promise",)
    if customer and not asked and label in ("neutral", "request", "commitment") and has("bare_please"):
        return "action_request", ("bare_please",)
    if customer and label == "commitment":
        label = "neutral"  # a customer's "sure" or "okay" before a fact promises nothing of its own
    if label == "commitment" and (asked or not own_promise):
        label = "question" if asked else "neutral"
    if label in _KIND_OF_LABEL:
        return _KIND_OF_LABEL[label], repeat
    if has("status_update", stripped) and not _ONCE_DONE.search(stripped):
        return "status_update", repeat
    if customer and stress >= COMPLAINT_STRESS:
        return ("repeat_complaint" if repeat else "complaint"), ("complaint_stress", *repeat)
    if not asked and any(has(WISH, part.strip()) for part in _CLAUSE.split(stripped)[1:]):
        return "smalltalk", (WISH,)  # a remark that ends on a wish: "豆豆今天很乖，祝它早日康复"
    return "statement", repeat


def settle_turn_kinds(tags: Sequence[SegmentTags], texts: Sequence[str] = ()) -> tuple[SegmentTags, ...]:
    """A complaint whose turn says elsewhere that it happens again is a repeat complaint
    ("I was charged twice. Again!": the repetition is its own segment), a question after a
    clarification in the same turn closes that clarification ("您的意思是桌面没问题，是吗？"), an
    offer asked back makes the offer before it a question ("我帮您约周四，您看方便吗？"), and beside a
    wish the turn's plain remarks are courtesy too ("小橘今天挺勇敢的，祝它早日康复。"), a future
    right after someone else is quoted is their promise ("他说在隧道里堵着，二十分钟内一定到。"), and
    after an agent's lookup the states it found are read back ("查到了，扣款成功，发货回调超时了"), unless
    the agent brought them about (`texts`: the segments' words, where the caller has them)."""
    tags = list(tags)
    if any(WISH in t.cues for t in tags) and not any(t.kind in _SUBSTANCE for t in tags):
        tags = [replace(t, kind="smalltalk") if _aside(t) else t for t in tags]
    asked_back = [i for i, t in enumerate(tags) if OFFER_ASKED in t.cues]
    if asked_back:
        last = max(asked_back)
        tags = [replace(t, kind="question") if i < last and t.kind == "commitment" else t for i, t in enumerate(tags)]
    tags = [
        replace(t, kind="third_party_commitment", cues=(*t.cues, "third_party_promise"))
        if i and REPORTED in tags[i - 1].cues and t.kind == "commitment" and "agent_future" in t.cues
        else t
        for i, t in enumerate(tags)
    ]
    looked_up = next((i for i, t in enumerate(tags) if "lookup" in t.cues), None)
    if looked_up is not None:
        words = list(texts) if len(texts) == len(tags) else [""] * len(tags)
        tags = [_read_back(t, words[i]) if i > looked_up else t for i, t in enumerate(tags)]
    kinds = [t.kind for t in tags]
    if "clarification" in kinds and "question" in kinds[kinds.index("clarification") :]:
        # "您的意思是只有桌腿断了，桌面没问题，是吗？": what lies between the clarification and the
        # question that closes it is the content being checked, not a promise or a question of its own
        first = kinds.index("clarification")
        last = max(i for i, k in enumerate(kinds) if k == "question")
        tags = [replace(t, kind="clarification") if first < i <= last else t for i, t in enumerate(tags)]
    if not any(REPEAT_CUE in t.cues for t in tags) or not any(t.kind == "complaint" for t in tags):
        return tuple(tags)
    return tuple(replace(t, kind="repeat_complaint") if t.kind == "complaint" else t for t in tags)


# Types a wish does not soften: what the turn reports, asks, refuses or promises on its own words.
_SUBSTANCE = frozenset(
    {
        "repeat_complaint",
        "complaint",
        "resolution_confirmation",
        "action_request",
        "refusal",
        "third_party_commitment",
        "question",
        "clarification",
    }
)


def _read_back(tag: SegmentTags, text: str) -> SegmentTags:
    """A segment after a lookup in the same turn ("查到了，支付宝那边扣款成功，发货回调超时了"): what
    was found, a statement, unless it is a state the agent brought about or an offer of theirs."""
    weak_future = tag.kind == "commitment" and not set(tag.cues) & {"agent_commitment", "third_party_promise"}
    if (tag.kind == "status_update" or weak_future) and not _STILL_STATUS.search(text):
        return replace(tag, kind="statement", cues=(*tag.cues, "lookup"))
    return tag


def _aside(tag: SegmentTags) -> bool:
    """A remark beside a wish: a plain statement, or a "will" read only from a future word
    ("琴准了手感也会好很多")."""
    if tag.kind == "statement":
        return True
    weak = bool(set(tag.cues) & {"agent_future", "forecast"})
    return tag.kind == "commitment" and weak and "agent_commitment" not in tag.cues


def unit_kind(kinds: Sequence[str]) -> str:
    """The most salient of several segment kinds (`KIND_RANK`); `statement` for none.

    >>> unit_kind(["smalltalk", "resolution_confirmation"]), unit_kind([])
    ('resolution_confirmation', 'statement')
    """
    present = set(kinds)
    return next((k for k in KIND_RANK if k in present), "statement")


def segment_topic(text: str, lex: TagLexicon) -> str | None:
    """The recall question class a segment is about (order, logistics, after_sales …), if any."""
    for topic, pattern in lex.topics:
        if pattern.search(text):
            return topic
    return None
