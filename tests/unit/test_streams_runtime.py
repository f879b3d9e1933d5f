"""Pacing, recovery layout, cluster arguments, topic wiring: the runtime pieces without a broker."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from bytewax.testing import TestingSink, run_main

from flows.build import build_flow
from flows.io import OutputSpec, paced_file_input
from flows.runtime import OUTPUT_TOPICS, attach_topic_sinks, execute, init_recovery, output_topics, recovery_for
from flows.settings import Settings
from schemas.errors import ConfigurationError
from sinks.files.jsonl_source import JsonlSource
from sinks.files.pacing import PacedSource
from sinks.kafka.sink import KafkaRecordSink
from sinks.kafka.source import KafkaReplaySource, resolve_start
from state.core.embedding import Embedder
from tests.conftest import event_dict


def _archive(tmp_path: Path, n: int) -> Path:
    import json

    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(event_dict(event_id=f"e{i}", session_id=f"s{i % 3}")) + "\n" for i in range(n)))
    return path


class _FakeNow:
    def __init__(self) -> None:
        self.t = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.t


def test_paced_partition_schedules_the_next_batch_by_rate(tmp_path: Path) -> None:
    now = _FakeNow()
    source = PacedSource(JsonlSource(_archive(tmp_path, 10), batch_size=4), rate=8.0, now=now)
    (part_name,) = source.list_parts()
    part = source.build_part("input", part_name, None)
    assert part.next_awake() is None
    assert len(part.next_batch()) == 4
    assert part.next_awake() == now.t + timedelta(seconds=0.5)
    now.t += timedelta(seconds=10)  # late caller: the pace restarts from now, no burst to catch up
    assert len(part.next_batch()) == 4
    assert part.next_awake() == now.t + timedelta(seconds=0.5)
    assert part.snapshot()[1] == 9
    part.close()


def test_paced_replay_takes_at_least_records_over_rate(tmp_path: Path, static_embedder: Embedder, clock) -> None:
    points: list[object] = []
    outputs = OutputSpec(deadletters=[], memory_points=[TestingSink(points)])
    flow = build_flow(
        Settings(), paced_file_input(_archive(tmp_path, 12), rate=40.0), outputs, embedder=static_embedder, clock=clock
    )
    started = time.perf_counter()
    run_main(flow)
    assert len(points) == 12
    assert time.perf_counter() - started >= 12 / 40 - 0.1  # 11 gaps of 1/40 s at least


def test_pacing_rejects_a_non_positive_rate(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="rate must be > 0"):
        PacedSource(JsonlSource(_archive(tmp_path, 1)), rate=0)


def test_recovery_init_lays_out_partitions_and_splits_them_per_process(tmp_path: Path) -> None:
    made = init_recovery(tmp_path / "all", 4)
    assert [p.name for p in made] == ["part-0.sqlite3", "part-1.sqlite3", "part-2.sqlite3", "part-3.sqlite3"]
    mine = init_recovery(tmp_path / "p1", 4, process_id=1, processes=2)
    assert [p.name for p in mine] == ["part-1.sqlite3", "part-3.sqlite3"]
    with pytest.raises(ConfigurationError, match="already holds recovery partitions"):
        init_recovery(tmp_path / "all", 4)
    with pytest.raises(ConfigurationError, match="partitions >= 1"):
        init_recovery(tmp_path / "x", 0)
    with pytest.raises(ConfigurationError, match=r"outside 0\.\.1"):
        init_recovery(tmp_path / "y", 2, process_id=2, processes=2)


def test_recovery_config_from_settings(tmp_path: Path) -> None:
    assert recovery_for(Settings(), auto_init=True) is None
    on = Settings(recovery={"enabled": True, "dir": tmp_path / "rec", "partitions": 2, "backup_interval_s": 30})
    with pytest.raises(ConfigurationError, match="run `recallflow recovery init`"):
        recovery_for(on, auto_init=False)
    config = recovery_for(on, auto_init=True)
    assert config is not None
    assert len(list((tmp_path / "rec").glob("part-*.sqlite3"))) == 2
    assert config.backup_interval == timedelta(seconds=30)


def test_cluster_arguments_are_checked_before_running() -> None:
    with pytest.raises(ConfigurationError, match="needs both a process id"):
        execute(None, Settings(), process_id=0)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="outside the 2 addresses"):
        execute(None, Settings(), process_id=2, addresses=["127.0.0.1:1", "127.0.0.1:2"])  # type: ignore[arg-type]


def test_every_topic_backed_output_gets_its_topic(static_embedder: Embedder) -> None:
    settings = Settings()
    outputs = OutputSpec(deadletters=[], memory_points=[])
    attach_topic_sinks(settings, outputs)
    for name in ("deadletters", "memory_units", "metrics"):
        (sink,) = getattr(outputs, name)
        assert isinstance(sink, KafkaRecordSink)
        assert sink.topic == getattr(settings.kafka, OUTPUT_TOPICS[name])
    attach_topic_sinks(settings, outputs)  # idempotent: no second sink on the same topic
    assert all(len(getattr(outputs, name)) == 1 for name in ("deadletters", "memory_units", "metrics"))
    topics = output_topics(settings)
    assert topics[0] == settings.kafka.input_topic
    assert len(topics) == len(set(topics)) == 9
    assert settings.responder.reflection_topic in topics  # the responder writes it: created with the rest


def test_replay_start_specs_are_validated() -> None:
    with pytest.raises(ConfigurationError, match="timezone-aware"):
        resolve_start(None, "t", 0, datetime(2026, 1, 1), 1.0)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="replay start must be"):
        resolve_start(None, "t", 0, -5, 1.0)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"bootstrap\.servers"):
        KafkaReplaySource({}, "t")


def test_a_replay_closes_its_windows_at_the_end_unless_told_otherwise() -> None:
    from flows.runtime import REPLAY_TO_THE_END_S, replay_settings

    assert replay_settings(Settings()).metrics.allowed_lateness_s == REPLAY_TO_THE_END_S
    assert replay_settings(Settings(metrics={"replay_lateness_s": 30})).metrics.allowed_lateness_s == 30
    assert Settings().metrics.allowed_lateness_s == 5.0  # live runs keep their real-time slack


def test_a_run_keeps_what_was_alive_at_its_start_out_of_the_collector_and_hands_it_back() -> None:
    import gc

    import bytewax.operators as op
    from bytewax.dataflow import Dataflow
    from bytewax.testing import TestingSource

    seen: list[int] = []
    flow = Dataflow("freeze")
    nums = op.input("in", flow, TestingSource([1, 2]))
    op.output("out", op.map("count", nums, lambda x: gc.get_freeze_count()), TestingSink(seen))
    before = gc.get_freeze_count()
    execute(flow, Settings())
    assert seen
    assert all(n > before for n in seen)  # frozen during the run
    assert gc.get_freeze_count() == before  # and handed back
