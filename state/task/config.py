"""What the task state machine is given: its settings and the data one transition reads.

`TaskConfig` holds the numbers (15-minute event-time timeout, the 0.85 shortcut confidence, caps on
what a task remembers); `TaskResources` the hot-reloaded data files and the turn embedder. Both are
frozen, so a transition never changes them. See docs/design.md#task-state-machine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from state.task.anchoring import Thresholds
from state.task.cues import Cues
from state.task.entities import EntityConfig
from state.task.table import TaskTable

Vector = tuple[float, ...]


@dataclass(frozen=True)
class TaskConfig:
    timeout: timedelta = timedelta(minutes=15)
    shortcut_confidence: float = 0.85
    max_entities: int = 64
    max_commitments: int = 16
    keep_previous_tasks: int = 3
    clarify_margin: float = 0.02


@dataclass(frozen=True)
class TaskResources:
    """The data the transition reads (hot-reloaded by the operator) and the turn embedder."""

    table: TaskTable
    cues: Cues
    entities: EntityConfig
    thresholds: Thresholds
    embedder_name: str
    embed: Callable[[str], Vector]
