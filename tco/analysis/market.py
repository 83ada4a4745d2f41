"""Against the market: an owned fleet's cost per token beside the published API prices of its model and beside the
same fleet rented by the GPU-hour (docs/model.md "Against the market").

Two reference prices, both per million output tokens of the scenario's own requests so that they read like the
fleets' levelized cost (``lcot_usd_per_mtok``):

- **buying the tokens**: a provider's list prices (``assumptions/market.yaml``) applied to one request of the
  workload, its prompt billed as input (the share that hits a prefix cache at the provider's cached-input price
  where it has one) and its output as output (:func:`api_usd_per_mtok_output`);
- **renting the fleet**: the option's year-1 fleet, every device paid by the hour at its catalog rental rate
  (``prices.rental_usd_per_hour``) around the clock, as a reserved fleet is, over the output tokens it serves
  (:func:`hourly_usd_per_mtok_output`). The rate covers the server, power and hosting of a cloud GPU; the option's
  KV links, software ports and NRE are not in it.

Reference figures only: nothing here is read back by the cost model, and nothing is drawn or swept by a study.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tco.core import names as named
from tco.core.outputs import OptionResult
from tco.core.serving.power import HOURS_PER_YEAR
from tco.foundation.plain_values import scalar
from tco.inputs.scenario import Scenario
from tco.inputs.scenario_flatten import market_name

SECONDS_PER_HOUR = 3600.0
TOKENS_PER_MTOK = 1e6
#: an owned option that costs more than this multiple of its own vendor's list price for the model is named as
#: out of line with the market (the catalog's chip price or the option's utilization is then the likely cause)
OUT_OF_LINE_MULTIPLE = 1.5


def api_usd_per_mtok_output(prompt_tokens, output_tokens, prefix_hit_fraction, input_usd_per_mtok,
                            output_usd_per_mtok, cached_input_usd_per_mtok=None):
    """What one request costs at an API's list prices, per million of its output tokens [USD/Mtok]:
    ``(P (1 - h) p_in + P h p_cached + O p_out) / O``.

    Parameters
    ----------
    prompt_tokens : float or ndarray [tokens]
        Prompt tokens per request ``P`` (cached or not).
    output_tokens : float or ndarray [tokens]
        Output tokens per request ``O`` (reasoning tokens included: they are billed as output).
    prefix_hit_fraction : float or ndarray [-]
        Share ``h`` of the prompt tokens a cache holds.
    input_usd_per_mtok, output_usd_per_mtok : float or ndarray [USD/Mtok]
        List prices of a million prompt and output tokens.
    cached_input_usd_per_mtok : float or ndarray or None [USD/Mtok]
        List price of a million prompt tokens read from the cache; None: they cost as any prompt token.

    Returns
    -------
    float or ndarray [USD/Mtok]
        USD per million output tokens.
    """
    cached = input_usd_per_mtok if cached_input_usd_per_mtok is None else cached_input_usd_per_mtok
    prompt_usd_per_mtok = (1.0 - prefix_hit_fraction) * input_usd_per_mtok + prefix_hit_fraction * cached
    return (prompt_tokens * prompt_usd_per_mtok + output_tokens * output_usd_per_mtok) / output_tokens


def hourly_usd_per_mtok_output(usd_per_hour, output_tokens_per_s):
    """A cost paid by the hour over the output tokens served meanwhile, per million [USD/Mtok]:
    ``usd_per_hour / 3600 / tokens_per_s x 1e6`` (a fleet's rent: ``sum(devices x rate)``; a year's cost: its
    ``USD/yr / 8760``).

    Parameters
    ----------
    usd_per_hour : float or ndarray [USD/h]
        The cost per hour.
    output_tokens_per_s : float or ndarray [tokens/s]
        Mean output tokens per second served.

    Returns
    -------
    float or ndarray [USD/Mtok]
        USD per million output tokens.
    """
    return usd_per_hour / SECONDS_PER_HOUR / output_tokens_per_s * TOKENS_PER_MTOK


@dataclass(frozen=True)
class ApiPrice:
    """One provider's list prices of the scenario's model and what the scenario's requests cost at them."""

    provider: str
    #: the catalog device the provider serves the model on (None: not stated, a GPU cloud)
    served_on: str | None
    input_usd_per_mtok: float
    output_usd_per_mtok: float
    cached_input_usd_per_mtok: float | None
    date: str
    source: str
    #: the scenario's requests at these prices [USD per million output tokens]
    usd_per_mtok: float


@dataclass(frozen=True)
class RentedFleet:
    """An option's year-1 fleet rented by the device-hour."""

    option: str
    #: USD per device-hour by pool role, from the catalog (``devices.<id>.prices.rental_usd_per_hour``)
    usd_per_device_hour: dict[str, float]
    devices: dict[str, float]
    #: [USD per million output tokens]
    usd_per_mtok: float


