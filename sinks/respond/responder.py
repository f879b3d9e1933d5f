"""The responder (docs/design.md#responder): ResponseRequest → AgentResponse, asynchronously and never blocking.

Input: `ResponderItem`s (in-process in embedded mode, from the response-request topic in run
mode): a `ResponseRequest` to answer, or a `UserCorrection` control event to reflect on;
`handle` dispatches on the type. Output: a `ResponseOutcome` per request — the `AgentResponse`,
plus a `ReflectionRecord` and a `SupersedeRequest` when the turn corrected the previous answer —
and a `CorrectionOutcome` per correction (a reflection and a supersede, or why there is none).
State: the previous answer per session (for reflection), an LRU of `max_sessions` sessions;
a session's entry is replaced by each new answer and evicted least-recently-used (or dropped by
`forget` on session end). A session's items are handled in arrival order, one at a time
(a lock per session while it has items in flight), so a correction sees the answer to every
request that arrived before it; different sessions run concurrently.

Per request: the rule tables decide (calculator / LLM / template route, planning depth,
channel, promise strength); the calculator answers numeric questions itself; otherwise the
prompt (task state + top-3 cues as ~50-token facts, memory delimited as data) goes to the chat
endpoint under a semaphore (bounded concurrency), with the client's timeout, deadline and one
retry. Endpoint down, slow or garbage → the cue-grounded template answer flagged `fallback`.
A hedged promise softens the model's wording too. One JSON log line per response.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from schemas.errors import ChatEndpointError
from schemas.events import UserCorrection
from schemas.reflection import ReflectionRecord, SupersedeRequest
from schemas.response import (
    AgentResponse,
    CueAttribution,
    FallbackReason,
    ResponderItem,
    ResponseDecisions,
    ResponseRequest,
)
from sinks.http.chat_client import ChatClient, ChatConfig
from state.core.hotfile import HotFile
from state.core.language import language_mix
from state.respond.calculator import format_answer
from state.respond.decisions import DecisionSwitches, decide, soften
from state.respond.fallback import fallback_answer
from state.respond.prompt import attribute_cues, build_prompt, clean_answer, distil, strip_citations
from state.respond.reflection import Correction, PreviousAnswer, Reflection, reflect
from state.respond.tables import DecisionTables, ResponseText

log = logging.getLogger(__name__)
T = TypeVar("T")

TEMPLATE_MODEL = "template"
CALCULATOR_MODEL = "calculator"


@dataclass(frozen=True, slots=True)
class ResponderConfig:
    chat: ChatConfig = field(default_factory=ChatConfig)
    concurrency: int = 8
    fact_tokens: int = 50
    max_cues: int = 3
    max_sessions: int = 10_000
    timezone: str = "UTC"
    switches: DecisionSwitches = field(default_factory=DecisionSwitches)
    reflection: bool = True
    supersede: bool = True


@dataclass(frozen=True, slots=True)
class ResponseOutcome:
    response: AgentResponse
    reflection: ReflectionRecord | None = None
    supersede: SupersedeRequest | None = None


NoReflection = Literal["no_previous_answer", "no_conflict", "reflection_off"]


@dataclass(frozen=True, slots=True)
class CorrectionOutcome:
    """What a UserCorrection came to: a reflection (and a supersede), or `skipped` says why not."""

    correction: UserCorrection
    reflection: ReflectionRecord | None = None
    supersede: SupersedeRequest | None = None
    skipped: NoReflection | None = None


Outcome = ResponseOutcome | CorrectionOutcome


def _lang(text: str) -> str:
    mix = language_mix(text)
    return mix if mix in ("zh", "en", "mixed") else "en"


class Responder:
    """Answers requests concurrently; `await responder.respond_many(requests)` keeps their order.

    The chat client is created on first use inside the running event loop, so a Responder can be
    built anywhere and used from one loop at a time.
    """

    def __init__(
        self,
        config: ResponderConfig,
        *,
        tables: HotFile[DecisionTables],
        text: HotFile[ResponseText],
        client: ChatClient | None = None,
    ) -> None:
        self.config = config
        self._tables = tables
        self._text = text
        self._client = client
        self._semaphore: asyncio.Semaphore | None = None
        self._previous: OrderedDict[str, PreviousAnswer] = OrderedDict()
        self._session_locks: dict[str, asyncio.Lock] = {}
        self._session_users: dict[str, int] = {}

    # -- lifecycle -----------------------------------------------------------------------

    def _chat(self) -> ChatClient:
        if self._client is None:
            self._client = ChatClient(self.config.chat)
        return self._client

    def _slots(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.config.concurrency)
        return self._semaphore

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        self._semaphore = None

    # -- per-session memory of the last answer -------------------------------------------

    def _remember(self, session_id: str, answer: PreviousAnswer) -> None:
        self._previous[session_id] = answer
        self._previous.move_to_end(session_id)
        while len(self._previous) > self.config.max_sessions:
            self._previous.popitem(last=False)

    def previous_answer(self, session_id: str) -> PreviousAnswer | None:
        return self._previous.get(session_id)

    def forget(self, session_id: str) -> None:
        """Drop a session's state (call on SessionEnd)."""
        self._previous.pop(session_id, None)

    # -- answering -----------------------------------------------------------------------

    async def respond_many(self, requests: Sequence[ResponseRequest]) -> list[ResponseOutcome]:
        """Answer all requests concurrently (bounded by the semaphore), results in request order."""
        return list(await asyncio.gather(*(self.respond(r) for r in requests)))

    async def handle_many(self, items: Sequence[ResponderItem]) -> list[Outcome]:
        """Handle requests and corrections concurrently across sessions, in order within one; results in item order."""
        return list(await asyncio.gather(*(self.handle(i) for i in items)))

    async def handle(self, item: ResponderItem) -> Outcome:
        """Answer a ResponseRequest or reflect on a UserCorrection, in the session's arrival order."""
        if isinstance(item, UserCorrection):
            return await self.apply_correction(item)
        return await self.respond(item)

    async def respond(self, request: ResponseRequest) -> ResponseOutcome:
        """Answer one request. Requests of one session are answered one after another, in the
        order they arrived (reflection needs the previous answer); sessions run concurrently."""
        return await self._in_session_order(request.session_id, lambda: self._respond(request))

    async def apply_correction(self, event: UserCorrection) -> CorrectionOutcome:
        """Reflect on a UserCorrection once every earlier item of its session has been handled.

        A session with no previous answer (never answered here, forgotten, or evicted) yields no
        reflection and one log line saying so; it is not an error.
        """
        return await self._in_session_order(event.session_id, lambda: self._apply_correction(event))

    async def _in_session_order(self, sid: str, work: Callable[[], Awaitable[T]]) -> T:
        # asyncio.Lock wakes its waiters first come, first served: arrival order within a session.
        lock = self._session_locks.get(sid)
        if lock is None:
            lock = self._session_locks[sid] = asyncio.Lock()
        self._session_users[sid] = self._session_users.get(sid, 0) + 1
        try:
            async with lock:
                return await work()
        finally:
            self._session_users[sid] -= 1
            if self._session_users[sid] == 0:
                del self._session_users[sid], self._session_locks[sid]

    async def _apply_correction(self, event: UserCorrection) -> CorrectionOutcome:
        previous = self._previous.get(event.session_id)
        skipped: NoReflection | None = None
        found: Reflection | None = None
        if not self.config.reflection:
            skipped = "reflection_off"
        elif previous is None:
            skipped = "no_previous_answer"
        else:
            found = self.correct(event)
            skipped = "no_conflict" if found is None else None
        outcome = CorrectionOutcome(
            event, found.record if found else None, found.supersede if found else None, skipped=skipped
        )
        log.info(
            json.dumps(
                {
                    "op": "correct",
                    "session_id": event.session_id,
                    "event_id": event.event_id,
                    "previous_request_id": previous.request_id if previous else None,
                    "reflection_id": outcome.reflection.reflection_id if outcome.reflection else None,
                    "error_pattern": outcome.reflection.error_pattern if outcome.reflection else None,
                    "superseded": list(outcome.supersede.memory_ids) if outcome.supersede else [],
                    "skipped": skipped,
                },
                ensure_ascii=False,
            )
        )
        return outcome

    async def _respond(self, request: ResponseRequest) -> ResponseOutcome:
        started = time.perf_counter()
        tables, text = self._tables.get(), self._text.get()
        lang = _lang(request.query_text)
        reflection = self._reflect(request) if self.config.reflection else None
        decisions = decide(request, tables, self.config.switches)
        cues = request.cues[: self.config.max_cues]
        facts = tuple(distil(c, lang, text, self.config.fact_tokens) for c in cues)

        answer: str
        model: str
        cue_ids: tuple[str, ...]
        fallback_reason: FallbackReason | None = None
        attribution: CueAttribution = "supplied" if cues else "none"
        attempts = 0
        if decisions.route == "calculator" and decisions.calculation is not None:
            answer = format_answer(decisions.calculation, lang, tables.calculator)
            model, cue_ids, attribution = CALCULATOR_MODEL, (), "none"
        elif decisions.route == "llm":
            prompt = build_prompt(
                request, decisions, text, lang=lang, fact_tokens=self.config.fact_tokens, max_cues=self.config.max_cues
            )
            try:
                async with self._slots():
                    result = await self._chat().complete(prompt.messages, request_id=request.request_id)
                said = clean_answer(result.text)
                if not said:  # nothing but an echo of the prompt
                    raise ChatEndpointError("garbage", "the answer only echoed the prompt", attempts=result.attempts)
            except ChatEndpointError as exc:
                fallback_reason = exc.reason  # type: ignore[assignment]
                attempts = exc.attempts
                answer = fallback_answer(facts, decisions, lang, text, tables.promise)
                model, cue_ids = TEMPLATE_MODEL, tuple(c.memory_id for c in cues)
            else:
                attempts = result.attempts
                cue_ids, attribution = attribute_cues(said, cues, prompt.labels)
                answer = strip_citations(said)
                if decisions.promise == "hedged":
                    answer = soften(answer, tables.promise)
                model = result.model
        else:
            fallback_reason = "switched_off"
            answer = fallback_answer(facts, decisions, lang, text, tables.promise)
            model, cue_ids = TEMPLATE_MODEL, tuple(c.memory_id for c in cues)

        response = AgentResponse(
            request_id=request.request_id,
            session_id=request.session_id,
            tenant_id=request.tenant_id,
            text=answer,
            cue_ids=cue_ids,
            cue_attribution=attribution,
            model=model,
            latency_ms=round((time.perf_counter() - started) * 1000, 2),
            fallback=fallback_reason is not None,
            fallback_reason=fallback_reason,
            attempts=attempts,
            ts=request.ts,
            lang=lang,
            decisions=decisions,
            reflection_id=reflection.record.reflection_id if reflection else None,
        )
        self._remember(
            request.session_id,
            PreviousAnswer(
                request_id=request.request_id,
                text=answer,
                cue_ids=cue_ids,
                cue_texts={c.memory_id: c.text for c in cues},
                task_id=request.task_id,
            ),
        )
        self._log(response, decisions)
        supersede = reflection.supersede if reflection and self.config.supersede else None
        return ResponseOutcome(response, reflection.record if reflection else None, supersede)

    def _reflect(self, request: ResponseRequest) -> Reflection | None:
        correction = Correction(
            tenant_id=request.tenant_id,
            session_id=request.session_id,
            user_id=request.user_id,
            event_id=request.query_event_id,
            text=request.query_text,
            ts=request.ts,
            timezone=self.config.timezone,
        )
        return reflect(self._previous.get(request.session_id), correction, self._text.get())

    def correct(self, event: UserCorrection) -> Reflection | None:
        """Reflect on an explicit UserCorrection control event (no marker words needed)."""
        if not self.config.reflection:
            return None
        correction = Correction(
            tenant_id=event.tenant_id,
            session_id=event.session_id,
            user_id=event.user_id,
            event_id=event.event_id,
            text=event.corrected_text,
            ts=event.ts,
            timezone=self.config.timezone,
            explicit=True,
        )
        found = reflect(self._previous.get(event.session_id), correction, self._text.get())
        if found is not None and not self.config.supersede:
            return Reflection(found.record, None)
        return found

    @staticmethod
    def _log(response: AgentResponse, decisions: ResponseDecisions) -> None:
        log.info(
            json.dumps(
                {
                    "op": "respond",
                    "request_id": response.request_id,
                    "session_id": response.session_id,
                    "model": response.model,
                    "route": decisions.route,
                    "fallback": response.fallback,
                    "fallback_reason": response.fallback_reason,
                    "attempts": response.attempts,
                    "cue_ids": list(response.cue_ids),
                    "planning": decisions.planning,
                    "channel": decisions.channel,
                    "promise": decisions.promise,
                    "overrides": list(decisions.overrides),
                    "ms": response.latency_ms,
                },
                ensure_ascii=False,
            )
        )
