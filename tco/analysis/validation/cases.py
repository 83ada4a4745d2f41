"""The validation suite file (``validation/cases.yaml``) and user measurement CSVs.

A case is a published measurement: its source, the conditions it was measured under (an
inline scenario), the published figure, its unit, and a tolerance band on the relative
error with its reason. A case names the rows of ``validation/measurements.yaml`` it
reproduces (``rows``): one row for a figure, two for a ratio (the numerator's and the
denominator's). From the rows the loader fills what the publication fixes -- the model,
device and system size, the benchmark's mean input length, the logged output length (else the
benchmark reference's published mean), the latency limits and their percentile, the published
figure, the source -- and the case adds what the rows do not say (the run configuration:
replica shape, batch limit, token budget, number format). A case is **out of sample** when a row comes from an MLPerf round after
v4.1 (:data:`tco.analysis.validation.measurements.IN_SAMPLE_ROUNDS`); the loader refuses such a case
in the fit (``fit: true``), so a calibration can never see those rounds.
"""

from __future__ import annotations

import csv
import io
import statistics
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from tco.analysis.validation.measurements import (
    IN_SAMPLE_ROUNDS,
    ROUNDS,
    Measurements,
    MLPerfResult,
    PerUserSpeed,
    Strict,
    Text,
    VendorThroughput,
    load_measurements,
    validated_file,
)
from tco.foundation.errors import FieldError, InputError
from tco.foundation.files import read_bounded
from tco.inputs.catalog import load_catalog
from tco.inputs.yaml_files import pydantic_errors, read_yaml

SUITE_PATH = Path(__file__).resolve().parents[3] / "validation" / "cases.yaml"

#: what a scenario case reads from the evaluation (see :mod:`tco.analysis.validation.predict`)
METRICS = ("system_output_tokens_per_s", "output_tokens_per_s_per_device", "per_user_decode_tokens_per_s",
           "per_user_tokens_per_s_under_load", "ttft_s", "tpot_s", "tpot_mean_at_logged_load_s",
           "phase_tokens_per_s_per_device")
#: Offline has no latency bound: targets of minutes, so the slot cap is set by memory or the batch limit [s]
OFFLINE_TPOT_TARGET_S = 600.0
OFFLINE_TTFT_TARGET_S = 3600.0
Sample = Literal["in_sample", "out_of_sample"]


class Source(Strict):
    publication: Text
    date: Text
    system: Text
    model: Text
    precision: Text
    conditions: Text
    repo: str = ""
    file: str = ""


class Tolerance(Strict):
    """Accepted band of the relative error ``predicted / published - 1``, and why."""

    low: float
    high: float
    reason: str = Field(min_length=10)

    @model_validator(mode="after")
    def _ordered(self):
        if not self.low < self.high:
            raise ValueError(f"low ({self.low:g}) must be below high ({self.high:g})")
        return self


class SpeculationRun(Strict):
    """A measured run's speculative decoding: the method, the tokens it drafted per step and the acceptance length the
    publication measured (accepted tokens per verification step). The draft's cost is the method's catalog default
    (assumptions/speculation.yaml): nothing of it is fitted to the run."""

    method: Literal["mtp", "eagle", "draft_model"]
    draft_tokens: int = Field(ge=1)
    accepted_tokens_per_step: float = Field(gt=1.0)

    @model_validator(mode="after")
    def _at_most_every_draft(self):
        if self.accepted_tokens_per_step > self.draft_tokens + 1:
            raise ValueError(f"accepted_tokens_per_step ({self.accepted_tokens_per_step:g}) exceeds draft_tokens + 1 "
                             f"({self.draft_tokens + 1}): a step emits at most its drafted tokens and one of its own")
        return self


