"""Published measurements for calibration (``validation/measurements.yaml``).

Three kinds of record, each citing docs/sources.md:

- **MLPerf Inference results** (datacenter, closed division): one row per system, benchmark
  and scenario, with the round it was published in. Rounds v4.0 and v4.1 are *in-sample*
  (a fit may use them); v5.0 and later are *out-of-sample* (a fit must never see them, they
  only score it). The split is stated on every row and checked against the round.
- **Per-user decode speeds** of SRAM systems (Groq, Cerebras, SambaNova) and the GPU
  baselines quoted next to them: one user's output tokens/s.
- **Rankings**: the ratio of two of the records above (per accelerator or per system), with
  the published claim it checks where there is one.

The benchmark block records each MLPerf benchmark's dataset statistics and latency limits,
and leaves a statistic ``null`` when no published source gives it (never an estimate).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tco.foundation.errors import FieldError, InputError
from tco.inputs.yaml_files import pydantic_errors, read_yaml

MEASUREMENTS_PATH = Path(__file__).resolve().parents[3] / "validation" / "measurements.yaml"

#: MLPerf Inference rounds with the month their results were published
ROUNDS = {"v4.0": "2024-03", "v4.1": "2024-08", "v5.0": "2025-04", "v5.1": "2025-09", "v6.0": "2026-04"}
#: rounds a calibration may fit; every later round is held out
IN_SAMPLE_ROUNDS = ("v4.0", "v4.1")
SCENARIOS = ("offline", "server", "interactive")
Split = Literal["in_sample", "out_of_sample"]


class Strict(BaseModel):
    """A record of a validation file (measurements, cases, training cases): an unknown key is an error;
    an aliased field (``class``) loads by its alias or its name; a number must be finite."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)  # every figure is finite


#: a required string that may not be empty
Text = Annotated[str, Field(min_length=1)]
Record = TypeVar("Record", bound=Strict)


def validated_file(schema: type[Record], data: object, path: Path,
                   rules: Callable[[Record, str], list[FieldError]] | None = None) -> Record:
    """``data``, read from the file at ``path``, validated as ``schema``, then checked by ``rules`` (the
    rules between its records); any broken rule raises :class:`~tco.foundation.errors.InputError` naming the file."""
    try:
        record = schema.model_validate(data)
    except ValidationError as exc:
        raise pydantic_errors(exc, str(path)) from None
    errors = rules(record, str(path)) if rules else []
    if errors:
        raise InputError(errors)
    return record


class LatencyLimit(Strict):
    """A scenario's latency bound: both limits hold at ``percentile`` over all queries."""

    ttft_s: float = Field(gt=0)
    tpot_s: float = Field(gt=0)
    percentile: float = Field(gt=0, le=100)


class Benchmark(Strict):
    """One MLPerf LLM benchmark: the model it runs, its dataset and its latency limits."""

    name: Text
    model: str = Field(min_length=1, description="catalog model id")
    dataset: Text
    samples: int | None = Field(default=None, gt=0)
    max_input_tokens: int | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    mean_input_tokens: float | None = Field(default=None, gt=0)
    prompt_tokens_scv: float | None = Field(default=None, ge=0, description=(
        "squared coefficient of variation of the dataset's prompt lengths, Var[P] / E[P]^2, computed from its "
        "per-sample token counts (the arithmetic in the note) [-]"))
    reference_mean_output_tokens: float | None = Field(default=None, gt=0)
    min_tokens_per_sample: float | None = Field(default=None, gt=0)
    latency: dict[Literal[SCENARIOS], LatencyLimit] = {}  # type: ignore[valid-type]
    source: Text
    note: str = ""


class ObservedLatency(Strict):
    """Latencies a submission's log reports (server and interactive scenarios) [s]."""

    ttft_mean_s: float | None = Field(default=None, gt=0)
    ttft_p99_s: float | None = Field(default=None, gt=0)
    tpot_mean_s: float | None = Field(default=None, gt=0)
    tpot_p99_s: float | None = Field(default=None, gt=0)


