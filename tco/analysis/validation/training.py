"""Training validation cases (``validation/training.yaml``): published training throughput and goodput.

A case mirrors a measured training set-up (model, device, cluster size, sequence length,
tokens per step, precision) as an inline ``kind: training`` scenario; a *metric* reads the
quantity the publication reports. Cases with ``fit: true`` calibrate the class's training
compute efficiency (one value per calibration class, by the same regularized least squares
as the inference suite, :func:`tco.analysis.validation.calibrate.calibrate_class`); cases with
``out_of_sample: true`` never enter a fit and are reported apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from tco.analysis.validation.calibrate import calibrate_class
from tco.analysis.validation.cases import DeviceClass, Source, Tolerance, check_names_and_classes, load_suite
from tco.analysis.validation.measurements import Strict, Text, validated_file
from tco.analysis.validation.suite import CaseResult
from tco.core.training.results import TrainingResult
from tco.core.training.run import evaluate_training
from tco.inputs.catalog import load_catalog
from tco.inputs.training_scenario import training_scenario_from_dict
from tco.inputs.yaml_files import read_yaml

TRAINING_SUITE_PATH = Path(__file__).resolve().parents[3] / "validation" / "training.yaml"
OPTION = "measured"

#: what a training case reads from the evaluation: the output of its name, in its unit of the training output table
METRICS: dict[str, Callable[[TrainingResult], np.ndarray]] = {
    "tokens_per_s_per_device": lambda r: r.tokens_per_s_per_device,
    "model_tflops_per_device": lambda r: r.model_tflops_per_device,
    "goodput": lambda r: r.goodput,
}


class TrainingConditions(Strict):
    """The measured set-up as the training core sees it: one cluster of one device."""

    model: str
    device: str
    cluster_devices: float = Field(ge=1)
    seq_len_tokens: float = Field(gt=0)
    global_batch_tokens: float = Field(gt=0)
    compute_bits: float = Field(default=16, ge=4, le=16)
    micro_batch_sequences: float = Field(default=1, ge=1)


class TrainingCase(Strict):
    name: Text
    category: Text
    device_class: str | None = Field(default=None, alias="class")
    fit: bool = False
    out_of_sample: bool = False
    source: Source
    conditions: TrainingConditions
    metric: Literal[tuple(METRICS)]  # type: ignore[valid-type]
    published: float = Field(gt=0)
    unit: Text
    tolerance: Tolerance

    @model_validator(mode="after")
    def _fit_rules(self):
        if self.fit and (self.out_of_sample or self.device_class is None):
            raise ValueError("a fit case needs a class and cannot be out of sample")
        return self


class TrainingSuite(Strict):
    classes: dict[str, DeviceClass] = {}
    models: dict[str, dict] = {}
    devices: dict[str, dict[str, Any]] = {}
    cases: list[TrainingCase] = Field(min_length=1)
    anchors: dict = {}

    @model_validator(mode="after")
    def _consistent(self):
        check_names_and_classes(self.cases, self.classes)
        return self


def load_training_suite(path: str | Path | None = None) -> TrainingSuite:
    """Read and validate the training suite (default: the bundled ``validation/training.yaml``)."""
    path = Path(path) if path else TRAINING_SUITE_PATH
    return validated_file(TrainingSuite, read_yaml(path), path)


def training_scenario_for(case: TrainingCase, suite: TrainingSuite):
    """Inline training scenario mirroring a case's measured set-up."""

    c = case.conditions
    models = {**load_suite().models, **suite.models}
    devices = {}
    if c.device in suite.devices:  # a device defined here: a catalog device (``base``) with overrides
        spec = dict(suite.devices[c.device])
        devices[c.device] = {**load_catalog().devices[spec.pop("base")], **spec, "id": c.device}
    data = {
        "kind": "training", "name": case.name, "model": c.model,
        "models": {c.model: models[c.model]} if c.model in models else {},
        "devices": devices,
        "training": {"tokens": 1.0e12, "seq_len_tokens": c.seq_len_tokens, "global_batch_tokens": c.global_batch_tokens,
                     "compute_bits": c.compute_bits, "micro_batch_sequences": c.micro_batch_sequences},
        "options": [{"name": OPTION, "device": c.device, "cluster_devices": c.cluster_devices}],
        "baseline": OPTION,
    }
    return training_scenario_from_dict(data, path=f"case {case.name}")


class TrainingPredictor:
    """Predictions of the training cases; scenarios are built once and re-evaluated with updates."""

    def __init__(self, suite: TrainingSuite):
        self.suite = suite
        self._scenarios: dict = {}

    def predict(self, case: TrainingCase, updates: Mapping[str, object] | None = None):
        """The case's predicted figure in its unit; ``updates`` of parameters the case lacks are ignored."""
        if case.name not in self._scenarios:
            self._scenarios[case.name] = training_scenario_for(case, self.suite)
        scenario = self._scenarios[case.name]
        values = scenario.values()
        values.update({k: v for k, v in (updates or {}).items() if k in values})
        result = evaluate_training(scenario.structure, values)[OPTION]
        return np.asarray(METRICS[case.metric](result), float)


def run_training_suite(suite: TrainingSuite, updates: Mapping[str, float] | None = None):
    """Predict every training case (plus ``updates``, e.g. a fresh fit); a
    :class:`~tco.analysis.validation.suite.CaseResult` each."""

    predictor = TrainingPredictor(suite)
    return [CaseResult(c, float(predictor.predict(c, updates))) for c in suite.cases]


def calibrate_training(suite: TrainingSuite):
    """One fit per calibration class over its ``fit: true`` cases (:func:`tco.analysis.validation.calibrate.calibrate_class`)."""

    predictor = TrainingPredictor(suite)
    fits = []
    for name, spec in suite.classes.items():
        members = [c for c in suite.cases if c.fit and c.device_class == name]
        if members:
            fits.append(calibrate_class(name, spec, members, predictor))
    return fits
