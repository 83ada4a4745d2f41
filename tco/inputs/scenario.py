"""A resolved scenario: its words, structure, named parameters, settings and file contents."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field, replace

import yaml

from tco.core.structure import Structure
from tco.foundation.errors import FieldWarning
from tco.inputs.catalog import ApiQuote, Device
from tco.inputs.parameters import ParamSet, spreads_of
from tco.inputs.references import FILES, References
from tco.inputs.scenario_schema import ScenarioFile

#: names of the fleet-analysis settings start with it (tco.inputs.fleet_settings.PREFIX)
DYNAMICS_PREFIX = "fleet_dynamics."


@dataclass(frozen=True)
class ScenarioEdits:
    """What every resolved scenario (inference or training) offers: its words, base values, ``--set`` edits, its file."""

    name: str
    title: str
    description: str
    question: str
    #: the named inputs the model reads
    params: ParamSet
    _: KW_ONLY
    path: str | None = None
    devices: dict[str, Device] = field(default_factory=dict)
    #: inputs accepted but worth a look: values outside their sourced range
    warnings: tuple[FieldWarning, ...] = ()
    #: what the scenario's references to other scenarios may name (:mod:`tco.inputs.references`): the policy it was
    #: read under, kept by every edit and variant
    references: References = FILES

    def values(self) -> dict[str, float]:
        return self.params.values()

    def with_values(self, updates: Mapping[str, object]):
        """This scenario with new base values (``--set``, the app, the API), read and checked by
        :func:`tco.inputs.parameters.checked_edits` (the same rules as ``set:`` in a file); warnings are added
        to :attr:`warnings`. Names under ``fleet_dynamics.`` edit the fleet-analysis settings
        (``dynamics``), the others the model's parameters."""
        if not updates:
            return self
        settings, inputs = split_settings(updates)
        changed: dict[str, ParamSet] = {}
        warnings: list[FieldWarning] = []
        for attr, part in (("params", inputs), ("dynamics", settings)):
            if part:
                changed[attr], found = getattr(self, attr, ParamSet(())).edited(part)
                warnings += found
        edits = {name: changed[attr][name].value for attr, part in (("params", inputs), ("dynamics", settings))
                 for name in part}
        spec = self.spec.model_copy(update={"set": {**self.spec.set, **edits}})
        return replace(self, **changed, spec=spec, warnings=self.warnings + tuple(warnings))

    def with_spreads(self, spreads: Mapping[str, object]):
        """This scenario with new Monte Carlo distributions and ranges (the Uncertainty view, the API), read and checked
        by :func:`tco.inputs.parameters.checked_spreads` (the same rules as ``uncertainty:`` in a file) and kept in the
        file it writes (:meth:`to_yaml`).

        Parameters
        ----------
        spreads : Mapping[str, object]
            ``{name: {distribution, low, high}}``, each key optional; low and high in the field's unit or as text.

        Returns
        -------
        Scenario
            The same scenario, its parameters drawn as given; an :class:`InputError` names every broken rule.
        """
        if not spreads:
            return self
        params = self.params.spread(spreads)
        spec = self.spec.model_copy(update={"uncertainty": {**self.spec.uncertainty, **spreads_of(params, spreads)}})
        return replace(self, params=params, spec=spec)

    def to_dict(self) -> dict:
        """The scenario file as plain data (loadable again), edits in ``set`` included."""
        return self.spec.model_dump(mode="json", by_alias=True, exclude_none=True)

    def to_yaml(self) -> str:
        """The scenario file as YAML text (:meth:`to_dict`, keys in the file's order), loadable by ``tco`` again: what
        ``--write-scenario`` and the app's downloads write."""
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)


@dataclass(frozen=True)
class Scenario(ScenarioEdits):
    """A validated scenario: its structure, its named parameters and its file contents."""

    structure: Structure
    spec: ScenarioFile
    #: catalog figures shown beside the inputs but never read by the model (device prices,
    #: architecture facts of the model): named like parameters, not in :attr:`params`
    reference: ParamSet = field(default_factory=lambda: ParamSet(()))
    #: settings of the fleet analyses as named parameters (``fleet_dynamics.<analysis>.<setting>``,
    #: assumptions/fleet_dynamics.yaml): read by :mod:`tco.dynamics`, never by the cost model, so
    #: not in :attr:`params` and not drawn by its studies
    dynamics: ParamSet = field(default_factory=lambda: ParamSet(()))
    #: the model's published API prices (``assumptions/market.yaml``), set beside the fleets' costs
    #: (:mod:`tco.analysis.market`); their figures are in :attr:`reference` (``market.<model>.<provider>.<field>``)
    api_quotes: tuple[ApiQuote, ...] = ()


def split_settings(updates: Mapping[str, object]) -> tuple[dict[str, object], dict[str, object]]:
    """``(fleet-analysis settings, the rest)`` of named edits: names under ``fleet_dynamics.`` first.

    Parameters
    ----------
    updates : Mapping[str, object]
        Edits by dotted name (a scenario's ``set:``).

    Returns
    -------
    settings : dict[str, object]
        The edits of fleet-analysis settings.
    rest : dict[str, object]
        The edits of the cost model's parameters.
    """
    settings = {k: v for k, v in updates.items() if isinstance(k, str) and k.startswith(DYNAMICS_PREFIX)}
    return settings, {k: v for k, v in updates.items() if k not in settings}
