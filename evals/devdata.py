"""Where the development data lives: $RECALLFLOW_DEV_DATA, else `shared/data/dev` beside a parent of the repo."""

from __future__ import annotations

import os
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent


def dev_data_root() -> Path:
    """The dev data folder (it may not exist: callers say so and stop, tests skip)."""
    configured = os.environ.get("RECALLFLOW_DEV_DATA")
    if configured:
        return Path(configured)
    for parent in (_REPO.parent, _REPO.parent.parent, _REPO.parent.parent.parent):
        candidate = parent / "shared" / "data" / "dev"
        if candidate.is_dir():
            return candidate
    return _REPO.parent / "shared" / "data" / "dev"
