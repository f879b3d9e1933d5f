"""A data file that follows its edits: lexicons, tables and weights hot-reload without restart (SPEC §6).

`HotFile(path, load)` loads once in the constructor (a bad file fails at start with the loader's
`ConfigurationError`), then `get()` re-loads when the file's mtime changes, checked at most once
per `check_every_s`. A broken edit while running keeps the last good version and logs why.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from schemas.errors import ConfigurationError

log = logging.getLogger(__name__)
T = TypeVar("T")


class HotFile(Generic[T]):
    """The current version of a data file, loaded by `load`.

    >>> from state.tag_lexicon import DEFAULT_LEXICON, load_lexicon
    >>> HotFile(DEFAULT_LEXICON, load_lexicon).get().role_weights["customer"]
    1.0
    """

    def __init__(self, path: Path, load: Callable[[Path], T], *, check_every_s: float = 1.0) -> None:
        self.path = path
        self._load = load
        self._check_every = check_every_s
        self._lock = threading.Lock()
        self._mtime = self._stat()
        self._value = load(path)
        self._checked = time.monotonic()

    def _stat(self) -> float:
        try:
            return self.path.stat().st_mtime
        except OSError as exc:
            raise ConfigurationError(f"cannot read {self.path}: {exc}") from exc

    def get(self) -> T:
        now = time.monotonic()
        if now - self._checked < self._check_every:
            return self._value
        with self._lock:
            self._checked = now
            try:
                mtime = self._stat()
            except ConfigurationError as exc:
                log.error('{"event": "reload_failed", "path": "%s", "reason": "%s"}', self.path, exc)
                return self._value
            if mtime == self._mtime:
                return self._value
            self._mtime = mtime  # a broken version is reported once, not on every check
            try:
                self._value = self._load(self.path)
                log.info('{"event": "reloaded", "path": "%s"}', self.path)
            except ConfigurationError as exc:
                # Keep serving the last good version: a typo in a live edit never stops the flow.
                log.error('{"event": "reload_failed", "path": "%s", "reason": "%s"}', self.path, exc)
        return self._value

    def __call__(self) -> T:
        return self.get()
