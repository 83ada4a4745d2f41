"""Run the validation suite: prediction, published figure and relative error per case, and the
median and worst absolute relative error per category, and in and out of sample by scenario, by
device class, by model and by architecture (mixtures of experts apart from dense models); the device
rankings with whether the model reproduces their order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tco.analysis.validation.cases import Case, Suite
from tco.analysis.validation.predict import Predictor
from tco.inputs.catalog import load_catalog

#: the groups a report splits the cases into: fitted, in-sample checks, out of sample (MLPerf after v4.1)
GROUPS = ("fitted", "in_sample_check", "out_of_sample")


@dataclass(frozen=True)
class CaseResult:
    case: Case
    predicted: float

    @property
    def rel_error(self) -> float:
        """``predicted / published - 1`` (positive: the model is optimistic) [-]."""
        return self.predicted / self.case.published - 1.0

    @property
    def within_tolerance(self) -> bool:
        return self.case.tolerance.low <= self.rel_error <= self.case.tolerance.high

    @property
    def passes(self) -> bool:
        """Within the band and, for a ranking, in the published order."""
        return self.within_tolerance and self.order_reproduced is not False

    @property
    def group(self) -> str:
        """``fitted``, ``in_sample_check`` or ``out_of_sample`` (:data:`GROUPS`; a training case marks it
        ``out_of_sample: true``)."""
        if getattr(self.case, "sample", "") == "out_of_sample" or getattr(self.case, "out_of_sample", False):
            return "out_of_sample"
        return "fitted" if self.case.fit else "in_sample_check"

    @property
    def order_reproduced(self) -> bool | None:
        """For a ranking (a ratio of two devices): does the model put the same device ahead? None otherwise."""
        if getattr(self.case, "category", "") != "ranking":
            return None
        return (self.predicted > 1.0) == (self.case.published > 1.0)

    def to_dict(self) -> dict:
        c = self.case
        return {"name": c.name, "category": c.category, "class": c.device_class, "fit": c.fit,
                "sample": "out_of_sample" if self.group == "out_of_sample" else "in_sample", "group": self.group,
                "scenario": getattr(c, "scenario", "-"), "rows": list(getattr(c, "rows", [])),
                "source": c.source.model_dump(exclude_defaults=True), "predicted": self.predicted, "published": c.published,
                "unit": c.unit, "rel_error": self.rel_error, "tolerance": c.tolerance.model_dump(),
                "within_tolerance": self.within_tolerance, "order_reproduced": self.order_reproduced, "passes": self.passes,
                "known_miss": getattr(c, "known_miss", None)}


def run_suite(suite: Suite, updates: Mapping[str, float] | None = None, cases: Sequence[Case] | None = None) -> list[CaseResult]:
    """Predict every case at the catalog's values (plus ``updates``, e.g. a fresh fit)."""
    predictor = Predictor(suite)
    return [CaseResult(c, float(predictor.predict(c, updates))) for c in (suite.cases if cases is None else cases)]


def _stats(members: Sequence[CaseResult]) -> dict:
    errors = np.abs([r.rel_error for r in members])
    worst = members[int(np.argmax(errors))]
    return {"cases": len(members), "median_abs_rel_error": float(np.median(errors)),
            "worst_abs_rel_error": float(errors.max()), "worst_case": worst.case.name,
            "within_tolerance": sum(r.within_tolerance for r in members), "passes": sum(r.passes for r in members)}


def _grouped(results: Sequence[CaseResult], key) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for label in dict.fromkeys(key(r) for r in results):
        out[label] = _stats([r for r in results if key(r) == label])
    return out


def category_summary(results: Sequence[CaseResult]) -> dict[str, dict]:
    """Per category: case count, median and worst absolute relative error, and the worst case."""
    return _grouped(results, lambda r: r.case.category)


def architecture(model: str, models: Mapping[str, dict] | None = None) -> str:
    """``moe`` for a mixture-of-experts model (more than one routed expert), else ``dense``: the suite's own model
    entries first, then the catalog's."""
    entry = (models or {}).get(model) or load_catalog().models.get(model, {})
    routed = entry.get("experts_routed", 1)
    return "moe" if float(routed.get("value", 1) if isinstance(routed, Mapping) else routed) > 1 else "dense"


def sample_summary(results: Sequence[CaseResult], models: Mapping[str, dict] | None = None) -> dict[str, dict]:
    """Per group (fitted, in-sample checks, out of sample): the errors over all its cases, by scenario, by
    device class, by model (the benchmark's model: a ratio case counts under its numerator's) and by
    architecture (:func:`architecture`: MoE cases apart from dense ones). The ratio cases (rankings, one system's
    scenarios against each other) are their own scenario."""
    out: dict[str, dict] = {}
    for group in GROUPS:
        members = [r for r in results if r.group == group]
        if members:
            out[group] = {"all": _stats(members), "by_scenario": _grouped(members, lambda r: r.case.scenario),
                          "by_class": _grouped(members, lambda r: r.case.device_class or "-"),
                          "by_model": _grouped(members, lambda r: r.case.conditions.model),
                          "by_architecture": _grouped(members, lambda r: architecture(r.case.conditions.model, models))}
    return out


def unexpected_failures(results: Sequence[CaseResult]) -> list[CaseResult]:
    """The cases that fail (outside their band, or a ranking in the wrong order) and are not documented known misses:
    what makes ``tco validate`` exit 1.

    Parameters
    ----------
    results : Sequence[CaseResult]
        A suite's results (inference or training; a training case has no known misses).

    Returns
    -------
    list[CaseResult]
        The failing results, in suite order.
    """
    return [r for r in results if not r.passes and not getattr(r.case, "known_miss", None)]


def ranking_summary(results: Sequence[CaseResult]) -> list[dict]:
    """Every ranking case: the published and predicted ratio and whether the model puts the devices in the same order."""
    return [{"name": r.case.name, "group": r.group, "published": r.case.published, "predicted": r.predicted,
             "order_reproduced": r.order_reproduced} for r in results if r.case.category == "ranking"]
