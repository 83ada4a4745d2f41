"""The parametric table (SAM's parametric tab): every combination of up to three inputs' values, any outputs.

A full grid of the chosen values, evaluated in one core call (the values broadcast as one array per input), written
long: one row per grid point and option, the inputs' values first, then each output asked for. Outputs are the
option results of :data:`tco.core.outputs.OPTION_OUTPUTS` (cost per million output tokens, TTFT, TPOT, devices,
power ...) and the comparison with the baseline, ``cost_ratio`` and ``npv_usd`` (1 and 0 on the baseline's rows).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from tco.analysis.evaluation import evaluate_scenario
from tco.core.comparison import cost_ratio, npv_usd
from tco.core.outputs import COMPARISON_OUTPUTS, OPTION_OUTPUTS
from tco.foundation.errors import FieldError, InputError

#: most inputs a table varies together
MAX_AXES = 3
#: most grid points (combinations of values) one table evaluates: 10 x 10 x 10 and then some, in well under a second
MAX_POINTS = 2_000
#: the comparison outputs a table can show beside each option's own
COMPARISONS = ("cost_ratio", "npv_usd")
#: every output a table can show, with its specification (unit, label)
OUTPUTS = {**OPTION_OUTPUTS, **{name: COMPARISON_OUTPUTS[name] for name in COMPARISONS}}


def check_axes(scenario, axes: Sequence[tuple[str, Sequence[float]]], outputs: Sequence[str]) -> None:
    """Refuse a table the grid cannot be built for, naming every broken rule (``axes[i].param``, ``axes[i].values``,
    ``outputs``): one to :data:`MAX_AXES` distinct inputs of the scenario, each with values its field admits and that
    the scenario accepts as an edit (its rules between fields included), at most :data:`MAX_POINTS` combinations, and
    known outputs.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.
    axes : Sequence[tuple[str, Sequence[float]]] [the parameter's unit]
        ``(parameter name, values)`` per input.
    outputs : Sequence[str]
        Output names (:data:`OUTPUTS`).
    """
    errors = []
    if not 1 <= len(axes) <= MAX_AXES:
        errors.append(FieldError("axes", len(axes), f"must name 1 to {MAX_AXES} inputs"))
    points = math.prod(len(values) for _, values in axes) if axes else 0
    if points > MAX_POINTS:  # before each value is read: a grid too large is refused at once, whatever its values
        raise InputError([*errors, FieldError("axes", points, f"the grid has {points:,} combinations; at most "
                                                              f"{MAX_POINTS:,}")])
    names = [name for name, _ in axes]
    for i, (name, values) in enumerate(axes):
        where = f"axes[{i}]"
        if name not in scenario.params:
            errors.append(FieldError(f"{where}.param", name, "is not a parameter of the scenario"))
            continue
        if name in names[:i]:
            errors.append(FieldError(f"{where}.param", name, "is named twice"))
        if not len(values):
            errors.append(FieldError(f"{where}.values", list(values), "needs at least one value"))
        for value in values:
            try:
                scenario.with_values({name: value})
            except InputError as exc:
                errors += [FieldError(f"{where}.values", value, e.rule) for e in exc.errors]
                break
    unknown = [o for o in outputs if o not in OUTPUTS]
    if not outputs or unknown:
        errors.append(FieldError("outputs", unknown or list(outputs), f"must be one or more of {', '.join(OUTPUTS)}"))
    if errors:
        raise InputError(errors)


def parametric(scenario, axes: Sequence[tuple[str, Sequence[float]]], outputs: Sequence[str]) -> pd.DataFrame:
    """Every combination of the axes' values (:func:`check_axes`), per option: the outputs asked for.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario (every other input at its value).
    axes : Sequence[tuple[str, Sequence[float]]] [the parameter's unit]
        ``(parameter name, values)`` per input; the first varies slowest.
    outputs : Sequence[str]
        Output names (:data:`OUTPUTS`).

    Returns
    -------
    pandas.DataFrame
        One row per grid point and option: a column per input [its unit], ``option``, then a column per output [its
        unit, :data:`OUTPUTS`].
    """
    check_axes(scenario, axes, outputs)
    grid = list(itertools.product(*(values for _, values in axes)))
    updates = {name: np.array([float(point[i]) for point in grid]) for i, (name, _) in enumerate(axes)}
    results, _ = evaluate_scenario(scenario, updates)
    base = results[scenario.structure.baseline]
    shape = (len(grid),)
    frames = []
    for option, r in results.items():
        columns = {name: updates[name] for name, _ in axes} | {"option": [option] * len(grid)}
        for out in outputs:
            if out == "cost_ratio":
                value = cost_ratio(base, r)
            elif out == "npv_usd":
                value = npv_usd(base, r)
            else:
                value = getattr(r, out)
            columns[out] = np.broadcast_to(np.asarray(value, float), shape)
        frames.append(pd.DataFrame(columns))
    return pd.concat(frames, ignore_index=True)


__all__ = ["MAX_AXES", "MAX_POINTS", "OUTPUTS", "check_axes", "parametric"]