class Conditions(Strict):
    """The measured set-up, as the core sees it: one colocated option on one device.

    The replica shape is pinned: ``tensor_parallel`` (default ``devices_per_replica``) x
    ``pipeline_stages``, or a wide one (``data_parallel`` ranks, ``micro_batches``). ``token_budget_tokens`` and
    ``percentile`` default to assumptions/serving.yaml. ``role`` names the pool measured (one pool of a
    disaggregated deployment: both pools take the pinned shape, the other is not read).
    """

    model: str
    device: str
    devices_per_replica: float = Field(gt=0)
    system_devices: float = Field(gt=0)
    prompt_tokens: float = Field(gt=0)
    prompt_tokens_scv: float = Field(default=0.0, ge=0, description="squared CV of the prompt length [-]")
    output_tokens: float = Field(gt=0)
    tpot_target_s: float = Field(gt=0)
    ttft_target_s: float = Field(default=1000.0, gt=0)
    max_batch: float = Field(default=256, ge=1)
    bits: float = Field(default=8, gt=0, le=32)
    compute_bits: float | None = Field(default=None, ge=4, le=16)
    kv_bits: float | None = Field(default=None, gt=0, le=32)
    tensor_parallel: int | None = Field(default=None, ge=1)
    pipeline_stages: int = Field(default=1, ge=1)
    data_parallel: int | None = Field(default=None, ge=2, description=(
        "a wide expert-parallel replica: data-parallel attention ranks, the routed experts sharded over them"))
    micro_batches: int | None = Field(default=None, ge=1, le=2, description="2: two-batch overlap (wide shapes)")
    role: Literal["colocated", "prefill", "decode"] = Field(default="colocated", description=(
        "the pool measured: colocated, or the prefill or decode pool of a disaggregated deployment"))
    token_budget_tokens: float | None = Field(default=None, ge=1)
    percentile: float | None = Field(default=None, ge=0.5, lt=1.0)
    policy: Literal["chunked", "prefill_first"] | None = None
    speculation: SpeculationRun | None = Field(default=None, description="the run's speculative decoding, if any")
    prefix_hit_fraction: float = Field(default=0.0, ge=0.0, lt=1.0, description=(
        "share of the prompt tokens the run served from a prefix cache (its published hit rate) [-]"))
    prefix_cache_tier: Literal["hbm", "host_dram", "ssd"] | None = Field(default=None, description=(
        "where that cache lives (default: assumptions/serving.yaml)"))
    sequences_in_flight: float | None = Field(default=None, gt=0, description=(
        "sequences the measured system held in flight on average, from its log by Little's law (output tokens/s x "
        "mean time per output token) [sequences]; read by the metric tpot_mean_at_logged_load_s"))


class Case(Strict):
    """A measured case, resolved: its conditions complete and its published figure filled from its rows."""

    name: Text
    category: Text
    device_class: str | None = Field(default=None, alias="class")
    fit: bool = False
    rows: list[str] = Field(default=[], max_length=2)
    sample: Sample = "in_sample"
    scenario: str = "-"
    source: Source
    conditions: Conditions
    denominator: Conditions | None = None
    metric: Literal[METRICS]  # type: ignore[valid-type]
    published: float = Field(gt=0)
    unit: Text
    tolerance: Tolerance
    known_miss: str | None = Field(default=None, min_length=20,
                                   description="an open defect: the case fails its check (outside its band, or a ranking "
                                               "out of order), and why; the suite's tests check it stays a miss until the "
                                               "cause is fixed")

    @model_validator(mode="after")
    def _fit_rules(self):
        if self.fit and self.device_class is None:
            raise ValueError("a fitted case needs a class")
        if self.fit and self.sample == "out_of_sample":
            raise ValueError(f"an out-of-sample case cannot enter the fit (in-sample rounds: {', '.join(IN_SAMPLE_ROUNDS)})")
        if self.fit and self.denominator is not None:
            raise ValueError("a ratio case (denominator) is a check, never fitted")
        if self.fit and self.known_miss is not None:
            raise ValueError("a fitted case cannot be a known miss")
        if self.metric == "tpot_mean_at_logged_load_s" and self.conditions.sequences_in_flight is None:
            raise ValueError("metric tpot_mean_at_logged_load_s needs conditions.sequences_in_flight (the run's output "
                             "tokens/s x its mean TPOT)")
        return self

    @property
    def is_ratio(self) -> bool:
        return self.denominator is not None


class Prior(Strict):
    value: float = Field(gt=0)
    low: float = Field(gt=0)
    high: float = Field(gt=0)

    @model_validator(mode="after")
    def _ordered(self):
        if not self.low <= self.value <= self.high:
            raise ValueError("needs low <= value <= high")
        return self


class DeviceClass(Strict):
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


class Suite(Strict):
    classes: dict[str, DeviceClass] = {}
    models: dict[str, dict] = {}
    cases: list[Case] = Field(min_length=1)
    anchors: dict = {}  # YAML anchors shared by cases (merged with <<); not read otherwise

    @model_validator(mode="after")
    def _consistent(self):
        check_names_and_classes(self.cases, self.classes, fitted_only=True)
        return self


