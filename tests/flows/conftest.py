"""Fixtures for flow tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.flows.support import Outputs, run_records


@pytest.fixture
def run() -> Callable[..., Outputs]:
    """Run records (dicts) through the whole write path; returns the collected outputs."""
    return run_records
