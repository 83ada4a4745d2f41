"""The candidates a fleet analysis compares: the devices the scenario names and the roadmap generations its baseline
runs, each also decoding speculatively where the scenario's options do."""

from __future__ import annotations

from collections.abc import Sequence

from tco.analysis.evaluation import evaluate_arrays
from tco.analysis.program_views import other_generations_held
from tco.foundation.errors import InputError
from tco.inputs.catalog import load_catalog
from tco.inputs.variants import scenario_devices


def check_device(scenario, device: str, path: str) -> None:
    """Refuse a device id neither the scenario, its options nor the catalog knows.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.
    device : str
        The device id asked for.
    path : str
        Its place in the settings, for the error.
    """
    known = set(scenario_devices(scenario)) | set(load_catalog().devices) | set(scenario.spec.devices)
    if device not in known:
        raise InputError.one(path, device, f"is not a known device; known: {', '.join(sorted(known))}")


def roadmap_devices_held(scenario) -> list[str]:
    """The general-purpose generations a roadmap baseline's fleet runs within the horizon other than its own device
    (:func:`tco.analysis.program_views.other_generations_held`; empty without a roadmap).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario (evaluated at its base values when it has a roadmap).

    Returns
    -------
    list[str]
        Device ids, in the order the fleet holds them, none of the scenario's own.
    """
    if not scenario.structure.generations:
        return []
    results, _ = evaluate_arrays(scenario, {})
    own = scenario_devices(scenario)
    return [d for d in other_generations_held(results[scenario.structure.baseline]) if d not in own]


def analysis_devices(scenario, devices: Sequence[str] | None, path: str) -> list[str]:
    """The devices a fleet analysis places: ``devices`` as given, else the scenario's, then the roadmap generations
    its baseline runs (so the GPU fleet whose costs the verdict reports is among them); each checked.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.
    devices : Sequence[str] or None
        The settings' device list (None: the default).
    path : str
        The settings' path of the list, for an error (``fleet_dynamics.pareto.devices``).

    Returns
    -------
    list[str]
        Device ids.
    """
    chosen = list(devices) if devices else [*scenario_devices(scenario), *roadmap_devices_held(scenario)]
    for i, device in enumerate(chosen):
        check_device(scenario, device, f"{path}[{i}]")
    return chosen


def speculation_blocks(scenario) -> list[dict]:
    """The distinct ``speculation:`` blocks of the scenario's options, as written (none: no option speculates).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.

    Returns
    -------
    list[dict]
        Each block once, in the options' order (``{"method": "eagle"}``, overrides included).
    """
    blocks = [o.speculation.model_dump(exclude_none=True) for o in scenario.spec.options if o.speculation is not None]
    return [b for i, b in enumerate(blocks) if b not in blocks[:i]]


def with_speculation(scenario, specs: list[dict]) -> list[dict]:
    """``specs``, then each again decoding speculatively as the scenario's options do (:func:`speculation_blocks`),
    named ``<placement>+<method>``: the frontier and the tree then price a draft head on every device as the verdict
    does on those it names (reasoning-chat's EAGLE-3 on H100 and the LPU).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.
    specs : list[dict]
        Placement options (:func:`tco.dynamics.pareto.device_placements`, the tree's leaves).

    Returns
    -------
    list[dict]
        ``specs`` and their speculative twins.
    """
    return [*specs, *({**spec, "name": f"{spec['name']}+{block['method']}", "speculation": block}
                      for block in speculation_blocks(scenario) for spec in specs)]
