"""Intent and emotion tagging (docs/design.md#tagging).

Input: keyed `Turn` (normalised, after coreference/terms) or `SessionClosed`. Output: keyed `Turn`
with `segments`, `tags`, `turn_intent`, `turn_intent_label` filled; `SessionClosed` is forwarded.
State: `TagState` per session id (the previous turn's main intent and speaker: the dialogue
context). Key: session id. Discarded on `SessionClosed` and by an idle timer (`idle_ttl` of
processing time after the last turn). The lexicon getter (hot reload) and the optional trained
head are injected; the logic is `state.tagging.tagger.tag_turn`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream, StatefulLogic

from state.core.closing import SessionClosed
from state.normalise.turn import Turn
from state.tagging.lexicon import TagLexicon
from state.tagging.tagger import IntentHead, TagConfig, TagState, tag_turn

Item = Turn | SessionClosed


@dataclass(frozen=True)
class TaggingConfig:
    tag: TagConfig = field(default_factory=TagConfig)
    idle_ttl: timedelta = timedelta(hours=1)


class _TagLogic(StatefulLogic[Item, Item, TagState | None]):
    def __init__(
        self,
        state: TagState | None,
        config: TaggingConfig,
        lexicon: Callable[[], TagLexicon],
        head: IntentHead | None,
        clock: Callable[[], datetime],
    ) -> None:
        self._state = state
        self._config = config
        self._lexicon = lexicon
        self._head = head
        self._clock = clock
        self._wake: datetime | None = clock() + config.idle_ttl if state is not None else None

    def on_item(self, value: Item) -> tuple[Iterable[Item], bool]:
        if isinstance(value, SessionClosed):
            return ((value,), StatefulLogic.DISCARD)
        self._state, turn = tag_turn(self._state, value, self._config.tag, self._lexicon(), self._head)
        self._wake = self._clock() + self._config.idle_ttl
        return ((turn,), StatefulLogic.RETAIN)

    def on_notify(self) -> tuple[Iterable[Item], bool]:
        return ((), StatefulLogic.DISCARD)

    def notify_at(self) -> datetime | None:
        return self._wake

    def snapshot(self) -> TagState | None:
        return self._state


@operator
def tag_turns(
    step_id: str,
    up: KeyedStream[Item],
    config: TaggingConfig,
    *,
    lexicon: Callable[[], TagLexicon],
    head: IntentHead | None,
    clock: Callable[[], datetime],
) -> KeyedStream[Item]:
    return op.stateful("tag_logic", up, lambda resume: _TagLogic(resume, config, lexicon, head, clock))
