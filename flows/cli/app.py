"""The `recallflow` Typer application and its consoles, shared by every command group.

The root callback takes the global `--debug` (or RECALLFLOW_DEBUG=1): full tracebacks instead
of the one- or two-line reports of `flows.cli.errors`, and librdkafka's own log lines.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.console import Console

from flows.cli.errors import DEBUG_ENV

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # weights ship in packages; never reach a hub

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="RecallFlow: streaming memory for conversational agents.",
    pretty_exceptions_show_locals=False,  # locals may hold secrets (API keys, SASL passwords)
)
console = Console()
err_console = Console(stderr=True)


@app.callback()
def _root(
    debug: Annotated[
        bool,
        typer.Option("--debug", envvar=DEBUG_ENV, help="show full tracebacks and the Kafka client's own log"),
    ] = False,
) -> None:
    """RecallFlow: streaming memory for conversational agents."""
    if debug:
        os.environ[DEBUG_ENV] = "1"
        os.environ.setdefault("RECALLFLOW_KAFKA__LOG_LEVEL", "7")
