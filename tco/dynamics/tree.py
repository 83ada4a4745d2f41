"""The specialization tree for one model: which device wins each serving leaf, and by what margin.

Leaves (seed 000: "split ... interactive batch-size-one inference from high-throughput
serving, and perhaps prefill from decode"):

* ``interactive batch-one`` -- decode batch capped at 1, the scenario's latency targets;
* ``throughput batch`` -- large batch cap, loose targets (``fleet_dynamics.tree``);
* ``prefill only`` -- the prefill share of a colocated replica's cost (its time share),
  per million *prompt* tokens;
* ``decode only`` -- the decode share, per million output tokens.

The candidates are the devices of :func:`tco.dynamics.devices.analysis_devices`, each again decoding speculatively
where the scenario's options do (:func:`tco.dynamics.devices.with_speculation`: ``groq-lpu+eagle``; not in the
prefill leaf, since a draft proposes output tokens).
Two views: ``datasheet`` (no NRE, a workload that never shifts: half-life 1e6 years) and
``with NRE and half-life`` (the scenario as given).

The tree's root splits training from inference (issue 17): the ``training`` leaf prices a
pre-training run of the training scenario named by ``fleet_dynamics.tree.training_scenario``
(:mod:`tco.analysis.training`) per million *training* tokens, on each of its clusters. Every leaf
names the resource it is precious in (:data:`PRECIOUS_RESOURCE`) and its cheapest device.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tco.analysis.evaluation import evaluate_arrays
from tco.analysis.training import evaluate_training_scenario
from tco.core import names as named
from tco.core.money.finance import levelized_cost_usd_per_mtok
from tco.dynamics.devices import analysis_devices, with_speculation
from tco.foundation.errors import InputError
from tco.inputs.fleet_settings import Tree
from tco.inputs.loading import load_reference
from tco.inputs.references import FILES, References
from tco.inputs.variants import placement_spec, replica_minimums, scenario_link, with_options

LEAVES = ("interactive batch-one", "throughput batch", "prefill only", "decode only")
TRAINING_LEAF = "training"
NEVER_SHIFTS_YEARS = 1.0e6
#: leaf -> (branch of the tree, the resource the leaf is precious in)
PRECIOUS_RESOURCE = {
    TRAINING_LEAF: ("training", "FLOP/s at scale and scale-up / scale-out bandwidth for gradients; memory for optimizer state"),
    "interactive batch-one": ("inference > interactive", "memory bandwidth per user (weights read every token)"),
    "throughput batch": ("inference > batch", "memory capacity for KV cache, then FLOP/s"),
    "prefill only": ("inference > prefill", "FLOP/s"),
    "decode only": ("inference > decode", "memory bandwidth and capacity"),
}


def training_leaf_rows(training, references: References = FILES) -> list[dict]:
    """Cost per million training tokens of each cluster of a training scenario, as tree rows (both views).

    Parameters
    ----------
    training : str or tco.inputs.training_scenario.TrainingScenario
        A training scenario: bundled name, path or loaded.
    references : tco.inputs.references.References
        What a name may name (the serving scenario's policy: an app upload names a bundled scenario only).

    Returns
    -------
    list[dict]
        ``{view, leaf, device, usd_per_mtok [USD per M training tokens], token_basis, feasible,
        batch, spilled_bytes}`` per cluster and view.
    """

    field = "fleet_dynamics.tree.training_scenario"
    scenario = load_reference(references, training, field) if isinstance(training, str) else training
    if getattr(scenario, "kind", "inference") != "training":
        raise InputError.one("fleet_dynamics.tree.training_scenario", scenario.name, "must name a kind: training scenario")
    results, _ = evaluate_training_scenario(scenario)
    rows = []
    for view in ("datasheet", "with NRE and half-life"):
        for option in scenario.structure.options:
            r = results[option.name]
            rows.append({"view": view, "leaf": TRAINING_LEAF, "device": option.device,
                         "usd_per_mtok": float(r.usd_per_mtok_trained), "token_basis": "training tokens",
                         "feasible": bool(r.feasible > 0), "batch": float("nan"), "spilled_bytes": 0.0})
    return rows


def tree(scenario, cfg: Tree, training=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The specialization tree: cost per device, leaf and view; the winner and margin per leaf and view.

    Leaves: interactive batch-one (batch cap 1), throughput batch (``cfg.throughput_*``),
    prefill only (the prefill cost share per M prompt tokens), decode only (the rest per M
    output tokens), and training when a training scenario is given. Views: ``datasheet`` (no
    NRE, half-life 1e6 years) and ``with NRE and half-life``.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The serving scenario; one colocated option per device is added.
    cfg : tco.inputs.fleet_settings.Tree
        ``devices``, ``training_scenario``, ``interactive_tpot_target_s`` [s] and the
        throughput leaf's ``throughput_max_batch`` [sequences], ``throughput_tpot_target_s`` and
        ``throughput_ttft_target_s`` [s] (named parameters ``fleet_dynamics.tree.*``).
    training : tco.inputs.training_scenario.TrainingScenario, optional
        Overrides ``cfg.training_scenario`` for the training leaf.

    Returns
    -------
    costs : pandas.DataFrame
        ``usd_per_mtok`` [USD/Mtok] per view, leaf and device, with ``feasible``, ``batch``
        [sequences] and ``spilled_bytes`` [B].
    winners : pandas.DataFrame
        Per view and leaf: branch, precious resource, ``winner``, its ``usd_per_mtok``
        [USD/Mtok], ``runner_up`` and ``margin`` [-] (runner-up cost / winner cost).
    """
    devices = analysis_devices(scenario, cfg.devices, "fleet_dynamics.tree.devices")
    minimums, link = replica_minimums(scenario), scenario_link(scenario)
    leaves = with_speculation(scenario, [placement_spec(d, d, link, minimums) | {"name": f"leaf:{d}"} for d in devices])
    derived = with_options(scenario, leaves)
    candidates = [leaf["name"].removeprefix("leaf:") for leaf in leaves]  # a device, or a device+method speculating
    speculating = {leaf["name"].removeprefix("leaf:") for leaf in leaves if "speculation" in leaf}
    v = derived.values()
    # leaf axis: interactive, throughput, and the scenario's own workload twice (prefill / decode shares)
    batch, tpot, ttft = named.workload.max_batch, named.workload.tpot_target_s, named.workload.ttft_target_s
    updates = {
        batch: np.array([1.0, cfg.throughput_max_batch, v[batch], v[batch]]),
        tpot: np.array([cfg.interactive_tpot_target_s or v[tpot], cfg.throughput_tpot_target_s, v[tpot], v[tpot]]),
        ttft: np.array([v[ttft], cfg.throughput_ttft_target_s, v[ttft], v[ttft]]),
    }
    prompt_per_output = v[named.workload.prompt_tokens] / v[named.workload.output_tokens]
    rows = []
    for view, extra, drop_nre in (("datasheet", {named.workload.half_life_years: NEVER_SHIFTS_YEARS}, True),
                                  ("with NRE and half-life", {}, False)):
        results, _ = evaluate_arrays(derived, updates | extra)
        for d in candidates:
            r = results[f"leaf:{d}"]
            cost = r.pv_cost_usd - (r.pv_nre_usd if drop_nre else 0.0)
            per_mtok = levelized_cost_usd_per_mtok(cost, r.pv_tokens)
            share = r.prefill_cost_share
            usd = [per_mtok[0], per_mtok[1], per_mtok[2] * share[2] / prompt_per_output, per_mtok[3] * (1.0 - share[3])]
            for i, leaf in enumerate(LEAVES):
                if leaf == "prefill only" and d in speculating:  # speculation drafts output tokens: no prefill leaf
                    continue
                rows.append({"view": view, "leaf": leaf, "device": d, "usd_per_mtok": float(usd[i]),
                             "token_basis": "prompt tokens" if leaf == "prefill only" else "output tokens",
                             "feasible": bool(r.feasible[i] > 0), "batch": float(r.batch[i]),
                             "spilled_bytes": float(r.spilled_bytes[i])})
    if training is not None or cfg.training_scenario:
        rows = training_leaf_rows(training if training is not None else cfg.training_scenario, scenario.references) + rows
    costs = pd.DataFrame(rows)
    winners = []
    for (view, leaf), group in costs.groupby(["view", "leaf"], sort=False):
        ranked = group[group["feasible"]].sort_values("usd_per_mtok")
        best = ranked.iloc[0] if len(ranked) else None
        runner = ranked.iloc[1] if len(ranked) > 1 else None
        branch, resource = PRECIOUS_RESOURCE[leaf]
        winners.append({"view": view, "branch": branch, "leaf": leaf, "precious_resource": resource,
                        "winner": None if best is None else best["device"],
                        "usd_per_mtok": None if best is None else best["usd_per_mtok"],
                        "runner_up": None if runner is None else runner["device"],
                        "margin": None if runner is None else runner["usd_per_mtok"] / best["usd_per_mtok"]})
    order = {leaf: i for i, leaf in enumerate((TRAINING_LEAF, *LEAVES))}
    winners = pd.DataFrame(winners)
    winners = winners.iloc[np.lexsort((winners["leaf"].map(order), winners["view"] != "datasheet"))].reset_index(drop=True)
    return costs, winners
