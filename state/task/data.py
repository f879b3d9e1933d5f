"""The task state machine's data files, hot-reloaded, bundled for one transition.

`TaskData.resources()` returns the current `TaskResources`: transition table, cue lexicon,
entity patterns and the anchoring thresholds of the injected embedder (settings may override
them). Files default to the ones shipped in `state/task/resources/`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from state.core.datafiles import data_loader, packaged
from state.core.embedding import Embedder
from state.core.hotfile import HotFile
from state.task.anchoring import Thresholds, ThresholdTable, parse_thresholds
from state.task.cues import Cues, parse_cues
from state.task.entities import EntityConfig, parse_entity_config
from state.task.fsm import TaskResources, Vector
from state.task.table import TaskTable, parse_table


@dataclass(frozen=True)
class TaskDataPaths:
    table: Path | None = None
    cues: Path | None = None
    entities: Path | None = None
    thresholds: Path | None = None
    continue_at: float | None = None
    clarify_at: float | None = None
    reload_interval_s: float = 5.0


class TaskData:
    """Hot-reloaded data files plus the anchoring embedder.

    >>> from sinks.models.embedders import load_embedder
    >>> data = TaskData(TaskDataPaths(), load_embedder("static"))
    >>> data.resources().table.name
    'customer_service'
    """

    def __init__(self, paths: TaskDataPaths, embedder: Embedder) -> None:
        every = paths.reload_interval_s
        self.table: HotFile[TaskTable] = HotFile(
            paths.table or packaged("task_table.customer_service.yaml"), data_loader(parse_table), check_every_s=every
        )
        self.cues: HotFile[Cues] = HotFile(
            paths.cues or packaged("task_cues.yaml"), data_loader(parse_cues), check_every_s=every
        )
        self.entities: HotFile[EntityConfig] = HotFile(
            paths.entities or packaged("entity_patterns.yaml"), data_loader(parse_entity_config), check_every_s=every
        )
        self.thresholds: HotFile[ThresholdTable] = HotFile(
            paths.thresholds or packaged("anchor_thresholds.yaml"), data_loader(parse_thresholds), check_every_s=every
        )
        self._paths = paths
        self._embedder = embedder

    def _embed(self, text: str) -> Vector:
        row = self._embedder.query([text])[0]
        return tuple(round(float(x), 6) for x in row)

    def current_thresholds(self) -> Thresholds:
        base = self.thresholds.get().for_model(self._embedder.name)
        return Thresholds(
            self._paths.continue_at if self._paths.continue_at is not None else base.continue_at,
            self._paths.clarify_at if self._paths.clarify_at is not None else base.clarify_at,
        )

    def resources(self) -> TaskResources:
        return TaskResources(
            table=self.table.get(),
            cues=self.cues.get(),
            entities=self.entities.get(),
            thresholds=self.current_thresholds(),
            embedder_name=self._embedder.name,
            embed=self._embed,
        )
