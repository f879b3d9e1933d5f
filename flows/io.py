"""Where the flow reads from and writes to: file replay, Kafka, or test doubles.

An `InputSpec` attaches its source to a dataflow and returns the raw records plus any
transport-level dead letters. `OutputSpec` holds the sinks the flow writes to.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol

import bytewax.operators as op
from bytewax.connectors.kafka import KafkaError, KafkaSourceMessage
from bytewax.connectors.kafka import operators as kop
from bytewax.dataflow import Dataflow, Stream
from bytewax.inputs import FixedPartitionedSource, Source
from bytewax.outputs import Sink

from schemas.deadletter import DeadLetter, DuplicateDelivery
from schemas.events import InputEvent
from schemas.memory import EmbeddedUnit, MemoryUnit
from schemas.metrics import WindowMetrics
from schemas.raw import RawRecord
from schemas.recall import RecallResult
from schemas.response import ResponderItem
from schemas.session import ArchivedTask, SessionState
from sinks.files.jsonl_source import JsonlSource, Position
from sinks.files.pacing import PacedSource
from sinks.files.stopping import StoppableSource
from sinks.kafka.source import KafkaReplaySource, Start, TransportError
from state.metrics.windows import Decision


class InputSpec(Protocol):
    def attach(
        self, flow: Dataflow, clock: Callable[[], datetime]
    ) -> tuple[Stream[RawRecord], Stream[DeadLetter] | None]: ...


@dataclass(frozen=True)
class SourceInput:
    """Any Bytewax source of RawRecord (a JSONL archive, a TestingSource ...)."""

    source: Source[RawRecord]

    def attach(
        self, flow: Dataflow, clock: Callable[[], datetime]
    ) -> tuple[Stream[RawRecord], Stream[DeadLetter] | None]:
        return op.input("input", flow, self.source), None


def file_input(path: Path) -> SourceInput:
    return SourceInput(JsonlSource(path))


def _from_kafka(msg: KafkaSourceMessage[bytes | None, bytes | None]) -> RawRecord:
    return RawRecord(source=f"{msg.topic}/{msg.partition}@{msg.offset}", payload=msg.value or b"", key=msg.key)


def _kafka_error(err: KafkaError[bytes | None, bytes | None], clock: Callable[[], datetime]) -> DeadLetter:
    msg = err.msg
    return DeadLetter.from_raw(
        step="input",
        key=msg.key.decode("utf-8", "replace") if msg.key else None,
        source=f"{msg.topic}/{msg.partition}@{msg.offset}",
        error_type="transport",
        message=str(err.err),
        raw=msg.value or b"",
        at=clock(),
    )


@dataclass(frozen=True)
class KafkaInput:
    brokers: list[str]
    topic: str
    config: dict[str, str]
    tail: bool = True

    def attach(
        self, flow: Dataflow, clock: Callable[[], datetime]
    ) -> tuple[Stream[RawRecord], Stream[DeadLetter] | None]:
        out = kop.input(
            "input", flow, brokers=self.brokers, topics=[self.topic], tail=self.tail, add_config=self.config
        )
        raws = op.map("kafka_to_raw", out.oks, _from_kafka)
        errs = op.map("kafka_errors", out.errs, lambda e: _kafka_error(e, clock))
        return raws, errs


@dataclass(frozen=True)
class OutputSpec:
    deadletters: list[Sink[DeadLetter]]
    memory_points: list[Sink[EmbeddedUnit]]
    memory_units: list[Sink[MemoryUnit]] = field(default_factory=list)
    states: list[Sink[SessionState]] = field(default_factory=list)
    archived: list[Sink[ArchivedTask]] = field(default_factory=list)
    recall_results: list[Sink[RecallResult]] = field(default_factory=list)
    # ResponseRequests and UserCorrections, per session in order (the responder dispatches on `kind`)
    response_requests: list[Sink[ResponderItem]] = field(default_factory=list)
    metrics: list[Sink[WindowMetrics]] = field(default_factory=list)
    # per-turn `latency_ms.<stage>` decisions before windowing (benchmarks read exact quantiles)
    stage_latencies: list[Sink[Decision]] = field(default_factory=list)
    # every input event once, after validation and de-duplication (control events included)
    events: list[Sink[InputEvent]] = field(default_factory=list)
    # records dropped as redeliveries of an event already processed (same id, same content)
    duplicates: list[Sink[DuplicateDelivery]] = field(default_factory=list)


# -- replay from a Kafka topic (offset or time), paced replay --


def _transport_dead_letter(err: TransportError, clock: Callable[[], datetime]) -> DeadLetter:
    return DeadLetter.from_raw(
        step="input",
        key=err.key.decode("utf-8", "replace") if err.key else None,
        source=err.source,
        error_type="transport",
        message=err.message,
        raw=err.value,
        at=clock(),
    )


@dataclass(frozen=True)
class KafkaReplayInput:
    """A topic read from `start` ("beginning", "end", an offset or a datetime), optionally paced.

    Step id "input" like every other input, so recovery snapshots of a replay resume it.
    """

    config: dict[str, str]
    topic: str
    start: Start = "beginning"
    tail: bool = False
    rate: float | None = None
    batch_size: int = 500
    group_id: str | None = None
    stop: threading.Event | None = None  # set: every partition ends (a clean stop of a live run)

    def attach(
        self, flow: Dataflow, clock: Callable[[], datetime]
    ) -> tuple[Stream[RawRecord], Stream[DeadLetter] | None]:
        batch = self.batch_size if self.rate is None else max(1, min(self.batch_size, int(self.rate / 10)))
        source: FixedPartitionedSource[RawRecord | TransportError, int] = KafkaReplaySource(
            self.config, self.topic, start=self.start, tail=self.tail, batch_size=batch, group_id=self.group_id
        )
        if self.rate is not None:
            source = PacedSource(source, self.rate)
        if self.stop is not None:
            source = StoppableSource(source, self.stop)
        items = op.input("input", flow, source)
        raws = op.filter_map("as_raw", items, lambda i: i if isinstance(i, RawRecord) else None)
        errs = op.filter_map(
            "transport_errors",
            items,
            lambda i: _transport_dead_letter(i, clock) if isinstance(i, TransportError) else None,
        )
        return raws, errs


def paced_file_input(
    path: Path, rate: float | None, batch_size: int = 64, stop: threading.Event | None = None
) -> SourceInput:
    """A JSONL archive, at `rate` records per second when given (full speed otherwise); it ends
    early once `stop` is set."""
    source: FixedPartitionedSource[RawRecord, Position]
    if rate is None:
        source = JsonlSource(path, batch_size)
    else:
        source = PacedSource(JsonlSource(path, max(1, min(batch_size, int(rate / 10)))), rate)
    return SourceInput(StoppableSource(source, stop) if stop is not None else source)
