"""Where the development data lives: `$RECALLFLOW_DEV_DATA`, else the nearest `shared/data/dev`
above the repository (`../shared/data/dev` from a checkout, also from a worktree below it)."""

from __future__ import annotations

import os
from pathlib import Path


def dev_root() -> Path:
    env = os.environ.get("RECALLFLOW_DEV_DATA")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[1]
    for parent in repo.parents:
        candidate = parent / "shared" / "data" / "dev"
        if candidate.is_dir():
            return candidate
    return repo.parent / "shared" / "data" / "dev"


def dev_data_root() -> Path:
    """The dev data folder (it may not exist: callers say so and stop, tests skip)."""
    return dev_root()
