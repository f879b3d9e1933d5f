"""The response decision tables (docs/design.md#responder), as pure rules.

Input: a `ResponseRequest`, the decision tables and the incident switches. Output:
`ResponseDecisions` — the route (calculator / LLM / template), the planning depth from the
complexity score, the urgency level and delivery channel (preference × urgency), and the
promise strength from the cues' certainty and urgency. Every decision a switch forced is named
in `overrides` ("planning: plan→direct"). No state; no model is asked anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from schemas.errors import CalculationError
from schemas.recall import Cue
from schemas.response import (
    Calculation,
    PlanDepth,
    PromiseStrength,
    ResponseDecisions,
    ResponseRequest,
    Route,
    UrgencyLevel,
)
from state.respond.calculator import calculate
from state.respond.tables import DecisionTables, DeliveryTable, PlanningTable, PromiseTable

RouteSwitch = Literal["auto", "llm", "calculator", "template"]
PlanningSwitch = Literal["auto", "direct", "plan"]
PromiseSwitch = Literal["auto", "firm", "neutral", "hedged"]


@dataclass(frozen=True, slots=True)
class DecisionSwitches:
    """Incident switches (docs/design.md#principles): "auto" follows the tables, anything else forces the decision.

    `llm_enabled=False` turns every LLM route into the cue-grounded template (an endpoint
    incident); `channel` forces one delivery channel.
    """

    route: RouteSwitch = "auto"
    planning: PlanningSwitch = "auto"
    promise: PromiseSwitch = "auto"
    channel: str | None = None
    llm_enabled: bool = True


def _contains_any(text: str, words: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(w.lower() in lowered for w in words)


def count_entities(text: str, table: PlanningTable) -> int:
    """Non-overlapping entity mentions (times, places, organisations, ids, amounts).

    >>> from state.respond.tables import decision_tables
    >>> count_entities("对比国航和东航明天上午的票价", decision_tables().get().planning)
    3
    """
    taken = [False] * len(text)
    count = 0
    for pattern in table.entity_patterns:
        for m in re.finditer(pattern, text):
            if m.end() > m.start() and not any(taken[m.start() : m.end()]):
                taken[m.start() : m.end()] = [True] * (m.end() - m.start())
                count += 1
    return count


def complexity_score(text: str, table: PlanningTable) -> int:
    """entities × weight, + bonus for a comparison word, − penalty for an urgency word; clamped.

    >>> from state.respond.tables import decision_tables
    >>> t = decision_tables().get().planning
    >>> complexity_score("订明天早上的高铁", t), complexity_score("对比国航和东航明天上午的票价，推荐最便宜的", t)
    (2, 9)
    """
    score = count_entities(text, table) * table.entity_weight
    if _contains_any(text, table.comparison_words):
        score += table.comparison_bonus
    if _contains_any(text, table.urgency_words):
        score -= table.urgency_penalty
    return max(0, min(table.max_score, score))


def _cue_urgency(cue: Cue) -> float:
    return cue.emotion.urgency if cue.emotion is not None else 0.0


def urgency_level(request: ResponseRequest, table: DeliveryTable) -> UrgencyLevel:
    """Urgency from the query's words and the cues' emotion load, as a level.

    >>> from datetime import UTC, datetime
    >>> from state.respond.tables import decision_tables
    >>> req = ResponseRequest(request_id="r", session_id="s", tenant_id="t", query_event_id="e",
    ...                       query_text="我的快递到哪了", ts=datetime(2026, 1, 1, tzinfo=UTC))
    >>> urgency_level(req, decision_tables().get().delivery)
    'high'
    """
    levels = table.levels
    score = max((_cue_urgency(c) for c in request.cues), default=0.0)
    if _contains_any(request.query_text, table.realtime_words):
        score = max(score, levels.realtime)
    elif _contains_any(request.query_text, table.high_words):
        score = max(score, levels.high)
    elif _contains_any(request.query_text, table.medium_words):
        score = max(score, levels.medium)
    if score >= levels.realtime:
        return "realtime"
    if score >= levels.high:
        return "high"
    if score >= levels.medium:
        return "medium"
    return "low"


def delivery_channel(preference: str | None, urgency: UrgencyLevel, table: DeliveryTable) -> str:
    """The channel for this preference × urgency; an unknown preference uses the default row.

    >>> from state.respond.tables import decision_tables
    >>> t = decision_tables().get().delivery
    >>> delivery_channel("sms", "high", t), delivery_channel(None, "low", t)
    ('sms_short_link', 'app_inbox')
    """
    row = table.matrix.get(preference or "", table.matrix[table.default_preference])
    return row[urgency]


def promise_strength(cues: tuple[Cue, ...], urgency: UrgencyLevel, table: PromiseTable) -> PromiseStrength:
    """hedged when an uncertain cue meets an urgent matter; firm when every commitment is certain.

    Cues without an emotion load count as neither certain nor uncertain.
    """
    with_emotion = [c for c in cues if c.emotion is not None]
    uncertain = any(c.emotion.certainty < table.hedge.max_certainty for c in with_emotion if c.emotion)
    urgent = urgency in ("high", "realtime") or any(_cue_urgency(c) >= table.hedge.min_urgency for c in cues)
    if uncertain and urgent:
        return "hedged"
    commitments = [c for c in cues if c.components.commitment_strength > 0 or c.unit_type == "commitment"]
    if commitments and all(
        c.emotion is not None
        and c.emotion.certainty >= table.firm.min_certainty
        and c.components.commitment_strength >= table.firm.min_commitment
        for c in commitments
    ):
        return "firm"
    return "neutral"


def soften(text: str, table: PromiseTable) -> str:
    """Rewrite firm promise wording into hedged wording (for hedged replies).

    >>> from state.respond.tables import decision_tables
    >>> soften("下周二肯定能给到", decision_tables().get().promise)
    '下周二预计可提供'
    """
    for firm, hedged in table.soften:
        if firm.isascii():
            text = re.sub(re.escape(firm), hedged, text, flags=re.IGNORECASE)
        else:
            text = text.replace(firm, hedged)
    return text


def decide(request: ResponseRequest, tables: DecisionTables, switches: DecisionSwitches) -> ResponseDecisions:
    """Every rule-table decision for one request, with the switches applied and recorded."""
    overrides: list[str] = []

    calculation: Calculation | None = None
    route: Route
    try:
        calculation = calculate(request.query_text, tables.calculator)
    except CalculationError as exc:
        route, reason = "llm", f"numeric but not computable ({exc}): left to the model"
    else:
        if calculation is not None:
            route, reason = "calculator", f"≥{tables.calculator.min_numbers} numbers and an operator"
        else:
            route, reason = "llm", "not a numeric question"
    if switches.route != "auto" and switches.route != route:
        if switches.route == "calculator" and calculation is None:
            overrides.append("route: calculator switch ignored (nothing to compute)")
        else:
            overrides.append(f"route: {route}→{switches.route}")
            route = switches.route
    if route == "llm" and not switches.llm_enabled:
        overrides.append("route: llm→template (llm disabled)")
        route = "template"

    score = complexity_score(request.query_text, tables.planning)
    planning: PlanDepth = "plan" if score >= tables.planning.threshold else "direct"
    if switches.planning != "auto" and switches.planning != planning:
        overrides.append(f"planning: {planning}→{switches.planning}")
        planning = switches.planning

    urgency = urgency_level(request, tables.delivery)
    channel = delivery_channel(request.preferred_channel, urgency, tables.delivery)
    if switches.channel is not None and switches.channel != channel:
        overrides.append(f"channel: {channel}→{switches.channel}")
        channel = switches.channel

    promise = promise_strength(request.cues, urgency, tables.promise)
    if switches.promise != "auto" and switches.promise != promise:
        overrides.append(f"promise: {promise}→{switches.promise}")
        promise = switches.promise

    return ResponseDecisions(
        route=route,
        route_reason=reason,
        calculation=calculation if route == "calculator" else None,
        complexity_score=score,
        planning=planning,
        urgency=urgency,
        channel=channel,
        promise=promise,
        overrides=tuple(overrides),
    )
