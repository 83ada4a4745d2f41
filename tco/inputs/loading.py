"""Loading scenarios: a bundled one by name or a file, dispatched on ``kind:`` to the inference or
the training resolution."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from pydantic import ValidationError

from tco.foundation.errors import InputError
from tco.inputs.catalog import Catalog, load_catalog
from tco.inputs.scenario import Scenario
from tco.inputs.scenario_resolve import resolved_scenario
from tco.inputs.scenario_schema import ScenarioFile
from tco.inputs.training_scenario import training_scenario_from_dict
from tco.inputs.yaml_files import bundled_or_path, pydantic_errors, read_yaml

SCENARIOS_DIR = Path(__file__).resolve().parents[2] / "scenarios"


DEFAULT_SCENARIO = "default"


def scenario_path(name_or_path: str | Path | None) -> Path:
    """A bundled scenario by name (``default``) or a file path.

    Parameters
    ----------
    name_or_path : str or Path or None
        A bundled scenario's name, a path, or None for the default scenario.

    Returns
    -------
    Path
        The scenario file.
    """
    return bundled_or_path(DEFAULT_SCENARIO if name_or_path is None else name_or_path, SCENARIOS_DIR, "SCENARIO", "scenario")


def bundled_scenarios(kind: str = "inference") -> list[str]:
    """Names of the bundled scenarios of one ``kind`` (``inference`` or ``training``).

    Parameters
    ----------
    kind : str
        ``inference`` or ``training``.

    Returns
    -------
    list of str
        Scenario names, sorted.
    """
    return sorted(p.stem for p in SCENARIOS_DIR.glob("*.yaml") if (read_yaml(p) or {}).get("kind", "inference") == kind)


def load_scenario(name_or_path: str | Path | None = None, catalog: Catalog | None = None) -> Scenario:
    """Read, validate and resolve a scenario file (bundled name or path).

    A file with ``kind: training`` resolves to a
    :class:`~tco.inputs.training_scenario.TrainingScenario` instead.

    Parameters
    ----------
    name_or_path : str or Path or None
        A bundled scenario's name, a path, or None for the default scenario.
    catalog : Catalog or None
        The catalog to resolve against; None: ``assumptions/``.

    Returns
    -------
    Scenario
        Its structure, named parameters (SI units), fleet-analysis settings and warnings.

    Raises
    ------
    InputError
        Every broken rule of the file, each with its field path.
    """
    path = scenario_path(name_or_path)
    data = read_yaml(path)
    return scenario_from_dict(data, catalog, path=str(path))


def scenario_from_dict(data: object, catalog: Catalog | None = None, path: str | None = None,
                       derived: Collection[str] = ()) -> Scenario:
    """Validate and resolve scenario data (as read from YAML).

    Parameters
    ----------
    data : object
        The scenario file's contents.
    catalog : Catalog or None
        The catalog to resolve against; None: ``assumptions/``.
    path : str or None
        Where the data came from, kept on the scenario.
    derived : Collection of str
        Names of options tco derived itself (:func:`tco.inputs.scenario_resolve.option_name_errors`); never a user's.

    Returns
    -------
    Scenario
        The resolved scenario (a training scenario for ``kind: training``).

    Raises
    ------
    InputError
        Every broken rule, each with its field path.
    """
    if not isinstance(data, dict):
        raise InputError.one(path or "<scenario>", type(data).__name__, "a scenario must be a YAML mapping")
    if data.get("kind") == "training":

        return training_scenario_from_dict(data, catalog, path)
    try:
        spec = ScenarioFile.model_validate(data)
    except ValidationError as exc:
        raise pydantic_errors(exc) from None
    return resolved_scenario(spec, catalog or load_catalog(), path, derived)
