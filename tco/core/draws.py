"""Helpers over the draw axis: the tests that decide structural fast paths, and a model evaluated at some draws.

A value may be a Python number or bool, a numpy scalar, or an array over draws. The tests
answer for every draw at once and cost one method call on an array, none on a number (``np.any``
goes through numpy's dispatch and costs 1-4 us a call: at one draw, a few percent of an evaluation).
:func:`at_draws` gathers the inputs of an elementwise part of the model at some draws, to evaluate it there
only (the shape search's candidates that fit in few draws, :func:`tco.core.serving.search.size_pool`);
:func:`select_bits` picks between two values per draw exactly and without a branch per element;
:func:`where_mixed` is ``np.where`` that skips its array pass where the mask is the same in every draw;
:func:`maximum` and :func:`minimum` are ``np.maximum`` and ``np.minimum`` that compare two numbers in Python;
:func:`remembered_for_numbers` keeps what a small formula gives for numbers asked for again and again.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np


def remembered_for_numbers(function):
    """``function`` with what it gives for numbers remembered: called with every argument one number (a Python or
    numpy number), it computes once per distinct set of values; given an array (0-d too) it computes as before.

    For the small formulas one evaluation asks for many times at the same numbers (a percentile's normal quantile at
    each lane share of each shape). The function must turn its arguments into float arrays itself
    (``np.asarray(x, float)``) and return a number (immutable): then the remembered value has the bits a fresh call
    gives, whatever type the number came in.

    Parameters
    ----------
    function : callable
        A function of numbers or arrays over draws, positional arguments only.

    Returns
    -------
    callable
        The same function, remembering up to 256 sets of numbers.
    """
    remembered = functools.lru_cache(maxsize=256)(function)

    @functools.wraps(function)
    def wrapper(*args):
        try:  # numbers hash by value (a numpy number as the Python float it equals)
            return remembered(*args)
        except TypeError:  # an array does not hash: computed
            return function(*args)

    return wrapper


def any_draw(x) -> bool:
    """Whether ``x`` is true (non-zero) in any draw.

    Parameters
    ----------
    x : bool or float or numpy.ndarray [-]
        A flag or a number per draw, or one for all draws.

    Returns
    -------
    bool
        True when some draw's value is true.
    """
    return bool(x.any()) if isinstance(x, np.ndarray) else bool(x)


def every_draw(x) -> bool:
    """Whether ``x`` is true (non-zero) in every draw: :func:`any_draw`'s companion, same argument.

    Parameters
    ----------
    x : bool or float or numpy.ndarray [-]
        As in :func:`any_draw`.

    Returns
    -------
    bool
        True when no draw's value is false.
    """
    return bool(x.all()) if isinstance(x, np.ndarray) else bool(x)


def where_mixed(mask, chosen, other):
    """``np.where(mask, chosen, other)``, without its array pass when the mask is the same in every draw.

    A mask true in every draw returns ``chosen`` itself, one false in every draw ``other``, when that operand
    already has the shape ``np.where`` would give; otherwise (a mixed mask, or an operand to broadcast) it is
    ``np.where``.

    Parameters
    ----------
    mask : bool or numpy.ndarray of bool [-]
        Where to take ``chosen``.
    chosen, other : float or numpy.ndarray [unit of the values]
        The values where the mask is true and where it is false.

    Returns
    -------
    float or numpy.ndarray [unit of the values]
        ``chosen`` where the mask is true, ``other`` elsewhere.
    """
    if isinstance(mask, np.ndarray):
        picked = chosen if mask.all() else None if mask.any() else other
    else:
        picked = chosen if mask else other
    if picked is not None:  # picked itself when every shape is its own or a number's (np.broadcast_shapes costs ~5 us)
        shape = getattr(picked, "shape", ())
        if getattr(mask, "shape", ()) in ((), shape) and getattr(chosen, "shape", ()) in ((), shape) \
                and getattr(other, "shape", ()) in ((), shape):
            return picked
    return np.where(mask, chosen, other)


def one_value(x) -> bool:
    """Whether ``x`` is one value for every draw (a number or a 0-d array): ``np.ndim(x) == 0`` without numpy's
    dispatch (~0.35 us a call), for a number or a numpy array (a list or tuple is not asked).

    Parameters
    ----------
    x : bool or float or numpy.ndarray [-]
        A number or an array over draws.

    Returns
    -------
    bool
        True for a number or a 0-d array.
    """
    return not getattr(x, "ndim", 0)


def as_floats(x):
    """``np.asarray(x, float)``, except that a numpy float64 number stays a number (the same value).

    Arithmetic on a number costs ~60 ns, on a 0-d array ~320 ns, and :func:`maximum` and :func:`minimum` compare
    numbers only; at one draw an evaluation does a few thousand such operations. Arrays over draws, Python numbers
    and other types become float arrays as ``np.asarray`` makes them.

    Parameters
    ----------
    x : float or numpy.ndarray [unit of x]
        A number or an array over draws.

    Returns
    -------
    numpy.float64 or numpy.ndarray [unit of x]
        ``x`` itself when a numpy float64 number, else ``np.asarray(x, float)``.
    """
    return x if type(x) is np.float64 else np.asarray(x, float)


#: the types of a number :func:`maximum` and :func:`minimum` compare in Python (exactly these, not subclasses or 0-d arrays)
_FLOATS = (np.float64, float)


def maximum(a, b):
    """``np.maximum(a, b)``, the same value, type and bits; two numbers compared without numpy's dispatch.

    A binary ufunc on two numbers costs ~0.6 us (one evaluation at one draw takes a few hundred maxima and minima);
    two floats are compared in Python in ~0.1 us by numpy's rule for float64: ``a`` where ``a > b`` or ``a`` is NaN,
    else ``b`` (so NaN propagates from either side, and of two equal values, ``-0`` and ``+0`` included, ``b`` is
    kept). ``tests/test_fast_paths.py`` checks it against ``np.maximum`` bit for bit on signed zeros, infinities,
    NaNs and subnormals. Arrays, 0-d arrays and other types go to ``np.maximum``.

    Parameters
    ----------
    a, b : float or numpy.ndarray [unit of the values]
        The two values (broadcasting).

    Returns
    -------
    numpy.float64 or numpy.ndarray [unit of the values]
        The element-wise maximum.
    """
    if type(a) in _FLOATS and type(b) in _FLOATS:
        out = a if (a > b or a != a) else b
        return out if type(out) is np.float64 else np.float64(out)
    return np.maximum(a, b)


def minimum(a, b):
    """``np.minimum(a, b)``, the same value, type and bits: :func:`maximum`'s companion (``a`` where ``a < b`` or
    ``a`` is NaN, else ``b``).

    Parameters
    ----------
    a, b : float or numpy.ndarray [unit of the values]
        As in :func:`maximum`.

    Returns
    -------
    numpy.float64 or numpy.ndarray [unit of the values]
        The smaller of the two, draw by draw.
    """
    if type(a) in _FLOATS and type(b) in _FLOATS:
        out = a if (a < b or a != a) else b
        return out if type(out) is np.float64 else np.float64(out)
    return np.minimum(a, b)


def flag_value(flag):
    """A flag as a number, 1.0 where true and 0.0 where false (``flag x 1.0``, exact).

    A boolean array over draws is cast (``astype``: half the time of a multiplication that casts on the way, 13
    against 25 us at 65,536 draws); anything else (a number, a 0-d array) is multiplied, as before.

    Parameters
    ----------
    flag : bool or float or numpy.ndarray [-]
        A flag per draw, or one for all draws.

    Returns
    -------
    float or numpy.ndarray [-]
        1.0 where the flag is true, 0.0 elsewhere.
    """
    if isinstance(flag, np.ndarray) and flag.ndim and flag.dtype == np.bool_:
        return flag.astype(np.float64)
    return flag * 1.0


def at_draws(x, where: tuple, shape: tuple):
    """``x`` at the draws ``where``: arrays over draws gathered, numbers kept, containers walked.

    An elementwise model evaluated on the result gives, draw for draw, the values it gives on
    every draw.

    Parameters
    ----------
    x : object [unit of x]
        A number, an array over draws (broadcasting to ``shape``), or a tuple, list, dict or
        dataclass of them.
    where : tuple of numpy.ndarray [-]
        Indices of the selected draws, ``np.nonzero`` of a mask of ``shape``.
    shape : tuple of int [-]
        The draws' shape.

    Returns
    -------
    object [unit of x]
        ``x`` with every array replaced by its 1-D values at the selected draws.

    Raises
    ------
    ValueError
        An array does not broadcast to ``shape``.
    """
    if isinstance(x, np.ndarray) and x.ndim:
        return np.broadcast_to(x, shape)[where]
    return _walk(x, lambda v: at_draws(v, where, shape))


def mask_bits(condition):
    """A boolean mask as int64 all-one bits (-1) where true, zeros elsewhere: the mask :func:`select_bits` takes.

    Parameters
    ----------
    condition : numpy.ndarray of bool [-]
        Where to pick the first value.

    Returns
    -------
    numpy.ndarray of int64 [-]
        -1 where ``condition``, 0 elsewhere.
    """
    return np.negative(condition, dtype=np.int64)


def select_bits(bits, chosen, other, shape):
    """``np.where(mask, chosen, other)`` as floats of ``shape``, by bitwise operations on the values' bits.

    Exact (every bit of the picked value kept, NaN and -0 included) and, on a mask that mixes the two at
    random, about twice as fast as ``np.where``, which mispredicts a branch per element.

    Parameters
    ----------
    bits : numpy.ndarray of int64 [-]
        The mask as :func:`mask_bits` gives it, of ``shape``.
    chosen, other : float or numpy.ndarray [unit of the values]
        The values where the mask is true and where it is false (broadcasting to ``shape``).
    shape : tuple of int [-]
        The draws' shape.

    Returns
    -------
    numpy.ndarray [unit of the values]
        A new float array of ``shape``.
    """
    picked = np.broadcast_to(np.asarray(chosen, float), shape).view(np.int64)
    kept = np.broadcast_to(np.asarray(other, float), shape).view(np.int64)
    out = np.bitwise_xor(picked, kept)
    out &= bits
    out ^= kept
    return out.view(np.float64)


def _walk(x, function):
    """``x`` with ``function`` applied to each item of a tuple, list or dict, or each init field of a dataclass."""
    if isinstance(x, tuple | list):
        return type(x)(function(v) for v in x)
    if isinstance(x, dict):
        return {k: function(v) for k, v in x.items()}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return dataclasses.replace(x, **{f.name: function(getattr(x, f.name)) for f in dataclasses.fields(x) if f.init})
    return x


def total(terms):
    """``t1 + t2 + ...`` left to right, skipping terms that are the number 0 (absent lines).

    Parameters
    ----------
    terms : Sequence
        Numbers or arrays over draws [unit of the terms]; the float ``0.0`` stands for a line that is absent.

    Returns
    -------
    float or ndarray [unit of the terms]
        Their sum, in order (so the floating-point result is that of writing the sum out), or 0.0 with no term.
    """
    present = [t for t in terms if not (isinstance(t, float) and t == 0.0)]
    if not present:
        return 0.0
    total = present[0]
    for term in present[1:]:
        total = total + term
    return total
