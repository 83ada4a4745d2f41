"""The comparison as rows a person reads: one row per output, one cell per option.

``tco compare`` (the terminal table) and the app's Compare page show the same rows with the
same numbers: titles, units and formats come from the output table
(:mod:`tco.core.outputs`), pool outputs are shown per pool (``prefill 80, decode 2,304``),
and ``wide`` adds every output the model computes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np

from tco.analysis.program_views import other_generations_held
from tco.core.evaluate import BOUND_NAMES, INFEASIBLE_REASONS
from tco.core.outputs import COMPARISON_OUTPUTS, LINK_OUTPUTS, OPTION_OUTPUTS, POOL_OUTPUTS, OptionResult, OutputSpec
from tco.foundation.formatting import NONE, sig
from tco.foundation.plain_values import scalar

#: a column or row of a table built from plain records: (title with unit, key, format spec or None for text, scale)
Column = tuple[str, str, "str | None", float]


class Row(NamedTuple):
    """One row of a comparison table: an identifier, the title with its unit, a cell per option."""

    key: str
    title: str
    cells: list[str]


def cell(value, fmt: str | None, scale: float = 1.0) -> str:
    """A table cell: ``value * scale`` in ``fmt`` (a ``g`` format keeps its significant figures without
    an exponent), text as is, yes/no for a flag, the em dash for none or non-finite.

    Parameters
    ----------
    value : object
        A number [unit of its row], text, a flag or None.
    fmt : str or None
        Python format spec for a number (None: shown as text).
    scale : float [-]
        Factor to the row's display unit.

    Returns
    -------
    str
        The cell as printed.
    """
    if value is None:
        return NONE
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if fmt is None:
        return str(value)
    value = float(value)
    if not np.isfinite(value):
        return NONE
    if fmt.endswith("g"):
        return sig(value * scale, int(fmt.rstrip("g").split(".")[-1]))
    return format(value * scale, fmt)


def placement(result: OptionResult) -> str:
    """Which phase runs on which device, in words.

    Parameters
    ----------
    result : OptionResult
        The option's result (its pools).

    Returns
    -------
    str
        ``prefill+decode on h100-sxm`` or ``prefill on h100-sxm; decode on groq-lpu``, ``(rented)`` after a rented
        pool's device.
    """
    return "; ".join(f"{'prefill+decode' if role == 'colocated' else role} on {p.device}{' (rented)' if p.rented else ''}"
                     for role, p in result.pools.items())


def bounds(result: OptionResult) -> dict[str, str]:
    """What limits each phase: ``{"prefill": "compute", "decode": "bandwidth"}`` (first draw).

    Parameters
    ----------
    result : OptionResult
        The option's result (each pool's bound codes).

    Returns
    -------
    dict[str, str]
        ``bandwidth``, ``compute`` or ``interconnect`` by phase.
    """
    bound = {}
    for pool in result.pools.values():
        if pool.performance.prefill_bound is not None:
            bound["prefill"] = BOUND_NAMES[int(scalar(pool.performance.prefill_bound))]
        if pool.performance.decode_bound is not None:
            bound["decode"] = BOUND_NAMES[int(scalar(pool.performance.decode_bound))]
    return bound


def shape_label(performance) -> str:
    """A pool's chosen replica shape in words (first draw): ``TP4``, ``TP8 x PP62``, ``TP8 EP``, ``DP144 x EP144``
    (data-parallel attention, experts sharded over its ranks; ``TBO`` with two micro-batches).

    Parameters
    ----------
    performance : PoolPerformance
        The pool's chosen tensor, pipeline and expert parallel degrees.

    Returns
    -------
    str
        The shape as the tables print it.
    """
    d = int(scalar(performance.data_parallel))
    if d > 1:
        return f"DP{d} x EP{d}" + (" TBO" if scalar(performance.micro_batches) > 1.5 else "")
    t, p = int(scalar(performance.tensor_parallel)), int(scalar(performance.pipeline_stages))
    return f"TP{t}" + (f" x PP{p}" if p > 1 else "") + (" EP" if scalar(performance.expert_parallel) > 0.5 else "")


def shapes(result: OptionResult) -> str:
    """The option's chosen replica shapes: ``TP4`` colocated, ``prefill TP1, decode TP2`` split.

    Parameters
    ----------
    result : OptionResult
        The option's result (its pools' performance).

    Returns
    -------
    str
        One shape, or one per pool prefixed by its role.
    """
    if "colocated" in result.pools:
        return shape_label(result.pool("colocated").performance)
    return ", ".join(f"{role} {shape_label(p.performance)}" for role, p in result.pools.items())


def interference(result: OptionResult) -> str:
    """The share of a colocated replica's time taken by prefill; none for a disaggregated option.

    Parameters
    ----------
    result : OptionResult
        The option, whose colocated pool's interference share is read.

    Returns
    -------
    str
        A percentage of replica time [%], or ``none (disaggregated)``.
    """
    spec = POOL_OUTPUTS["interference_share"]
    values = [p.performance.interference_share for p in result.pools.values()
              if p.performance.interference_share is not None]
    return ", ".join(spec.format(scalar(v)) for v in values) or "none (disaggregated)"


def held_batch(result: OptionResult) -> str:
    """Where a colocated replica holds its slot cap below what the TPOT target allows (the TTFT target needs it),
    both caps in words: ``slot cap 2 of 37, held for the TTFT target``; empty elsewhere (first draw).

    Parameters
    ----------
    result : OptionResult
        The option's result (the colocated pool's slot cap and the cap the TPOT target allows [sequences]).

    Returns
    -------
    str
        Both caps in words, or empty.
    """
    for pool in result.pools.values():
        slots, allowed = pool.performance.slots, pool.performance.slots_allowed
        if slots is not None and allowed is not None and scalar(slots) < scalar(allowed):
            return f"slot cap {scalar(slots):,.0f} of {scalar(allowed):,.0f}, held for the TTFT target"
    return ""


def decode_batch(result: OptionResult) -> str:
    """The mean decode batch at peak, with :func:`held_batch` where the slot cap is held: ``1 (slot cap 2 of 37, held
    for the TTFT target)``.

    Parameters
    ----------
    result : OptionResult
        The option's result (its decode batch [sequences]).

    Returns
    -------
    str
        The batch, with the held cap where there is one.
    """
    held = held_batch(result)
    return OPTION_OUTPUTS["batch"].format(scalar(result.batch)) + (f" ({held})" if held else "")


def infeasible_reasons(result: OptionResult) -> list[str]:
    """The latency targets (or limits) an option misses, in words; empty when it meets them all.

    Parameters
    ----------
    result : OptionResult
        The option's result (its infeasibility code, first draw).

    Returns
    -------
    list of str
        One reason per missed target or limit (:data:`tco.core.evaluate.INFEASIBLE_REASONS`).
    """
    code = int(scalar(result.infeasible_code))
    return [text for bit, text in INFEASIBLE_REASONS.items() if code & bit]


def _option(name: str) -> tuple[str, str, Callable[[OptionResult], str]]:
    spec = OPTION_OUTPUTS[name]
    return name, spec.title, lambda r: spec.format(scalar(getattr(r, name)))


def _per_pool(name: str, title: str | None = None) -> tuple[str, str, Callable[[OptionResult], str]]:
    """A pool output per pool: the value alone for a colocated option, ``prefill x, decode y`` for a split."""
    spec = POOL_OUTPUTS[name]

    def cell(r: OptionResult) -> str:
        values = {role: getattr(step, name) for role, p in r.pools.items() for step in p.steps() if hasattr(step, name)}
        values = {role: v for role, v in values.items() if v is not None}
        if len(values) == 1:
            return spec.format(scalar(next(iter(values.values()))))
        return ", ".join(f"{role} {spec.format(scalar(v))}" for role, v in values.items())

    return name, title or spec.title, cell


def other_generations(result: OptionResult) -> str:
    """Where a roadmap baseline's fleet runs generations other than its own device, the words that say which and whose
    serving figures a table shows (the generation of year 0: :func:`tco.analysis.program_views.baseline_as_run`);
    empty otherwise.

    Parameters
    ----------
    result : OptionResult
        The baseline's result.

    Returns
    -------
    str
        ``the fleet runs b200, then rubin: serving figures of b200, the generation of year 0; costs over every
        generation``, or empty.
    """
    held = other_generations_held(result)
    return (f"the fleet runs {', then '.join(held)}: serving figures of {held[0]}, the generation of year 0; costs over "
            "every generation") if held else ""


def _feasible(r: OptionResult) -> str:
    reasons = infeasible_reasons(r)
    verdict = "yes" if not reasons else "no: " + "; ".join(reasons)
    note = other_generations(r)
    return f"{verdict} ({note})" if note else verdict


#: the rows of the comparison, in order: (key, title with unit, cell of one option's result)
OPTION_ROWS: list[tuple[str, str, Callable[[OptionResult], str]]] = [
    ("placement", "placement", placement),
    _option("lcot_usd_per_mtok"),
    _option("lcot_usd_per_mtok_all_tokens"),
    _option("tokens_per_joule"),
    ("shape", "replica shape", shapes),
    _option("ttft_s"),
    _option("tpot_s"),
    _option("queue_wait_s"),
    ("interference", POOL_OUTPUTS["interference_share"].title, interference),
    _per_pool("prefix_hit_fraction"),
    _per_pool("accepted_tokens_per_step"),
    _per_pool("devices", OPTION_OUTPUTS["devices"].title),
    _per_pool("utilization"),
    ("bound", "bound by", lambda r: ", ".join(f"{k}: {v}" for k, v in bounds(r).items())),
    _option("spilled_bytes"),
    ("batch", OPTION_OUTPUTS["batch"].title, decode_batch),
    ("feasible", OPTION_OUTPUTS["feasible"].title, _feasible),
]


#: the rows shown only where some option has the figure (prefix reuse, speculative decoding): a pool output absent
#: (None) elsewhere
OPTIONAL_ROWS = ("prefix_hit_fraction", "accepted_tokens_per_step")


def _has(r: OptionResult, name: str) -> bool:
    """Whether a pool of ``r`` reports the pool output ``name``."""
    return any(getattr(p.performance, name) is not None for p in r.pools.values())


#: comparison outputs shown against the baseline, in order (the program rows for options on the scenario's own chip)
CHALLENGER_OUTPUTS = ("npv_usd", "cost_ratio", "life_over_half_life", "years_of_advantage", "payback_year", "fleet_units",
                      "program_volume_units", "needs_external_sales", "npv_own_use_usd", "breakeven_external_units",
                      "breakeven_volume_units", "breakeven_demand_rps", "breakeven_tokens_per_year",
                      "vendor_unit_price_usd", "software_payback_years")


def option_rows(results: Mapping[str, OptionResult], wide: bool = False) -> list[Row]:
    """The comparison's rows for the options in ``results`` (in their order); ``wide``: every output the
    model computes (option, link and per-pool outputs), each under its title from the output table.

    Parameters
    ----------
    results : Mapping[str, OptionResult]
        The options' results at the base values.
    wide : bool
        Every output instead of the headline rows.

    Returns
    -------
    list of Row
        Title (with unit) and one printed cell per option.
    """
    rows = [Row(key, title, [cell(r) if key not in OPTIONAL_ROWS or _has(r, key) else "" for r in results.values()])
            for key, title, cell in OPTION_ROWS
            if key not in OPTIONAL_ROWS or any(_has(r, key) for r in results.values())]
    if not wide:
        return rows
    shown = {key for key, _, _ in OPTION_ROWS}
    extra: dict[str, tuple[OutputSpec, str]] = {}
    for r in results.values():
        for dotted in r.flat():
            role, _, name = dotted.rpartition(".")
            if dotted in shown or (name in shown and not role):
                continue
            spec = (LINK_OUTPUTS if role == "links" else POOL_OUTPUTS if role else OPTION_OUTPUTS)[name]
            extra.setdefault(dotted, (spec, f"{role}: {spec.title}" if role else spec.title))
    for dotted, (spec, title) in extra.items():
        cells = [spec.format(scalar(r.flat()[dotted])) if dotted in r.flat() else "" for r in results.values()]
        rows.append(Row(dotted, title, cells))
    return rows


def challenger_rows(challengers: Mapping[str, Mapping[str, object]], wide: bool = False) -> list[Row]:
    """Each challenger against the baseline: one row per comparison output (``challengers`` maps each
    challenger to its flat comparison outputs); rows no challenger has are left out.

    Parameters
    ----------
    challengers : Mapping[str, Mapping[str, object]]
        ``{challenger: {comparison output: value}}`` in their units.
    wide : bool
        Every comparison output instead of the headline rows.

    Returns
    -------
    list of Row
        Title (with unit) and one printed cell per challenger.
    """
    names = CHALLENGER_OUTPUTS if not wide else tuple(COMPARISON_OUTPUTS)
    rows = []
    for name in names:
        spec = COMPARISON_OUTPUTS[name]
        values = [c.get(name) for c in challengers.values()]
        if all(v is None for v in values):
            continue
        rows.append(Row(name, spec.title, [spec.format(None if v is None else scalar(v)) for v in values]))
    return rows
