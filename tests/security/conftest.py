"""Fixtures of the security suite: the cost bounds every attack must stay within, and files to attack with."""

from __future__ import annotations

import pytest
from harness import Outcome

#: CPU seconds an attack may cost (the issue's "ends in under 5 s", measured as CPU time so that other
#: jobs on the shared machine do not count)
ATTACK_CPU_S = 5.0
#: wall seconds, with room for a loaded machine
ATTACK_WALL_S = 20.0
#: peak resident memory of the child, shared pages of the fork server included [MB]
ATTACK_PEAK_MB = 500.0


def contained(outcome: Outcome) -> Outcome:
    """Assert that an attack ended on its own, quickly and within memory; returns it for more checks."""
    assert not outcome.timed_out, outcome.error
    assert outcome.error is None, outcome.error
    assert outcome.cpu_s < ATTACK_CPU_S, f"{outcome.cpu_s:.1f} s of CPU"
    assert outcome.wall_s < ATTACK_WALL_S, f"{outcome.wall_s:.1f} s"
    assert outcome.peak_mb < ATTACK_PEAK_MB, f"{outcome.peak_mb:.0f} MB"
    return outcome


def refused(outcome: Outcome, *fragments: str) -> Outcome:
    """Assert a contained attack that the command line refused: exit 2, one ``tco: error:`` line per
    broken rule, no traceback, each fragment in the message."""
    contained(outcome)
    assert outcome.one_line_error, (outcome.code, outcome.stderr)
    for fragment in fragments:
        assert fragment in outcome.stderr, (fragment, outcome.stderr)
    return outcome


@pytest.fixture(scope="session")
def default_text() -> str:
    from tco.scenario import SCENARIOS_DIR

    return (SCENARIOS_DIR / "default.yaml").read_text()
