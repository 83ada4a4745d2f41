"""Named parameters: the spine every study, export and view addresses quantities by.

A :class:`Quantity` is what a catalog or scenario file gives for a number (a bare number
or a mapping with value, low, high, distribution, source, date, note). Once a scenario
is resolved, every number becomes a :class:`Param` under its dotted name, with the unit
and valid domain of its field (:mod:`tco.foundation.fields`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationInfo

from tco.foundation.errors import FieldError, FieldWarning, InputError
from tco.foundation.fields import FIELDS, ORDERED_FIELDS, Field, field_for
from tco.foundation.user_numbers import read_number

Distribution = Literal["fixed", "uniform", "triangular", "normal", "lognormal"]
#: the distributions a parameter can be drawn from (:mod:`tco.studies.sampling` says how value, low and high set each)
DISTRIBUTIONS: tuple[str, ...] = get_args(Distribution)
#: evidence grade of a sourced number: A measured or list, B analyst estimate, C our estimate
Grade = Literal["A", "B", "C"]


class Quantity(BaseModel):
    """A number as written in a file, with its range and provenance."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    value: float
    low: float | None = None
    high: float | None = None
    distribution: Distribution | None = None
    unit: str | None = None
    source: str = ""
    date: str = ""
    note: str = ""
    grade: Grade | None = None


def _as_quantity(raw, info: ValidationInfo):
    """A bare number as ``{value: ...}``; value, low and high read by :func:`tco.foundation.user_numbers.read_number`
    with the unit of the field they are given for (so ``9%`` is 0.09 for a rate, refused for a price)."""
    if isinstance(raw, Quantity):  # a default given in code
        return raw
    data = dict(raw) if isinstance(raw, dict) else {"value": raw}
    field = FIELDS.get(info.field_name or "")
    for key in ("value", "low", "high"):
        if data.get(key) is not None or (key == "value" and "value" in data):
            data[key] = read_number(data[key], field, key, check_domain=False)  # an InputError at .value, .low, .high
    return data


#: a field that accepts a bare number or a full quantity mapping
Q = Annotated[Quantity, BeforeValidator(_as_quantity)]


@dataclass(frozen=True)
class Param:
    """One named input: base value, unit, range, distribution and source."""

    name: str
    value: float
    unit: str
    low: float
    high: float
    distribution: str
    source: str = ""
    date: str = ""
    note: str = ""
    grade: str = ""

    @property
    def field(self) -> Field:
        return field_for(self.name)

    @property
    def uncertain(self) -> bool:
        return self.high > self.low

    def with_value(self, value: float) -> Param:
        """This parameter with a new base value; the range widens to include it."""
        return replace(self, value=float(value), low=min(self.low, value), high=max(self.high, value))


def param_from_quantity(name: str, q: Quantity, default_source: str = "") -> Param:
    """Check a quantity against its field's unit and domain and make it a :class:`Param`.

    Parameters
    ----------
    name : str
        Dotted parameter name; its last segment names the field (:mod:`tco.foundation.fields`).
    q : Quantity
        Value, optional low/high and unit, source, date, grade and note as read from YAML.
    default_source : str
        Source recorded when the quantity names none.

    Returns
    -------
    Param
        The named parameter, value and range in the field's unit.

    Raises
    ------
    InputError
        Every broken rule (unit, domain, value outside its own range), each with its field path.
    """
    spec = field_for(name)
    errors = []
    if q.unit is not None and q.unit != spec.unit:
        errors.append(FieldError(f"{name}.unit", q.unit, f"must be {spec.unit!r}"))
    low = q.value if q.low is None else q.low
    high = q.value if q.high is None else q.high
    given = [("", q.value)] + [(part, bound) for part, bound, raw in ((".low", low, q.low), (".high", high, q.high))
                               if raw is not None]  # an absent bound is the value: one error, not three
    for part, number in given:
        if not spec.admits(number):
            errors.append(FieldError(name + part, number, spec.rule()))
    if not errors and not low <= q.value <= high:
        errors.append(FieldError(name, q.value, f"must lie within its range [low {low:g}, high {high:g}]"))
    if errors:
        raise InputError(errors)
    distribution = q.distribution or ("triangular" if high > low else "fixed")
    return Param(name, float(q.value), spec.unit, float(low), float(high), distribution,
                 q.source or default_source, q.date, q.note, q.grade or "")


