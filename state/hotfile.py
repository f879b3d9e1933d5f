"""Hot-reloadable data files: parse once, re-parse when the file's mtime or size changes.

A `HotFile` holds the parsed value of one or more files (a lexicon, a dictionary, a term list)
and re-reads them when one changes on disk, checking at most every `check_every_s` seconds
so a turn costs one `stat` at most. A mistake in a file at start is a configuration error
(raised); a mistake in an edit made while running is logged and the last good version stays
in use, so a typo never takes the flow down.

`HotFile.get` is the "lexicon getter" injected into operators.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Generic, TypeVar

from schemas.errors import LexiconError

T = TypeVar("T")
log = logging.getLogger(__name__)


def _signature(paths: Sequence[Path]) -> tuple[tuple[int, int], ...]:
    out = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError as exc:
            raise LexiconError(f"cannot read data file {path}: {exc}") from exc
        out.append((stat.st_mtime_ns, stat.st_size))
    return tuple(out)


class HotFile(Generic[T]):
    """The parsed contents of `paths`, reloaded when they change.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "words.txt"
    >>> _ = p.write_text("a\\nb\\n")
    >>> words = HotFile([p], lambda texts: texts[0].split(), check_every_s=0)
    >>> words.get()
    ['a', 'b']
    >>> _ = p.write_text("a\\nb\\nc\\n")
    >>> words.get()
    ['a', 'b', 'c']
    """

    def __init__(
        self,
        paths: Sequence[Path | str],
        parse: Callable[[list[str]], T],
        *,
        check_every_s: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._paths = [Path(p) for p in paths]
        self._parse = parse
        self._every = check_every_s
        self._monotonic = monotonic
        self._signature = _signature(self._paths)
        self._value = self._load()  # at start a bad file raises: fail fast
        self._checked = monotonic()
        self.version = 1

    def _load(self) -> T:
        try:
            texts = [p.read_text(encoding="utf-8") for p in self._paths]
        except (OSError, UnicodeDecodeError) as exc:
            raise LexiconError(f"cannot read data files {self._paths}: {exc}") from exc
        return self._parse(texts)

    @property
    def paths(self) -> list[Path]:
        return list(self._paths)

    def get(self) -> T:
        """The current value, reloaded first if a file changed since the last check."""
        now = self._monotonic()
        if now - self._checked < self._every:
            return self._value
        self._checked = now
        try:
            signature = _signature(self._paths)
            if signature != self._signature:
                self._value = self._load()
                self._signature = signature
                self.version += 1
                log.info("reloaded %s (version %d)", ", ".join(map(str, self._paths)), self.version)
        except LexiconError as exc:
            log.error("kept the previous version of %s: %s", self._paths, exc)
        return self._value
