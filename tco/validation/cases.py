"""The validation suite file (``validation/cases.yaml``) and user measurement CSVs.

A case is a published measurement: its source, the conditions it was measured under
(an inline scenario) or the published arithmetic it checks (a named formula), the
published figure, its unit, and a tolerance band on the relative error with its reason.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import FieldError, InputError
from ..util import read_bounded
from ..yamlio import pydantic_errors, read_yaml

SUITE_PATH = Path(__file__).resolve().parents[2] / "validation" / "cases.yaml"

#: what a scenario case reads from the evaluation (see :mod:`tco.validation.predict`)
METRICS = ("system_output_tokens_per_s", "per_user_decode_tokens_per_s", "ttft_s", "tpot_s")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Source(_Strict):
    publication: str = Field(min_length=1)
    date: str = Field(min_length=1)
    system: str = Field(min_length=1)
    model: str = Field(min_length=1)
    precision: str = Field(min_length=1)
    conditions: str = Field(min_length=1)
    repo: str = ""
    file: str = ""


class Tolerance(_Strict):
    """Accepted band of the relative error ``predicted / published - 1``, and why."""

    low: float
    high: float
    reason: str = Field(min_length=10)

    @model_validator(mode="after")
    def _ordered(self):
        if not self.low < self.high:
            raise ValueError(f"low ({self.low:g}) must be below high ({self.high:g})")
        return self


class Conditions(_Strict):
    """The measured set-up, as the core sees it: one colocated option on one device.

    The replica shape is pinned: ``tensor_parallel`` (default ``devices_per_replica``) x
    ``pipeline_stages``. ``token_budget_tokens`` and ``percentile`` default to
    assumptions/serving.yaml.
    """

    model: str
    device: str
    devices_per_replica: float = Field(gt=0)
    system_devices: float = Field(gt=0)
    prompt_tokens: float = Field(gt=0)
    output_tokens: float = Field(gt=0)
    tpot_target_s: float = Field(gt=0)
    ttft_target_s: float = Field(default=1000.0, gt=0)
    max_batch: float = Field(default=256, ge=1)
    bits: float = Field(default=8, gt=0, le=32)
    compute_bits: float | None = Field(default=None, ge=4, le=16)
    kv_bits: float | None = Field(default=None, gt=0, le=32)
    tensor_parallel: int | None = Field(default=None, ge=1)
    pipeline_stages: int = Field(default=1, ge=1)
    token_budget_tokens: float | None = Field(default=None, ge=1)
    percentile: float | None = Field(default=None, ge=0.5, lt=1.0)


class Case(_Strict):
    name: str = Field(min_length=1)
    category: str = Field(min_length=1)
    device_class: str | None = Field(default=None, alias="class")
    fit: bool = False
    source: Source
    conditions: Conditions | None = None
    denominator: Conditions | None = None
    metric: Literal[METRICS] | None = None  # type: ignore[valid-type]
    formula: str | None = None
    inputs: dict[str, float] = {}
    published: float = Field(gt=0)
    unit: str = Field(min_length=1)
    tolerance: Tolerance

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="after")
    def _one_kind(self):
        if (self.conditions is None) == (self.formula is None):
            raise ValueError("give either conditions + metric (a measured system) or formula + inputs (published arithmetic)")
        if self.conditions is not None and self.metric is None:
            raise ValueError(f"a case with conditions needs a metric, one of {', '.join(METRICS)}")
        if self.fit and (self.conditions is None or self.device_class is None):
            raise ValueError("only a measured case with a class can enter the fit")
        if self.denominator is not None and (self.conditions is None or self.fit):
            raise ValueError("a ratio case (denominator) needs conditions and is a check, never fitted")
        return self


class Prior(_Strict):
    value: float = Field(gt=0)
    low: float = Field(gt=0)
    high: float = Field(gt=0)

    @model_validator(mode="after")
    def _ordered(self):
        if not self.low <= self.value <= self.high:
            raise ValueError("needs low <= value <= high")
        return self


class DeviceClass(_Strict):
    description: str = ""
    devices: list[str] = Field(min_length=1)
    shared: list[str] = []
    per_device: list[str] = []
    priors: dict[str, Prior]

    def parameter_keys(self) -> list[str]:
        """Fitted parameter keys: ``field`` when shared, ``field@device`` per device."""
        return list(self.shared) + [f"{f}@{d}" for f in self.per_device for d in self.devices]

    @model_validator(mode="after")
    def _priors_complete(self):
        missing = [k for k in self.parameter_keys() if k not in self.priors]
        if missing:
            raise ValueError(f"priors missing for {', '.join(missing)}")
        return self


class Suite(_Strict):
    classes: dict[str, DeviceClass] = {}
    models: dict[str, dict] = {}
    cases: list[Case] = Field(min_length=1)
    anchors: dict = {}  # YAML anchors shared by cases (merged with <<); not read otherwise

    @model_validator(mode="after")
    def _consistent(self):
        check_names_and_classes(self.cases, self.classes)
        return self


def check_names_and_classes(cases, classes) -> None:
    """Case names are unique and every case's class is one of the suite's classes (ValueError otherwise)."""
    names = [c.name for c in cases]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"case names must be unique: {', '.join(duplicated)}")
    for case in cases:
        if case.device_class is not None and case.device_class not in classes:
            raise ValueError(f"case {case.name}: class {case.device_class!r} is not one of {', '.join(classes)}")


def load_suite(path: str | Path | None = None) -> Suite:
    """Read and validate a suite file (default: the bundled ``validation/cases.yaml``)."""
    path = Path(path) if path else SUITE_PATH
    data = read_yaml(path)
    try:
        return Suite.model_validate(data)
    except ValidationError as exc:
        raise pydantic_errors(exc, str(path)) from None


#: columns of a user measurements CSV (docs/calibration.md); optional ones have defaults
CSV_REQUIRED = ("name", "class", "model", "device", "devices_per_replica", "system_devices", "prompt_tokens",
                "output_tokens", "tpot_target_s", "metric", "published")
CSV_OPTIONAL = ("ttft_target_s", "max_batch", "bits", "unit", "source")


#: largest measurements CSV read [B], and most rows
MAX_CSV_BYTES = 5_000_000
MAX_CSV_ROWS = 10_000


def cases_from_csv(path: str | Path) -> list[Case]:
    """Measured cases from a CSV, one row per measurement, all entering the fit.

    Columns: :data:`CSV_REQUIRED` plus any of :data:`CSV_OPTIONAL`. The tolerance of a
    user case is wide open (the calibration reports the error; it does not judge it).
    """
    path = Path(path)
    data = read_bounded(path, MAX_CSV_BYTES, "--cases")
    try:
        rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))
    except UnicodeDecodeError as exc:
        raise InputError.one("--cases", str(path), f"is not UTF-8 text (byte {exc.start}): is it a binary file?") from None
    except csv.Error as exc:
        raise InputError.one("--cases", str(path), f"is not a CSV file tco reads ({exc})") from None
    if len(rows) > MAX_CSV_ROWS:
        raise InputError.one("--cases", str(path), f"has {len(rows):,} rows; at most {MAX_CSV_ROWS:,} measurements are read")
    if not rows:
        raise InputError.one(str(path), None, "has no data rows")
    missing = [c for c in CSV_REQUIRED if c not in rows[0]]
    if missing:
        raise InputError.one(f"{path}: header", list(rows[0]), f"misses the columns {', '.join(missing)}")
    cases, errors = [], []
    for i, row in enumerate(rows, start=2):
        conditions = {k: row[k] for k in Conditions.model_fields if row.get(k) not in (None, "")}
        data = {
            "name": row["name"], "category": f"user:{row['metric']}", "class": row["class"], "fit": True,
            "source": {"publication": row.get("source") or str(path), "date": "-", "system": row["device"],
                       "model": row["model"], "precision": f"{row.get('bits') or 8}-bit", "conditions": f"{path}:{i}"},
            "conditions": conditions, "metric": row["metric"], "published": row["published"],
            "unit": row.get("unit") or row["metric"],
            "tolerance": {"low": -1.0, "high": 1.0e9, "reason": "user measurement: reported, not judged"},
        }
        try:
            cases.append(Case.model_validate(data))
        except ValidationError as exc:
            errors.extend(FieldError(f"{path}:{i}.{e.path}", e.value, e.rule) for e in pydantic_errors(exc).errors)
    if errors:
        raise InputError(errors)
    return cases
