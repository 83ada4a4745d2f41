"""Specialization over time as plain data: the chip program seen by its owner and its vendor, the
general-purpose generations the baseline runs, and which of them its fleet holds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from tco.core import names as named
from tco.core.comparison import Analysis
from tco.core.evaluate import evaluate
from tco.core.money import nre
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


#: the outputs of an option's fleet as it serves (shape, speed, size, power, each pool's yearly costs), which a roadmap
#: baseline takes from the generation it runs (:func:`baseline_as_run`); its costs over the horizon (present values,
#: units bought, the prefill share of its cost) and feasibility stay the roadmap's
SERVING_FIELDS = ("pools", "links", "devices", "ttft_s", "tpot_s", "queue_wait_s", "batch", "spilled_bytes",
                  "tokens_per_joule", "tokens_per_s", "power_w", "kv_transfer_s", "link_ports")


def generation_fleets(analysis: Analysis) -> dict[str, OptionResult]:
    """A roadmap baseline on each generation its fleet holds within the horizon, each evaluated alone on that device
    (its fleet at year 1's demand, as the roadmap sizes it, :func:`tco.core.evaluate.roadmap_fleets`); empty when the
    baseline stays on its own device.

    Parameters
    ----------
    analysis : Analysis
        The scenario's results and values.

    Returns
    -------
    dict[str, OptionResult]
        By device held, in order: the baseline's result on that generation (read its serving and energy outputs; its
        costs are of a fleet that never moves).
    """
    base = analysis.baseline
    held = other_generations_held(base)
    if not held:
        return {}
    structure = analysis.structure
    own = structure.option(structure.baseline)
    on = {base.roadmap.devices[0]: own, **dict(zip(base.roadmap.devices[1:], structure.generation_options(), strict=True))}
    return {device: evaluate(replace(structure, options=(on[device],), generations=()), analysis.values)[structure.baseline]
            for device in held}


def baseline_as_run(analysis: Analysis, fleets: Mapping[str, OptionResult]) -> OptionResult:
    """The baseline as a table shows it: a roadmap baseline's serving and energy outputs (:data:`SERVING_FIELDS`) those of
    the generation its fleet runs at t = 0 (the generation its steady-state and accounting costs are of), so that one
    column is one fleet; its costs over the horizon stay the roadmap's. Unchanged without a roadmap.

    Parameters
    ----------
    analysis : Analysis
        The scenario's results.
    fleets : Mapping[str, OptionResult]
        :func:`generation_fleets` of the analysis.

    Returns
    -------
    OptionResult
        The baseline's result.
    """
    base = analysis.baseline
    if not fleets:
        return base
    first = fleets[next(iter(fleets))]
    shown = {name: getattr(first, name) for name in SERVING_FIELDS}
    # each pool's present values (units bought over the horizon) stay the roadmap's
    shown["pools"] = {role: replace(pool, present_values=base.pools[role].present_values)
                      for role, pool in first.pools.items()}
    return replace(base, **shown)



def nre_scale_for_total(values: Mapping[str, object], total_usd: float) -> float:
    """The ``program.nre_scale`` at which the node's NRE parts sum to ``total_usd`` (their shares kept), for a
    scenario's values (:func:`tco.core.money.nre.nre_scale_for_total`).

    Parameters
    ----------
    values : Mapping[str, object]
        The scenario's named values; its ``program.nre.*`` parts [USD] are read (first draw).
    total_usd : float [USD]
        The program's NRE total wanted.

    Returns
    -------
    float [-]
        The multiplier.

    References
    ----------
    [semiengineering-chip-cost] the node totals the parts split.
    """
    parts = {name: scalar(values[name]) for name in named.program_nre if name in values}
    return scalar(nre.nre_scale_for_total(total_usd, parts))


def planned_nre_usd(values: Mapping[str, object]) -> float:
    """The program's NRE as planned: the node's parts times ``program.nre_scale`` (a respin's expected mask set not
    included; the ``nre_usd`` of :func:`program_view` includes it).

    Parameters
    ----------
    values : Mapping[str, object]
        The scenario's named values; its ``program.nre.*`` parts [USD] and ``program.nre_scale`` [-] are read (first
        draw).

    Returns
    -------
    float [USD]
        ``k sum_i P_i``.

    References
    ----------
    [semiengineering-chip-cost] the node totals the parts split.
    """
    parts = {name: values[name] for name in named.program_nre if name in values}
    return scalar(sum(nre.scaled_nre_parts(parts, values[named.program.nre_scale]).values()))

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


def baseline_generations(analysis: Analysis, fleets: Mapping[str, OptionResult] | None = None) -> dict:
    """The general-purpose generation the baseline fleet buys each year and when the fleet moves, and the baseline's
    levelized cost under each refresh policy (:data:`tco.core.money.generations.POLICIES`; the scenario's own beside the
    others, which the same inputs give: docs/model.md, "The refresh rule against the book-value credit").

    Parameters
    ----------
    analysis : Analysis
        The scenario's results and values; the baseline's roadmap costs and cash flows are read.
    fleets : Mapping[str, OptionResult], optional
        :func:`generation_fleets` of the analysis (their serving figures are reported per generation held).

    Returns
    -------
    dict
        Empty without a roadmap; else ``policy``, ``start_year`` [calendar year], ``releases`` [calendar year by device],
        ``by_year`` (device held each year), ``steady_state_usd_per_mtok`` [USD/Mtok by device],
        ``lcot_usd_per_mtok_by_policy`` [USD/Mtok by refresh policy] and ``fleets`` (per generation held: its first
        year ``from_year``, ``devices``, ``ttft_s`` [s], ``tpot_s`` [s], ``tokens_per_joule`` [tokens/J], ``power_w``
        [W], ``utilization`` [-] by pool).
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
        "fleets": {device: {"from_year": [devices[i] for i in index].index(device), "devices": scalar(r.devices),
                            "ttft_s": scalar(r.ttft_s), "tpot_s": scalar(r.tpot_s),
                            "tokens_per_joule": scalar(r.tokens_per_joule), "power_w": scalar(r.power_w),
                            "utilization": {role: scalar(p.sizing.utilization) for role, p in r.pools.items()}}
                   for device, r in (fleets or {}).items()},
    }
