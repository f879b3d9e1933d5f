"""The import contracts in pyproject.toml hold for the repository and fail on an upward import.

`lint-imports` runs on a synthetic copy of the package tree (empty modules, the real pyproject.toml)
into which each test plants one forbidden import, so the contracts themselves are what is tested.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = ("schemas", "state", "operators", "sinks", "flows", "evals", "benchmarks")


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(cwd / "pyproject.toml")],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _write(root: Path, module: str, source: str = "") -> None:
    path = root.joinpath(*module.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    for parent in path.relative_to(root).parents:
        if parent != Path():
            (root / parent / "__init__.py").touch()
    path.write_text(source, encoding="utf-8")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Every layer with one module importing the layer below, as the real tree does."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    _write(tmp_path, "schemas.records")
    _write(tmp_path, "state.logic", "from schemas import records\n")
    _write(tmp_path, "operators.step", "from state import logic\n")
    _write(tmp_path, "sinks.store", "import httpx\nfrom state import logic\n")
    _write(tmp_path, "flows.build", "from operators import step\nfrom sinks import store\n")
    _write(tmp_path, "evals.gold", "from flows import build\n")
    _write(tmp_path, "flows.cli.evals", "def run():\n    from evals import gold\n")
    _write(tmp_path, "benchmarks.speed", "from evals import gold\n")
    return tmp_path


def test_the_repository_keeps_its_contracts() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_synthetic_tree_keeps_them(tree: Path) -> None:
    result = _lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("module", "source", "message"),
    [
        ("schemas.records", "from state import logic\n", "schemas is not allowed to import state"),
        ("state.logic", "from flows import build\n", "state is not allowed to import flows"),
        ("state.logic", "from sinks import store\n", "state is not allowed to import sinks"),
        ("operators.step", "from sinks import store\n", "operators is not allowed to import sinks"),
        ("sinks.store", "from operators import step\n", "sinks is not allowed to import operators"),
        ("sinks.store", "from flows import build\n", "sinks is not allowed to import flows"),
        ("flows.build", "from evals import gold\n", "flows is not allowed to import evals"),
        ("evals.gold", "from benchmarks import speed\n", "evals is not allowed to import benchmarks"),
        ("operators.step", "import redis\n", "operators is not allowed to import redis"),
        ("state.logic", "import httpx\n", "state is not allowed to import httpx"),
    ],
)
def test_an_upward_import_breaks_the_build(tree: Path, module: str, source: str, message: str) -> None:
    _write(tree, module + "_extra", source)
    result = _lint(tree)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "BROKEN" in result.stdout
    assert message in result.stdout


def test_an_import_cycle_breaks_the_build(tree: Path) -> None:
    _write(tree, "state.ahead", "from state import behind\n")
    _write(tree, "state.behind", "from state import ahead\n")
    result = _lint(tree)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "No cycles are allowed in state" in result.stdout
