"""The market check in words (:mod:`tco.analysis.market`): what ``tco compare`` and the app's Compare say after the
verdict about buying the tokens from an API or renting the fleet instead of owning it."""

from __future__ import annotations

from tco.analysis.market import OUT_OF_LINE_MULTIPLE, MarketCheck
from tco.core.outputs import OptionResult
from tco.foundation.formatting import sig, usd


def _price(value: float) -> str:
    """A list price as listed: ``$1.10``, ``$0.05``, ``$0.035``."""
    return f"${value:.2f}" if round(value, 2) == value else usd(value)


def against_the_market(sentences: list[str]) -> list[str]:
    """The market sentences as the verdict's text runs them on: the first introduced by "Against the market:".

    Parameters
    ----------
    sentences : list of str
        What :func:`market_sentences` says.

    Returns
    -------
    list of str
        The same sentences, the first lower-cased after the introduction.
    """
    if not sentences:
        return []
    first = sentences[0]
    return [f"Against the market: {first[0].lower()}{first[1:]}", *sentences[1:]]


def market_sentences(check: MarketCheck, results: dict[str, OptionResult], cheapest_option: str | None) -> list[str]:
    """At most three sentences: the cheapest owned option against the cheapest API price of the model, each option on a
    provider's own chips far above that provider's list price, and the cheapest option's fleet rented.

    Parameters
    ----------
    check : MarketCheck
        The scenario against the market.
    results : dict[str, OptionResult]
        Each option's result as Compare shows it (its devices).
    cheapest_option : str or None
        The option the verdict names as cheapest (None: no option meets the targets).

    Returns
    -------
    list of str
        The sentences, none where the catalog holds no price to set beside the fleets.
    """
    out = []
    best = check.cheapest
    if best is not None and cheapest_option is not None:
        owned = check.lcot_usd_per_mtok[cheapest_option]
        cached = "" if best.cached_input_usd_per_mtok is None else f", {_price(best.cached_input_usd_per_mtok)} cached"
        out.append(f"At {best.provider}'s list prices for {check.model} ({_price(best.input_usd_per_mtok)} "
                   f"per million input tokens{cached}, {_price(best.output_usd_per_mtok)} output; {best.date}) this "
                   f"workload's requests cost {usd(best.usd_per_mtok)} per million output tokens, and "
                   f"{check.holding[cheapest_option]} {cheapest_option} costs {sig(owned / best.usd_per_mtok, 2)}x that"
                   + (f": buying the tokens costs less than any fleet here, as long as {best.provider}'s latency "
                      "meets the targets." if owned > best.usd_per_mtok else "."))
    out += _out_of_line(check, results)
    rented = check.rented.get(cheapest_option) if cheapest_option is not None else None
    if rented is not None and check.holding[cheapest_option] == "owning":  # a rented option is priced so already
        pools = results[cheapest_option].pools
        by_device = {pools[role].device: rate for role, rate in rented.usd_per_device_hour.items()}
        rates = " and ".join(f"{usd(rate)} per {device}-hour" for device, rate in by_device.items())
        owned = check.year1_usd_per_mtok[cheapest_option]
        out.append(f"Rented around the clock at {rates}, the {cheapest_option} fleet would cost "
                   f"{usd(rented.usd_per_mtok)} per million output tokens in year 1, {sig(rented.usd_per_mtok / owned, 2)}x "
                   f"owning it that year ({usd(owned)}, depreciation and running costs).")
    return out


def _out_of_line(check: MarketCheck, results: dict[str, OptionResult]) -> list[str]:
    """One sentence per provider whose own chips an option runs on at more than
    :data:`~tco.analysis.market.OUT_OF_LINE_MULTIPLE` times the provider's list price for the model."""
    above: dict[str, list[str]] = {}
    quotes = {}
    for name, result in results.items():
        vendor = check.vendor_price(tuple(pool.device for pool in result.pools.values()))
        owned = check.lcot_usd_per_mtok[name]
        if vendor is not None and owned > OUT_OF_LINE_MULTIPLE * vendor.usd_per_mtok:
            quotes[vendor.provider] = vendor
            above.setdefault(vendor.provider, []).append(
                f"{name} ({usd(owned)}, {sig(owned / vendor.usd_per_mtok, 2)}x)")
    out = []
    for provider, options in above.items():
        vendor = quotes[provider]
        several = len(options) > 1
        listed = ", ".join(options[:-1]) + " and " + options[-1] if several else options[0]
        verb, fleets = ("cost", "these fleets'") if several else ("costs", "this fleet's")
        out.append(f"Owned, {listed} {verb} far more than {provider}'s own list price on its {vendor.served_on} "
                   f"({usd(vendor.usd_per_mtok)}): the catalog's chip price or {fleets} utilization is the likely "
                   "cause, unless the provider sells below cost.")
    return out