class MLPerfResult(Strict):
    id: Text
    round: Literal[tuple(ROUNDS)]  # type: ignore[valid-type]
    split: Split
    submitter: Text
    system: Text
    accelerator: str = Field(min_length=1, description="as the submitter names it")
    device: str | None = Field(default=None, description="catalog device id, when the catalog has this part")
    count: int = Field(gt=0, description="accelerators in the measured system")
    precision: Text
    benchmark: Text
    scenario: Literal[SCENARIOS]  # type: ignore[valid-type]
    tokens_per_s: float = Field(gt=0, description="output tokens/s of the whole system")
    samples_per_s: float | None = Field(default=None, gt=0)
    observed: ObservedLatency | None = None
    availability: Literal["available", "preview", "rdi"] = "available"
    source: Text
    repo: str = ""
    file: str = ""
    note: str = ""

    @model_validator(mode="after")
    def _split_follows_round(self):
        expected = "in_sample" if self.round in IN_SAMPLE_ROUNDS else "out_of_sample"
        if self.split != expected:
            raise ValueError(f"round {self.round} is {expected} (in-sample rounds: {', '.join(IN_SAMPLE_ROUNDS)})")
        return self

    @property
    def tokens_per_s_per_accelerator(self) -> float:
        """[tokens/s] the system's output rate divided by its accelerator count."""
        return self.tokens_per_s / self.count

    @property
    def output_tokens_per_sample(self) -> float | None:
        """[tokens] mean generated length the run logged (tokens/s over samples/s), when both are published."""
        return self.tokens_per_s / self.samples_per_s if self.samples_per_s else None


class PerUserSpeed(Strict):
    """One user's decode speed on a served system [output tokens/s per user].

    With ``concurrency`` the figure is from a closed-loop benchmark with that many users in
    flight (each sends its next request when the last one ends): one over the mean
    inter-token latency a user sees while the others' prompts are prefilled beside it. With ``speculative`` the
    system drafted tokens and verified them in one step (its case names the method and the measured acceptance). A
    row the fit must not see (a figure published after MLPerf v4.1 that checks physics the fit did not shape, such
    as speculative decoding) is marked ``split: out_of_sample``.
    """

    id: Text
    system: Text
    device: str | None = None
    count: int | None = Field(default=None, gt=0, description="chips serving one model replica, when published")
    model: str | None = Field(default=None, description="catalog model id, when the catalog has the model")
    model_name: Text
    tokens_per_s_per_user: float = Field(gt=0)
    ttft_s: float | None = Field(default=None, gt=0)
    concurrency: int | None = Field(default=None, gt=0, description="users in flight (a closed-loop benchmark); None: one user")
    prompt_tokens: float | None = Field(default=None, gt=0, description="input tokens per request, when published")
    output_tokens: float | None = Field(default=None, gt=0, description="output tokens per request, when published")
    precision: Text
    speculative: bool = False
    split: Split = "in_sample"
    date: str = Field(min_length=4)
    grade: Literal["A", "B", "C"]
    source: Text
    note: str = ""


class VendorThroughput(Strict):
    """A vendor's maximum throughput of a served system at fixed lengths [output tokens/s of the whole system].

    Every request has ``prompt_tokens`` in and ``output_tokens`` out and the system holds as many in flight as it
    can, with no latency bound: what an MLPerf Offline run measures, at the vendor's lengths instead of a dataset's.
    A ``phase`` other than ``serve`` is one pool of a disaggregated deployment: ``prefill`` (``tokens_per_s`` are then
    prompt tokens/s) or ``decode`` (output tokens/s). A row published after MLPerf v4.1 that the fit must not see
    is marked ``split: out_of_sample`` (a check only).
    """

    id: Text
    system: Text
    device: str | None = None
    count: int = Field(gt=0, description="accelerators in the measured system")
    model: str | None = Field(default=None, description="catalog model id, when the catalog has the model")
    model_name: Text
    tokens_per_s: float = Field(gt=0, description="output tokens/s of the whole system (prefill: prompt tokens/s)")
    phase: Literal["serve", "prefill", "decode"] = "serve"
    split: Split = "in_sample"
    prompt_tokens: float = Field(gt=0)
    output_tokens: float = Field(gt=0)
    precision: Text
    date: str = Field(min_length=4)
    grade: Literal["A", "B", "C"]
    source: Text
    note: str = ""

    @property
    def tokens_per_s_per_accelerator(self) -> float:
        """[tokens/s] the system's output rate divided by its accelerator count."""
        return self.tokens_per_s / self.count


