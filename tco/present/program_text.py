"""Specialization over time in words: the chip program, the general roadmap, years of advantage.

What ``tco compare`` (text and JSON) and the app say beside the cost table (DESIGN.md
section 9): for an option on the scenario's own chip, the fleet's own units next to the
program's volume, whether the win needs units sold to others, the break-even external
sales and demand, and the builder's unit price; for the baseline, the general-purpose
generation it runs on each year; for specialized options, how long they stay cheaper than
the best general generation available.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from tco.analysis.verdict import DEFAULT_TIE_TOLERANCE
from tco.core.comparison import Analysis
from tco.core.money.generations import ADVANTAGE_SEARCH_YEARS
from tco.core.outputs import COMPARISON_OUTPUTS
from tco.foundation.formatting import quantity, sig
from tco.foundation.plain_values import scalar


def _units(value: float) -> str:
    return "never" if not math.isfinite(value) else f"{value:,.0f}"


def program_sentences(program: Mapping[str, dict], wins: Mapping[str, bool]) -> list[str]:
    """One sentence per built option: own units against the volume assumed, and what the win rests on.

    Parameters
    ----------
    program : Mapping[str, dict]
        :func:`tco.analysis.program_views.program_view` of the comparison.
    wins : Mapping[str, bool]
        Whether each option beats the baseline at the base values (NPV above 0).

    Returns
    -------
    list of str
        One sentence per option on the built chip.
    """
    sentences = []
    for name, p in program.items():
        own, volume, external = p["fleet_units"], p["program_volume_units"], p["external_units"]
        head = (f"{name} builds its own chip: this fleet buys {own:,.0f} units over the horizon (in service from year "
                f"{p['deployment_year']:.0f}); the program assumes {volume:,.0f} ({external:,.0f} sold to others)")
        breakeven_ext = p["breakeven_external_units"]
        if p["needs_external_sales"]:
            tail = (f"its win needs the external sales: on its own units alone it loses ({_units(breakeven_ext)} external "
                    "units break even)")
        elif wins.get(name):
            tail = "it wins on its own units alone"
        elif breakeven_ext is None:
            tail = "at this demand it loses at any volume: even with free NRE it costs more than the baseline"
        else:
            tail = f"it breaks even with {_units(breakeven_ext)} units sold to others"
        demand = p["breakeven_demand_rps"]
        demand_text = (f"; on own use alone the program pays from {sig(demand, 4)} req/s "
                       f"({sig(p['breakeven_tokens_per_year'] / 1e12, 3)} trillion output tokens/yr)" if demand is not None
                       else "; on own use alone no demand pays for it")
        price = p["vendor_unit_price_usd"]
        vendor = f"; a vendor would sell it at ${price:,.0f} a unit" if price is not None else ""
        sentences.append(f"{head}; {tail}{demand_text}{vendor}.")
    return sentences


def advantage_sentences(analysis: Analysis) -> list[str]:
    """Years of advantage of each specialized option over the best general generation; without a roadmap, where a
    specialized option wins, that how long the win lasts is not measured.

    Parameters
    ----------
    analysis : Analysis
        The comparison; the challengers' years of advantage [yr] are read.

    Returns
    -------
    list of str
        One sentence per specialized option with a roadmap, or one saying it is not measured.
    """
    spec = COMPARISON_OUTPUTS["years_of_advantage"]
    if analysis.baseline.roadmap is None:
        winners = [o.name for o in analysis.structure.challengers
                   if o.specialized and scalar(analysis.challengers[o.name].cost_ratio) < 1.0]
        return [f"How long {' and '.join(winners)} stay{'s' if len(winners) == 1 else ''} ahead of newer "
                "general-purpose generations is not measured: the baseline stays on its generation (a roadmap: block "
                "lets it move and reports the years of advantage)."] if winners else []
    out = []
    for name, row in analysis.challengers.items():
        if row.years_of_advantage is None:
            continue
        years = scalar(row.years_of_advantage)
        if years == 0:
            text = "is not cheaper than the best general-purpose generation when it enters service"
        elif years < 0:
            text = (f"is behind the general roadmap when it enters service: a general-purpose generation was already "
                    f"cheaper {spec.format(-years)} years before")
        elif years >= ADVANTAGE_SEARCH_YEARS:
            text = "stays cheaper than the general roadmap for a century"
        else:
            text = (f"stays cheaper than the best general-purpose generation for {spec.format(years)} years after it "
                    "enters service")
        out.append(f"{name} {text}.")
    return out


def roadmap_sentence(generations: Mapping) -> str:
    """The baseline's generations over the horizon, in words.

    Parameters
    ----------
    generations : Mapping
        :func:`tco.analysis.program_views.baseline_generations` (empty without a roadmap).

    Returns
    -------
    str
        The generations by year and, where another refresh policy costs less beyond a tie, what it would cost
        [USD/Mtok]; empty without a roadmap.
    """
    if not generations:
        return ""
    by_year = generations["by_year"]
    fleets = generations.get("fleets", {})

    def step(year, device):
        fleet = fleets.get(device)
        if not fleet:
            return f"{device} from year {year}"
        return (f"{device} from year {year} ({sig(fleet['devices'], 4)} devices, time to first token "
                f"{quantity(fleet['ttft_s'], 's')}, per output token {quantity(fleet['tpot_s'], 's')}, "
                f"{sig(fleet['tokens_per_joule'], 3)} output tokens per joule)")

    steps = [step(year, device) for year, device in enumerate(by_year) if year == 0 or by_year[year - 1] != device]
    sentence = (f"The baseline follows the general-purpose roadmap ({generations['policy'].replace('_', ' ')}): "
                f"{', '.join(steps)}.")
    costs = generations.get("lcot_usd_per_mtok_by_policy", {})
    if not costs:
        return sentence
    own, cheapest = costs[generations["policy"]], min(costs, key=costs.get)
    if own > costs[cheapest] * (1.0 + DEFAULT_TIE_TOLERANCE):  # beyond a tie, the plan itself moves the verdict
        sentence += (f" {REFRESHED[cheapest]} instead (roadmap policy {cheapest}), it would cost "
                     f"${costs[cheapest]:#.3g} per million output tokens, not ${own:#.3g}.")
    return sentence


#: each refresh policy's plan in words (:data:`tco.core.money.generations.POLICIES`)
REFRESHED = {"keep": "Kept on the scenario's device", "at_replacement": "Moved to a better generation at the end of "
             "its fleet's life", "each_generation": "Moved to each better generation as it comes",
             "when_cheaper": "Moved when a better generation's full cost is below the cost of keeping the fleet"}
