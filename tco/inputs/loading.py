"""Loading scenarios: a bundled one by name or a file, dispatched on ``kind:`` to the inference or
the training resolution."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

from pydantic import ValidationError

from tco.foundation.errors import InputError
from tco.inputs.catalog import Catalog, load_catalog
from tco.inputs.fleet_settings import Tree
from tco.inputs.references import FILES, SCENARIOS_DIR, References
from tco.inputs.scenario import Scenario
from tco.inputs.scenario_resolve import resolved_scenario
from tco.inputs.scenario_schema import ScenarioFile
from tco.inputs.training_scenario import training_scenario_from_dict
from tco.inputs.yaml_files import bundled_or_path, parse_yaml, pydantic_errors, read_yaml

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
                       derived: Collection[str] = (), references: References = FILES) -> Scenario:
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
    references : tco.inputs.references.References
        What the scenario's references to other scenarios may name (the app's uploads: bundled names only);
        kept on the scenario.

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
        scenario = training_scenario_from_dict(data, catalog, path)
    else:
        try:
            spec = ScenarioFile.model_validate(data)
        except ValidationError as exc:
            raise pydantic_errors(exc) from None
        scenario = resolved_scenario(spec, catalog or load_catalog(), path, derived)
    errors = [e for field, ref in reference_fields(scenario) if (e := references.check(field, ref)) is not None]
    if errors:
        raise InputError(errors)
    return replace(scenario, references=references) if references is not FILES else scenario


def reference_fields(scenario) -> list[tuple[str, object]]:
    """The fields of a resolved scenario that name another scenario, and what they name.

    Parameters
    ----------
    scenario : Scenario or tco.inputs.training_scenario.TrainingScenario
        The scenario.

    Returns
    -------
    list of (str, object)
        ``(field path, reference)``: ``serving.scenario`` of a training scenario, the tree's
        ``fleet_dynamics.tree.training_scenario`` (its default when the block leaves it out) of an inference one.
    """
    if getattr(scenario, "kind", "inference") == "training":
        return [("serving.scenario", scenario.spec.serving.scenario)]
    block = scenario.spec.fleet_dynamics or {}
    tree = block.get("tree") if isinstance(block.get("tree"), dict) else {}
    ref = tree.get("training_scenario", Tree.model_fields["training_scenario"].default)
    return [] if ref is None else [("fleet_dynamics.tree.training_scenario", ref)]


def load_reference(references: References, ref: str, field: str) -> Scenario:
    """The scenario a reference names, read under ``references`` (:mod:`tco.inputs.references`).

    Parameters
    ----------
    references : tco.inputs.references.References
        The policy of the scenario that holds the reference.
    ref : str
        What it names: a bundled name, a file uploaded in the session, or (when the policy allows) a path.
    field : str
        Its field path, named by an error.

    Returns
    -------
    Scenario
        The named scenario, read under the same policy; an :class:`InputError` names ``field`` when the policy
        refuses it (nothing is read then).
    """
    error = references.check(field, ref)
    if error is not None:
        raise InputError(error)
    if references.paths:
        return load_scenario(ref)
    text = references.upload(ref)
    if text is not None:
        return scenario_from_dict(parse_yaml(text, f"uploaded {ref}"), path=f"uploaded {ref}", references=references)
    bundled = SCENARIOS_DIR / f"{ref}.yaml"
    return scenario_from_dict(read_yaml(bundled), path=str(bundled), references=references)
