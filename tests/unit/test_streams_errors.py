"""Error branches of the stream tooling: each raise has a test."""

from __future__ import annotations

import socket
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from operators.metrics import _ts
from schemas.errors import MetricsExportError, ModelError
from schemas.metrics import WindowMetrics
from sinks.metrics.exporters import RedisMetricsSink
from sinks.models.asr import WhisperTranscriber
from state.metrics.windows import Decision


def test_an_undated_decision_never_reaches_the_window_clock() -> None:
    with pytest.raises(TypeError, match="undated decision"):
        _ts(Decision(None, "deadletters"))
    assert _ts(Decision(datetime(2026, 1, 1, tzinfo=UTC), "events")) == datetime(2026, 1, 1, tzinfo=UTC)


def test_redis_metrics_sink_gives_up_with_a_metrics_export_error() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    part = RedisMetricsSink(f"redis://127.0.0.1:{port}/15", timeout_s=0.2, retries=2).build("m", 0, 1)
    t = datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(MetricsExportError, match="writing 1 metric windows to Redis failed"):
        part.write_batch([WindowMetrics(window_start=t, window_end=t, counters={}, gauges={})])
    part.close()


def test_missing_faster_whisper_is_a_model_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "faster_whisper", None)
    with pytest.raises(ModelError, match="faster-whisper is not installed"):
        WhisperTranscriber(tmp_path).transcribe(tmp_path / "a.wav")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["replay"], "either a JSONL FILE or --topic"),
        (["replay", "--topic", "t", "--offset", "1", "--since", "2026-01-01T00:00:00"], "exclude each other"),
        (["transcribe", "{audio}", "--session", "s", "--role", "boss"], "role must be"),
    ],
)
def test_cli_rejects_inconsistent_arguments(args: list[str], message: str, tmp_path: Path) -> None:
    audio = tmp_path / "a.wav"
    audio.write_bytes(b"RIFF")
    result = CliRunner().invoke(app, [a.replace("{audio}", str(audio)) for a in args])
    assert result.exit_code != 0
    assert message in result.output


def test_replay_offsets_apply_to_topics_only(tmp_path: Path) -> None:
    archive = tmp_path / "a.jsonl"
    archive.write_text("{}\n")
    result = CliRunner().invoke(app, ["replay", str(archive), "--offset", "3"])
    assert result.exit_code != 0
    assert "--offset/--since apply to --topic only" in result.output
