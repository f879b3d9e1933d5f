"""The `recallflow` command line, one module per command group.

    ingest   replay, run, produce
    query    state, recall, serve
    respond  respond, train-tagger
    formats  schema, convert
    evals    eval recall | scenarios | time | coref | tagger
    ops      topics, lag, recovery, metrics, report, transcribe

Settings are read once per command (env `RECALLFLOW_*`) and passed down.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence

from flows.cli import evals, formats, ingest, query, respond
from flows.cli.app import app, err_console
from flows.cli.errors import debug_enabled, describe
from flows.cli.ops import register_stream_commands

register_stream_commands(app)
__all__ = ["app", "evals", "formats", "ingest", "main", "query", "respond"]


def main(argv: Sequence[str] | None = None) -> None:
    """The console entry point: every failure ends as one or two lines (a traceback with --debug)."""
    logging.basicConfig(level=os.environ.get("RECALLFLOW_LOG_LEVEL", "WARNING"), format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the chat client logs its own JSON line per call
    args = list(argv) if argv is not None else sys.argv[1:]
    if not debug_enabled() and "--debug" not in args[:1]:
        # A failure inside the dataflow runtime would otherwise print a native backtrace of ~90
        # lines before our one-line report; --debug keeps whatever the environment asks for.
        os.environ["RUST_BACKTRACE"] = "0"
    try:
        app(args=args, prog_name="recallflow")
    except Exception as exc:
        if debug_enabled():
            raise
        failure = describe(exc)
        for line in failure.lines():
            err_console.print(line, markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(failure.exit_code) from None
