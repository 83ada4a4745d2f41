"""Evaluate every cluster option of a training scenario from its named parameters, vectorized.

``evaluate_training(structure, values)`` returns, per option, a
:class:`~tco.core.training.results.TrainingResult` (its outputs: :data:`~tco.core.training.results.TRAINING_OUTPUTS`):
the step time of the fastest parallel shape that fits (:mod:`tco.core.training.step`), the goodput
after failures and checkpoints (:mod:`tco.core.training.goodput`), the time to train the token
budget, and the cost of the run on an owned cluster: each device costs its equivalent annual
capital charge plus energy, data hall and maintenance for as long as the run holds it. A run
that never ends (no shape fits, or goodput 0) takes infinite time and costs and uses infinitely
much (every cost line and the energy), at 0 tokens per joule, and is not feasible.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tco.core import names as named
from tco.core.fleet import siting
from tco.core.money import finance
from tco.core.names import device_param, model_param, tier_param
from tco.core.serving import power
from tco.core.serving.sizing import SECONDS_PER_YEAR
from tco.core.training import goodput
from tco.core.training import step as training
from tco.core.training.results import TrainingChallenger, TrainingResult


@dataclass(frozen=True)
class TrainingOption:
    """A cluster option: ``devices`` of one device type (the count is the parameter
    ``options.<name>.cluster_devices``)."""

    name: str
    device: str
    tiers: tuple[str, ...]
    specialized: bool = False


@dataclass(frozen=True)
class TrainingStructure:
    """The discrete part of a training scenario."""

    model: str
    options: tuple[TrainingOption, ...]
    baseline: str
    site: str | None = None  # where the cluster sits (assumptions/sites.yaml); None: the economics defaults

    def option(self, name: str) -> TrainingOption:
        """The training option (a device and its cluster) named ``name``.

        Parameters
        ----------
        name : str
            Name of the option in the training scenario.

        Returns
        -------
        TrainingOption
            Its device, memory tiers and whether the device is specialized.
        """
        return next(o for o in self.options if o.name == name)

    @property
    def challengers(self) -> tuple[TrainingOption, ...]:
        """The training options compared with the baseline cluster, in the file's order."""
        return tuple(o for o in self.options if o.name != self.baseline)


def cluster_param(option: str) -> str:
    """Name of an option's cluster size parameter.

    Parameters
    ----------
    option : str
        The option's name.

    Returns
    -------
    str
        ``options.<option>.cluster_devices``.
    """
    return f"options.{option}.cluster_devices"


def training_peak_flops(get, device: str, compute_bits, experts_routed):
    """Achievable dense FLOP/s of one device in training.

    The 16-bit peak times the class's training compute efficiency, times the class's
    realized FP8 speedup when training in 8 bits (only the matrix multiplies run in FP8;
    SemiAnalysis measured 1.46x on H100 for GPT-3 175B, Dec 2024), times the mixture-of-
    experts efficiency for a routed model (grouped expert GEMMs, routing and imbalance).

    Parameters
    ----------
    get : Callable[[str], ndarray]
        Reads a named parameter as an array.
    device : str
        The device id.
    compute_bits : float or ndarray [bits]
        Arithmetic width of the training GEMMs.
    experts_routed : float or ndarray [experts]
        Routed experts per MoE layer (1 for dense).

    Returns
    -------
    ndarray [FLOP/s]
        Achievable training FLOP/s per device.

    References
    ----------
    [semianalysis-h100-gb200-training] the realized FP8 speedup on H100.
    """
    peak = get(device_param(device, "peak_flops_16bit")) * get(device_param(device, "training_compute_efficiency"))
    peak = peak * np.where(compute_bits <= 8, get(device_param(device, "fp8_training_speedup")), 1.0)
    return peak * np.where(experts_routed > 1, get(named.training.moe_compute_efficiency), 1.0)


@dataclass(frozen=True)
class SiteEconomics:
    """Where a cluster sits: ``electricity_usd_per_kwh`` [USD/kWh], ``pue`` [-] and the data hall's
    ``facility_usd_per_kw_month`` [USD/kW-month]."""

    electricity_usd_per_kwh: np.ndarray
    pue: np.ndarray
    facility_usd_per_kw_month: np.ndarray


@dataclass(frozen=True)
class DeviceCosts:
    """Yearly cost of owning and running one device and its parts, by line [USD/yr]."""

    capex_usd_per_year: np.ndarray
    energy_usd_per_year: np.ndarray
    facility_usd_per_year: np.ndarray
    maintenance_usd_per_year: np.ndarray

    @property
    def running_usd_per_year(self) -> np.ndarray:
        """Energy, data hall and maintenance: what the device costs once it is paid for [USD/yr]."""
        return self.energy_usd_per_year + self.facility_usd_per_year + self.maintenance_usd_per_year


