"""The responder's rule tables and wording as typed, hot-reloaded data files.

Input: `state/respond/resources/decisions.yaml` (calculator, planning, delivery, promise) and
`state/respond/resources/response_text.yaml` (prompt rules, fallback and reflection templates), or
files named in settings. Output: frozen, validated table objects, each held by a
`state.core.hotfile.HotFile`: a changed file is re-read on the next `get()`, a broken edit keeps the
previous table (logged), a broken file at start raises `ConfigurationError`.
"""

from __future__ import annotations

import re
from functools import cached_property, partial
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from schemas.errors import ConfigurationError
from state.core.hotfile import HotFile

RESOURCES = Path(__file__).resolve().parent / "resources"
DECISIONS_FILE = RESOURCES / "decisions.yaml"
TEXT_FILE = RESOURCES / "response_text.yaml"


class _Table(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _compile_all(patterns: tuple[str, ...]) -> tuple[str, ...]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"bad regular expression {pattern!r}: {exc}") from exc
    return patterns


class Answer(_Table):
    zh: str
    en: str


class CalculatorTable(_Table):
    min_numbers: int = Field(ge=2)
    max_abs_value: float = Field(gt=0)
    max_expression_chars: int = Field(gt=0)
    units: dict[str, float]
    not_quantities: tuple[str, ...]
    symbols: dict[str, str]
    operations: dict[str, tuple[str, ...]]
    answer: Answer

    _check_patterns = field_validator("not_quantities")(_compile_all)

    @field_validator("symbols")
    @classmethod
    def _known_symbols(cls, value: dict[str, str]) -> dict[str, str]:
        bad = {k: v for k, v in value.items() if v not in {"+", "-", "*", "/", "%"}}
        if bad:
            raise ValueError(f"symbols must map to + - * / %: {bad}")
        return value

    @field_validator("operations")
    @classmethod
    def _known_operations(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        unknown = set(value) - {"remainder", "sum", "difference", "product", "quotient", "mean"}
        if unknown:
            raise ValueError(f"unknown operations {sorted(unknown)}")
        return value


class PlanningTable(_Table):
    entity_weight: int
    comparison_bonus: int
    urgency_penalty: int
    threshold: int
    max_score: int = Field(gt=0)
    comparison_words: tuple[str, ...]
    urgency_words: tuple[str, ...]
    entity_patterns: tuple[str, ...]

    _check_patterns = field_validator("entity_patterns")(_compile_all)


class UrgencyLevels(_Table):
    realtime: float = Field(ge=0, le=1)
    high: float = Field(ge=0, le=1)
    medium: float = Field(ge=0, le=1)


class DeliveryTable(_Table):
    levels: UrgencyLevels
    realtime_words: tuple[str, ...]
    high_words: tuple[str, ...]
    medium_words: tuple[str, ...]
    default_preference: str
    matrix: dict[str, dict[str, str]]

    @field_validator("matrix")
    @classmethod
    def _complete_rows(cls, value: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        for pref, row in value.items():
            missing = {"realtime", "high", "medium", "low"} - set(row)
            if missing:
                raise ValueError(f"delivery.matrix.{pref} lacks {sorted(missing)}")
        return value


class HedgeRule(_Table):
    max_certainty: float = Field(ge=0, le=1)
    min_urgency: float = Field(ge=0, le=1)


class FirmRule(_Table):
    min_certainty: float = Field(ge=0, le=1)
    min_commitment: float = Field(ge=0, le=1)


class PromiseTable(_Table):
    hedge: HedgeRule
    firm: FirmRule
    soften: tuple[tuple[str, str], ...]


class DecisionTables(_Table):
    calculator: CalculatorTable
    planning: PlanningTable
    delivery: DeliveryTable
    promise: PromiseTable

    @field_validator("delivery")
    @classmethod
    def _default_row(cls, value: DeliveryTable) -> DeliveryTable:
        if value.default_preference not in value.matrix:
            raise ValueError(f"delivery.default_preference {value.default_preference!r} has no matrix row")
        return value


class PromptText(_Table):
    system: tuple[str, ...]
    language: dict[str, str]
    planning: dict[str, str]
    promise: dict[str, str]


class FallbackWords(_Table):
    intro: str
    joiner: str
    end: str
    hedged: str
    none: str
    plan_hint: str = ""


class FallbackText(_Table):
    zh: FallbackWords
    en: FallbackWords
    roles: dict[str, dict[str, str]]


class ReflectionText(_Table):
    markers: tuple[str, ...]
    value_patterns: tuple[str, ...]
    status_words: tuple[str, ...]
    fix_strategy: dict[str, Answer]

    _check_patterns = field_validator("value_patterns")(_compile_all)

    @field_validator("fix_strategy")
    @classmethod
    def _every_pattern(cls, value: dict[str, Answer]) -> dict[str, Answer]:
        missing = {"date_parse_error", "entity_recognition_error", "state_sync_delay", "fact_mismatch"} - set(value)
        if missing:
            raise ValueError(f"reflection.fix_strategy lacks {sorted(missing)}")
        return value


class ResponseText(_Table):
    prompt: PromptText
    fallback: FallbackText
    reflection: ReflectionText

    @cached_property
    def compiled_value_patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p) for p in self.reflection.value_patterns)


M = TypeVar("M", bound=BaseModel)


def load_model_table(path: Path, model: type[M]) -> M:
    """The YAML file at `path` validated as `model`; any problem is a `ConfigurationError` naming the file.

    >>> load_model_table(DECISIONS_FILE, DecisionTables).planning.threshold
    7
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"cannot load {path}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"cannot load {path}: not YAML: {exc}") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigurationError(f"cannot load {path}: {exc}") from exc


def decision_tables(path: Path | None = None, *, check_every_s: float = 0.0) -> HotFile[DecisionTables]:
    """The decision tables from `path`, or the packaged default, following the file's edits.

    >>> decision_tables().get().planning.threshold
    7
    """
    return HotFile(path or DECISIONS_FILE, partial(load_model_table, model=DecisionTables), check_every_s=check_every_s)


def response_text(path: Path | None = None, *, check_every_s: float = 0.0) -> HotFile[ResponseText]:
    """The prompt, fallback and reflection wording from `path`, or the packaged default, following its edits."""
    return HotFile(path or TEXT_FILE, partial(load_model_table, model=ResponseText), check_every_s=check_every_s)
