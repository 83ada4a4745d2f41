"""The devices a fleet analysis compares: those the scenario names, and the roadmap generations its baseline runs."""

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