def check_names_and_classes(cases, classes, fitted_only: bool = False) -> None:
    """Case names are unique and every case's class is one of the suite's classes (ValueError otherwise).

    With ``fitted_only`` only a fitted case needs its class among the suite's (a check may
    score a class the data cannot fit, which then runs at its priors).
    """
    names = [c.name for c in cases]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"case names must be unique: {', '.join(duplicated)}")
    for case in cases:
        if fitted_only and not case.fit:
            continue
        if case.device_class is not None and case.device_class not in classes:
            raise ValueError(f"case {case.name}: class {case.device_class!r} is not one of {', '.join(classes)}")


# ---------------------------------------------------------------- rows of measurements.yaml -> cases

#: what a case may say beside its rows (the rest comes from the rows)
_CASE_KEYS = {"name", "category", "class", "fit", "rows", "basis", "metric", "source", "conditions", "denominator",
              "tolerance", "known_miss"}


def _rate(record: MLPerfResult | PerUserSpeed | VendorThroughput, metric: str) -> float:
    """The published figure of one row in the metric's unit."""
    if isinstance(record, PerUserSpeed):
        return record.tokens_per_s_per_user
    if isinstance(record, VendorThroughput):
        if record.phase != "serve":
            if metric != "phase_tokens_per_s_per_device":
                raise ValueError(f"row {record.id} is one phase's throughput: metric phase_tokens_per_s_per_device reads it")
            return record.tokens_per_s_per_accelerator
        if metric not in ("system_output_tokens_per_s", "output_tokens_per_s_per_device"):
            raise ValueError(f"row {record.id} is a maximum throughput: metric {metric} does not read it")
        return record.tokens_per_s_per_accelerator if metric == "output_tokens_per_s_per_device" else record.tokens_per_s
    if metric == "output_tokens_per_s_per_device":
        return record.tokens_per_s_per_accelerator
    if metric in ("ttft_s", "tpot_s"):
        observed = record.observed.model_dump() if record.observed else {}
        value = observed.get(f"{metric[:-2]}_p99_s")
        if value is None:
            raise ValueError(f"row {record.id} logs no 99th-percentile {metric[:-2].upper()}")
        return value
    if metric == "tpot_mean_at_logged_load_s":
        return _logged_mean_tpot_s(record)
    return record.tokens_per_s


def _logged_mean_tpot_s(record) -> float:
    """The mean time per output token a row's log reports [s]."""
    value = record.observed.tpot_mean_s if isinstance(record, MLPerfResult) and record.observed else None
    if value is None:
        raise ValueError(f"row {getattr(record, 'id', record)} logs no mean TPOT")
    return value


def _logged_output_tokens(m: Measurements, record: MLPerfResult) -> float | None:
    """Mean generated tokens per sample of the benchmark's runs that log samples/s [tokens], for a row that
    logs none. An in-sample row reads in-sample logs only: nothing of a later round reaches a fitted case."""
    logged = [r.output_tokens_per_sample for r in m.mlperf if r.benchmark == record.benchmark and r.output_tokens_per_sample
              and (record.split == "out_of_sample" or r.split == "in_sample")]
    return statistics.fmean(logged) if logged else None


