"""Plain values from arrays and numpy scalars: the first element of a result, JSON-safe data."""

from __future__ import annotations

import math

import numpy as np


def scalar(array) -> float:
    """The first element of a core result (a float or an array of any shape) as a float."""
    return float(np.asarray(array).reshape(-1)[0])


def json_safe(value):
    """``value`` with numpy scalars and arrays made plain, mapping keys made text, and NaN/inf made None."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
