"""Which intent head an evaluation uses: the shipped default, none, or a trained head file."""

from __future__ import annotations

from pathlib import Path

from state.tagging.tagger import IntentHead


def head_for(spec: str) -> IntentHead | None:
    if spec == "none":
        return None
    from sinks.models.tagger_model import default_head, load_head

    if spec == "default":
        return default_head()
    return load_head(Path(spec))
