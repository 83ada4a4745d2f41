"""Tests over the draw axis that decide structural fast paths (which terms to compute at all).

A value may be a Python number or bool, a numpy scalar, or an array over draws; these tests
answer for every draw at once and cost one method call on an array, none on a number (``np.any``
goes through numpy's dispatch and costs 1-4 us a call: at one draw, a few percent of an evaluation).
"""

from __future__ import annotations

import dataclasses

import numpy as np


def any_draw(x) -> bool:
    """Whether ``x`` is true (non-zero) in any draw [-]."""
    return bool(x.any()) if isinstance(x, np.ndarray) else bool(x)


def every_draw(x) -> bool:
    """Whether ``x`` is true (non-zero) in every draw [-]."""
    return bool(x.all()) if isinstance(x, np.ndarray) else bool(x)


def at_draws(x, where: tuple, shape: tuple):
    """``x`` at the draws ``where`` (``np.nonzero`` of a mask of the draws' ``shape``) [unit of x].

    Arrays over draws are gathered (one value per selected draw, a 1-D array), numbers are kept,
    and tuples, lists, dicts and dataclasses are walked: an elementwise model evaluated on the
    result gives, draw for draw, the values it gives on every draw.
    """
    if isinstance(x, np.ndarray) and x.ndim:
        return np.broadcast_to(x, shape)[where]
    return _walk(x, lambda v: at_draws(v, where, shape))


def to_all_draws(x, where: tuple, shape: tuple, fill: float = 0.0):
    """The inverse of :func:`at_draws`: values at the draws ``where`` placed in arrays of the draws' ``shape``,
    ``fill`` elsewhere; numbers kept, containers walked [unit of x]."""
    if isinstance(x, np.ndarray) and x.ndim:
        out = np.full(shape, fill, x.dtype)
        out[where] = x
        return out
    return _walk(x, lambda v: to_all_draws(v, where, shape, fill))


def _walk(x, function):
    if isinstance(x, tuple | list):
        return type(x)(function(v) for v in x)
    if isinstance(x, dict):
        return {k: function(v) for k, v in x.items()}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return dataclasses.replace(x, **{f.name: function(getattr(x, f.name)) for f in dataclasses.fields(x) if f.init})
    return x
