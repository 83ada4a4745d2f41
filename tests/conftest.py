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


#: custom-asic where its ASIC can win: the ASIC at the catalog's high achievable share of peak FLOP/s (0.75; the
#: serving model finds its decode compute-bound). At base values the baseline on the roadmap's B300 beats it at any
#: volume; here it wins from ~375,000 units sold to others at the 3-year half-life, ~76,000 at 6 years.
ASIC_CAN_WIN = {"devices.custom-decode-asic.compute_efficiency": 0.75}


@pytest.fixture(scope="session")
def asic_can_win(asic_scenario):
    return asic_scenario.with_values(ASIC_CAN_WIN)


@pytest.fixture(scope="session")
def toy_scenario():
    return tco.load_scenario(DATA / "toy.yaml")
