"""Hot-reloadable data files: lexicons, transition tables, calendars (STYLE: data, not literals).

`Reloading(path, parse)` parses a YAML/JSON file once at start (a bad file fails the build with
`ResourceFileError`) and re-reads it when its modification time changes, checked at most every
`interval_s` seconds of the process clock. A file broken by an edit is logged and the previous
good version stays in use, so an operator's typo never stops the flow.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any, Generic, TypeVar

import yaml

from schemas.errors import ResourceFileError

log = logging.getLogger(__name__)

T = TypeVar("T")


def packaged(name: str) -> Path:
    """Path of a data file shipped in `state/resources/`.

    >>> packaged("task_table.customer_service.yaml").name
    'task_table.customer_service.yaml'
    """
    return Path(str(files("state") / "resources" / name))


def read_data(path: Path) -> Any:
    """Parse a YAML (or JSON) file; any I/O or syntax problem becomes `ResourceFileError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResourceFileError(f"cannot read data file {path}: {exc}") from exc
    try:
        if path.suffix == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise ResourceFileError(f"cannot parse data file {path}: {exc}") from exc


class Reloading(Generic[T]):
    """A parsed data file that follows edits on disk.

    >>> table = Reloading(packaged("task_cues.yaml"), lambda raw: sorted(raw))
    >>> "continuation" in table.get()
    True
    """

    def __init__(
        self,
        path: Path,
        parse: Callable[[Any], T],
        *,
        interval_s: float = 5.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path)
        self._parse = parse
        self._interval_s = interval_s
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._mtime = self._stat()
        self._value = self._load()  # a bad file fails here, at start
        self._checked = monotonic()
        self.reloads = 0

    def _stat(self) -> int:
        try:
            return self.path.stat().st_mtime_ns
        except OSError as exc:
            raise ResourceFileError(f"data file {self.path} is missing: {exc}") from exc

    def _load(self) -> T:
        raw = read_data(self.path)
        try:
            return self._parse(raw)
        except ResourceFileError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ResourceFileError(f"invalid data file {self.path}: {exc!r}") from exc

    def get(self) -> T:
        """The current parsed value, re-read first if the file changed since the last check."""
        now = self._monotonic()
        if now - self._checked < self._interval_s:
            return self._value
        with self._lock:
            self._checked = now
            try:
                mtime = self._stat()
                if mtime != self._mtime:
                    self._value = self._load()
                    self._mtime = mtime
                    self.reloads += 1
                    log.info(json.dumps({"op": "resource.reload", "path": str(self.path)}))
            except ResourceFileError as exc:
                # Keep serving the last good version; the edit is retried on the next check.
                log.error(json.dumps({"op": "resource.reload", "path": str(self.path), "error": str(exc)}))
        return self._value
