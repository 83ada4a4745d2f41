"""Study files: the schema (pydantic) and its checks against the scenario it studies.

A study names a scenario, a metric and the analyses to run; see ``docs/studies.md``.
Every error names the field path, the value and the rule (:class:`tco.foundation.errors.InputError`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from tco.analysis.training import serving_scenario
from tco.foundation.errors import FieldError, FieldWarning, InputError
from tco.foundation.limits import MAX_CHUNK_SIZE
from tco.inputs.catalog import Strict
from tco.inputs.loading import SCENARIOS_DIR, load_scenario, scenario_from_dict
from tco.inputs.scenario import Scenario
from tco.inputs.yaml_files import bundled_or_path, pydantic_errors, read_yaml
from tco.studies.chunks import CHUNK_SIZE
from tco.studies.gridmap import check_cells
from tco.studies.metrics import parse_metric
from tco.studies.montecarlo import KEEP_SAMPLES, check_samples
from tco.studies.parallel import ChunkRunner
from tco.studies.portfolio import check_portfolio_samples, portfolio_cells
from tco.studies.sampling import sampling_plan
from tco.studies.sensitivity import (
    MIN_MORRIS_TRAJECTORIES,
    check_base_samples,
    check_morris_trajectories,
    check_sobol_n,
    scenario_function,
)
from tco.studies.sweep import check_points

STUDIES_DIR = SCENARIOS_DIR / "studies"

PositiveInt = Annotated[int, Field(gt=0, strict=True)]


class Axis(Strict):
    """A parameter and the range it is swept over (default: the parameter's low..high)."""

    param: str
    low: float | None = None
    high: float | None = None
    points: PositiveInt = 50
    log: bool = False


class TornadoSpec(Strict):
    params: list[str] | None = None


class SweepSpec(Axis):
    metrics: list[str] | None = None


class MapSpec(Strict):
    x: Axis
    y: Axis
    metric: str | None = None


class CorrelationSpec(Strict):
    a: str
    b: str
    rho: float


class MonteCarloSpec(Strict):
    samples: PositiveInt = 10_000
    metrics: list[str] | None = None
    correlations: list[CorrelationSpec] = []
    #: first draws written to montecarlo_samples.csv and drawn in the figure (the summary uses every draw); by default
    #: :data:`KEEP_SAMPLES`, or the whole first chunk when ``chunk_size`` is smaller
    keep_samples: Annotated[int, Field(ge=0, le=CHUNK_SIZE, strict=True)] = KEEP_SAMPLES
    #: draws per chunk: what one process holds at a time (~0.1 GB per 100k draws for three options)
    chunk_size: Annotated[int, Field(gt=0, le=MAX_CHUNK_SIZE, strict=True)] = CHUNK_SIZE

    @model_validator(mode="after")
    def _keep_within_first_chunk(self):
        if "keep_samples" not in self.model_fields_set:  # the default follows a smaller chunk (the user set neither)
            self.keep_samples = min(self.keep_samples, self.chunk_size)
        elif self.keep_samples > self.chunk_size:
            raise ValueError(f"keep_samples ({self.keep_samples}) must not exceed chunk_size ({self.chunk_size})")
        return self


class PortfolioSpec(Strict):
    """Every device x model x workload preset x shape, against the baseline device (tco.studies.portfolio)."""

    baseline: str
    devices: list[str] = Field(min_length=1)
    models: list[str] | None = None
    workloads: dict[str, dict[str, Any]] | None = None
    shapes: list[Literal["colocated", "disaggregated"]] = Field(default=["colocated"], min_length=1)
    kv_link: str = "ib-400g"
    samples: PositiveInt = 10_000
    metric: Literal["ratio", "npv"] = "ratio"


class SobolSpec(Strict):
    n: PositiveInt = 1024
    params: list[str] | None = None

    @field_validator("n")
    @classmethod
    def _estimable(cls, n: int) -> int:
        try:
            return check_sobol_n(n)
        except InputError as exc:
            raise ValueError(exc.errors[0].rule) from None


class MorrisSpec(Strict):
    trajectories: Annotated[int, Field(ge=MIN_MORRIS_TRAJECTORIES, strict=True)] = 50
    levels: Annotated[int, Field(ge=2, strict=True)] = 4
    params: list[str] | None = None

    @model_validator(mode="after")
    def _even_levels(self):
        if self.levels % 2:
            raise ValueError(f"levels must be even (every level then equally likely; Morris 1991), e.g. {self.levels + 1}")
        return self


class CascadeSpec(Strict):
    """Second life of a training scenario's devices under uncertainty (tco.studies.cascade.cascade_under_uncertainty)."""

    samples: PositiveInt = 10_000


class Analyses(Strict):
    tornado: TornadoSpec | None = None
    sweep: SweepSpec | None = None
    map: MapSpec | None = None
    monte_carlo: MonteCarloSpec | None = None
    sobol: SobolSpec | None = None
    morris: MorrisSpec | None = None
    portfolio: PortfolioSpec | None = None
    cascade: CascadeSpec | None = None

    @model_validator(mode="after")
    def _at_least_one(self):
        if not any(getattr(self, k) is not None for k in type(self).model_fields):
            raise ValueError(f"name at least one analysis: {', '.join(type(self).model_fields)}")
        return self


class StudySpec(Strict):
    """The schema of a study file (or of a scenario's ``study:`` section, without ``scenario``)."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]*[A-Za-z0-9_-][A-Za-z0-9_.-]*$",
                      description="a folder name under exports/: letters, digits, '_', '-', '.', not only dots")
    question: str = Field(min_length=1)
    scenario: str | None = None
    metric: str = "ratio"
    seed: Annotated[int, Field(ge=0, strict=True)] = 0
    analyses: Analyses


def study_path(name_or_path: str | Path) -> Path:
    """A bundled study by name (``tornado-default``) or a file path.

    Parameters
    ----------
    name_or_path : str or pathlib.Path
        Name of ``scenarios/studies/<name>.yaml`` or a path.

    Returns
    -------
    pathlib.Path
        The study file.
    """
    return bundled_or_path(name_or_path, STUDIES_DIR, "FILE", "study")


def load_study(name_or_path: str | Path) -> tuple[StudySpec, Scenario]:
    """Read a study file (or a scenario file with a ``study:`` section), validated against its scenario.

    Parameters
    ----------
    name_or_path : str or pathlib.Path
        Bundled study name or path.

    Returns
    -------
    study : StudySpec
        The validated study.
    scenario : tco.inputs.scenario.Scenario
        Its scenario (named by the study, looked up beside the study file first).
    """
    path = study_path(name_or_path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError.one(str(path), type(data).__name__, "a study must be a YAML mapping")
    if "workload" in data:  # a scenario file carrying its own study
        section = data.get("study")
        if not isinstance(section, dict):
            raise InputError.one("study", section, "a scenario run as a study needs a study: mapping")
        scenario = scenario_from_dict(data, path=str(path))
        study = parse_study({"name": data.get("name"), **section}, prefix="study")
    else:
        study = parse_study(data)
        if study.scenario is None:
            raise InputError.one("scenario", None, "a study file must name its scenario (bundled name or path)")
        ref = Path(study.scenario)
        local = path.parent / ref
        scenario = load_scenario(local if ref.suffix in (".yaml", ".yml") and local.exists() else study.scenario)
    check_study(study, scenario)
    return study, scenario


def parse_study(data: dict, prefix: str = "") -> StudySpec:
    """Validate study data; errors name their field under ``prefix``.

    Parameters
    ----------
    data : dict
        The study as read from YAML.
    prefix : str
        Path prefix of error fields (``study`` for a scenario's own section).

    Returns
    -------
    StudySpec
        The validated study.
    """
    try:
        return StudySpec.model_validate(data)
    except ValidationError as exc:
        raise pydantic_errors(exc, prefix) from None


def check_study(study: StudySpec, scenario: Scenario) -> None:
    """Every parameter, metric and range of the study against the scenario; all errors at once.

    Parameters
    ----------
    study : StudySpec
        The study whose names and ranges are checked.
    scenario : tco.inputs.scenario.Scenario
        The scenario they must exist in.
    """
    errors: list[FieldError] = []
    training = getattr(scenario, "kind", "inference") == "training"
    for kind in type(study.analyses).model_fields:
        if getattr(study.analyses, kind) is not None and training != (kind == "cascade"):
            errors.append(FieldError(f"analyses.{kind}", kind, "the cascade analysis needs a kind: training scenario"
                                     if kind == "cascade" else "runs on inference scenarios; a training scenario runs cascade"))
    if errors:
        raise InputError(errors)

    def metric(path: str, text: str):
        try:
            return parse_metric(scenario, text, path)
        except InputError as exc:
            errors.extend(exc.errors)
            return None

    def param(path: str, name: str, needs_range: bool = False):
        if name not in scenario.values():
            try:
                scenario.params[name]
            except InputError as exc:
                errors.append(FieldError(path, name, exc.errors[0].rule))
            return None
        spec = scenario.params[name]
        if needs_range and not spec.uncertain:
            errors.append(FieldError(path, name, f"has no range (low == high == {spec.value:g}); give low and high"))
        return spec

    def axis(path: str, ax: Axis):
        spec = param(f"{path}.param", ax.param, needs_range=ax.low is None or ax.high is None)
        if spec is None:
            return
        low = spec.low if ax.low is None else ax.low
        high = spec.high if ax.high is None else ax.high
        for side, value in (("low", low), ("high", high)):
            if not spec.field.admits_bound(value):
                errors.append(FieldError(f"{path}.{side}", value, f"{ax.param} {spec.field.rule()}"))
        if not high > low:
            errors.append(FieldError(f"{path}.high", high, f"must be greater than low ({low:g})"))
        if ax.log and low <= 0:
            errors.append(FieldError(f"{path}.low", low, "a log axis needs low > 0"))

    def once(path: str, items: list[str] | None):
        """A list that names a parameter or a metric twice would give a second row or column without a word."""
        first: dict[str, int] = {}
        for i, item in enumerate(items or []):
            if item in first:
                errors.append(FieldError(f"{path}[{i}]", item, f"repeats {path.rsplit('.', 1)[-1]}[{first[item]}]: "
                                                                "name each once"))
            first.setdefault(item, i)

    main = metric("metric", study.metric)
    a = study.analyses
    for path, spec, attr in (("analyses.tornado.params", a.tornado, "params"), ("analyses.sobol.params", a.sobol, "params"),
                             ("analyses.morris.params", a.morris, "params"), ("analyses.sweep.metrics", a.sweep, "metrics"),
                             ("analyses.monte_carlo.metrics", a.monte_carlo, "metrics")):
        once(path, getattr(spec, attr) if spec is not None else None)
    if a.tornado and a.tornado.params:
        for i, name in enumerate(a.tornado.params):
            param(f"analyses.tornado.params[{i}]", name, needs_range=True)
    if a.sweep:
        axis("analyses.sweep", a.sweep)
        for i, text in enumerate(a.sweep.metrics or []):
            metric(f"analyses.sweep.metrics[{i}]", text)
    if a.map:
        axis("analyses.map.x", a.map.x)
        axis("analyses.map.y", a.map.y)
        if a.map.x.param == a.map.y.param:
            errors.append(FieldError("analyses.map.y.param", a.map.y.param, "must differ from x.param"))
        if a.map.metric:
            metric("analyses.map.metric", a.map.metric)
    if a.monte_carlo:
        for i, text in enumerate(a.monte_carlo.metrics or []):
            metric(f"analyses.monte_carlo.metrics[{i}]", text)
        for i, c in enumerate(a.monte_carlo.correlations):
            for side in ("a", "b"):
                param(f"analyses.monte_carlo.correlations[{i}].{side}", getattr(c, side), needs_range=True)
    if a.monte_carlo and a.monte_carlo.correlations and not errors:
        try:
            sampling_plan(scenario, [(c.a, c.b, c.rho) for c in a.monte_carlo.correlations])
        except InputError as exc:
            errors.extend(FieldError(f"analyses.monte_carlo.{e.path}", e.value, e.rule) for e in exc.errors)
    for kind in ("sobol", "morris"):
        spec = getattr(a, kind)
        for i, name in enumerate(spec.params or [] if spec else []):
            param(f"analyses.{kind}.params[{i}]", name, needs_range=True)
    if a.portfolio:
        try:
            study_portfolio_cells(scenario, a.portfolio)
        except InputError as exc:
            errors.extend(exc.errors)
    if main is not None and main.param and a.sweep and a.sweep.param == main.param:
        errors.append(FieldError("analyses.sweep.param", a.sweep.param, "cannot sweep the parameter the metric solves for"))
    if errors:
        raise InputError(errors)


def check_study_sizes(study: StudySpec, scenario: Scenario, runner: ChunkRunner) -> None:
    """Every size the study asks for against :mod:`tco.foundation.limits` (time on ``runner``'s processes,
    memory), before anything runs; all errors at once, under their ``analyses.*`` paths.

    Parameters
    ----------
    study : StudySpec
        The sizes asked for (samples, points, trajectories, cells).
    scenario : tco.inputs.scenario.Scenario
        Its options multiply the work.
    runner : ChunkRunner
        Where the chunks would run.
    """
    errors: list[FieldError] = []

    def under(prefix: str, check, *args) -> None:
        try:
            check(*args)
        except InputError as exc:
            errors.extend(FieldError(f"{prefix}.{e.path}", e.value, e.rule) for e in exc.errors)

    a = study.analyses
    if a.cascade:

        # one evaluation of the serving scenario with a retired option per training device, per draw
        options = len(serving_scenario(scenario).structure.options) + len({o.device for o in scenario.structure.options})
        under("analyses.cascade", runner.check_run, "samples", a.cascade.samples, "samples", a.cascade.samples * options,
              CHUNK_SIZE)
    if a.sweep:
        under("analyses.sweep", check_points, a.sweep.points)
    if a.map:
        under("analyses.map", check_cells, scenario, a.map.x.points, a.map.y.points, CHUNK_SIZE, runner)
    if a.monte_carlo:
        under("analyses.monte_carlo", check_samples, scenario, a.monte_carlo.samples, a.monte_carlo.chunk_size, runner)
    for kind, check in (("sobol", check_base_samples), ("morris", check_morris_trajectories)):
        spec = getattr(a, kind)
        if spec is not None:
            _function, names = scenario_function(scenario, parse_metric(scenario, study.metric), spec.params)
            size = spec.n if kind == "sobol" else spec.trajectories
            under(f"analyses.{kind}", check, scenario, len(names), size, CHUNK_SIZE, runner)
    if a.portfolio:
        under("analyses.portfolio", check_portfolio_samples, study_portfolio_cells(scenario, a.portfolio),
              a.portfolio.samples, CHUNK_SIZE, runner)
    if errors:
        raise InputError(errors)


def outside_sourced(scenario: Scenario, ax: Axis) -> dict | None:
    """Where an axis' range leaves its parameter's sourced low..high: the sourced ends, or None when it stays inside.

    The range is swept as given (a study never narrows it); the points beyond the sourced range rest on no source,
    which the study's warnings and ``summary.json`` say.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its parameter gives the sourced range.
    ax : Axis
        The study's axis.

    Returns
    -------
    dict or None
        ``{sourced_low, sourced_high}`` [unit of the parameter], or None.
    """
    spec = scenario.params[ax.param]
    low, high = axis_range(scenario, ax)
    if spec.low <= low and high <= spec.high:
        return None
    return {"sourced_low": float(spec.low), "sourced_high": float(spec.high)}


def study_warnings(study: StudySpec, scenario: Scenario) -> list[FieldWarning]:
    """What a valid study asks for that deserves a word: a swept or mapped range beyond the parameter's sourced range.

    Parameters
    ----------
    study : StudySpec
        The checked study (:func:`check_study`).
    scenario : tco.inputs.scenario.Scenario
        Its scenario.

    Returns
    -------
    list of FieldWarning
        One per axis outside its sourced range (``analyses.sweep``, ``analyses.map.x``).
    """
    a = study.analyses
    axes = [("analyses.sweep", a.sweep)] if a.sweep else []
    axes += [("analyses.map.x", a.map.x), ("analyses.map.y", a.map.y)] if a.map else []
    warnings = []
    for path, ax in axes:
        outside = outside_sourced(scenario, ax)
        if outside:
            spec = scenario.params[ax.param]
            low, high = axis_range(scenario, ax)
            sourced = f"value {spec.low:g}" if spec.low == spec.high else f"range [{spec.low:g}, {spec.high:g}]"
            warnings.append(FieldWarning(path, [low, high], f"sweeps {ax.param} beyond its sourced {sourced} {spec.unit}: "
                                         "swept as given; the points outside it rest on no source"))
    return warnings


def axis_range(scenario: Scenario, ax: Axis) -> tuple[float, float]:
    """The axis range with the parameter's low/high filling what the study left out.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its parameter gives the defaults.
    ax : Axis
        The study's axis.

    Returns
    -------
    tuple[float, float] [unit of the parameter]
        ``(low, high)``.
    """
    spec = scenario.params[ax.param]
    return (spec.low if ax.low is None else ax.low, spec.high if ax.high is None else ax.high)


def study_portfolio_cells(scenario: Scenario, spec: PortfolioSpec) -> list:
    """The validated cells of a portfolio analysis (errors under ``analyses.portfolio``).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The base scenario.
    spec : PortfolioSpec
        The portfolio analysis of the study.

    Returns
    -------
    list[tco.studies.portfolio.Cell]
        The cells (:func:`tco.studies.portfolio.portfolio_cells`).
    """
    return portfolio_cells(scenario, spec.baseline, spec.devices, spec.models, spec.workloads, spec.shapes, spec.kv_link)
