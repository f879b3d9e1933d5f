"""The JSONL records a replay leaves behind, indexed for the API: task states, archived tasks,
recall results (and the results of POST /recall), window metrics.

Input: append-only JSONL files (`task.state_log_path`, `task.archived_path`, the recall logs,
the metrics log). Output: per-(tenant, session) views. State: per file, the byte offset read so
far and the parsed records; a file that grew is read from that offset, one that shrank or was
replaced (new inode) is read again from the start. Checked on each access, at most every
`interval_s`. Lines that do not parse are counted (`bad_lines`) and skipped: a log written by a
newer schema must not take the inspector down.

Every lookup takes the tenant: records of another tenant are invisible, even when two tenants
use the same session id.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from schemas.metrics import WindowMetrics
from schemas.recall import RecallResult
from schemas.session import ArchivedTask, SessionState

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

# `[DEBUG:cue=CUE-7891,css=0.87]`; the css part is optional when pasting by hand.
_MARKER = re.compile(r"\[?\s*DEBUG\s*:\s*cue\s*=\s*([A-Za-z0-9_\-]{1,64})\s*(?:,\s*css\s*=\s*([0-9]*\.?[0-9]+))?\s*\]?")


@dataclass(frozen=True, slots=True)
class DebugMarker:
    cue_id: str
    css: float | None


def parse_markers(text: str) -> list[DebugMarker]:
    """Every debug marker in pasted text (a whole agent message may be pasted).

    >>> parse_markers("ok [DEBUG:cue=CUE-3f2a9c1e,css=0.871] [DEBUG:cue=CUE-7891]")
    [DebugMarker(cue_id='CUE-3f2a9c1e', css=0.871), DebugMarker(cue_id='CUE-7891', css=None)]
    >>> parse_markers("no marker here")
    []
    """
    return [DebugMarker(m.group(1), float(m.group(2)) if m.group(2) else None) for m in _MARKER.finditer(text)]


@dataclass
class _FileCursor:
    path: Path
    inode: int = -1
    offset: int = 0


@dataclass
class JsonlLog(Generic[M]):
    """Records of one model from one or more append-only JSONL files, read incrementally."""

    paths: tuple[Path, ...]
    model: type[M]
    on_record: Callable[[M], None]
    on_reset: Callable[[], None]
    interval_s: float = 1.0
    monotonic: Callable[[], float] = time.monotonic
    bad_lines: int = 0
    _cursors: list[_FileCursor] = field(default_factory=list)
    _checked: float = float("-inf")
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._cursors = [_FileCursor(p) for p in self.paths]

    def refresh(self, *, force: bool = False) -> None:
        with self._lock:
            now = self.monotonic()
            if not force and now - self._checked < self.interval_s:
                return
            self._checked = now
            if any(self._replaced(c) for c in self._cursors):
                self.on_reset()
                self.bad_lines = 0
                for c in self._cursors:
                    c.inode, c.offset = -1, 0
            for c in self._cursors:
                self._read_new(c)

    @staticmethod
    def _replaced(c: _FileCursor) -> bool:
        try:
            st = c.path.stat()
        except FileNotFoundError:
            return c.offset > 0
        return c.inode not in (-1, st.st_ino) or st.st_size < c.offset

    def _read_new(self, c: _FileCursor) -> None:
        try:
            fh = c.path.open("rb")
        except FileNotFoundError:
            return
        with fh:
            c.inode = c.path.stat().st_ino
            fh.seek(c.offset)
            while True:
                line = fh.readline()
                if not line or not line.endswith(b"\n"):
                    break  # a line still being written is read next time
                c.offset += len(line)
                if not line.strip():
                    continue
                try:
                    record = self.model.model_validate_json(line)
                except ValidationError as exc:
                    self.bad_lines += 1
                    log.warning('{"op": "api.records", "file": "%s", "error": "%s"}', c.path, str(exc)[:200])
                    continue
                self.on_record(record)


Key = tuple[str, str]  # (tenant_id, session_id)


class SessionRecords:
    """Task states, archived tasks and recall results, by tenant and session."""

    def __init__(
        self,
        *,
        state_log: Path | None,
        archived_log: Path | None,
        recall_logs: Iterable[Path],
        interval_s: float = 1.0,
    ) -> None:
        self._states: dict[Key, list[SessionState]] = defaultdict(list)
        self._archived: dict[Key, dict[str, ArchivedTask]] = defaultdict(dict)
        self._recalls: dict[Key, dict[str, RecallResult]] = defaultdict(dict)
        self._added: dict[Key, dict[str, RecallResult]] = defaultdict(dict)
        self._logs: list[JsonlLog[BaseModel]] = []
        if state_log is not None:
            self._logs.append(
                JsonlLog((state_log,), SessionState, self._add_state, self._states.clear, interval_s)  # type: ignore[arg-type]
            )
        if archived_log is not None:
            self._logs.append(
                JsonlLog((archived_log,), ArchivedTask, self._add_archived, self._archived.clear, interval_s)  # type: ignore[arg-type]
            )
        self._logs.append(
            JsonlLog(tuple(recall_logs), RecallResult, self._add_recall, self._recalls.clear, interval_s)  # type: ignore[arg-type]
        )

    # -- loading ------------------------------------------------------------------------

    def _add_state(self, state: SessionState) -> None:
        self._states[(state.tenant_id, state.session_id)].append(state)

    def _add_archived(self, rec: ArchivedTask) -> None:
        self._archived[(rec.final_state.tenant_id, rec.session_id)][rec.task_id] = rec  # at-least-once: dedupe

    def _add_recall(self, result: RecallResult) -> None:
        self._recalls[(result.tenant_id, result.session_id)][result.query_event_id] = result

    def add_recall(self, result: RecallResult) -> None:
        """A result produced by POST /recall (kept apart so a log reload does not drop it)."""
        self._added[(result.tenant_id, result.session_id)][result.query_event_id] = result

    def refresh(self, *, force: bool = False) -> None:
        for lg in self._logs:
            lg.refresh(force=force)

    @property
    def bad_lines(self) -> int:
        return sum(lg.bad_lines for lg in self._logs)

    # -- lookups (always by tenant) -------------------------------------------------------

    def sessions(self, tenant_id: str) -> set[str]:
        """The tenant's sessions that have task states: turns the flow processed.

        Recall results do not make a session: a recall request may name any session id.
        """
        self.refresh()
        return {s for t, s in self._states if t == tenant_id}

    def states(self, tenant_id: str, session_id: str) -> list[SessionState]:
        """Every state the session went through, in log order (one per turn, plus archive clears)."""
        self.refresh()
        return list(self._states.get((tenant_id, session_id), ()))

    def archived(self, tenant_id: str, session_id: str) -> list[ArchivedTask]:
        self.refresh()
        return sorted(self._archived.get((tenant_id, session_id), {}).values(), key=lambda r: r.archived_at)

    def recalls(self, tenant_id: str, session_id: str | None = None) -> list[RecallResult]:
        """Recall results of a session (or of the whole tenant), oldest first."""
        self.refresh()
        found: dict[str, RecallResult] = {}
        for source in (self._recalls, self._added):
            for (t, s), by_id in source.items():
                if t == tenant_id and (session_id is None or s == session_id):
                    found.update(by_id)
        return sorted(found.values(), key=lambda r: (r.ts, r.query_event_id))

    def recall(self, tenant_id: str, query_event_id: str) -> RecallResult | None:
        for r in self.recalls(tenant_id):
            if r.query_event_id == query_event_id:
                return r
        return None

    def find_marker(self, tenant_id: str, marker: DebugMarker) -> list[RecallResult]:
        """Recalls of the tenant whose cues include the marker's cue (and css, to 3 places), newest first."""
        out = []
        for r in self.recalls(tenant_id):
            for cue in r.cues:
                if cue.cue_id != marker.cue_id and cue.memory_id != marker.cue_id:
                    continue
                if marker.css is None or abs(cue.components.css - marker.css) < 0.0005 + 1e-9:
                    out.append(r)
                    break
        return sorted(out, key=lambda r: r.ts, reverse=True)

    def memory_for_cue(self, tenant_id: str, cue_id: str) -> str | None:
        """The memory id behind a cue id seen in this tenant's recalls."""
        for r in self.recalls(tenant_id):
            for cue in r.cues:
                if cue.cue_id == cue_id:
                    return cue.memory_id
        return None


class MetricsLog:
    """The flow's WindowMetrics (the flow's metrics sink writes them), newest last."""

    def __init__(self, path: Path | None, interval_s: float = 1.0) -> None:
        self.path = path
        self._windows: dict[tuple[str, str], WindowMetrics] = {}
        self._log: JsonlLog[WindowMetrics] | None = None
        if path is not None:
            self._log = JsonlLog((path,), WindowMetrics, self._add, self._windows.clear, interval_s)

    def _add(self, w: WindowMetrics) -> None:
        # A window is re-emitted with a higher revision when late items are folded in, and may be
        # written twice (at-least-once): keep the highest revision, the later line on a tie.
        key = (w.window_start.isoformat(), w.window_end.isoformat())
        old = self._windows.get(key)
        if old is None or w.revision >= old.revision:
            self._windows[key] = w

    def present(self) -> bool:
        return self.path is not None and self.path.exists()

    def last(self, n: int) -> list[WindowMetrics]:
        if self._log is None:
            return []
        self._log.refresh()
        return sorted(self._windows.values(), key=lambda w: w.window_start)[-n:]
