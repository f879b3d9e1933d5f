"""The README and docs/ say what the code does: commands that exist, paths that define what they
name, every HTTP error code, the demo's settings for `serve`, the service port variables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer

from flows.cli import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _fenced(text: str) -> list[str]:
    return [line for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S) for line in block.splitlines()]


def _command_lines() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for line in _fenced(doc.read_text(encoding="utf-8")):
            m = re.search(r"(?:^|\s)recallflow\s+(.*)", line)
            if m and not line.lstrip().startswith("#"):
                found.append((doc.name, m.group(1).split("#", 1)[0]))
    return found


def _words(rest: str) -> list[str]:
    """The command words of a usage line: stops at the first option or placeholder."""
    out = []
    for token in rest.replace("|", " | ").split():
        if token == "|":
            continue
        if not re.fullmatch(r"[a-z][a-z-]*", token):
            break
        out.append(token)
    return out


def test_every_documented_command_exists() -> None:
    root = typer.main.get_command(app)
    assert hasattr(root, "commands")
    lines = _command_lines()
    assert len(lines) > 10
    for doc, rest in lines:
        words = _words(rest)
        if not words:
            continue
        cmd = root.commands.get(words[0])  # type: ignore[attr-defined]
        assert cmd is not None, f"{doc}: `recallflow {rest.strip()}`: no command {words[0]!r}"
        if hasattr(cmd, "commands"):
            for word in words[1:]:
                assert word in cmd.commands, f"{doc}: `recallflow {rest.strip()}`: no `{words[0]} {word}`"


def test_every_named_definition_is_where_the_docs_say() -> None:
    pattern = re.compile(r"`([\w./-]+\.py)(?::\s*|`:\s*`)([A-Za-z_]\w*)")
    checked = 0
    for doc in DOCS:
        for path, name in pattern.findall(doc.read_text(encoding="utf-8")):
            source = ROOT / path
            assert source.exists(), f"{doc.name}: {path} does not exist"
            text = source.read_text(encoding="utf-8")
            defined = re.search(rf"^\s*(class|def)\s+{name}\b|^{name}\s*[:=]", text, flags=re.M)
            assert defined, f"{doc.name}: {path} does not define {name}"
            checked += 1
    assert checked >= 3


def test_every_api_error_code_is_documented() -> None:
    api = ROOT / "flows" / "api"
    codes = set()
    for source in api.glob("*.py"):
        text = source.read_text(encoding="utf-8")
        codes |= set(re.findall(r'ApiError\(\s*\d{3},\s*"(\w+)"', text))
        codes |= set(re.findall(r'error_response\(\s*\d{3},\s*"(\w+)"', text))
    codes |= {"not_found", "method_not_allowed", "payload_too_large", "invalid_request", "internal_error"}
    serve = (ROOT / "docs" / "serve.md").read_text(encoding="utf-8")
    missing = sorted(c for c in codes if f"`{c}`" not in serve and f"/`{c}`" not in serve)
    assert len(codes) > 12
    assert not missing, f"docs/serve.md does not list {missing}"


def _demo_settings() -> dict[str, str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    demo = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    return dict(re.findall(r"(RECALLFLOW_[A-Z_]+)=(\S+)", demo))


@pytest.mark.parametrize("doc", ["README.md", "docs/serve.md"])
def test_serve_after_make_demo_uses_the_demo_settings(doc: str) -> None:
    demo = _demo_settings()
    assert "RECALLFLOW_TASK__STATE_LOG_PATH" in demo
    text = (ROOT / doc).read_text(encoding="utf-8")
    serve_lines = [
        block
        for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
        if re.search(r"recallflow serve\b", block) and "var/demo" in block
    ]
    assert serve_lines, f"{doc}: no `recallflow serve` command for the demo's store"
    block = serve_lines[0]
    for name, value in demo.items():
        assert f"{name}={value}" in block, f"{doc}: serve after make demo needs {name}={value}"


def test_the_readme_names_the_service_port_variables() -> None:
    script = (ROOT / "infra" / "services.sh").read_text(encoding="utf-8")
    ports = set(re.findall(r"\$\{(RECALLFLOW_[A-Z]+_PORT):-", script))
    assert ports == {"RECALLFLOW_KAFKA_PORT", "RECALLFLOW_REDIS_PORT"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in ports:
        assert name in readme, f"README.md does not say how to move the services: {name}"
