"""Hot-reloadable data files: load once, re-load when a file changes, keep the last good version.

A `HotFile` holds the value a loader makes of one or more files (a lexicon and its entity
dictionary, a term list, the recall weights and lexicon, a transition table, a metric catalog)
and re-loads it when one of them changes on disk: a file's signature is its
`(mtime_ns, size)`, checked at most every `check_every_s` seconds of the injected monotonic
clock (0: on every call), so a turn costs one `stat` per file at most.

* At start a missing or broken file fails fast: the loader's own `ConfigurationError`
  (`ResourceFileError`, `LexiconError` …) propagates.
* While running, a missing or broken file never raises: the last good value stays in use and
  one structured log line (path and reason) is written per change of the files, not per check.
* `reloads` counts successful re-loads; `get()` and `__call__` give the current value, so the
  object itself is the "lexicon getter" injected into operators. Checks are serialised by a
  lock, so one handle can be shared by threads.

The loader is called with the paths, in order: `load(*paths)`. `state/core/datafiles.py` turns a
parse function into one (`data_loader` for a YAML/JSON file, `text_loader` for text files).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Generic, TypeVar

from schemas.errors import ConfigurationError, ResourceFileError

T = TypeVar("T")
log = logging.getLogger(__name__)

# A file's (mtime_ns, size), or None while it cannot be stat'ed.
Signature = tuple[tuple[int, int] | None, ...]


def _signature(paths: Sequence[Path]) -> tuple[Signature, list[str]]:
    """The files' signature and, for each file that cannot be stat'ed, why."""
    out: list[tuple[int, int] | None] = []
    problems: list[str] = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError as exc:
            out.append(None)
            problems.append(f"data file {path} is missing or unreadable: {exc}")
        else:
            out.append((stat.st_mtime_ns, stat.st_size))
    return tuple(out), problems


class HotFile(Generic[T]):
    """The value `load(*paths)` makes of `paths`, re-loaded when one of them changes.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "words.txt"
    >>> _ = p.write_text("a b", encoding="utf-8")
    >>> words = HotFile(p, lambda path: path.read_text(encoding="utf-8").split(), check_every_s=0)
    >>> words.get()
    ['a', 'b']
    >>> _ = p.write_text("a b c", encoding="utf-8")
    >>> words(), words.reloads
    (['a', 'b', 'c'], 1)
    """

    def __init__(
        self,
        paths: Path | str | Sequence[Path | str],
        load: Callable[..., T],
        *,
        check_every_s: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._paths = (Path(paths),) if isinstance(paths, str | Path) else tuple(Path(p) for p in paths)
        self._loader = load
        self._every = check_every_s
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._signature, problems = _signature(self._paths)
        self._value = self._load()  # at start a bad file raises the loader's error: fail fast
        if problems:  # the loader did not read a file that is not there
            raise ResourceFileError(problems[0])
        self._checked = monotonic()
        self.reloads = 0

    @property
    def paths(self) -> tuple[Path, ...]:
        return self._paths

    def _load(self) -> T:
        """The loader's value; its `ConfigurationError` passes, data-shape mistakes become one."""
        where = ", ".join(map(str, self._paths))
        try:
            return self._loader(*self._paths)
        except OSError as exc:
            raise ResourceFileError(f"cannot read data file {where}: {exc}") from exc
        except (ValueError, LookupError, TypeError, AttributeError, re.error) as exc:
            # A parse function indexing a document of the wrong shape: the file is invalid.
            raise ResourceFileError(f"invalid data file {where}: {exc!r}") from exc

    def get(self) -> T:
        """The current value, re-loaded first if a file changed since the last check."""
        if self._monotonic() - self._checked < self._every:
            return self._value
        with self._lock:
            now = self._monotonic()
            if now - self._checked < self._every:  # another thread checked while we waited
                return self._value
            self._checked = now
            self._refresh()
            return self._value

    def __call__(self) -> T:
        return self.get()

    def _refresh(self) -> None:
        signature, problems = _signature(self._paths)
        if signature == self._signature:
            return
        changed = [str(p) for p, old, new in zip(self._paths, self._signature, signature, strict=True) if old != new]
        # Remember the new signature even if it is broken: a bad edit is reported once, not per check.
        self._signature = signature
        if problems:
            self._keep(changed, "; ".join(problems))
            return
        try:
            value = self._load()
        except ConfigurationError as exc:
            # Keep serving the last good version: a typo in a live edit never stops the flow.
            self._keep(changed, str(exc))
            return
        self._value = value
        self.reloads += 1
        log.info(json.dumps({"op": "hotfile.reload", "path": ", ".join(changed), "reloads": self.reloads}))

    def _keep(self, changed: list[str], reason: str) -> None:
        log.error(
            json.dumps({"op": "hotfile.reload", "path": ", ".join(changed), "kept": "previous", "reason": reason[:500]})
        )
