"""What the CLI prints: `recall` readable at 80 columns, `produce` a sentence, `transcribe` with no speech."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from flows.cli import app
from flows.cli.ingest import produce_sentence
from flows.cli.query import print_result
from schemas.recall import Cue, RecallResult, ScoreComponents
from sinks.kafka.admin import ProduceReport
from state.ingress.asr import Transcript

TEXT = "The replacement parcel was promised for Tuesday afternoon before three o'clock [urgent]"
WHY = "CUE-3f2a9c1e commitment, 0.87: emotion match 0.90, promised delivery still pending"


def result() -> RecallResult:
    cue = Cue(
        memory_id="3f2a9c1e-0000-5000-8000-000000000000",
        cue_id="CUE-3f2a9c1e",
        text=TEXT,
        unit_type="commitment",
        score=1.2,
        components=ScoreComponents(emotion_match=0.9, css=0.871, final=1.2),
        explanation=WHY,
    )
    return RecallResult(
        query_event_id="q1",
        session_id="s1",
        tenant_id="acme",
        query_text="where is my parcel?",
        question_class="logistics",
        ts=datetime(2026, 11, 30, tzinfo=UTC),
        cues=(cue,),
        explanation="…",
        debug_marker="[DEBUG:cue=CUE-3f2a9c1e,css=0.871]",
    )


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'\[\]:.,-]+", text)


def test_recall_at_80_columns_wraps_whole_words_and_cuts_nothing() -> None:
    out = Console(width=80, record=True, color_system=None)
    print_result(result(), debug=True, out=out)
    text = out.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    printed = set(_words(text))
    for word in _words(TEXT) + _words(WHY):
        assert word in printed, f"{word!r} was cut or split:\n{text}"
    assert "[DEBUG:cue=CUE-3f2a9c1e,css=0.871]" in text


def test_recall_on_a_wide_terminal_is_one_table() -> None:
    out = Console(width=200, record=True, color_system=None)
    print_result(result(), debug=False, out=out)
    text = out.export_text()
    assert "components" in text
    assert "[urgent]" in text  # cue text is never read as markup


def test_transcribe_without_speech_says_so_and_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sinks.models import asr

    class Silent:
        def transcribe(self, audio: Path, *, language: str | None = None) -> Transcript:
            return Transcript(language="en", language_probability=0.4, duration_ms=3200, segments=())

    monkeypatch.setattr(asr.WhisperTranscriber, "from_settings", classmethod(lambda cls, cfg: Silent()))
    wav = tmp_path / "silence.wav"
    wav.write_bytes(b"RIFF")
    out = tmp_path / "events.jsonl"
    done = CliRunner().invoke(app, ["transcribe", str(wav), "--session", "s1", "--out", str(out)])
    assert done.exit_code == 1, done.output
    assert "no speech found in silence.wav (3.2 s of audio" in done.output
    assert not out.exists()


def test_produce_prints_a_sentence() -> None:
    report = ProduceReport(topic="recallflow.events", sent=12, unkeyed=0, blank=0)
    assert produce_sentence(report, "demo.jsonl") == "sent 12 records from demo.jsonl to topic recallflow.events"
