"""Shared fixtures: the bundled scenarios and a toy scenario whose numbers are derived by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

import tco

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def default_scenario():
    return tco.load_scenario("default")


@pytest.fixture(scope="session")
def asic_scenario():
    return tco.load_scenario("custom-asic")


@pytest.fixture(scope="session")
def toy_scenario():
    return tco.load_scenario(DATA / "toy.yaml")