@dataclass(frozen=True)
class MarketCheck:
    """The scenario's fleets against the market: API prices of its model, each option owned and rented."""

    model: str
    prices: tuple[ApiPrice, ...]
    #: each option's levelized cost [USD per million output tokens], as it holds its fleet (owned or rented)
    lcot_usd_per_mtok: dict[str, float]
    #: each option's year-1 accounting cost (depreciation and running costs) over its year-1 output tokens
    #: [USD per million output tokens]: the figure a year-1 rent of the same fleet compares with
    year1_usd_per_mtok: dict[str, float]
    #: the options whose every device has a rental rate
    rented: dict[str, RentedFleet]
    #: the devices of an option without a rental rate in the catalog, by option
    unrented: dict[str, tuple[str, ...]]
    #: how each option holds its fleet: ``owning``, ``renting`` (every pool rented) or ``owning and renting``
    holding: dict[str, str]

    @property
    def cheapest(self) -> ApiPrice | None:
        """The quote at which the scenario's requests cost least (None without quotes)."""
        return min(self.prices, key=lambda p: p.usd_per_mtok, default=None)

    def vendor_price(self, result_devices: tuple[str, ...]) -> ApiPrice | None:
        """The cheapest quote of a provider that serves the model on one of ``result_devices`` (its own chips)."""
        own = [p for p in self.prices if p.served_on is not None and p.served_on in result_devices]
        return min(own, key=lambda p: p.usd_per_mtok, default=None)

    def to_dict(self) -> dict:
        """The ``market`` block of ``tco compare --format json`` (docs/outputs.md)."""
        return {"model": self.model, "basis": "USD per million output tokens of the scenario's requests",
                "api_prices": [vars(p) for p in self.prices],
                "cheapest_api": None if self.cheapest is None else self.cheapest.provider,
                "lcot_usd_per_mtok": dict(self.lcot_usd_per_mtok),
                "year1_usd_per_mtok": dict(self.year1_usd_per_mtok),
                "rented": {name: vars(r) for name, r in self.rented.items()},
                "no_rental_rate": {name: list(devices) for name, devices in self.unrented.items()},
                "holding": dict(self.holding)}


def market_check(scenario: Scenario, results: Mapping[str, OptionResult]) -> MarketCheck:
    """The scenario's options, owned and rented, beside its model's API prices, at base values.

    Parameters
    ----------
    scenario : Scenario
        The scenario (its workload, its model's quotes and the devices' rental rates in ``reference``).
    results : Mapping[str, OptionResult]
        Each option's result as Compare shows it (a roadmap baseline on the generation it runs at t = 0).

    Returns
    -------
    MarketCheck
        Quotes priced on the scenario's requests, each option's cost per million output tokens as it holds its fleet
        and with its fleet rented.
    """
    values, reference = scenario.values(), scenario.reference
    prompt, output = values[named.workload.prompt_tokens], values[named.workload.output_tokens]
    hits = values.get(named.workload.prefix_hit_fraction, 0.0)
    model = scenario.structure.model
    prices = []
    for quote in scenario.api_quotes:
        prefix = market_name(model, quote.provider)
        figures = {key: reference[f"{prefix}.{key}"].value for key in ("input_usd_per_mtok", "output_usd_per_mtok")}
        cached_usd = None if quote.cached_input_usd_per_mtok is None else \
            reference[f"{prefix}.cached_input_usd_per_mtok"].value
        prices.append(ApiPrice(quote.provider, quote.served_on, figures["input_usd_per_mtok"],
                               figures["output_usd_per_mtok"], cached_usd, quote.output_usd_per_mtok.date,
                               quote.output_usd_per_mtok.source,
                               float(api_usd_per_mtok_output(prompt, output, hits, figures["input_usd_per_mtok"],
                                                             figures["output_usd_per_mtok"], cached_usd))))
    lcot, year1, rented, unrented = {}, {}, {}, {}
    for name, result in results.items():
        lcot[name] = scalar(result.lcot_usd_per_mtok)
        tokens_per_s = scalar(result.tokens_per_s)
        year1[name] = float(hourly_usd_per_mtok_output(scalar(result.accounting_cost_usd_per_year) / HOURS_PER_YEAR,
                                                       tokens_per_s))
        rates = rental_rates(scenario, name, result)
        missing = tuple(dict.fromkeys(pool.device for role, pool in result.pools.items() if role not in rates))
        if missing:
            unrented[name] = missing
            continue
        devices = {role: scalar(pool.sizing.devices) for role, pool in result.pools.items()}
        per_hour = sum(devices[role] * rates[role] for role in devices)
        rented[name] = RentedFleet(name, rates, devices, float(hourly_usd_per_mtok_output(per_hour, tokens_per_s)))
    holding = {}
    for name, result in results.items():
        kinds = {pool.rented for pool in result.pools.values()}
        holding[name] = "renting" if kinds == {True} else "owning" if kinds == {False} else "owning and renting"
    return MarketCheck(model, tuple(prices), lcot, year1, rented, unrented, holding)


def rental_rates(scenario: Scenario, name: str, result: OptionResult) -> dict[str, float]:
    """What renting each pool of option ``name`` costs per device-hour [USD/h], by role: a rented pool's own rate times
    its paid share (its parameters), any other pool's device at its catalog rate; a pool whose device has none is left
    out.

    Parameters
    ----------
    scenario : Scenario
        The scenario (its values and the catalog's rates in ``reference``).
    name : str
        The option.
    result : OptionResult
        Its result as Compare shows it (the device each pool runs).

    Returns
    -------
    dict[str, float] [USD/h]
        By pool role.
    """
    values, reference, option = scenario.values(), scenario.reference, scenario.structure.option(name)
    rates = {}
    for role, pool in result.pools.items():
        held = option.pool(role)
        if held.rented:
            rates[role] = values[held.rental_param] * values[held.rental_share_param]
        elif (rate := f"devices.{pool.device}.prices.rental_usd_per_hour") in reference:
            rates[role] = reference[rate].value
    return rates
