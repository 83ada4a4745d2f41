"""Run the validation suite: prediction, published figure and relative error per case,
and the median and worst absolute relative error per category."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .cases import Case, Suite
from .predict import Predictor


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

    def to_dict(self) -> dict:
        c = self.case
        return {"name": c.name, "category": c.category, "class": c.device_class, "fit": c.fit,
                "out_of_sample": getattr(c, "out_of_sample", False),
                "source": c.source.model_dump(exclude_defaults=True), "predicted": self.predicted, "published": c.published,
                "unit": c.unit, "rel_error": self.rel_error,
                "tolerance": c.tolerance.model_dump(), "within_tolerance": self.within_tolerance}


def run_suite(suite: Suite, updates: Mapping[str, float] | None = None, cases: Sequence[Case] | None = None) -> list[CaseResult]:
    """Predict every case at the catalog's values (plus ``updates``, e.g. a fresh fit)."""
    predictor = Predictor(suite)
    return [CaseResult(c, float(predictor.predict(c, updates))) for c in (suite.cases if cases is None else cases)]


def category_summary(results: Sequence[CaseResult]) -> dict[str, dict]:
    """Per category: case count, median and worst absolute relative error, and the worst case."""
    out: dict[str, dict] = {}
    for category in dict.fromkeys(r.case.category for r in results):
        members = [r for r in results if r.case.category == category]
        errors = np.abs([r.rel_error for r in members])
        worst = members[int(np.argmax(errors))]
        out[category] = {"cases": len(members), "median_abs_rel_error": float(np.median(errors)),
                         "worst_abs_rel_error": float(errors.max()), "worst_case": worst.case.name}
    return out
