"""The typed results of a training run: per cluster option, per challenger, per retired device.

Like the inference results (:mod:`tco.core.outputs`), every output is a field whose metadata is
its row of the output table (:func:`tco.core.outputs.output`: unit, meaning, label, how to show
it): :data:`TRAINING_OUTPUTS`, :data:`TRAINING_COMPARISON_OUTPUTS` and :data:`SECOND_LIFE_OUTPUTS`
are built from the fields. The options, challenger and second-life tables of ``tco compare`` and
the app, the options' JSON and the app's cost chart read these tables instead of restating units or labels.

Every field is a numpy array; all fields of one :class:`TrainingResult` broadcast to one shape
(one scenario or a million draws). ``mfu``, ``goodput``, ``recompute`` and ``bubble_fraction``
are fractions [-] (their names are the public JSON keys and stay unsuffixed).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from tco.core.outputs import OutputSpec, output, output_table
from tco.core.training.goodput import SECONDS_PER_DAY

Array = np.ndarray


@dataclass(frozen=True, kw_only=True)
class TrainingResult:
    """One cluster option of a training scenario (:func:`tco.core.training.run.evaluate_training`).

    A run that never ends (no shape fits, or goodput 0) takes infinite time, costs and uses
    infinitely much (every cost line and the energy), at 0 tokens per joule, and is not feasible.
    The fields after ``feasible`` are terms of the chosen shape's step, not outputs (no table row): the
    workbook recomputes and checks them.
    """

    time_to_train_s: Array = output("s", "wall-clock time to train the token budget, failures and checkpoints included",
                                    "time to train", "days", scale=1 / SECONDS_PER_DAY, fmt=",.3g")
    time_to_train_days: Array = output("d", "the time to train in days (time_to_train_s / 86400)", "time to train", "days",
                                       fmt=",.3g")
    cost_per_run_usd: Array = output("USD", "owned-cluster cost of holding the devices for the run (the sum of the "
                                     "cost lines)", "cost per run", "M USD", scale=1e-6, fmt=",.3g")
    usd_per_mtok_trained: Array = output("USD/Mtok", "cost_per_run_usd per million tokens of the training budget", "cost",
                                         "USD per million training tokens", fmt=",.3g")
    capex_usd: Array = output("USD", "equivalent annual capital charge of the devices x run time",
                              "hardware (annual capital charge)", "M USD", scale=1e-6, fmt=",.3g", cost_line=True)
    energy_usd: Array = output("USD", "electricity of devices and hosts over the run (PUE included)", "energy", "M USD",
                               scale=1e-6, fmt=",.3g", cost_line=True)
    facility_usd: Array = output("USD", "data hall per provisioned kW over the run", "facility", "M USD", scale=1e-6,
                                 fmt=",.3g", cost_line=True)
    maintenance_usd: Array = output("USD", "maintenance share of hardware over the run", "maintenance", "M USD", scale=1e-6,
                                    fmt=",.3g", cost_line=True)
    step_s: Array = output("s", "time of one optimizer step on the chosen parallel shape", "step time", "s", fmt=",.3g")
    tokens_per_s: Array = output("tokens/s", "training tokens per second of the cluster while it runs",
                                 "training tokens per second", "", fmt=",.4g")
    tokens_per_s_per_device: Array = output("tokens/s", "tokens_per_s / devices", "training tokens/s per device", "",
                                            fmt=",.0f")
    model_tflops_per_device: Array = output("TFLOP/s", "model FLOPs per second per device (no recomputation counted)",
                                            "model FLOP rate per device", "TFLOP/s", fmt=",.4g")
    mfu: Array = output("fraction", "model FLOPs utilization against the 16-bit dense peak",
                        "model FLOPs utilization (16-bit peak)", "%", scale=100.0, fmt=".1f")
    goodput: Array = output("fraction", "share of wall-clock time that advances training",
                            "goodput after failures and checkpoints", "%", scale=100.0, fmt=".1f")
    mtbi_s: Array = output("s", "mean time between job interruptions", "mean time between interruptions", "h",
                           scale=1 / 3600, fmt=",.3g")
    tokens_per_joule: Array = output("tokens/J", "training tokens per joule of IT power over the run",
                                     "training tokens per joule (IT power)", "", fmt=",.3g")
    energy_mwh: Array = output("MWh", "IT energy of the run (devices and hosts, PUE excluded)", "IT energy of the run", "MWh",
                               fmt=",.0f")
    power_w: Array = output("W", "IT power of the cluster while training", "IT power of the cluster", "MW", scale=1e-6,
                            fmt=",.3g")
    devices: Array = output("devices", "devices in the cluster", "devices", "", fmt=",.0f")
    memory_bytes_per_device: Array = output("B", "weights, gradients, optimizer shard and activations per device",
                                            "memory per device", "GB", scale=1e-9, fmt=",.1f")
    tensor_parallel: Array = output("devices", "tensor-parallel degree of the chosen shape", "tensor parallel", "",
                                    fmt=",.0f")
    pipeline_parallel: Array = output("stages", "pipeline-parallel degree of the chosen shape", "pipeline parallel", "",
                                      fmt=",.0f")
    virtual_stages: Array = output("stages", "interleaved virtual stages per pipeline rank", "virtual stages", "", fmt=",.0f")
    expert_parallel: Array = output("devices", "expert-parallel degree (1 for a dense model)", "expert parallel", "",
                                    fmt=",.0f")
    data_parallel: Array = output("replicas", "data-parallel degree", "data parallel", "", fmt=",.0f")
    recompute: Array = output("fraction", "share of layers whose activations are fully recomputed to fit memory",
                              "recomputed share of layers", "%", scale=100.0, fmt=".0f")
    fsdp: Array = output("bool", "1 when weights, gradients and optimizer state are fully sharded over data parallel "
                         "(ZeRO-3)", "fully sharded (FSDP)", "", fmt=".0f")
    bubble_fraction: Array = output("fraction", "pipeline fill and drain added to the step", "pipeline bubble", "%",
                                    scale=100.0, fmt=".1f")
    bound: Array = output("code", "what limits the step: 0 compute, 1 pipeline bubble, 2 TP, 3 EP, 4 DP, 5 PP traffic",
                          "bound by", "", fmt=".0f")
    feasible: Array = output("bool", "1 when a parallel shape fits memory and the run finishes", "trains within its limits",
                             "", fmt=".0f")

    # the chosen shape's step in parts (tco.core.training.step.ChosenShape), not outputs: the workbook recomputes them
    #: index of the chosen shape in the candidate list (-1: none fits) [-]
    shape_index: Array
    #: devices the shape uses, data parallel x tensor x pipeline [devices]
    devices_used: Array
    #: micro-batches per pipeline and step [-]
    microbatches: Array
    #: compute time per step at the achievable FLOP/s [s]
    compute_s: Array
    #: tensor-parallel traffic per step, before overlap [s]
    tensor_parallel_s: Array
    #: expert-parallel traffic per step, before overlap [s]
    expert_parallel_s: Array
    #: data-parallel gradient exchange per step, before overlap [s]
    data_parallel_s: Array
    #: pipeline traffic per step, before overlap [s]
    pipeline_s: Array

    def flat(self) -> dict[str, Array]:
        """The outputs by name, in the table's order (the options table and its JSON loop over them).

        Returns
        -------
        dict[str, ndarray] [units of TRAINING_OUTPUTS]
            Each output of :data:`TRAINING_OUTPUTS` in its unit.
        """
        return {name: getattr(self, name) for name in TRAINING_OUTPUTS}

    def broadcast(self) -> TrainingResult:
        """The same result with every field a float array of one common shape (read-only broadcast views).

        Returns
        -------
        TrainingResult
            The broadcast copy.
        """
        values = {f.name: np.asarray(getattr(self, f.name), float) for f in dataclasses.fields(self)}
        shape = np.broadcast_shapes(*(v.shape for v in values.values()))
        return dataclasses.replace(self, **{name: np.broadcast_to(v, shape) for name, v in values.items()})


@dataclass(frozen=True, kw_only=True)
class TrainingChallenger:
    """A challenger cluster against the baseline (:func:`tco.core.training.run.training_comparison`)."""

    cost_ratio: Array = output("ratio", "option cost per run / baseline cost per run (the option wins below 1)",
                               "cost ratio to the baseline (wins below 1)", "", fmt=".3f")
    time_ratio: Array = output("ratio", "option time to train / baseline time to train", "time ratio to the baseline", "",
                               fmt=".3f")
    usd_saved_per_run: Array = output("USD", "baseline cost per run - option cost per run (> 0: the option is cheaper)",
                                      "saved per run", "M USD", scale=1e-6, fmt=",.3g")

    def flat(self) -> dict[str, Array]:
        """The comparison outputs by name.

        Returns
        -------
        dict[str, ndarray] [units of TRAINING_COMPARISON_OUTPUTS]
            Each output of :data:`TRAINING_COMPARISON_OUTPUTS` in its unit.
        """
        return {name: getattr(self, name) for name in TRAINING_COMPARISON_OUTPUTS}


@dataclass(frozen=True, kw_only=True)
class SecondLife:
    """One retired training device's second life: cascaded to serving, sold or scrapped, per device
    (:mod:`tco.core.training.cascade`; evaluated by :func:`tco.analysis.training.second_life_arrays`)."""

    feasible: Array = output("bool", "1 when the retired device meets the serving scenario's latency targets",
                             "can serve", "", fmt=".0f")
    tokens_per_year_per_device: Array = output("tokens/yr", "output tokens one retired device serves per year",
                                               "output tokens served per device-year", "M", scale=1e-6, fmt=",.0f")
    running_usd_per_year: Array = output("USD/yr", "energy, data hall and maintenance of one retired device in serving",
                                         "running cost in serving", "USD per device-year", fmt=",.0f")
    remaining_years: Array = output("yr", "useful life left at retirement", "remaining life", "years", fmt=".1f")
    cascade_usd: Array = output("USD", "PV at retirement of cascading the device to serving, its end-of-life value "
                                "included", "cascade to serving", "USD per device (PV)", fmt=",.0f")
    sell_usd: Array = output("USD", "what the device fetches when sold at retirement", "sell", "USD per device", fmt=",.0f")
    choice: Array = output("code", "the best use at retirement: 0 cascade, 1 sell, 2 scrap", "best use at retirement", "",
                           fmt=".0f")
    cascade_premium_usd: Array = output("USD", "cascade value minus the better of selling and scrapping (> 0: cascading "
                                        "wins; minus the sale price where the device cannot serve)",
                                        "cascade premium over the better of sell and scrap", "USD", fmt=",.0f")


#: per cluster option: the outputs of :class:`TrainingResult`, in field order
TRAINING_OUTPUTS: dict[str, OutputSpec] = output_table(TrainingResult)


#: per challenger: the outputs of :class:`TrainingChallenger`
TRAINING_COMPARISON_OUTPUTS: dict[str, OutputSpec] = output_table(TrainingChallenger)


#: per retired device: the outputs of :class:`SecondLife`
SECOND_LIFE_OUTPUTS: dict[str, OutputSpec] = output_table(SecondLife)


#: the cost lines that add up to ``cost_per_run_usd``, in the order they are summed
TRAINING_COST_LINES: tuple[OutputSpec, ...] = tuple(o for o in TRAINING_OUTPUTS.values() if o.cost_line)
