"""Content-less text (acknowledgements, thanks, bare apologies) and agents' promises."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas.errors import ConfigurationError
from state.units.content import filler_pattern, has_content
from state.units.promise import is_agent_promise, payload_deadline


@pytest.mark.parametrize(
    "text",
    [
        "好的",
        "行吧。",
        "嗯嗯，谢谢！",
        "OK thanks",
        "Sorry about that.",
        "非常抱歉给您带来不便",
        "好的，感谢反馈",
        "太好了，有问题随时找我们",
        "Sounds good, sorry for the hassle",
        "Glad to hear it! Enjoy",
    ],
)
def test_fillers_carry_no_content(text: str) -> None:
    assert not has_content(text)


@pytest.mark.parametrize(
    "text",
    [
        "两天内发到您的账户。",
        "I see Maria's note",
        "Cancelled.",
        "订单 20250601123",
        "感谢反馈，我们三天内处理",
        "I enjoy it",
    ],
)
def test_anything_else_does(text: str) -> None:
    assert has_content(text)


def test_a_bad_filler_file_is_a_configuration_error(tmp_path: Path) -> None:
    bad = tmp_path / "fillers.yaml"
    bad.write_text("zh: 好的\n", encoding="utf-8")
    with pytest.raises(ConfigurationError):
        filler_pattern(bad)


def test_a_promise_needs_an_agent_and_a_commitment_or_a_future_deadline() -> None:
    base = {"speaker_role": "agent", "ts": "2025-06-09T10:00:00+00:00", "text": "A technician will call you tomorrow"}
    future = [{"end": "2025-06-10T12:00:00+00:00"}]
    assert is_agent_promise({**base, "times": future})
    assert not is_agent_promise({**base, "times": [{"end": "2025-06-01T12:00:00+00:00"}]})  # a past time: a report
    assert is_agent_promise({**base, "text": "ok", "unit_type": "commitment"})
    assert not is_agent_promise({**base, "speaker_role": "customer", "times": future})
    assert payload_deadline({**base, "times": future}).isoformat() == "2025-06-10T12:00:00+00:00"  # type: ignore[union-attr]
    assert payload_deadline(base) is None
