"""Reading a trained head's JSON weights file: an unreadable or invalid file is a ConfigurationError."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schemas.errors import ConfigurationError


def read_weights(path: Path, what: str) -> Any:
    """The parsed JSON of `path`; `what` names the file in the error ("tagger head", "unit-type head")."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"cannot read {what} {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{what} {path} is not JSON: {exc}") from exc