def site_economics(get, site: str | None) -> SiteEconomics:
    """Electricity price, PUE and data-hall rate where a cluster sits.

    Without a site: the scenario's economics (colocation rate per kW-month). At a site of
    ``assumptions/sites.yaml``: its power price and PUE, and its construction cost
    annualized over the facility life (:func:`tco.core.fleet.siting.built_facility_usd_per_kw_month`).

    Parameters
    ----------
    get : Callable[[str], ndarray]
        Reads a named parameter as an array.
    site : str or None
        The site id, or None for the scenario's economics.

    Returns
    -------
    SiteEconomics
        The electricity price [USD/kWh], PUE [-] and data-hall rate [USD/kW-month].
    """
    if site is None:
        return SiteEconomics(get(named.economics.electricity_usd_per_kwh), get(named.economics.pue),
                             get(named.economics.facility_usd_per_kw_month))
    return SiteEconomics(get(f"sites.{site}.electricity_usd_per_kwh"), get(f"sites.{site}.pue"),
                         siting.built_facility_usd_per_kw_month(get(f"sites.{site}.construction_usd_per_w"),
                                                                get("sites.facility_life_years"),
                                                                get(named.economics.discount_rate)))


def device_usd_per_year(get, device: str, power_w, site: str | None = None) -> DeviceCosts:
    """Yearly cost of owning and running one device and its parts.

    Capital: ``(price + system) (1 - rv (1+r)^-L) / annuity(r, L)``, the level yearly
    charge that repays the hardware over its life ``L`` net of the residual value ``rv``;
    energy at ``power_w`` with PUE; data hall on the provisioned ``TDP + host`` power;
    maintenance as a share of the hardware (economics of the ``site``, :func:`site_economics`).

    Parameters
    ----------
    get : Callable[[str], ndarray]
        Reads a named parameter as an array.
    device : str
        The device id (its price, life, residual value and power).
    power_w : float or ndarray [W]
        Mean IT power of the device and its host share while training.
    site : str or None
        The site id, or None for the scenario's economics.

    Returns
    -------
    DeviceCosts
        The capital charge, energy, data hall and maintenance [USD/yr].

    References
    ----------
    [brealey-myers-allen] capital recovery (equivalent annual cost), ch. 6.
    """
    place = site_economics(get, site)
    rate = get(named.economics.discount_rate)
    unit = get(device_param(device, "price_usd")) + get(device_param(device, "system_overhead_usd"))
    life = get(device_param(device, "useful_life_years"))
    residual = get(device_param(device, "residual_value_fraction"))
    capital = finance.capital_recovery_usd_per_year(unit, rate, life, residual)
    energy = power.energy_cost_usd_per_year(power_w, place.pue, place.electricity_usd_per_kwh)
    provisioned = get(device_param(device, "tdp_w")) + get(device_param(device, "host_power_w"))
    facility = power.facility_cost_usd_per_year(provisioned, place.facility_usd_per_kw_month)
    maintenance = get(named.economics.maintenance_fraction_per_year) * unit
    return DeviceCosts(capital, energy, facility, maintenance)


