"""One place that turns a failed command into one or two lines that say what to do.

Input: an exception that escaped a command, and the settings names the hints quote. Output: a
`Failure` (the message, the fix, the exit code) printed to stderr. State: none.

Known failures: the RecallFlow error tree (`schemas.errors`), Kafka client errors (unknown
topic, broker unreachable), a store locked by another process (a running `serve`, `run` or
`replay`), a settings value that does not validate, a file that cannot be read. Anything else
is reported as unexpected, in one line. `recallflow --debug …` (or RECALLFLOW_DEBUG=1) shows
the full traceback instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pydantic import ValidationError

from schemas.errors import (
    BrokerError,
    ConfigurationError,
    InputError,
    ModelError,
    RecallFlowError,
    StateMirrorError,
    StoreError,
    TranscriptionError,
)

DEBUG_ENV = "RECALLFLOW_DEBUG"
_TRUE = frozenset({"1", "true", "yes", "on"})
_LOCK_SIGNS = ("wouldblock", "already accessed by another instance", "resource temporarily unavailable", "lock")
_UNREACHABLE = frozenset({"_TRANSPORT", "_ALL_BROKERS_DOWN", "_TIMED_OUT", "_RESOLVE", "_MSG_TIMED_OUT"})
_UNKNOWN_TOPIC = frozenset({"_UNKNOWN_TOPIC", "UNKNOWN_TOPIC_OR_PART", "_UNKNOWN_PARTITION"})


@dataclass(frozen=True, slots=True)
class Failure:
    """What the user reads: what went wrong, and the fix."""

    message: str
    fix: str | None = None
    exit_code: int = 1

    def lines(self) -> list[str]:
        return [self.message] + ([f"fix: {self.fix}"] if self.fix else [])


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() in _TRUE


def _first_line(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _kafka_code(exc: BaseException) -> str | None:
    """The librdkafka error name carried by a KafkaException (or found in its text)."""
    from confluent_kafka import KafkaError, KafkaException

    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return str(exc.args[0].name())
    text = str(exc)
    for code in (*_UNREACHABLE, *_UNKNOWN_TOPIC):
        if code in text:
            return code
    return None


def _kafka(exc: BaseException) -> Failure | None:
    code = _kafka_code(exc)
    servers = os.environ.get("RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS", "127.0.0.1:19092")
    text = str(exc).lower()
    if code in _UNREACHABLE or "transport failure" in text or "connection refused" in text:
        return Failure(
            f"Kafka broker at {servers} is unreachable ({code or _first_line(exc)})",
            "start it (`infra/services.sh up`) or point RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS at a running broker",
            exit_code=3,
        )
    if code in _UNKNOWN_TOPIC or "does not exist" in text:
        text = _first_line(exc)
        return Failure(
            text if text.lower().startswith("kafka") else f"Kafka topic missing: {text}",
            "create the flow's topics with `recallflow topics create` (or check the topic name)",
            exit_code=3,
        )
    return None


def _store(exc: StoreError) -> Failure:
    text = str(exc).lower()
    path = os.environ.get("RECALLFLOW_STORE__PATH", "var/store")
    if any(sign in text for sign in _LOCK_SIGNS):
        return Failure(
            f"the memory store at {path} is locked by another process ({_first_line(exc, 160)})",
            "stop the running `recallflow serve`/`run`/`replay` that holds it, or set RECALLFLOW_STORE__PATH "
            "to another folder (or use RECALLFLOW_STORE__BACKEND=qdrant_server, which has no lock)",
            exit_code=4,
        )
    return Failure(f"memory store error: {_first_line(exc)}", "check RECALLFLOW_STORE__* settings", exit_code=4)


def _known(exc: BaseException) -> BaseException:
    """The first error of ours (or of a client we know) in the chain: the dataflow runtime wraps
    what a source or sink raised in its own error, with the original as the cause."""
    from confluent_kafka import KafkaException

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, RecallFlowError | KafkaException | ValidationError | OSError):
            return current
        current = current.__cause__ or current.__context__
    return exc


def describe(exc: BaseException) -> Failure:
    """The one- or two-line report of a failure (never a traceback)."""
    from confluent_kafka import KafkaException

    exc = _known(exc)

    if isinstance(exc, KafkaException | BrokerError):
        found = _kafka(exc)
        if found is not None:
            return found
        return Failure(f"Kafka: {_first_line(exc)}", "check RECALLFLOW_KAFKA__* settings and the broker", exit_code=3)
    if isinstance(exc, StoreError):
        return _store(exc)
    if isinstance(exc, StateMirrorError):
        return Failure(
            f"Redis: {_first_line(exc)}",
            "start Redis (`infra/services.sh up`), fix RECALLFLOW_REDIS__URL, or set RECALLFLOW_REDIS__ENABLED=false",
            exit_code=3,
        )
    if isinstance(exc, ValidationError):
        return Failure(
            f"invalid settings: {_first_line(exc)}",
            "check the RECALLFLOW_* environment variables named above",
            exit_code=2,
        )
    if isinstance(exc, ConfigurationError):
        return Failure(f"configuration: {_first_line(exc)}", "fix the setting or file named above", exit_code=2)
    if isinstance(exc, ModelError | TranscriptionError):
        return Failure(f"model: {_first_line(exc)}", "check the model settings and that the file is readable")
    if isinstance(exc, InputError):
        return Failure(f"bad input: {_first_line(exc)}", "see docs/input-format.md (`recallflow schema`)")
    if isinstance(exc, RecallFlowError):
        return Failure(f"{type(exc).__name__}: {_first_line(exc)}")
    if isinstance(exc, FileNotFoundError | PermissionError | IsADirectoryError):
        return Failure(f"cannot open {exc.filename or ''}: {exc.strerror or _first_line(exc)}".replace("  ", " "))
    return Failure(
        f"unexpected error: {type(exc).__name__}: {_first_line(exc)}",
        f"rerun with `recallflow --debug …` (or {DEBUG_ENV}=1) for the traceback, and report it",
    )
