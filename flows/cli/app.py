"""The `recallflow` Typer application and its console, shared by every command group."""

from __future__ import annotations

import os

import typer
from rich.console import Console

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # weights ship in packages; never reach a hub

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="RecallFlow: streaming memory for conversational agents."
)
console = Console()