def _evaluate_option(structure: TrainingStructure, option: TrainingOption, get) -> TrainingResult:
    m, d = structure.model, option.device
    bits = get(named.training.compute_bits)
    devices = get(cluster_param(option.name))
    inputs = training.StepInputs(
        devices=devices, params_total=get(model_param(m, "params_total")), params_active=get(model_param(m, "params_active")),
        layers=get(model_param(m, "layers")), hidden=get(model_param(m, "hidden_size")),
        attention_dim=get(model_param(m, "attention_dim")), experts_routed=get(model_param(m, "experts_routed")),
        experts_per_token=get(model_param(m, "experts_per_token")), seq_len=get(named.training.seq_len_tokens),
        global_batch_tokens=get(named.training.global_batch_tokens), micro_batch_seqs=get(named.training.micro_batch_sequences),
        peak_flops=training_peak_flops(get, d, bits, get(model_param(m, "experts_routed"))),
        comm_overlap=get(device_param(d, "comm_overlap")),
        memory_bytes=sum(get(tier_param(d, t, "capacity_bytes")) for t in option.tiers),
        memory_usable_fraction=get(device_param(d, "memory_usable_fraction")),
        chip_to_chip_bytes_per_s=get(device_param(d, "chip_to_chip_bandwidth_bytes_per_s")),
        scale_up_domain_devices=get(device_param(d, "scale_up_domain_devices")),
        scale_out_bytes_per_s=get(device_param(d, "scale_out_bandwidth_bytes_per_s")),
        latency_s=get(device_param(d, "sync_latency_s")),
        weight_grad_bytes_per_param=get(named.training.weight_grad_bytes_per_param),
        optimizer_bytes_per_param=get(named.training.optimizer_bytes_per_param),
        gradient_bytes_per_param=get(named.training.gradient_bytes_per_param),
    )
    shape = training.best_shape(training.step_terms(inputs))
    step_s = shape.step_s
    tokens_per_s = get(named.training.global_batch_tokens) / step_s
    model_flops = training.model_flops_per_token(inputs.params_active, inputs.layers, inputs.attention_dim, inputs.seq_len)
    per_device_flops = model_flops * tokens_per_s / devices
    mtbi = goodput.mean_time_between_interruptions_s(get(named.training.failure_rate_per_device_day), devices)
    checkpoint = goodput.checkpoint_write_s(inputs.params_total, get(named.training.checkpoint_bytes_per_param),
                                            get(named.training.storage_write_bytes_per_s))
    share = goodput.goodput_fraction(mtbi, get(named.training.restart_s), checkpoint)
    # the run never ends where no shape fits (step infinite, 0 tokens/s) or goodput is 0: its time, every cost line
    # and its energy are infinite ("never" in the workbook), its tokens per joule 0; no 0 x inf on the way
    goodput_tokens_per_s = tokens_per_s * share
    ends = goodput_tokens_per_s > 0
    wall_s = np.where(ends, get(named.training.tokens) / np.where(ends, goodput_tokens_per_s, 1.0), np.inf)
    device_w = power.device_power_w(get(device_param(d, "idle_power_w")), get(device_param(d, "tdp_w")),
                                    get(named.training.power_utilization), get(device_param(d, "host_power_w")))
    yearly = device_usd_per_year(get, d, device_w, structure.site)
    run_s = np.where(ends, wall_s, 0.0)

    def over_the_run(usd_per_year):
        return np.where(ends, devices * usd_per_year * run_s / SECONDS_PER_YEAR, np.inf)

    capex = over_the_run(yearly.capex_usd_per_year)
    energy = over_the_run(yearly.energy_usd_per_year)
    facility = over_the_run(yearly.facility_usd_per_year)
    maintenance = over_the_run(yearly.maintenance_usd_per_year)
    cost = capex + energy + facility + maintenance
    energy_j = np.where(ends, devices * device_w * run_s, np.inf)
    return TrainingResult(
        time_to_train_s=wall_s, time_to_train_days=wall_s / goodput.SECONDS_PER_DAY, cost_per_run_usd=cost,
        usd_per_mtok_trained=cost / get(named.training.tokens) * 1e6, capex_usd=capex, energy_usd=energy, facility_usd=facility,
        maintenance_usd=maintenance, step_s=step_s, tokens_per_s=tokens_per_s, tokens_per_s_per_device=tokens_per_s / devices,
        model_tflops_per_device=per_device_flops / 1e12, mfu=per_device_flops / get(device_param(d, "peak_flops_16bit")),
        goodput=share, mtbi_s=mtbi, tokens_per_joule=get(named.training.tokens) / energy_j, energy_mwh=energy_j / 3.6e9,
        power_w=devices * device_w, devices=devices, memory_bytes_per_device=shape.memory_bytes_per_device,
        tensor_parallel=shape.tensor_parallel, pipeline_parallel=shape.pipeline_parallel,
        virtual_stages=shape.virtual_stages, expert_parallel=shape.expert_parallel, data_parallel=shape.data_parallel,
        recompute=shape.recompute, fsdp=shape.fsdp, bubble_fraction=shape.bubble_fraction, bound=shape.bound,
        feasible=(np.isfinite(wall_s) & (shape.shape_index >= 0)).astype(float),
        shape_index=shape.shape_index, devices_used=shape.devices_used, microbatches=shape.microbatches,
        compute_s=shape.compute_s, tensor_parallel_s=shape.tensor_parallel_s, expert_parallel_s=shape.expert_parallel_s,
        data_parallel_s=shape.data_parallel_s, pipeline_s=shape.pipeline_s,
    ).broadcast()


def evaluate_training(structure: TrainingStructure, values: Mapping[str, object]) -> dict[str, TrainingResult]:
    """Evaluate every option of a training scenario.

    Parameters
    ----------
    structure : TrainingStructure
        The scenario's options (a device and a cluster each), baseline and site.
    values : Mapping[str, object]
        The named parameter values (scalars or arrays that broadcast).

    Returns
    -------
    dict[str, TrainingResult] [units of TRAINING_OUTPUTS]
        Each option's result by name, every field broadcast to one shape.
    """
    def get(name):
        return np.asarray(values[name], dtype=float)

    return {option.name: _evaluate_option(structure, option, get) for option in structure.options}


def training_comparison(structure: TrainingStructure,
                        results: Mapping[str, TrainingResult]) -> dict[str, TrainingChallenger]:
    """Each challenger against the baseline: cost and time ratios, USD saved per run.

    Parameters
    ----------
    structure : TrainingStructure
        The scenario's options and baseline.
    results : Mapping[str, TrainingResult]
        :func:`evaluate_training`'s result.

    Returns
    -------
    dict[str, TrainingChallenger] [-, -, USD]
        By challenger: ``cost_ratio`` [-], ``time_ratio`` [-], ``usd_saved_per_run`` [USD].
    """
    base = results[structure.baseline]
    out = {}
    for option in structure.challengers:
        r = results[option.name]
        out[option.name] = TrainingChallenger(cost_ratio=r.cost_per_run_usd / base.cost_per_run_usd,
                                              time_ratio=r.time_to_train_s / base.time_to_train_s,
                                              usd_saved_per_run=base.cost_per_run_usd - r.cost_per_run_usd)
    return out