def _conditions_from_row(m: Measurements, record, overlay: dict, where: str) -> dict:
    """Conditions a row fixes (model, device, size, lengths, latency limits), then the case's own ``overlay``.

    The output length is the run's logged tokens per sample, else the mean of the benchmark's logged runs
    (:func:`_logged_output_tokens`), else the benchmark reference's published mean (a submission must generate
    90-110 % of it) [tokens].
    """
    base: dict = {}
    if isinstance(record, MLPerfResult):
        bench = m.benchmarks[record.benchmark]
        base.update(model=bench.model, device=record.device, system_devices=record.count,
                    output_tokens=record.output_tokens_per_sample or _logged_output_tokens(m, record)
                    or bench.reference_mean_output_tokens)
        if bench.mean_input_tokens is not None:
            base["prompt_tokens"] = bench.mean_input_tokens
        if bench.prompt_tokens_scv is not None:
            base["prompt_tokens_scv"] = bench.prompt_tokens_scv
        if record.scenario == "offline":
            base.update(tpot_target_s=OFFLINE_TPOT_TARGET_S, ttft_target_s=OFFLINE_TTFT_TARGET_S)
        else:
            limit = bench.latency[record.scenario]
            base.update(tpot_target_s=limit.tpot_s, ttft_target_s=limit.ttft_s, percentile=limit.percentile / 100.0)
    elif isinstance(record, VendorThroughput):  # as many in flight as the system holds, no latency bound: Offline
        base.update(model=record.model, device=record.device, prompt_tokens=record.prompt_tokens,
                    output_tokens=record.output_tokens, system_devices=record.count,
                    tpot_target_s=OFFLINE_TPOT_TARGET_S, ttft_target_s=OFFLINE_TTFT_TARGET_S,
                    role="colocated" if record.phase == "serve" else record.phase)
    else:
        base.update(model=record.model, device=record.device, prompt_tokens=record.prompt_tokens,
                    output_tokens=record.output_tokens, system_devices=record.count)
        if record.concurrency is not None:  # a closed loop: that many sequences in flight, no latency bound
            base.update(max_batch=record.concurrency, tpot_target_s=OFFLINE_TPOT_TARGET_S,
                        ttft_target_s=OFFLINE_TTFT_TARGET_S)
    for key, value in overlay.items():
        if key in base and key in ("model", "device", "tpot_target_s", "ttft_target_s", "percentile") \
                and isinstance(record, MLPerfResult) and value != base[key]:
            raise ValueError(f"{where}.{key}: {value!r} contradicts row {record.id} ({base[key]!r}); the row fixes it")
        base[key] = value
    base.setdefault("devices_per_replica", base.get("system_devices"))
    return {k: v for k, v in base.items() if v is not None}


def _scenario(records) -> str:
    """Scenario label of a case: the row's scenario, ``a/b`` for a ratio across scenarios, ``per_user``."""
    labels = ["per_user" if isinstance(r, PerUserSpeed) else
              ("offline" if r.phase == "serve" else r.phase) if isinstance(r, VendorThroughput) else r.scenario
              for r in records]
    return labels[0] if len(set(labels)) == 1 else "/".join(labels)


def _category(records, metric: str) -> str:
    if metric in ("ttft_s", "tpot_s"):
        return metric[:-2]
    if metric == "tpot_mean_at_logged_load_s":
        return "tpot_mean"
    if len(records) == 2:
        same_system = records[0].system == records[1].system
        if same_system and all(isinstance(r, MLPerfResult) for r in records):
            return "latency_target_ratio"
        if same_system and all(isinstance(r, PerUserSpeed) for r in records) and records[0].speculative \
                and not records[1].speculative:
            return "speculation_speedup"  # one user's speed with speculative decoding over it without
        return "ranking"
    return "per_user_decode" if isinstance(records[0], PerUserSpeed) else "throughput"


_UNITS = {"system_output_tokens_per_s": "output tokens/s per system", "output_tokens_per_s_per_device":
          "output tokens/s per accelerator", "per_user_decode_tokens_per_s": "output tokens/s per user",
          "per_user_tokens_per_s_under_load": "output tokens/s per user", "ttft_s": "s", "tpot_s": "s",
          "tpot_mean_at_logged_load_s": "s", "phase_tokens_per_s_per_device":
          "tokens/s per accelerator of the measured pool (prefill: prompt tokens, decode: output tokens)"}


