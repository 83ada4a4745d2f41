"""Specialization over time as plain data: the chip program seen by its owner and its vendor, the
general-purpose generations the baseline runs, and which of them its fleet holds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tco.core import names as named
from tco.core.comparison import Analysis
from tco.core.evaluate import evaluate
from tco.core.money.generations import POLICIES
from tco.core.outputs import OptionResult
from tco.foundation.plain_values import json_safe, scalar


def held_generations(result: OptionResult) -> list[str]:
    """The roadmap devices a baseline that follows the general-purpose roadmap holds within the horizon, in order
    (empty for any other option).

    Parameters
    ----------
    result : OptionResult
        An option's result; only a roadmap baseline's has generations.

    Returns
    -------
    list of str
        Device ids of the generations held before the horizon, first draw, each once.
    """
    if result.roadmap is None:
        return []
    horizon = scalar(result.money.horizon_years)
    held = [result.roadmap.devices[round(scalar(g))] for t, g in enumerate(result.money.path.index) if t < horizon]
    return list(dict.fromkeys(held))


def other_generations_held(result: OptionResult | None) -> list[str]:
    """:func:`held_generations` where the fleet runs a device other than its own (the scenario device, generation 0),
    else empty: then its costs are those generations', not its own device's.

    Parameters
    ----------
    result : OptionResult or None
        The baseline's result (None: an option the scenario does not have).

    Returns
    -------
    list of str
        The generations held, or empty when the fleet stays on the scenario's own device.
    """
    held = held_generations(result) if result is not None else []
    return held if held and held != [result.roadmap.devices[0]] else []


#: comparison outputs of the program view, in the order a reader wants them
PROGRAM_FIELDS = ("fleet_units", "program_volume_units", "needs_external_sales", "npv_own_use_usd",
                  "breakeven_external_units", "breakeven_volume_units", "breakeven_demand_rps",
                  "breakeven_tokens_per_year", "vendor_unit_price_usd", "nre_usd")


def program_view(analysis: Analysis) -> dict[str, dict]:
    """Per option on the built chip: the program outputs (first draw) plus the external units assumed.

    Parameters
    ----------
    analysis : Analysis
        The scenario's results, values and challengers (:func:`tco.core.comparison.analyse`).

    Returns
    -------
    dict[str, dict]
        ``{option: {external_units [units], deployment_year [yr], fleet_units [units], program_volume_units [units],
        needs_external_sales [bool], npv_own_use_usd [USD], breakeven_* , vendor_unit_price_usd [USD], nre_usd [USD]}}``.
    """
    structure = analysis.structure
    external = scalar(analysis.values.get(named.program.external_units, 0.0))
    out = {}
    for option in structure.challengers:
        if not any(p.built for p in option.pools):
            continue
        row = analysis.challengers[option.name]
        out[option.name] = {"external_units": external, "deployment_year": scalar(analysis.options[option.name].deployment_year),
                            **{k: json_safe(scalar(getattr(row, k))) for k in PROGRAM_FIELDS}}
    return out


def baseline_generations(analysis: Analysis) -> dict:
    """The general-purpose generation the baseline fleet buys each year and when the fleet moves, and the baseline's
    levelized cost under each refresh policy (:data:`tco.core.money.generations.POLICIES`; the scenario's own beside the
    others, which the same inputs give: docs/model.md, "The refresh rule against the book-value credit").

    Parameters
    ----------
    analysis : Analysis
        The scenario's results and values; the baseline's roadmap costs and cash flows are read.

    Returns
    -------
    dict
        Empty without a roadmap; else ``policy``, ``start_year`` [calendar year], ``releases`` [calendar year by device],
        ``by_year`` (device held each year), ``steady_state_usd_per_mtok`` [USD/Mtok by device] and
        ``lcot_usd_per_mtok_by_policy`` [USD/Mtok by refresh policy].
    """
    base = analysis.baseline
    if base.roadmap is None:
        return {}
    structure = analysis.structure
    flows = analysis.flows[structure.baseline]
    index = [round(scalar(g)) for g in np.moveaxis(np.asarray(flows.generation), -1, 0)]
    devices = list(base.roadmap.devices)
    start = scalar(analysis.values[named.roadmap.start_year])
    alone = replace(structure, options=(structure.option(structure.baseline),))  # the baseline is evaluated on its own
    by_policy = {policy: scalar((base if policy == structure.refresh_policy else
                                 evaluate(replace(alone, refresh_policy=policy), analysis.values)[structure.baseline])
                                .lcot_usd_per_mtok) for policy in POLICIES}
    return {
        "policy": structure.refresh_policy,
        "start_year": start,
        "releases": {d: start + scalar(r) for d, r in zip(devices[1:], base.roadmap.release_years[1:], strict=True)},
        "by_year": [devices[i] for i in index],
        "steady_state_usd_per_mtok": {d: scalar(c) / scalar(base.money.tokens_per_year) * 1e6
                                      for d, c in zip(devices, base.roadmap.full_usd_per_year, strict=True)},
        "lcot_usd_per_mtok_by_policy": by_policy,
    }
