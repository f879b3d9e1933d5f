"""`recallflow schema` and `recallflow convert`: the input format as JSON Schema, and chat exports
(JSONL or CSV with other field names) mapped onto it."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from flows.cli import app
from schemas.deadletter import DeadLetter
from state.ingress.parse import IngressLimits, validate_event

runner = CliRunner()

DIALOGUE_SET = [  # the public dialogue sets' layout
    {"session_id": "dd-val/7", "turn_id": "dd-val/7/0", "speaker": "A", "text": "Is there a bank near here?",
     "ts": "2026-09-27T19:00:00", "conv_id": "dd-val/7", "lang": "en", "split": "validation"},
    {"session_id": "dd-val/7", "turn_id": "dd-val/7/1", "speaker": "B", "text": "There is one, 5 blocks away.",
     "ts": "2026-09-27T19:00:15", "conv_id": "dd-val/7", "lang": "en", "split": "validation"},
]  # fmt: skip


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_schema_is_json_schema_of_every_input_kind() -> None:
    done = runner.invoke(app, ["schema"])
    assert done.exit_code == 0, done.output
    schema = json.loads(done.stdout)
    assert schema["$schema"].endswith("2020-12/schema")
    kinds = {d["properties"]["kind"]["const"] for d in schema["$defs"].values() if "kind" in d.get("properties", {})}
    assert kinds == {"turn", "resolution", "session_end", "correction"}


def test_schema_of_a_turn_names_the_required_fields(tmp_path: Path) -> None:
    out = tmp_path / "turn.schema.json"
    done = runner.invoke(app, ["schema", "--kind", "turn", "--out", str(out)])
    assert done.exit_code == 0, done.output
    schema = json.loads(out.read_text(encoding="utf-8"))
    assert set(schema["required"]) == {"event_id", "session_id", "ts", "text"}
    assert schema["properties"]["speaker_role"]["enum"] == ["customer", "agent", "third_party"]
    assert schema["additionalProperties"] is False


def test_the_documented_examples_are_valid_events() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "input-format.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in doc.split("```json\n")[1:]]
    assert len(blocks) >= 4
    for block in blocks:
        for line in block.strip().splitlines():
            validate_event(json.loads(line), IngressLimits())


def test_convert_a_dialogue_set_with_roles(tmp_path: Path) -> None:
    src = tmp_path / "dialogues.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in DIALOGUE_SET), encoding="utf-8")
    out = tmp_path / "events.jsonl"
    done = runner.invoke(
        app, ["convert", str(src), "--role", "A=customer", "--role", "B=agent", "--tenant", "acme", "-o", str(out)]
    )
    assert done.exit_code == 0, done.output
    assert "converted 2 rows" in done.output
    first, second = _events(out)
    assert first["event_id"] == "dd-val/7/0"
    assert first["speaker_role"] == "customer"
    assert second["speaker_role"] == "agent"
    assert first["tenant_id"] == "acme"
    assert first["ts"].startswith("2026-09-27T19:00:00")
    assert first["meta"] == {"conv_id": "dd-val/7", "split": "validation"}
    assert first["lang"] == "en"
    assert not (tmp_path / "events.jsonl.rejects.jsonl").exists()


def test_convert_a_csv_export_with_a_map(tmp_path: Path) -> None:
    src = tmp_path / "chat.csv"
    with src.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["thread", "author", "message", "sent_at", "channel"])
        w.writerow(["t-1", "bot", "Hello, how can I help?", "2026-11-30T09:00:00+08:00", "web"])
        w.writerow(["t-1", "li", 'My order "DD1" is late,\nstill not here', "2026-11-30T09:01:00+08:00", "web"])
        w.writerow(["t-1", "li", "and the refund?", "", "web"])  # no time: rejected
    out = tmp_path / "events.jsonl"
    rejects = tmp_path / "rejects.jsonl"
    args = ["convert", str(src), "--map", "session_id=thread,speaker=author,text=message,ts=sent_at"]
    args += ["--role", "bot=agent", "--default-role", "customer", "-o", str(out), "--rejects", str(rejects)]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    events = _events(out)
    assert [e["speaker_role"] for e in events] == ["agent", "customer"]
    assert events[1]["text"] == 'My order "DD1" is late,\nstill not here'
    assert events[1]["ts"] == "2026-11-30T01:01:00Z"
    assert events[0]["event_id"] == "t-1#2"
    assert events[0]["meta"] == {"channel": "web"}
    (letter,) = [DeadLetter.model_validate_json(line) for line in rejects.read_text(encoding="utf-8").splitlines()]
    assert letter.error_type == "validation"
    assert "ts" in letter.message
    assert letter.source.endswith("chat.csv:5")
    assert b"and the refund?" in letter.raw_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--map", "words=message"], "words is not an event field"),
        (["--map", "text"], "'text' is not NAME=VALUE"),
        (["--role", "A=boss"], "boss is not a role"),
        (["--format", "xml"], "auto, jsonl or csv"),
    ],
)
def test_convert_bad_options_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    src = tmp_path / "x.jsonl"
    src.write_text(json.dumps(DIALOGUE_SET[0]) + "\n", encoding="utf-8")
    done = runner.invoke(app, ["convert", str(src), *args])
    assert done.exit_code == 2
    assert message in " ".join(done.output.split())


def test_convert_with_nothing_convertible_fails(tmp_path: Path) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text('{"broken json\n[1, 2]\n{"text": "no session"}\n', encoding="utf-8")
    out = tmp_path / "events.jsonl"
    done = runner.invoke(app, ["convert", str(src), "-o", str(out)])
    assert done.exit_code == 1
    assert "converted 0 rows" in done.output
    letters = (tmp_path / "events.jsonl.rejects.jsonl").read_text(encoding="utf-8").splitlines()
    assert [DeadLetter.model_validate_json(x).error_type for x in letters] == ["malformed", "malformed", "validation"]