def resolve_case(raw: dict, m: Measurements, index: int = 0) -> dict:
    """A suite case with its conditions, published figure, source, sample and scenario filled from its rows.

    Raises ValueError naming the rule a case breaks (a row id that does not exist, a
    ``published`` figure given beside rows, a fitted case with an out-of-sample row).
    """
    if not isinstance(raw, dict) or "rows" not in raw:
        return raw
    name = raw.get("name", f"cases[{index}]")
    unknown = sorted(set(raw) - _CASE_KEYS)
    if unknown:
        raise ValueError(f"case {name}: {', '.join(unknown)} not allowed beside rows (the rows fix them)")
    records = m.records()
    rows = raw["rows"]
    if not isinstance(rows, list) or not 1 <= len(rows) <= 2 or not all(isinstance(r, str) for r in rows):
        raise ValueError(f"case {name}.rows: give one row id (a figure) or two (numerator, denominator)")
    missing = [r for r in rows if r not in records]
    if missing:
        raise ValueError(f"case {name}.rows: {', '.join(missing)} is not a row of validation/measurements.yaml")
    found = [records[r] for r in rows]
    later = [r for r in found if r.split == "out_of_sample"]
    sample = "out_of_sample" if later else "in_sample"
    if raw.get("fit") and later:
        when = f"MLPerf round {later[0].round}" if isinstance(later[0], MLPerfResult) else later[0].date
        raise ValueError(f"case {name}: fit: true, but row {later[0].id} is from {when}, "
                         f"out of sample (a fit may use rounds {', '.join(IN_SAMPLE_ROUNDS)} and vendor or paper figures)")
    basis = raw.get("basis", "per_system")
    if isinstance(found[0], PerUserSpeed):
        default = "per_user_tokens_per_s_under_load" if found[0].concurrency else "per_user_decode_tokens_per_s"
    else:
        default = "output_tokens_per_s_per_device" if basis == "per_accelerator" else "system_output_tokens_per_s"
        if isinstance(found[0], VendorThroughput) and found[0].phase != "serve":
            default = "phase_tokens_per_s_per_device"
    metric = raw.get("metric", default)
    published = _rate(found[0], metric)
    if len(found) == 2:
        published = published / _rate(found[1], metric)
    first = found[0]
    source = {"publication": first.source, "system": first.system,
              "date": ROUNDS[first.round] if isinstance(first, MLPerfResult) else first.date,
              "model": m.benchmarks[first.benchmark].name if isinstance(first, MLPerfResult) else first.model_name,
              "precision": first.precision}
    if isinstance(first, MLPerfResult):
        source.update(repo=first.repo, file=first.file)
    if len(found) == 2:
        source["publication"] = "; ".join(dict.fromkeys(r.source for r in found))
    source.update(raw.get("source", {}))
    out = {k: v for k, v in raw.items() if k not in ("basis",)}
    out.update(metric=metric, published=published, sample=sample, scenario=_scenario(found), source=source,
               unit="ratio" if len(found) == 2 else _UNITS[metric], category=raw.get("category", _category(found, metric)),
               conditions=_conditions_from_row(m, first, raw.get("conditions", {}), f"{name}.conditions"))
    if metric == "tpot_mean_at_logged_load_s":  # Little's law on the log: sequences in flight = tokens/s x mean TPOT
        out["conditions"]["sequences_in_flight"] = first.tokens_per_s * _logged_mean_tpot_s(first)
    if len(found) == 2:
        out["denominator"] = _conditions_from_row(m, found[1], raw.get("denominator", {}), f"{name}.denominator")
    return out


def _check_class_members(suite: Suite, path: str) -> list[FieldError]:
    """Every class lists catalog devices of that calibration class, and every case's class is its device's."""

    classes = {ident: data.get("calibration_class") for ident, data in load_catalog().devices.items()}
    errors = []
    for name, spec in suite.classes.items():
        for device in spec.devices:
            if device not in classes:
                errors.append(FieldError(f"{path}: classes.{name}.devices", device, "must be a catalog device"))
            elif classes[device] != name:
                errors.append(FieldError(f"{path}: classes.{name}.devices", device,
                                         f"has calibration class {classes[device]!r} in the catalog"))
    for case in suite.cases:
        actual = classes.get(case.conditions.device)
        if actual is not None and case.device_class is not None and actual != case.device_class:
            errors.append(FieldError(f"{path}: cases.{case.name}.class", case.device_class,
                                     f"must be {actual!r}, the calibration class of {case.conditions.device}"))
    return errors


def load_suite(path: str | Path | None = None, measurements: Measurements | None = None) -> Suite:
    """Read and validate a suite file (default: the bundled ``validation/cases.yaml``), its cases resolved
    against ``validation/measurements.yaml`` (or ``measurements``)."""
    path = Path(path) if path else SUITE_PATH
    data = read_yaml(path)
    m = measurements or load_measurements()
    if isinstance(data, dict) and isinstance(data.get("cases"), list):
        try:
            data = {**data, "cases": [resolve_case(c, m, i) for i, c in enumerate(data["cases"])]}
        except ValueError as exc:
            raise InputError.one(str(path), None, str(exc)) from None
    return validated_file(Suite, data, path, _check_class_members)


#: columns of a user measurements CSV (docs/calibration.md); optional ones have defaults
CSV_REQUIRED = ("name", "class", "model", "device", "devices_per_replica", "system_devices", "prompt_tokens",
                "output_tokens", "tpot_target_s", "metric", "published")
CSV_OPTIONAL = ("ttft_target_s", "max_batch", "bits", "prompt_tokens_scv", "sequences_in_flight", "unit", "source")


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
        # utf-8-sig: the byte order mark spreadsheets write is no part of the first column's name
        rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")))
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
