"""Where the development data lives: `../shared/data/dev` beside the repository.

`RECALLFLOW_DEV_DATA` overrides; a worktree one level deeper finds it two levels up.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def dev_data(name: str) -> Path:
    """The folder of one dev set (may not exist: callers skip with a message)."""
    env = os.environ.get("RECALLFLOW_DEV_DATA")
    candidates = [Path(env)] if env else []
    candidates += [ROOT.parent / "shared" / "data" / "dev", ROOT.parent.parent / "shared" / "data" / "dev"]
    for base in candidates:
        if (base / name).is_dir():
            return base / name
    return candidates[0] / name
