"""Evaluate every cluster option of a training scenario from its named parameters, vectorized.

``evaluate_training(structure, values)`` returns, per option, a flat mapping of output
names (:data:`TRAINING_OUTPUTS`) to arrays: the step time of the fastest parallel shape
that fits (:mod:`tco.core.training.step`), the goodput after failures and checkpoints
(:mod:`tco.core.training.goodput`), the time to train the token budget, and the cost of the run
on an owned cluster: each device costs its equivalent annual capital charge plus energy,
data hall and maintenance for as long as the run holds it. A run that never ends (no shape
fits, or goodput 0) takes infinite time and costs and uses infinitely much (every cost line
and the energy), at 0 tokens per joule, and is not feasible.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tco.core.fleet import siting
from tco.core.money import finance
from tco.core.names import device_param, model_param, tier_param
from tco.core.serving import power
from tco.core.serving.sizing import SECONDS_PER_YEAR
from tco.core.training import goodput
from tco.core.training import step as training


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


#: output name -> (unit, meaning); every training option result carries these keys
TRAINING_OUTPUTS: dict[str, tuple[str, str]] = {
    "time_to_train_s": ("s", "wall-clock time to train the token budget, failures and checkpoints included"),
    "time_to_train_days": ("d", "time_to_train_s / 86400"),
    "cost_per_run_usd": ("USD", "owned-cluster cost of holding the devices for the run"),
    "usd_per_mtok_trained": ("USD per million training tokens", "cost_per_run_usd / token budget x 1e6"),
    "capex_usd": ("USD", "equivalent annual capital charge of the devices x run time"),
    "energy_usd": ("USD", "electricity of devices and hosts over the run (PUE included)"),
    "facility_usd": ("USD", "data hall per provisioned kW over the run"),
    "maintenance_usd": ("USD", "maintenance share of hardware over the run"),
    "step_s": ("s", "time of one optimizer step on the chosen parallel shape"),
    "tokens_per_s": ("tokens/s", "training tokens per second of the cluster while it runs"),
    "tokens_per_s_per_device": ("tokens/s", "tokens_per_s / devices"),
    "model_tflops_per_device": ("TFLOP/s", "model FLOPs per second per device (no recomputation counted)"),
    "mfu": ("0-1", "model FLOPs utilization against the 16-bit dense peak"),
    "goodput": ("0-1", "share of wall-clock time that advances training"),
    "mtbi_s": ("s", "mean time between job interruptions"),
    "tokens_per_joule": ("tokens/J", "training tokens per joule of IT power over the run"),
    "energy_mwh": ("MWh", "IT energy of the run (devices and hosts, PUE excluded)"),
    "power_w": ("W", "IT power of the cluster while training"),
    "devices": ("devices", "devices in the cluster"),
    "memory_bytes_per_device": ("B", "weights, gradients, optimizer shard and activations per device"),
    "tensor_parallel": ("devices", "tensor-parallel degree of the chosen shape"),
    "pipeline_parallel": ("stages", "pipeline-parallel degree of the chosen shape"),
    "virtual_stages": ("stages", "interleaved virtual stages per pipeline rank"),
    "expert_parallel": ("devices", "expert-parallel degree (1 for a dense model)"),
    "data_parallel": ("replicas", "data-parallel degree"),
    "recompute": ("0-1", "share of layers whose activations are fully recomputed to fit memory"),
    "fsdp": ("bool", "1 when weights, gradients and optimizer state are fully sharded over data parallel (ZeRO-3)"),
    "bubble_fraction": ("0-1", "pipeline fill and drain added to the step"),
    "bound": ("code", "what limits the step: 0 compute, 1 pipeline bubble, 2 TP, 3 EP, 4 DP, 5 PP traffic"),
    "feasible": ("bool", "1 when a parallel shape fits memory and the run finishes"),
}


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
    return peak * np.where(experts_routed > 1, get("training.moe_compute_efficiency"), 1.0)


def site_economics(get, site: str | None) -> dict[str, np.ndarray]:
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
    dict[str, ndarray] [USD/kWh, -, USD/kW-month]
        ``electricity_usd_per_kwh`` [USD/kWh], ``pue`` [-] and ``facility_usd_per_kw_month``
        [USD/kW-month].
    """
    if site is None:
        return {k: get(f"economics.{k}") for k in ("electricity_usd_per_kwh", "pue", "facility_usd_per_kw_month")}
    return {"electricity_usd_per_kwh": get(f"sites.{site}.electricity_usd_per_kwh"), "pue": get(f"sites.{site}.pue"),
            "facility_usd_per_kw_month": siting.built_facility_usd_per_kw_month(
                get(f"sites.{site}.construction_usd_per_w"), get("sites.facility_life_years"), get("economics.discount_rate"))}


