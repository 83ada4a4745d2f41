"""Tests over the draw axis that decide structural fast paths (which terms to compute at all).

A value may be a Python number or bool, a numpy scalar, or an array over draws; these tests
answer for every draw at once and cost one method call on an array, none on a number (``np.any``
goes through numpy's dispatch and costs 1-4 us a call: at one draw, a few percent of an evaluation).
"""

from __future__ import annotations

import numpy as np


def any_draw(x) -> bool:
    """Whether ``x`` is true (non-zero) in any draw [-]."""
    return bool(x.any()) if isinstance(x, np.ndarray) else bool(x)


def every_draw(x) -> bool:
    """Whether ``x`` is true (non-zero) in every draw [-]."""
    return bool(x.all()) if isinstance(x, np.ndarray) else bool(x)