class Ranking(Strict):
    """The ratio of two records (``numerator`` / ``denominator``, both ids in this file)."""

    id: Text
    numerator: Text
    denominator: Text
    basis: Literal["per_accelerator", "per_system", "per_user"]
    claim: str = ""
    source: Text
    note: str = ""


class Measurements(Strict):
    benchmarks: dict[str, Benchmark]
    mlperf: list[MLPerfResult] = Field(min_length=1)
    per_user: list[PerUserSpeed] = []
    vendor_throughput: list[VendorThroughput] = []
    rankings: list[Ranking] = []

    def records(self) -> dict[str, MLPerfResult | PerUserSpeed | VendorThroughput]:
        return {r.id: r for r in [*self.mlperf, *self.per_user, *self.vendor_throughput]}

    def split(self, which: Split) -> list[MLPerfResult]:
        """MLPerf rows a fit may use (``in_sample``) or must hold out (``out_of_sample``)."""
        return [r for r in self.mlperf if r.split == which]

    def ratio(self, ranking: Ranking) -> float:
        """[-] numerator over denominator on the ranking's basis."""
        records = self.records()
        num, den = records[ranking.numerator], records[ranking.denominator]
        return _rate(num, ranking.basis) / _rate(den, ranking.basis)


def _rate(record: MLPerfResult | PerUserSpeed | VendorThroughput, basis: str) -> float:
    if isinstance(record, PerUserSpeed):
        return record.tokens_per_s_per_user
    return record.tokens_per_s_per_accelerator if basis == "per_accelerator" else record.tokens_per_s


def _reference_errors(m: Measurements, path: str) -> list[FieldError]:
    """Cross-references the schema cannot see: unique ids, known benchmarks, limits, ranking sides."""
    errors = []
    ids = [r.id for r in [*m.mlperf, *m.per_user, *m.vendor_throughput, *m.rankings]]
    for ident in sorted({i for i in ids if ids.count(i) > 1}):
        errors.append(FieldError(f"{path}: id", ident, "ids must be unique"))
    for i, r in enumerate(m.mlperf):
        where = f"{path}: mlperf[{i}] ({r.id})"
        bench = m.benchmarks.get(r.benchmark)
        if bench is None:
            errors.append(FieldError(f"{where}.benchmark", r.benchmark, f"must be one of {', '.join(m.benchmarks)}"))
        elif r.scenario != "offline" and bench.latency and r.scenario not in bench.latency:
            rule = f"benchmark {r.benchmark} has no {r.scenario} latency limit"
            errors.append(FieldError(f"{where}.scenario", r.scenario, rule))
    records = m.records()
    for i, k in enumerate(m.rankings):
        for side in ("numerator", "denominator"):
            if getattr(k, side) not in records:
                errors.append(FieldError(f"{path}: rankings[{i}] ({k.id}).{side}", getattr(k, side), "is not a record id"))
        sides = (records.get(k.numerator), records.get(k.denominator))
        if k.basis == "per_user" and not all(isinstance(s, PerUserSpeed) for s in sides):
            rule = "a per_user ratio compares two per_user records"
            errors.append(FieldError(f"{path}: rankings[{i}] ({k.id}).basis", k.basis, rule))
    return errors


def load_measurements(path: str | Path | None = None) -> Measurements:
    """Read and validate a measurements file (default: the bundled ``validation/measurements.yaml``)."""
    path = Path(path) if path else MEASUREMENTS_PATH
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError.one(str(path), type(data).__name__, "must be a mapping with benchmarks, mlperf, per_user, rankings")
    return validated_file(Measurements, data, path, _reference_errors)