class ParamSet(Mapping[str, Param]):
    """An ordered, immutable set of named parameters."""

    def __init__(self, params: Iterable[Param]):
        self._params = {p.name: p for p in params}

    def __getitem__(self, name: str) -> Param:
        try:
            return self._params[name]
        except KeyError:
            raise InputError.one("parameter", name, unknown_name_rule(name, self._params)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._params

    def __iter__(self) -> Iterator[str]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def values(self) -> dict[str, float]:  # type: ignore[override]
        """Base values by name: what the core evaluates."""
        return {name: p.value for name, p in self._params.items()}

    def values_list(self) -> list[Param]:
        """Every parameter, in order."""
        return list(self._params.values())

    def uncertain(self) -> list[Param]:
        """Parameters whose low and high differ, in order."""
        return [p for p in self._params.values() if p.uncertain]

    def with_values(self, updates: Mapping[str, object]) -> ParamSet:
        """A copy with new base values (each read by :func:`checked_edits`); raises on any broken rule."""
        return self.edited(updates)[0]

    def edited(self, updates: Mapping[str, object]) -> tuple[ParamSet, list[FieldWarning]]:
        """A copy with new base values and the warnings about them; raises :class:`InputError`
        listing every broken rule (see :func:`checked_edits`)."""
        accepted, errors, warnings = checked_edits(self, updates)
        if errors:
            raise InputError(errors)
        params = dict(self._params)
        for name, value in accepted.items():
            params[name] = params[name].with_value(value)
        return ParamSet(params.values()), warnings

    def spread(self, spreads: Mapping[str, object]) -> ParamSet:
        """A copy with new Monte Carlo distributions and ranges (:func:`checked_spreads`); raises on any broken rule."""
        accepted = checked_spreads(self, spreads)
        return ParamSet(accepted.get(p.name, p) for p in self._params.values())


#: the keys of one entry of a scenario's ``uncertainty:`` (:func:`checked_spreads`)
SPREAD_KEYS = ("distribution", "low", "high")


def checked_spreads(params: ParamSet, spreads: Mapping[str, object]) -> dict[str, Param]:
    """The one validation of a parameter's Monte Carlo distribution and range as a user sets them.

    A scenario file's ``uncertainty:``, the Uncertainty view, the API:
    ``{name: {distribution: uniform, low: 1.5, high: 3.0}}``, each key optional. ``low`` and ``high`` are read like
    any edit (:func:`tco.foundation.user_numbers.read_number`: ``"9%"`` is 0.09 for a rate) and checked against the
    field's domain; the base value must lie in the range (an edit of the value widens it again:
    :meth:`Param.with_value`); a drawn distribution needs ``low < high``, a lognormal one ``low > 0``
    (``ln(high / low)``, :mod:`tco.studies.sampling`). Without ``distribution`` the parameter keeps its own, except
    that one without a range before is drawn triangular (as :func:`param_from_quantity` reads a file). Every broken
    rule is reported, each with its path ``uncertainty.<name>[.<key>]``.

    Parameters
    ----------
    params : ParamSet
        The scenario's named parameters (their values already edited).
    spreads : Mapping[str, object]
        Per dotted name, a mapping of :data:`SPREAD_KEYS` to the new distribution (one of :data:`DISTRIBUTIONS`),
        low and high [unit of the field, or text such as ``"9%"``].

    Returns
    -------
    dict[str, Param]
        The parameters with their new distribution and range, by name.

    Raises
    ------
    InputError
        Every broken rule.
    """
    if not isinstance(spreads, Mapping):
        raise InputError.one("uncertainty", type(spreads).__name__, "must map parameter names to {distribution, low, high}")
    if len(spreads) > MAX_EDITS:
        raise InputError.one("uncertainty", f"{len(spreads):,} entries", f"has too many entries: at most {MAX_EDITS:,}")
    accepted: dict[str, Param] = {}
    errors: list[FieldError] = []
    for name, raw in spreads.items():
        path = f"uncertainty.{str(name)[:200]}"
        if not isinstance(name, str) or name not in params:
            errors.append(FieldError(path, raw, unknown_name_rule(str(name)[:200], params)))
            continue
        if not isinstance(raw, Mapping) or not raw or set(raw) - set(SPREAD_KEYS):
            errors.append(FieldError(path, raw, f"must map some of {', '.join(SPREAD_KEYS)} to their values"))
            continue
        param, found = params[name], []
        distribution = raw.get("distribution")
        if distribution is not None and distribution not in DISTRIBUTIONS:
            found.append(FieldError(f"{path}.distribution", distribution, f"must be one of {', '.join(DISTRIBUTIONS)}"))
        bounds = {}
        for key in ("low", "high"):
            if raw.get(key) is None:
                bounds[key] = getattr(param, key)
                continue
            try:
                bounds[key] = read_number(raw[key], param.field, f"{path}.{key}")
            except InputError as exc:
                found.extend(exc.errors)
        if not found:
            low, high = bounds["low"], bounds["high"]
            if distribution is None:  # kept; a parameter without a range given one is drawn triangular, as in a file
                distribution = "triangular" if not param.uncertain and high > low else param.distribution
            if not low <= param.value <= high:
                found.append(FieldError(path, [low, high], f"must hold the base value {param.value:g} (low <= value <= "
                                                           "high)"))
            elif distribution != "fixed" and not high > low:
                found.append(FieldError(path, [low, high], f"is drawn {distribution}, which needs low < high"))
            elif distribution == "lognormal" and not low > 0:
                found.append(FieldError(path, [low, high], "is drawn lognormal, which needs low > 0"))
        if found:
            errors.extend(found)
        else:
            accepted[name] = replace(param, distribution=distribution, low=bounds["low"], high=bounds["high"])
    if errors:
        raise InputError(errors)
    return accepted


def spreads_of(params: ParamSet, spreads: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """A scenario file's ``uncertainty:`` as resolved, so the file written back (``to_yaml``) reads the same numbers
    without their original text (``"9%"``).

    Parameters
    ----------
    params : ParamSet
        The resolved parameters (their distributions and ranges already set).
    spreads : Mapping[str, object]
        The ``uncertainty:`` entries as given; only their names are read.

    Returns
    -------
    dict[str, dict[str, object]]
        Per name, its distribution, low and high [unit of the field].
    """
    return {name: {"distribution": params[name].distribution, "low": params[name].low, "high": params[name].high}
            for name in spreads}


#: most edits one request may carry (a scenario has ~100 parameters; a URL or file with more is not a user's)
MAX_EDITS = 1000


def checked_edits(params: ParamSet, updates: Mapping[str, object]) -> tuple[dict[str, float], list[FieldError],
                                                                          list[FieldWarning]]:
    """The one validation of edits to base values, whoever sends them.

    ``set:``, ``--set``, the app, a shared link, a workbook, the API. Each value is read by
    :func:`tco.foundation.user_numbers.read_number` (booleans, Python-only literals and non-finite numbers
    refused; "9%", "2,000", "20k" read) and checked against its field's domain, then every
    cross-field rule (:func:`cross_field_errors`) is applied to the edited scenario. A value
    outside the parameter's sourced low/high is accepted with a warning. One bad edit never
    hides another: each is reported, the others are accepted.

    Parameters
    ----------
    params : ParamSet
        The scenario's named parameters.
    updates : Mapping[str, object]
        New base values by dotted name, as sent (numbers or text).

    Returns
    -------
    accepted : dict[str, float] [unit of each field]
        The edits that passed, in their fields' units.
    errors : list of FieldError
        Every refused edit and broken cross-field rule.
    warnings : list of FieldWarning
        Accepted values outside their sourced range.
    """
    if len(updates) > MAX_EDITS:
        return {}, [FieldError("set", f"{len(updates):,} entries", f"has too many entries: at most {MAX_EDITS:,}")], []
    accepted: dict[str, float] = {}
    errors: list[FieldError] = []
    for name, raw in updates.items():
        if not isinstance(name, str) or name not in params:
            errors.append(FieldError(str(name)[:200], raw, unknown_name_rule(str(name)[:200], params)))
            continue
        try:
            accepted[name] = read_number(raw, params[name].field, name)
        except InputError as exc:
            errors.extend(exc.errors)
    crossed = cross_field_errors({**params.values(), **accepted}, set(accepted))
    for error in crossed:
        accepted.pop(error.path, None)
    warnings = [FieldWarning(name, value, outside_range_message(params[name]))
                for name, value in accepted.items() if not params[name].low <= value <= params[name].high]
    return accepted, errors + crossed, warnings


def outside_range_message(param: Param) -> str:
    """Why a value outside ``param``'s sourced range deserves a look (the value is still used).

    Parameters
    ----------
    param : Param
        The parameter, with its unit, range and source.

    Returns
    -------
    str
        The warning text.
    """
    source = param.source if len(param.source) <= 60 else param.source[:57] + "..."
    return f"{param.unit} is outside its sourced range [{param.low:g}, {param.high:g}]" + (
        f" ({source})" if source else "") + "; used as given"




def cross_field_errors(values: Mapping[str, float], edited: set[str] | None = None) -> list[FieldError]:
    """Rules between fields, on base values.

    Idle power <= TDP, active <= total parameters, experts per token <= routed experts, and
    memory tiers listed fastest first. An error is reported at the edited name of a broken
    pair (both when both were edited); with ``edited`` None, at the first name.

    Parameters
    ----------
    values : Mapping[str, float] [unit of each field]
        Base values by dotted name in the scenario's order (tiers in the order the device lists them).
    edited : set of str or None
        Names the user edited, or None.

    Returns
    -------
    list of FieldError
        Every broken rule.
    """
    errors = []
    for lower, upper in ORDERED_FIELDS:
        for name, value in values.items():
            if not name.endswith("." + lower):
                continue
            other = name[: -len(lower)] + upper
            if other not in values or value <= values[other]:
                continue
            if edited is None or name in edited or other not in edited:
                errors.append(FieldError(name, value, f"must not exceed {other} ({values[other]:g})"))
            if edited is not None and other in edited:
                errors.append(FieldError(other, values[other], f"must be at least {name} ({value:g})"))
    previous: dict[str, tuple[str, float]] = {}
    for name, value in values.items():
        head, sep, _ = name.partition(".memory.")
        if not sep or not name.endswith(".bandwidth_bytes_per_s"):
            continue
        if head in previous and value > previous[head][1]:
            faster, bandwidth = previous[head]
            where = name if edited is None or name in edited or faster not in edited else faster
            errors.append(FieldError(where, values[where], f"memory tiers are listed fastest first: {name} ({value:g} B/s) "
                                                           f"must not exceed {faster} ({bandwidth:g} B/s)"))
        previous[head] = (name, value)
    return errors


def unknown_name_rule(name: str, known: Iterable[str]) -> str:
    """The rule for an unknown parameter name, with the closest known names.

    Parameters
    ----------
    name : str
        The name given.
    known : Iterable[str]
        The scenario's parameter names.

    Returns
    -------
    str
        The rule, with up to three close names.
    """
    import difflib

    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else "; `tco params` lists the names"
    return "is not a parameter of this scenario" + hint


def parse_assignment(text: str) -> tuple[str, str]:
    """Split ``NAME=VALUE`` from the command line; the value is read by :func:`checked_edits`.

    Parameters
    ----------
    text : str
        One ``--set`` argument.

    Returns
    -------
    tuple of (str, str)
        The name and the raw value text.

    Raises
    ------
    InputError
        When the text has no ``=`` or no name.
    """
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise InputError.one("--set", text, "must look like NAME=VALUE, e.g. economics.discount_rate=0.08")
    return name.strip(), raw
