"""Fixtures of the security suite (the bounds every attack must stay within are in harness.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def default_text() -> str:
    from tco.inputs.loading import SCENARIOS_DIR

    return (SCENARIOS_DIR / "default.yaml").read_text()
