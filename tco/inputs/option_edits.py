"""Edits of a scenario's fleet options: add (or swap), remove and rename options, change the baseline, the model and
the chip program's process node.

The options builder of the app and the command line's ``--add-option``, ``--remove-option``, ``--rename-option``,
``--baseline`` and ``--model`` both call :func:`edited_scenario`. Each edit is applied in order to the scenario's
validated file (:class:`~tco.inputs.scenario_schema.ScenarioFile`), and the result is read again through the one
validated path (:func:`tco.inputs.loading.scenario_from_dict`) under the scenario's own reference policy: a built
scenario is a scenario like any file, refused with every broken rule named, downloadable as YAML
(:meth:`~tco.inputs.scenario.ScenarioEdits.to_dict`), its inputs named parameters.

Every edit has one text form, the same on the command line, in the app's state and in a shared link
(:func:`option_edit`, :func:`edit_text`)::

    add:b200=colocated:b200                                  --add-option b200=colocated:b200
    add:split=prefill:h100-sxm,decode:groq-lpu,link:ib-400g  --add-option split=prefill:...,link:ib-400g
    add:b200-tp8=colocated:b200,tp:8                         a pinned layout (tp, pp; prefill.tp, decode.pp, ...)
    add:b200-rented=colocated:b200,rented:yes                rented capacity, at the catalog's rate per device-hour
    remove:cerebras                                          --remove-option cerebras
    rename:groq=groq-lpu                                     --rename-option groq=groq-lpu
    baseline:b200                                            --baseline b200
    model:llama-3.1-70b                                      --model llama-3.1-70b
    node:3nm                                                 --node 3nm

An added option with the name of an existing one replaces it where it stands (a swap).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from tco.core import names as named
from tco.core.names import NODE_FIELDS
from tco.foundation.errors import FieldError, InputError
from tco.inputs.catalog import load_catalog
from tco.inputs.loading import scenario_from_dict
from tco.inputs.scenario import Scenario
from tco.inputs.scenario_schema import OptionSpec, ScenarioFile
from tco.inputs.yaml_files import pydantic_errors

#: the roles of an option's pools, as an added option's text names them
ROLES = ("colocated", "prefill", "decode")
#: short names of the pool fields an added option's text sets -> the pool field (tco.inputs.scenario_schema.PoolSpec):
#: a pinned layout, and rented capacity (``rented:yes``, at the catalog's rate per device-hour)
POOL_KEYS = {"tp": "tensor_parallel", "pp": "pipeline_stages", "rented": "rented"}
#: most edits one scenario takes (a shared link, a crafted app state, the command line): each added option is
#: evaluated in every view
MAX_OPTION_EDITS = 40
ADD_RULE = ("must look like NAME=colocated:DEVICE or NAME=prefill:DEVICE,decode:DEVICE,link:LINK, optionally with a "
            "pinned layout (tp:N, pp:N; for a split prefill.tp:N, decode.pp:N, ...) and rented:yes (decode.rented:yes)")


@dataclass(frozen=True)
class AddOption:
    """Add ``option`` (validated by the scenario schema); an option of the same name is replaced where it stands."""

    option: OptionSpec
    text: str

    def applied(self, spec: ScenarioFile) -> ScenarioFile:
        """The scenario file with the option added or swapped in (edits of a replaced option's own parameters dropped).

        Parameters
        ----------
        spec : ScenarioFile
            The scenario file before this edit.

        Returns
        -------
        ScenarioFile
            The scenario file after it.
        """
        name = self.option.name
        names = [o.name for o in spec.options]
        options = [self.option if o.name == name else o for o in spec.options]
        if name not in names:
            options.append(self.option)
        return spec.model_copy(update={"options": options, "set": _without_option_edits(spec.set, name)})


@dataclass(frozen=True)
class RemoveOption:
    """Remove the option called ``name`` (and the edits of its own parameters)."""

    name: str

    @property
    def text(self) -> str:
        return self.name

    def applied(self, spec: ScenarioFile) -> ScenarioFile:
        """The scenario file without the option.

        Parameters
        ----------
        spec : ScenarioFile
            The scenario file before this edit.

        Returns
        -------
        ScenarioFile
            The scenario file after it; an :class:`InputError` when the scenario has no such option.
        """
        _check_option(spec, self.name, "remove")
        if len(spec.options) == 1:
            raise InputError.one("remove", self.name, "is the scenario's only option: add another one first")
        if self.name == spec.baseline:
            raise InputError.one("remove", self.name, "is the baseline: choose another baseline first")
        return spec.model_copy(update={"options": [o for o in spec.options if o.name != self.name],
                                       "set": _without_option_edits(spec.set, self.name)})


@dataclass(frozen=True)
class RenameOption:
    """Rename option ``old`` to ``new``; the baseline, the edits of its parameters and the fleet analyses that name
    it follow."""

    old: str
    new: str

    @property
    def text(self) -> str:
        return f"{self.old}={self.new}"

    def applied(self, spec: ScenarioFile) -> ScenarioFile:
        """The scenario file with the option renamed.

        Parameters
        ----------
        spec : ScenarioFile
            The scenario file before this edit.

        Returns
        -------
        ScenarioFile
            The scenario file after it; an :class:`InputError` when the scenario has no option ``old`` or has one
            called ``new`` already.
        """
        _check_option(spec, self.old, "rename")
        if self.new in (o.name for o in spec.options):
            raise InputError.one("rename", self.text, f"the scenario has an option called {self.new} already")
        prefix, moved = f"options.{self.old}.", f"options.{self.new}."
        edits = {(moved + k[len(prefix):] if k.startswith(prefix) else k): v for k, v in spec.set.items()}
        block = spec.fleet_dynamics and {section: ({**settings, "option": self.new}
                                                   if isinstance(settings, dict) and settings.get("option") == self.old
                                                   else settings)
                                         for section, settings in spec.fleet_dynamics.items()}
        return spec.model_copy(update={
            "options": [o.model_copy(update={"name": self.new}) if o.name == self.old else o for o in spec.options],
            "baseline": self.new if spec.baseline == self.old else spec.baseline, "set": edits,
            "fleet_dynamics": block})


@dataclass(frozen=True)
class SetBaseline:
    """Compare every other option against the option called ``name``."""

    name: str

    @property
    def text(self) -> str:
        return self.name

    def applied(self, spec: ScenarioFile) -> ScenarioFile:
        """The scenario file with the new baseline.

        Parameters
        ----------
        spec : ScenarioFile
            The scenario file before this edit.

        Returns
        -------
        ScenarioFile
            The scenario file after it; an :class:`InputError` when the scenario has no such option.
        """
        _check_option(spec, self.name, "baseline")
        return spec.model_copy(update={"baseline": self.name})


@dataclass(frozen=True)
class SetModel:
    """Serve the catalog model ``model`` instead (edits of the former model's parameters are dropped)."""

    model: str

    @property
    def text(self) -> str:
        return self.model

    def applied(self, spec: ScenarioFile) -> ScenarioFile:
        """The scenario file serving the model.

        Parameters
        ----------
        spec : ScenarioFile
            The scenario file before this edit.

        Returns
        -------
        ScenarioFile
            The scenario file after it (an unknown model is named when the scenario is read).
        """
        return spec.model_copy(update={"model": self.model,
                                       "set": {k: v for k, v in spec.set.items() if not k.startswith("models.")}})


#: the parameters a chip program takes from its build node (``assumptions/nre.yaml``), whose ``set:`` edits a node
#: edit drops: they were of the former node
NODE_PARAMETERS = (f"{named.program_nre.prefix}.", named.program.wafer_price_usd, named.program.defect_density_per_cm2,
                   named.program.time_to_market_years, *(named.program.name(field) for field in NODE_FIELDS))


@dataclass(frozen=True)
class SetNode:
    """Build the scenario's chip at the process node ``node`` of ``assumptions/nre.yaml``: its NRE parts, wafer price,
    defect density, time to market and scaling figures are that node's (the device's figures stay given at the specs
    node, so compute and SRAM scale, :mod:`tco.core.money.nodes`); ``set:`` edits of the former node's figures are
    dropped."""

    node: str

    @property
    def text(self) -> str:
        return self.node

    def applied(self, spec: ScenarioFile) -> ScenarioFile:
        """The scenario file building its chip at the node.

        Parameters
        ----------
        spec : ScenarioFile
            The scenario file before this edit.

        Returns
        -------
        ScenarioFile
            The scenario file after it; an :class:`InputError` when the scenario builds no chip (an unknown node is
            named when the scenario is read).
        """
        if spec.program is None:
            raise InputError.one("node", self.node, "applies to a scenario that builds its own chip (a program: block)")
        program = spec.program.model_copy(update={"node": self.node, "specs_node": spec.program.specs_node
                                                  or spec.program.node})
        return spec.model_copy(update={"program": program, "set": {k: v for k, v in spec.set.items()
                                                                   if not k.startswith(NODE_PARAMETERS)}})


OptionEdit = AddOption | RemoveOption | RenameOption | SetBaseline | SetModel | SetNode
#: the kinds of edit by the name their text starts with
KINDS: dict[str, type] = {"add": AddOption, "remove": RemoveOption, "rename": RenameOption, "baseline": SetBaseline,
                          "model": SetModel, "node": SetNode}


def _without_option_edits(edits: dict, name: str) -> dict:
    """``set:`` edits without those of option ``name``'s own parameters (``options.<name>.*``)."""
    return {k: v for k, v in edits.items() if not k.startswith(f"options.{name}.")}


def _check_option(spec: ScenarioFile, name: str, kind: str) -> None:
    names = [o.name for o in spec.options]
    if name not in names:
        raise InputError.one(kind, name, f"must name an option of the scenario: {', '.join(names)}")


def added_option(text: str, where: str = "add") -> AddOption:
    """The option an ``NAME=KEY:VALUE,...`` text adds (``b200=colocated:b200``), validated by the scenario schema.

    Parameters
    ----------
    text : str
        ``NAME=colocated:DEVICE`` or ``NAME=prefill:DEVICE,decode:DEVICE,link:LINK``, optionally with a pinned layout
        (``tp:N``, ``pp:N`` for a colocated pool; ``prefill.tp:N``, ``decode.pp:N``, ... for a split) and rented capacity
        (``rented:yes``; ``decode.rented:yes``).
    where : str
        What errors name (the command line's flag).

    Returns
    -------
    AddOption
        The edit; an :class:`InputError` names ``where``, the text and the rule it breaks. Device and link names are
        checked against the catalog when the scenario is read (:func:`edited_scenario`).
    """
    if not isinstance(text, str):
        raise InputError.one(where, text, ADD_RULE)
    name, sep, rest = text.partition("=")
    pairs = [part.partition(":") for part in rest.split(",")] if rest.strip() else []
    if not sep or not name.strip() or not pairs or any(not s or not k.strip() or not v.strip() for k, s, v in pairs):
        raise InputError.one(where, text, ADD_RULE)
    option: dict[str, object] = {"name": name.strip()}
    pools: dict[str, dict[str, str]] = {}
    for key, _sep, value in pairs:
        key, value = key.strip(), value.strip()
        role, dot, field = key.rpartition(".")
        if key in ROLES:
            pools.setdefault(key, {})["device"] = value
        elif key in ("link", "kv_link"):
            option["kv_link"] = value
        elif field in POOL_KEYS and (role in ROLES or not dot):
            pools.setdefault(role or "colocated", {})[POOL_KEYS[field]] = value
        else:
            raise InputError.one(where, text, f"{key!r} is not a key it takes: {ADD_RULE}")
    try:
        return AddOption(OptionSpec.model_validate(option | pools), text)
    except ValidationError as exc:
        raise pydantic_errors(exc, f"options.{name.strip()}") from None


def added_option_text(name: str, devices: Mapping[str, str], link: str | None = None, rented: bool = False) -> str:
    """The text of the edit that adds option ``name`` on ``devices`` (read back by :func:`option_edit`).

    Parameters
    ----------
    name : str
        The option's name.
    devices : Mapping[str, str]
        Device id by role: ``{"colocated": DEVICE}`` or ``{"prefill": DEVICE, "decode": DEVICE}``.
    link : str or None
        The KV link of a split.
    rented : bool
        Every pool rented by the device-hour (``rented:yes``; ``prefill.rented:yes,decode.rented:yes``).

    Returns
    -------
    str
        ``add:NAME=colocated:DEVICE`` or ``add:NAME=prefill:DEVICE,decode:DEVICE,link:LINK``, then the rented flags.
    """
    pairs = [f"{role}:{device}" for role, device in devices.items()] + ([f"link:{link}"] if link else [])
    if rented:
        pairs += ["rented:yes"] if set(devices) == {"colocated"} else [f"{role}.rented:yes" for role in devices]
    return f"add:{name}={','.join(pairs)}"


def option_edit(text: str, where: str = "option edit") -> OptionEdit:
    """The edit a ``KIND:ARGUMENT`` text describes (``add:b200=colocated:b200``, ``remove:cerebras``, ...).

    Parameters
    ----------
    text : str
        One edit's text (the module docstring lists them).
    where : str
        What errors name (``shared link: option``, ``options[2]``).

    Returns
    -------
    OptionEdit
        The edit; an :class:`InputError` names ``where`` for a text that is no edit.
    """
    kind, sep, argument = text.partition(":") if isinstance(text, str) else ("", "", "")
    if not sep or kind not in KINDS or not argument.strip():
        raise InputError.one(where, text, f"must look like KIND:ARGUMENT, KIND one of {', '.join(KINDS)} "
                                          "(add:b200=colocated:b200, remove:NAME, rename:OLD=NEW, baseline:NAME, model:MODEL, "
                                          "node:NODE)")
    argument = argument.strip()
    if kind == "add":
        return added_option(argument, where)
    if kind == "rename":
        old, eq, new = argument.partition("=")
        if not eq or not old.strip() or not new.strip():
            raise InputError.one(where, text, "a rename must look like rename:OLD=NEW")
        return RenameOption(old.strip(), new.strip())
    return KINDS[kind](argument)


def edit_text(edit: OptionEdit) -> str:
    """The text :func:`option_edit` reads back into ``edit``.

    Parameters
    ----------
    edit : OptionEdit
        An edit.

    Returns
    -------
    str
        ``KIND:ARGUMENT``.
    """
    kind = next(k for k, cls in KINDS.items() if isinstance(edit, cls))
    return f"{kind}:{edit.text}"


def option_edits(texts: object, where: str = "options") -> list[OptionEdit]:
    """The edits of a list of texts (the app's state, a shared link), each read by :func:`option_edit`.

    Parameters
    ----------
    texts : object
        A list of ``KIND:ARGUMENT`` texts, as a browser or a link sent them (checked: it may be anything).
    where : str
        What errors name; the ``i``-th text is ``where[i]``.

    Returns
    -------
    list of OptionEdit
        The edits, in order; an :class:`InputError` lists every text that is no edit.
    """
    if texts is None:
        return []
    if not isinstance(texts, list):
        raise InputError.one(where, type(texts).__name__, "must be a list of option edits")
    if len(texts) > MAX_OPTION_EDITS:
        raise InputError.one(where, f"{len(texts):,} edits", f"has too many edits: at most {MAX_OPTION_EDITS}")
    edits, errors = [], []
    for i, text in enumerate(texts):
        try:
            edits.append(option_edit(text, f"{where}[{i}]"))
        except InputError as exc:
            errors += exc.errors
    if errors:
        raise InputError(errors)
    return edits


def edited_scenario(scenario: Scenario, edits: list[OptionEdit]) -> Scenario:
    """``scenario`` with ``edits`` applied in order, read again as a file is (validated, resolved, its edits kept).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        An inference scenario (its file, its ``set:`` edits and its reference policy).
    edits : list of OptionEdit
        The edits (:func:`option_edit`).

    Returns
    -------
    tco.inputs.scenario.Scenario
        The built scenario. An :class:`InputError` names every broken rule: an edit of an option the scenario does not
        have (``remove: got 'x'; must name an option of the scenario: ...``), or what the built file breaks, an added
        option's fields named under its name (``options.b200.colocated.device: got 'b2000'; is not a known device;
        known: b200, b300, ...``).
    """
    if not edits:
        return scenario
    if getattr(scenario, "kind", "inference") != "inference":
        raise InputError.one("options", edit_text(edits[0]), f"option edits apply to inference scenarios; "
                                                             f"{scenario.name} is a {scenario.kind} scenario")
    if len(edits) > MAX_OPTION_EDITS:
        raise InputError.one("options", f"{len(edits):,} edits", f"has too many edits: at most {MAX_OPTION_EDITS}")
    spec = scenario.spec
    for edit in edits:
        spec = edit.applied(spec)
    data = spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    try:
        return scenario_from_dict(data, path=scenario.path, references=scenario.references)
    except InputError as exc:
        names = [o.name for o in spec.options]
        raise InputError([FieldError(_named_option_path(e.path, names), e.value, e.rule) for e in exc.errors]) from None


def _named_option_path(path: str, names: list[str]) -> str:
    """``options[4].colocated.device`` (or pydantic's ``options.4...``) as ``options.<its name>.colocated.device``."""
    found = re.match(r"options(?:\[(\d+)\]|\.(\d+))(?=\.|$)", path)
    if not found:
        return path
    index = int(found.group(1) or found.group(2))
    return f"options.{names[index]}{path[found.end():]}" if index < len(names) else path


@dataclass(frozen=True)
class BuilderChoices:
    """What an option may be built from: the catalog's devices (and the scenario's own), KV links, models and the
    process nodes a chip program may be built at."""

    devices: tuple[str, ...]
    links: tuple[str, ...]
    models: tuple[str, ...]
    nodes: tuple[str, ...] = ()


def builder_choices(scenario: Scenario) -> BuilderChoices:
    """The device, link and model ids :func:`edited_scenario` accepts for ``scenario``.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario (its file's own ``devices:``, ``links:`` and ``models:`` entries count).

    Returns
    -------
    BuilderChoices
        Each list sorted.
    """
    catalog, spec = load_catalog(), scenario.spec
    return BuilderChoices(tuple(sorted({*catalog.devices, *spec.devices})), tuple(sorted({*catalog.links, *spec.links})),
                          tuple(sorted({*catalog.models, *spec.models})), tuple(catalog.nodes))
