"""What a study found, in sentences: who wins how often, which inputs drive the answer, where it breaks even.

:func:`findings` reads a study's ``summary.json`` contents (``results`` of each analysis, as
:mod:`tco.export.study_folder` writes them) and says, per analysis that ran:

- Monte Carlo: the share of draws each option wins (with its standard error), the median and
  the P10-P90 spread of each metric;
- tornado, Sobol, Morris: the top drivers (human labels, :mod:`tco.foundation.labels`), and which single
  inputs flip the winner within their range;
- sweep and map: every break-even (or that none lies in the swept range) and the share of the map where the option wins;
- portfolio and cascade: the best cell, and how often the second life pays.

``tco study`` prints them after writing the study's folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tco.foundation.formatting import quantity, sig
from tco.foundation.labels import param_label

#: drivers named per ranking
TOP = 3


def _drivers(rows, score: str) -> str:
    return ", ".join(f"{param_label(r['param'])} ({sig(r[score], 2)})" for r in rows[:TOP])


def _metric_label(metric: str) -> str:
    kind, _, option = metric.partition(":")
    return {"ratio": f"{option}'s cost ratio to the baseline", "lcot": f"{option}'s cost per million output tokens",
            "npv": f"the NPV of choosing {option}"}.get(kind, metric)


def _spread(row: Mapping) -> str:
    unit = row.get("unit", "")
    shown = {"USD per million output tokens": "USD", "USD": "USD"}.get(unit, "")

    def v(x):
        return quantity(x, shown) if shown else sig(x, 3)

    return f"median {v(row['p50'])} (P10 {v(row['p10'])}, P90 {v(row['p90'])})"


def sourced_span(outside: Mapping) -> str:
    """The sourced range an axis left, in words: ``the sourced range (500 to 8,000)``, or ``the sourced value
    (50,000,000,000)`` where the range is one value (a parameter the catalog fixes).

    Parameters
    ----------
    outside : Mapping
        An axis's ``outside_sourced_range`` entry of ``summary.json`` (``sourced_low``, ``sourced_high``, in the
        parameter's unit).

    Returns
    -------
    str
        The phrase.
    """
    low, high = outside["sourced_low"], outside["sourced_high"]
    return f"the sourced value ({sig(low, 3)})" if low == high else f"the sourced range ({sig(low, 3)} to {sig(high, 3)})"


def missing_target_findings(analysis: str, result: Mapping, score: str, gloss: str) -> list[str]:
    """The sentence on the model runs of a Sobol or Morris analysis where a fleet its metric compares misses a
    latency target (none where no run does, or the metric compares no fleet).

    Parameters
    ----------
    analysis : str
        ``"Sobol"`` or ``"Morris"``.
    result : Mapping
        Its ``summary.json`` entry (``compares``, ``share_of_runs_missing_a_target``, ``missing_a_target_top``).
    score : str
        The index that ranks the inputs (``ST``, ``mu_star``).
    gloss : str
        What that index measures, in words.

    Returns
    -------
    list[str]
        Zero or one sentence.
    """
    share = result.get("share_of_runs_missing_a_target", 0.0)
    if not share > 0:
        return []
    compares = result["compares"]
    pair = " or ".join(compares)
    line = (f"{analysis}: in {sig(100 * share, 2)}% of its model runs {pair} misses a latency target, so there the "
            f"{'pair' if len(compares) > 1 else 'metric'} prices a fleet that does not serve the workload (its indices "
            "of the metric include those runs)")
    top = result.get("missing_a_target_top")
    if result.get("missing_a_target_unconverged"):
        line += f"; its indices of whether {pair} misses a target have not converged at this n (run a larger n)"
    elif top:
        line += f"; what most decides whether {pair} misses a target ({gloss}): " + _drivers(top, score)
    return [line + "."]


def findings(summary: Mapping) -> list[str]:
    """The study's findings as sentences, in the order its analyses ran (empty when nothing ran).

    Parameters
    ----------
    summary : Mapping
        The contents of a study's ``summary.json`` (``results`` of each analysis, as
        :mod:`tco.export.study_folder` writes them).

    Returns
    -------
    list[str]
        One sentence per finding: Monte Carlo spreads and win shares, tornado, Sobol and Morris
        drivers and flips, sweep and map break-evens, the portfolio's best cell, the cascade.
    """
    results = summary.get("results", {})
    out = []
    mc = results.get("monte_carlo")
    if mc:
        for row in mc.get("summary", []):
            kind, _, option = str(row["metric"]).partition(":")
            line = f"{_metric_label(row['metric'])}: {_spread(row)} over {sig(row['n'], 3)} draws"
            p = row.get("p_win")
            if kind in ("ratio", "npv") and p is not None:
                line += (f"; {option} wins in no draw" if p == 0 else f"; {option} wins in every draw" if p == 1 else
                         f"; {option} wins in {sig(100 * p, 3)}% of draws (± {sig(100 * row.get('p_win_std_error', 0.0), 2)}%)")
            if row.get("p_feasible", 1.0) < 1.0:
                line += f"; it meets the latency targets in {sig(100 * row['p_feasible'], 3)}% of draws"
            if kind in ("ratio", "npv") and row.get("p_baseline_feasible", 1.0) < 1.0:  # there it wins on the targets
                line += (f"; the baseline meets the latency targets in {sig(100 * row['p_baseline_feasible'], 3)}% of "
                         "draws (where it misses them, an option that meets them wins)")
            out.append(line + ".")
        for rule in mc.get("conditioned_draws", []):
            if rule["share"] > 0:
                out.append(f"{param_label(rule['lower'])} at most {param_label(rule['upper'])}: "
                           f"{sig(100 * rule['share'], 2)}% of independent draws would break this rule; those draws "
                           "were taken within it (the first drawn at or below the second's draw).")
    tornado = results.get("tornado")
    if tornado:
        out += tornado_findings(tornado)
    sobol = results.get("sobol")
    if sobol and sobol.get("unconverged"):  # no driver is named from indices that cannot be shares of variance
        shown = "; ".join(f"{u['index']} of {param_label(u['param'])} = {sig(u['value'], 3)} ± {sig(u['conf'], 2)}"
                          for u in sobol["unconverged"][:3])
        more = len(sobol["unconverged"]) - 3
        out.append(f"Sobol: {len(sobol['unconverged'])} indices lie outside [0, 1] beyond their interval ({shown}"
                   f"{f' and {more} more' if more > 0 else ''}): the estimate has not converged at n = {sobol.get('n')}, "
                   "so no driver is named; run a larger n.")
    elif sobol and sobol.get("top"):
        of = f" of {_metric_label(sobol['metric'])}" if sobol.get("metric") else ""
        out.append(f"Sobol, the inputs that drive most of the variance{of} (total effect: the share of the variance an "
                   "input drives, alone and with others, [0, 1]): " + _drivers(sobol["top"], "ST") + ".")
    if sobol:
        out += missing_target_findings("Sobol", sobol, "ST", "total effect on that event, [0, 1]")
    morris = results.get("morris")
    if morris and morris.get("top"):
        of = f" of {_metric_label(morris['metric'])}" if morris.get("metric") else ""
        out.append(f"Morris screening, the most influential inputs (mean absolute elementary effect{of}: its change "
                   "per full range of one input moved alone, in the metric's unit): "
                   + _drivers(morris["top"], "mu_star") + ".")
    if morris:
        out += missing_target_findings("Morris", morris, "mu_star", "change in its probability per full range")
    sweep = results.get("sweep")
    if sweep:
        out += sweep_findings(sweep)
        beyond = sweep.get("outside_sourced_range")
        if beyond:
            out.append(f"The sweep of {param_label(sweep['param'])} ({sig(sweep['low'], 3)} to {sig(sweep['high'], 3)}) "
                       f"leaves {sourced_span(beyond)}: the points outside it rest on no source.")
    grid = results.get("map")
    if grid:
        missed = grid.get("share_of_map_where_a_latency_target_is_missed", 0.0)
        decided = (f" (the option or the baseline misses a latency target in {sig(100 * missed, 3)}% of it: there the "
                   "targets decide)") if missed else ""
        beyond = " and ".join(f"its {side} axis beyond {sourced_span(o)}"
                              for side, o in (grid.get("outside_sourced_range") or {}).items())
        beyond = f"; the map takes {beyond}, where the points rest on no source" if beyond else ""
        out.append(f"{grid['option']} wins in {sig(100 * grid['share_of_map_where_option_wins'], 3)}% of the map{decided}"
                   f"{beyond}.")
    portfolio = results.get("portfolio")
    if portfolio and portfolio.get("p_win"):
        best = max(portfolio["p_win"], key=lambda r: r["p_win"])
        line = (f"Portfolio: the best cell is {best['option']} for {best['model']} / {best['workload']}, winning in "
                f"{sig(100 * best['p_win'], 3)}% of draws ({portfolio['cells']} cells)")
        base_ok = best.get("p_baseline_feasible", 1.0)
        if base_ok < 1.0:  # a win also counts where the baseline misses its targets, whatever the cost
            median = {"lcot": f"cost of {quantity(best['p50'], 'USD')} per million output tokens",
                      "npv": f"NPV of {quantity(best['p50'], 'USD')}"}.get(str(portfolio.get("metric")),
                                                                          f"cost ratio of {sig(best['p50'], 3)}")
            line += (f", at a median {median}: the baseline meets the latency targets in {sig(100 * base_ok, 3)}% of "
                     "draws")
        out.append(line + ".")
    cascade = results.get("cascade")
    if cascade:
        for d in cascade.get("devices", []):
            out.append(f"{d['device']}: cascading to serving beats selling or scrapping in {sig(100 * d['p_cascade_best'], 3)}% "
                       f"of {sig(cascade['samples'], 3)} draws (median premium {quantity(d['premium_p50_usd'], 'USD')}).")
    return out


def tornado_findings(tornado: Mapping) -> list[str]:
    """What a tornado found, saying which question it answers (its metric's option against the baseline, not which of
    all options is cheapest): the largest swings of the metric in its unit, the ends of a range where an option of the
    pair misses a latency target (no cost comparison there), and whether any single input makes the option win or lose.

    Parameters
    ----------
    tornado : Mapping
        The tornado's results (``metric``, ``baseline``, ``largest_swing``, ``misses_targets``, ``flips_winner``).

    Returns
    -------
    list[str]
        The sentences.
    """
    out = []
    metric, baseline = tornado.get("metric", ""), tornado.get("baseline", "the baseline")
    option = str(metric).partition(":")[2]
    swings = tornado.get("largest_swing", [])
    if swings:
        of = _metric_label(metric) if metric else "the metric"
        out.append(f"Tornado, largest swings of {of} (its value at the high end of each input's range minus at the low "
                   "end, absolute): " + _drivers(swings, "swing") + ".")
    for row in tornado.get("misses_targets", [])[:TOP]:
        ends = [f"at its {end} ({quantity(row[end], row['unit'], 4)}) " +
                (f"both {row[f'misses_{end}'].replace(', ', ' and ')} miss" if "," in row[f"misses_{end}"]
                 else f"{row[f'misses_{end}']} misses") + " a latency target"
                for end in ("low", "high") if row[f"misses_{end}"]]
        out.append(f"{param_label(row['param']).capitalize()}: " + " and ".join(ends) +
                   " (no cost comparison there; the tornado leaves that end out).")
    flips = tornado.get("flips_winner", [])
    pair = f"{option} against {baseline}" if option else "the pair this study compares"
    question = (f"This tornado compares {pair} only; `tco compare` names the inputs that change which of all the "
                "options is cheapest")
    if not flips:
        out.append(f"No single input within its range changes whether {option or 'the option'} beats {baseline}. "
                   f"{question}.")
    else:
        out.append(f"Inputs that change whether {option or 'the option'} beats {baseline} within their range: "
                   + ", ".join(param_label(p) for p in flips[:6]) + (f" and {len(flips) - 6} more" if len(flips) > 6
                                                                     else "") + f". {question}.")
    return out


def stretch_words(start: float, end: float, low: float, high: float, number: Callable[[float], str]) -> str:
    """A stretch ``[start, end]`` of a range ``[low, high]`` in words, for the findings and the sweep chart alike.

    Parameters
    ----------
    start, end : float [unit of the parameter]
        The stretch.
    low, high : float [unit of the parameter]
        The range it lies in.
    number : Callable[[float], str]
        Writes a value of the parameter.

    Returns
    -------
    str
        ``across the swept range``, ``below 4,412``, ``above 4,365`` or ``from 4,365 to 4,412``.
    """
    at_low, at_high = start <= low, end >= high
    if at_low and at_high:
        return "across the swept range"
    if at_low:
        return f"below {number(end)}"
    return f"above {number(start)}" if at_high else f"from {number(start)} to {number(end)}"


def sweep_findings(sweep: Mapping) -> list[str]:
    """Where each challenger of a sweep wins, as stretches of the swept range (``wins from 4,294 tokens to 4,455 tokens``,
    ``below``, ``above``, ``across the swept range``), where the baseline misses a latency target marked (windows that
    meet end to end read as one stretch, the part where the baseline misses named: ``from 4,385 tokens to 4,412 tokens
    (the baseline misses a latency target from 4,397 tokens to 4,412 tokens)``); one line per challenger that crosses
    the baseline, or one saying that none does.

    Parameters
    ----------
    sweep : Mapping
        The sweep's results (``param``, ``low``, ``high``, ``breakevens``, ``windows``).

    Returns
    -------
    list[str]
        The sentences.
    """
    crossing = list(dict.fromkeys(b["option"] for b in sweep.get("breakevens", [])))
    if not crossing:
        return [f"No challenger crosses the baseline across the swept range of {param_label(sweep['param'])}."]
    out = []
    for option in crossing:
        stretches: list[list[Mapping]] = []
        for w in (w for w in sweep.get("windows", []) if w["option"] == option):
            if stretches and stretches[-1][-1]["to"] == w["from"]:
                stretches[-1].append(w)
            else:
                stretches.append([w])
        spans = []
        for stretch in stretches:
            unit = stretch[0].get("unit", "")
            low, high = sweep.get("low", stretch[0]["from"]), sweep.get("high", stretch[-1]["to"])

            def words(start, end, low=low, high=high, unit=unit):
                return stretch_words(start, end, low, high, lambda v: quantity(v, unit, 4))

            missed = [w for w in stretch if w["baseline_misses_targets"]]
            where = words(stretch[0]["from"], stretch[-1]["to"])
            if len(missed) == len(stretch):
                where += " (the baseline misses a latency target there)"
            elif missed:
                where += " (the baseline misses a latency target " + \
                         " and ".join(words(w["from"], w["to"]) for w in missed) + ")"
            spans.append(where)
        label = param_label(sweep["param"])
        out.append(f"{option} wins at {label} {' and '.join(spans)}." if spans else
                   f"{option} crosses the baseline along {label} but wins in no stretch of it.")
    return out
