"""The declarative task transition table (docs/design.md#task-state-machine): stage × action → stay, deepen or new task.

The table is data (`state/task/resources/task_table.customer_service.yaml`, or the user's own file,
see docs/task-state-machine.md); this module parses and validates it and answers two questions:
which actions a text names (`detect`) and what an action does in a stage (`resolve`). Nothing
about customer service is hard-coded here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from schemas.errors import TransitionTableError

IDLE = "idle"
START = "@start"
WILDCARD = "*"
Mode = Literal["stay", "deepen", "new_task"]
_MODES: frozenset[str] = frozenset({"stay", "deepen", "new_task"})
_ASCII = re.compile(r"^[\x00-\x7f]+$")


@dataclass(frozen=True, slots=True)
class Stage:
    name: str
    label: str
    goal: str
    label_en: str


@dataclass(frozen=True, slots=True)
class Action:
    name: str
    starts: str
    label: str
    priority: int
    cues: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Rule:
    """What an action does in a stage: `mode`, and for deepen the stage `to` (already resolved)."""

    mode: Mode
    to: str


@dataclass(frozen=True, slots=True)
class Detected:
    action: str
    cue: str
    start: int


@dataclass(frozen=True)
class TaskTable:
    name: str
    fallback_stage: str
    default: Mode
    stages: dict[str, Stage]
    actions: dict[str, Action]
    transitions: dict[str, dict[str, Rule | str]]
    _cue_patterns: list[tuple[re.Pattern[str], str, str]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        pats: list[tuple[re.Pattern[str], str, str]] = []
        for action in self.actions.values():
            for cue in action.cues:
                body = re.escape(cue.lower())
                pat = re.compile(rf"(?<![a-z]){body}(?![a-z])" if _ASCII.match(cue) else body)
                pats.append((pat, action.name, cue))
        self._cue_patterns.extend(pats)

    def detect(self, text: str) -> list[Detected]:
        """Actions the text names, best first (higher priority, then longer cue, then position).

        >>> from state.core.datafiles import packaged
        >>> t = load_table(packaged("task_table.customer_service.yaml"))
        >>> [d.action for d in t.detect("顺便帮我取消这个订单")][:1]
        ['cancel_order']
        """
        low = text.lower()
        best: dict[str, Detected] = {}
        for pat, action, cue in self._cue_patterns:
            m = pat.search(low)
            if m is None:
                continue
            prev = best.get(action)
            if prev is None or len(cue) > len(prev.cue):
                best[action] = Detected(action, cue, m.start())
        return sorted(best.values(), key=lambda d: (-self.actions[d.action].priority, -len(d.cue), d.start))

    def resolve(self, stage: str, action: str) -> Rule:
        """The rule for `action` in `stage`; from idle every action starts a new task.

        >>> from state.core.datafiles import packaged
        >>> t = load_table(packaged("task_table.customer_service.yaml"))
        >>> t.resolve("logistics", "cancel_order")
        Rule(mode='deepen', to='cancellation')
        >>> t.resolve("account", "ask_promotion")
        Rule(mode='new_task', to='promotion')
        """
        act = self.actions[action]
        if stage == IDLE:
            return Rule("new_task", act.starts)
        row = self.transitions.get(stage, {})
        entry = row.get(action, row.get(WILDCARD, self.default))
        if isinstance(entry, Rule):
            return Rule("deepen", act.starts) if entry.to == START else entry
        if entry == "stay":
            return Rule("stay", stage)
        return Rule("new_task", act.starts)

    def is_legal(self, before: str, after: str, mode: str, action: str | None) -> bool:
        """Whether a step from stage `before` to `after` under `mode` is one the table allows."""
        if mode in {"stay", "none", "clarify"}:
            return after == before
        if mode in {"drift", "start", "new_task"}:
            return after == (self.actions[action].starts if action else self.fallback_stage)
        if mode == "deepen" and action is not None:
            rule = self.resolve(before, action)
            return rule.mode == "deepen" and rule.to == after
        return False

    def stage_label(self, stage: str, lang: str = "zh") -> str:
        s = self.stages.get(stage)
        if s is None:
            return stage
        return s.label_en if lang == "en" else s.label

    def goal_of(self, stage: str) -> str:
        s = self.stages.get(stage)
        return s.goal if s else stage


def _req(raw: dict[str, Any], key: str, where: str) -> Any:
    if key not in raw:
        raise TransitionTableError(f"{where}: missing `{key}`")
    return raw[key]


def parse_table(raw: Any) -> TaskTable:
    """Validate a loaded YAML document into a `TaskTable` (every name checked)."""
    if not isinstance(raw, dict):
        raise TransitionTableError("task table: the document must be a mapping")
    stages_raw = _req(raw, "stages", "task table")
    actions_raw = _req(raw, "actions", "task table")
    if not isinstance(stages_raw, dict) or not stages_raw:
        raise TransitionTableError("task table: `stages` must be a non-empty mapping")
    if not isinstance(actions_raw, dict) or not actions_raw:
        raise TransitionTableError("task table: `actions` must be a non-empty mapping")
    if IDLE in stages_raw:
        raise TransitionTableError(f"task table: `{IDLE}` is reserved for 'no task'")
    stages = {
        name: Stage(
            name,
            str((spec or {}).get("label", name)),
            str((spec or {}).get("goal", name)),
            str((spec or {}).get("label_en", (spec or {}).get("label", name))),
        )
        for name, spec in stages_raw.items()
    }
    actions: dict[str, Action] = {}
    for name, spec in actions_raw.items():
        where = f"task table action {name!r}"
        if not isinstance(spec, dict):
            raise TransitionTableError(f"{where}: must be a mapping")
        starts = str(_req(spec, "starts", where))
        if starts not in stages:
            raise TransitionTableError(f"{where}: starts in unknown stage {starts!r}")
        cues = tuple(str(c) for c in spec.get("cues", ()) if str(c).strip())
        actions[name] = Action(name, starts, str(spec.get("label", name)), int(spec.get("priority", 0)), cues)
    fallback = str(raw.get("fallback_stage", next(iter(stages))))
    if fallback not in stages:
        raise TransitionTableError(f"task table: fallback_stage {fallback!r} is not a stage")
    default = str(raw.get("default", "new_task"))
    if default not in {"stay", "new_task"}:
        raise TransitionTableError(f"task table: default must be stay or new_task, not {default!r}")
    transitions: dict[str, dict[str, Rule | str]] = {}
    for stage, row in (raw.get("transitions") or {}).items():
        if stage not in stages:
            raise TransitionTableError(f"task table transitions: unknown stage {stage!r}")
        if not isinstance(row, dict):
            raise TransitionTableError(f"task table transitions[{stage}]: must be a mapping")
        out: dict[str, Rule | str] = {}
        for action, entry in row.items():
            where = f"task table transitions[{stage}][{action}]"
            if action != WILDCARD and action not in actions:
                raise TransitionTableError(f"{where}: unknown action")
            if isinstance(entry, str):
                if entry not in {"stay", "new_task"}:
                    raise TransitionTableError(f"{where}: unknown mode {entry!r}")
                out[action] = entry
                continue
            if not isinstance(entry, dict):
                raise TransitionTableError(f"{where}: must be a mode or {{to, mode}}")
            mode = str(entry.get("mode", "deepen"))
            if mode not in _MODES:
                raise TransitionTableError(f"{where}: unknown mode {mode!r}")
            if mode != "deepen":
                out[action] = mode
                continue
            to = str(_req(entry, "to", where))
            if to != START and to not in stages:
                raise TransitionTableError(f"{where}: deepens into unknown stage {to!r}")
            out[action] = Rule("deepen", to)
        transitions[stage] = out
    return TaskTable(
        name=str(raw.get("name", "table")),
        fallback_stage=fallback,
        default=default,  # type: ignore[arg-type]
        stages=stages,
        actions=actions,
        transitions=transitions,
    )


def load_table(path: Any) -> TaskTable:
    """Read and validate a table file (raises `ResourceFileError`/`TransitionTableError`)."""
    from state.core.datafiles import read_data

    return parse_table(read_data(path))
