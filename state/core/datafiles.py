"""Reading data files: where the shipped ones live, and loaders that turn files into values.

Lexicons, tables and calendars are data files (data, not literals scattered through code). `packaged(name)` is
the path of one shipped in a capability package's `resources/` folder; `read_data(path)` parses YAML or JSON. The two
loader adapters turn a parse function into the loader a `state.core.hotfile.HotFile` calls with its
paths: `data_loader(parse)` for one YAML/JSON file, `text_loader(parse)` for one or more text
files parsed together. Every I/O or syntax problem is a `ResourceFileError` (or the subclass the
caller names), so a bad file fails at start and is kept out on a hot reload.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar

import yaml

from schemas.errors import ResourceFileError

T = TypeVar("T")


def packaged(name: str) -> Path:
    """Path of a data file shipped with `state`: each capability package keeps its own files in
    its `resources/` folder (`state/task/resources/`, `state/validity/resources/` ...), and a
    file name is unique across them.

    >>> packaged("task_table.customer_service.yaml").name
    'task_table.customer_service.yaml'
    """
    root = Path(str(files("state")))
    hits = sorted(root.glob(f"*/resources/{name}"))
    if len(hits) != 1:
        raise ResourceFileError(f"shipped data file {name!r}: {len(hits)} matches under {root}/*/resources/")
    return hits[0]


def read_text(path: Path, *, error: type[ResourceFileError] = ResourceFileError) -> str:
    """The UTF-8 text of `path`; a missing, unreadable or non-UTF-8 file raises `error`.

    >>> read_text(packaged("task_cues.yaml")).startswith("#")
    True
    """
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read data file {path}: {exc}") from exc


def read_data(path: Path) -> Any:
    """Parse a YAML (or JSON) file; any I/O or syntax problem becomes `ResourceFileError`.

    >>> "continuation" in read_data(packaged("task_cues.yaml"))
    True
    """
    text = read_text(path)
    try:
        if path.suffix == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise ResourceFileError(f"cannot parse data file {path}: {exc}") from exc


def data_loader(parse: Callable[[Any], T]) -> Callable[[Path], T]:
    """A loader for one YAML/JSON file: `parse(read_data(path))`.

    >>> load = data_loader(lambda raw: "continuation" in raw)
    >>> load(packaged("task_cues.yaml"))
    True
    """

    def load(path: Path) -> T:
        return parse(read_data(path))

    return load


def text_loader(
    parse: Callable[[list[str]], T], *, error: type[ResourceFileError] = ResourceFileError
) -> Callable[..., T]:
    """A loader for text files parsed together: `parse([text of each path, in order])`.

    A file that cannot be read raises `error` (a lexicon passes `LexiconError`).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "words.txt"
    >>> _ = p.write_text("a\\nb\\n", encoding="utf-8")
    >>> text_loader(lambda texts: texts[0].split())(p)
    ['a', 'b']
    """

    def load(*paths: Path) -> T:
        return parse([read_text(path, error=error) for path in paths])

    return load