def device_usd_per_year(get, device: str, power_w, site: str | None = None):
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
    dict[str, ndarray] [USD/yr]
        The parts ``capex``, ``energy``, ``facility`` and ``maintenance``.

    References
    ----------
    [brealey-myers-allen] capital recovery (equivalent annual cost), ch. 6.
    """
    place = site_economics(get, site)
    rate = get("economics.discount_rate")
    unit = get(device_param(device, "price_usd")) + get(device_param(device, "system_overhead_usd"))
    life = get(device_param(device, "useful_life_years"))
    residual = get(device_param(device, "residual_value_fraction"))
    capital = finance.capital_recovery_usd_per_year(unit, rate, life, residual)
    energy = power.energy_cost_usd_per_year(power_w, place["pue"], place["electricity_usd_per_kwh"])
    provisioned = get(device_param(device, "tdp_w")) + get(device_param(device, "host_power_w"))
    facility = power.facility_cost_usd_per_year(provisioned, place["facility_usd_per_kw_month"])
    maintenance = get("economics.maintenance_fraction_per_year") * unit
    return {"capex": capital, "energy": energy, "facility": facility, "maintenance": maintenance}


def _evaluate_option(structure: TrainingStructure, option: TrainingOption, get) -> dict[str, np.ndarray]:
    m, d = structure.model, option.device
    bits = get("training.compute_bits")
    devices = get(cluster_param(option.name))
    inputs = training.StepInputs(
        devices=devices, params_total=get(model_param(m, "params_total")), params_active=get(model_param(m, "params_active")),
        layers=get(model_param(m, "layers")), hidden=get(model_param(m, "hidden_size")),
        attention_dim=get(model_param(m, "attention_dim")), experts_routed=get(model_param(m, "experts_routed")),
        experts_per_token=get(model_param(m, "experts_per_token")), seq_len=get("training.seq_len_tokens"),
        global_batch_tokens=get("training.global_batch_tokens"), micro_batch_seqs=get("training.micro_batch_sequences"),
        peak_flops=training_peak_flops(get, d, bits, get(model_param(m, "experts_routed"))),
        comm_overlap=get(device_param(d, "comm_overlap")),
        memory_bytes=sum(get(tier_param(d, t, "capacity_bytes")) for t in option.tiers),
        memory_usable_fraction=get(device_param(d, "memory_usable_fraction")),
        chip_to_chip_bytes_per_s=get(device_param(d, "chip_to_chip_bandwidth_bytes_per_s")),
        scale_up_domain_devices=get(device_param(d, "scale_up_domain_devices")),
        scale_out_bytes_per_s=get(device_param(d, "scale_out_bandwidth_bytes_per_s")),
        latency_s=get(device_param(d, "sync_latency_s")),
        weight_grad_bytes_per_param=get("training.weight_grad_bytes_per_param"),
        optimizer_bytes_per_param=get("training.optimizer_bytes_per_param"),
        gradient_bytes_per_param=get("training.gradient_bytes_per_param"),
    )
    shape = training.best_shape(training.step_terms(inputs))
    step_s = shape.pop("step_s")
    tokens_per_s = get("training.global_batch_tokens") / step_s
    model_flops = training.model_flops_per_token(inputs.params_active, inputs.layers, inputs.attention_dim, inputs.seq_len)
    per_device_flops = model_flops * tokens_per_s / devices
    mtbi = goodput.mean_time_between_interruptions_s(get("training.failure_rate_per_device_day"), devices)
    checkpoint = goodput.checkpoint_write_s(inputs.params_total, get("training.checkpoint_bytes_per_param"),
                                            get("training.storage_write_bytes_per_s"))
    share = goodput.goodput_fraction(mtbi, get("training.restart_s"), checkpoint)
    # the run never ends where no shape fits (step infinite, 0 tokens/s) or goodput is 0: its time, every cost line
    # and its energy are infinite ("never" in the workbook), its tokens per joule 0; no 0 x inf on the way
    goodput_tokens_per_s = tokens_per_s * share
    ends = goodput_tokens_per_s > 0
    wall_s = np.where(ends, get("training.tokens") / np.where(ends, goodput_tokens_per_s, 1.0), np.inf)
    device_w = power.device_power_w(get(device_param(d, "idle_power_w")), get(device_param(d, "tdp_w")),
                                    get("training.power_utilization"), get(device_param(d, "host_power_w")))
    yearly = device_usd_per_year(get, d, device_w, structure.site)
    run_s = np.where(ends, wall_s, 0.0)
    parts = {f"{k}_usd": np.where(ends, devices * v * run_s / SECONDS_PER_YEAR, np.inf) for k, v in yearly.items()}
    cost = sum(parts.values())
    energy_j = np.where(ends, devices * device_w * run_s, np.inf)
    out = {
        **parts, **shape,
        "time_to_train_s": wall_s, "time_to_train_days": wall_s / goodput.SECONDS_PER_DAY, "cost_per_run_usd": cost,
        "usd_per_mtok_trained": cost / get("training.tokens") * 1e6, "step_s": step_s, "tokens_per_s": tokens_per_s,
        "tokens_per_s_per_device": tokens_per_s / devices, "model_tflops_per_device": per_device_flops / 1e12,
        "mfu": per_device_flops / get(device_param(d, "peak_flops_16bit")), "goodput": share, "mtbi_s": mtbi,
        "tokens_per_joule": get("training.tokens") / energy_j, "energy_mwh": energy_j / 3.6e9,
        "power_w": devices * device_w, "devices": devices,
        "feasible": (np.isfinite(wall_s) & (shape["shape_index"] >= 0)).astype(float),
    }
    result_shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    return {k: np.broadcast_to(np.asarray(v, float), result_shape) for k, v in out.items()}


def evaluate_training(structure: TrainingStructure, values: Mapping[str, object]) -> dict[str, dict[str, np.ndarray]]:
    """Evaluate every option of a training scenario.

    Parameters
    ----------
    structure : TrainingStructure
        The scenario's options (a device and a cluster each), baseline and site.
    values : Mapping[str, object]
        The named parameter values (scalars or arrays that broadcast).

    Returns
    -------
    dict[str, dict[str, ndarray]] [units of TRAINING_OUTPUTS]
        ``{option name: {output name: array}}``, each in its unit of :data:`TRAINING_OUTPUTS`.
    """
    def get(name):
        return np.asarray(values[name], dtype=float)

    return {option.name: _evaluate_option(structure, option, get) for option in structure.options}


def training_comparison(structure: TrainingStructure, results: Mapping[str, dict]) -> dict[str, dict[str, np.ndarray]]:
    """Each challenger against the baseline: cost and time ratios, USD saved per run.

    Parameters
    ----------
    structure : TrainingStructure
        The scenario's options and baseline.
    results : Mapping[str, dict]
        :func:`evaluate_training`'s result.

    Returns
    -------
    dict[str, dict[str, ndarray]] [-, -, USD]
        By challenger: ``cost_ratio`` [-], ``time_ratio`` [-], ``usd_saved_per_run`` [USD].
    """
    base = results[structure.baseline]
    out = {}
    for option in structure.challengers:
        r = results[option.name]
        out[option.name] = {
            "cost_ratio": r["cost_per_run_usd"] / base["cost_per_run_usd"],
            "time_ratio": r["time_to_train_s"] / base["time_to_train_s"],
            "usd_saved_per_run": base["cost_per_run_usd"] - r["cost_per_run_usd"],
        }
    return out
