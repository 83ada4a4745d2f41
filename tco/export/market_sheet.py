"""The Market sheet: the model's API list prices priced on the workload's requests, and each option's year-1 fleet
rented by the device-hour, as live formulas (:mod:`tco.analysis.market`; docs/model.md "Against the market").

The prices and rental rates are reference figures, not inputs of the model: they sit on this sheet as shaded cells a
reader may edit to try another quote, and nothing on Model or Cash flows reads them (``tco import`` does not either).
The formulas read the workload's lengths and cache share from Inputs and each option's devices, output tokens per
second and accounting cost from Model and Cash flows, so the rows move with every edit there. The Check sheet sets
each figure beside the Python model's.
"""

from __future__ import annotations

from tco.analysis.market import SECONDS_PER_HOUR, TOKENS_PER_MTOK, MarketCheck
from tco.core import names as named
from tco.core.outputs import OptionResult
from tco.core.serving.power import HOURS_PER_YEAR
from tco.export.cells import INPUT_FILL, QuantitySheet, absolute, put_text, unlock
from tco.inputs.scenario import Scenario

USD_PER_MTOK = "USD per million output tokens"
#: the Check sheet's keys of the market figures: per quote (under the row label ``market``) and per option
API_KEY, RENTED_KEY, YEAR1_KEY = "api_usd_per_mtok", "market.rented_usd_per_mtok", "market.year1_usd_per_mtok"
MARKET_ROW = "market"


def _price(sheet: QuantitySheet, label: str, value: float, unit: str) -> str:
    """A shaded, editable number cell (a reference price); returns its absolute reference."""
    ws, row = sheet.ws, sheet.row
    put_text(ws, row, 1, label)
    cell = ws.cell(row=row, column=sheet.VALUE_COLUMN, value=float(value))
    cell.fill = INPUT_FILL
    unlock(cell)
    put_text(ws, row, 3, unit)
    sheet.row += 1
    return absolute(ws, row, sheet.VALUE_COLUMN)


def write_market(ws, scenario: Scenario, names: dict[str, str], check: MarketCheck, results: dict[str, OptionResult],
                 refs: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """Fill ``ws``; returns the references of its figures by Check row: ``{"market": {"<provider>.api_usd_per_mtok":
    ref}, option: {"market.rented_usd_per_mtok": ref, "market.year1_usd_per_mtok": ref}}``.

    Parameters
    ----------
    ws : openpyxl.worksheet.worksheet.Worksheet
        The empty Market sheet.
    scenario : Scenario
        The scenario (its workload's defined names).
    names : dict[str, str]
        Defined name of each parameter (the Inputs sheet's).
    check : MarketCheck
        The Python model's market check (its quotes and rental rates).
    results : dict[str, OptionResult]
        Each option's result as Compare shows it (the device of each pool).
    refs : dict[str, dict[str, str]]
        Each option's cell references on Model and Cash flows, by output name.

    Returns
    -------
    dict[str, dict[str, str]]
        The references the Check sheet lists.
    """
    sheet = QuantitySheet(ws)
    out: dict[str, dict[str, str]] = {MARKET_ROW: {}}
    sheet.heading(f"Against the market: {check.model}")
    sheet.note("Reference prices: edit a shaded price to try another quote; nothing on Model or Cash flows reads this "
               "sheet, and tco import does not.")
    values = scenario.values()
    prompt, output = names[named.workload.prompt_tokens], names[named.workload.output_tokens]
    hits = names[named.workload.prefix_hit_fraction] if named.workload.prefix_hit_fraction in values else None
    for quote in check.prices:
        where = f", served on {quote.served_on}" if quote.served_on else ""
        sheet.heading(f"{quote.provider} API list prices ({quote.date}{where}; {quote.source})", level=2)
        p_in = _price(sheet, "input price", quote.input_usd_per_mtok, "USD per million tokens")
        if quote.cached_input_usd_per_mtok is None:
            p_cached = sheet.quantity("cached input price (none listed: as any input token)", p_in,
                                      "USD per million tokens")
        else:
            p_cached = _price(sheet, "cached input price", quote.cached_input_usd_per_mtok, "USD per million tokens")
        p_out = _price(sheet, "output price", quote.output_usd_per_mtok, "USD per million tokens")
        key = f"{quote.provider}.{API_KEY}"
        prompt_price = p_in if hits is None else f"((1-{hits})*{p_in}+{hits}*{p_cached})"  # no prefix reuse: h = 0
        out[MARKET_ROW][key] = sheet.quantity(
            "the workload's requests at these prices: (P (1 - h) in + P h cached + O out) / O",
            f"({prompt}*{prompt_price}+{output}*{p_out})/{output}", USD_PER_MTOK, key)
    for name, result in results.items():
        option = refs[name]
        tokens = option["tokens_per_s"]
        rented = check.rented.get(name)
        sheet.heading(f"{name}: year 1, as held ({check.holding[name]}) and rented", level=2)
        held = sheet.quantity(f"{check.holding[name]}: accounting cost per year over the year's output tokens",
                               f"{option['accounting_cost_usd_per_year']}/({tokens}*{HOURS_PER_YEAR * SECONDS_PER_HOUR:g})"
                               f"*{TOKENS_PER_MTOK:g}", USD_PER_MTOK, YEAR1_KEY)
        out[name] = {YEAR1_KEY: held}
        if rented is None:
            sheet.note(f"no rental rate in the catalog for {', '.join(check.unrented.get(name, ()))}: not priced rented")
            continue
        rent = []
        for role, rate in rented.usd_per_device_hour.items():
            device, pool = result.pools[role].device, scenario.structure.option(name).pool(role)
            if pool.rented:  # its own rate and paid share, from Inputs
                rate_ref = sheet.quantity(f"{role}: its rate per {device}-hour x the share it pays",
                                          f"{names[pool.rental_param]}*{names[pool.rental_share_param]}", "USD/h")
            else:
                rate_ref = _price(sheet, f"{role}: rental rate per {device}-hour (catalog)", rate, "USD/h")
            rent.append(f"{option[f'{role}.devices']}*{rate_ref}")
        per_hour = sheet.quantity("the fleet's rent per hour, every device around the clock", "+".join(rent), "USD/h")
        out[name][RENTED_KEY] = sheet.quantity(
            "rented: the rent over the output tokens served", f"{per_hour}/{SECONDS_PER_HOUR:g}/{tokens}*{TOKENS_PER_MTOK:g}",
            USD_PER_MTOK, RENTED_KEY)
    return out


def market_values(check: MarketCheck) -> dict[str, dict[str, float]]:
    """The Python model's figures of the Market sheet, keyed as :func:`write_market` returns their references.

    Parameters
    ----------
    check : MarketCheck
        The market check of the scenario.

    Returns
    -------
    dict[str, dict[str, float]]
        ``{"market": {"<provider>.api_usd_per_mtok": value}, option: {key: value}}``.
    """
    out = {MARKET_ROW: {f"{p.provider}.{API_KEY}": p.usd_per_mtok for p in check.prices}}
    for name, held in check.year1_usd_per_mtok.items():
        out[name] = {YEAR1_KEY: held}
        if name in check.rented:
            out[name][RENTED_KEY] = check.rented[name].usd_per_mtok
    return out
