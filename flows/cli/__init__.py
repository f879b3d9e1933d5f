"""The `recallflow` command line, one module per command group.

    ingest   replay, run, produce
    query    state, recall, serve
    respond  respond, train-tagger
    evals    eval recall | scenarios | time | coref | tagger
    ops      topics, lag, recovery, metrics, report, transcribe

Settings are read once per command (env `RECALLFLOW_*`) and passed down.
"""

from __future__ import annotations

import logging
import os

from flows.cli import evals, ingest, query, respond
from flows.cli.app import app
from flows.cli.ops import register_stream_commands

register_stream_commands(app)
__all__ = ["app", "evals", "ingest", "main", "query", "respond"]


def main() -> None:
    logging.basicConfig(level=os.environ.get("RECALLFLOW_LOG_LEVEL", "WARNING"), format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the chat client logs its own JSON line per call
    app()
