"""Named parameters: the spine every study, export and view addresses quantities by.

A :class:`Quantity` is what a catalog or scenario file gives for a number (a bare number
or a mapping with value, low, high, distribution, source, date, note). Once a scenario
is resolved, every number becomes a :class:`Param` under its dotted name, with the unit
and valid domain of its field (:mod:`tco.fields`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict

from .errors import FieldError, InputError
from .fields import Field, field_for

Distribution = Literal["fixed", "uniform", "triangular", "normal", "lognormal"]
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


def _as_quantity(raw):
    if isinstance(raw, bool):
        raise ValueError("must be a number, not a boolean")
    if isinstance(raw, (int, float)):
        return {"value": raw}
    return raw


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

    Raises :class:`InputError` listing every broken rule, each with the field path.
    """
    spec = field_for(name)
    errors = []
    if q.unit is not None and q.unit != spec.unit:
        errors.append(FieldError(f"{name}.unit", q.unit, f"must be {spec.unit!r}"))
    low = q.value if q.low is None else q.low
    high = q.value if q.high is None else q.high
    for part, number in (("", q.value), (".low", low), (".high", high)):
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
            raise InputError.one("--param", name, unknown_name_rule(name, self._params)) from None

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

    def with_values(self, updates: Mapping[str, float]) -> ParamSet:
        """A copy with new base values, each checked against its field's domain."""
        errors = []
        params = dict(self._params)
        for name, value in updates.items():
            if name not in params:
                errors.append(FieldError(name, value, unknown_name_rule(name, params)))
                continue
            if not params[name].field.admits(value):
                errors.append(FieldError(name, value, params[name].field.rule()))
                continue
            params[name] = params[name].with_value(value)
        if errors:
            raise InputError(errors)
        return ParamSet(params.values())


def unknown_name_rule(name: str, known: Iterable[str]) -> str:
    """The rule for an unknown parameter name, with the closest known names."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else "; `tco params` lists the names"
    return "is not a parameter of this scenario" + hint


def parse_assignment(text: str) -> tuple[str, float]:
    """Parse ``NAME=VALUE`` from the command line into a name and a float."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise InputError.one("--set", text, "must look like NAME=VALUE, e.g. economics.discount_rate=0.08")
    try:
        value = float(raw)
    except ValueError:
        raise InputError.one(name.strip(), raw, "must be a number") from None
    if math.isnan(value) or math.isinf(value):
        raise InputError.one(name.strip(), raw, "must be a finite number")
    return name.strip(), value
