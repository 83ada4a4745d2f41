"""The cascade of retired training devices under uncertainty: is a device worth more serving
than sold, per Monte Carlo draw."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tco.inputs.training_scenario import TrainingScenario

if TYPE_CHECKING:
    from tco.studies.chunks import Cancel, Progress
    from tco.studies.parallel import ChunkRunner
from tco.analysis.training import second_life_arrays, serving_scenario
from tco.studies.montecarlo import MonteCarloCell, run_cells
from tco.studies.parallel import ChunkRunner
from tco.studies.sampling import SamplingPlan, check_drawable, is_sampled


@dataclass(frozen=True)
class SecondLifeColumns:
    """Per-draw columns of the second-life decision (:func:`second_life_arrays`) for the Monte Carlo
    engine (:mod:`tco.studies.montecarlo`): ``premium:<device>`` [USD per device], the boolean columns
    ``cascade:<device>``, ``sell:<device>``, ``scrap:<device>`` (which wins) and ``value_usd_per_mtok``.
    A draw of a parameter both scenarios have goes to both (one quantity, one value). Picklable."""

    scenario: TrainingScenario
    training: tuple[str, ...]
    serving: tuple[str, ...]

    def __call__(self, draws: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        values = self.scenario.values() | {k: draws[k] for k in self.training}
        rows, value_per_mtok, _ = second_life_arrays(self.scenario, values, {k: draws[k] for k in self.serving})
        out = {"value_usd_per_mtok": value_per_mtok}
        for d, r in rows.items():
            out[f"premium:{d}"] = r.cascade_premium_usd
            out |= {f"{name}:{d}": r.choice == i for i, name in enumerate(("cascade", "sell", "scrap"))}
        return out

    @property
    def aggregated(self) -> tuple[tuple[str, dict[str, str]], ...]:
        devices = sorted({o.device for o in self.scenario.structure.options})
        return (*((f"premium:{d}", {f"{n}_best": f"{n}:{d}" for n in ("cascade", "sell", "scrap")}) for d in devices),
                ("value_usd_per_mtok", {}))


def cascade_under_uncertainty(scenario: TrainingScenario, samples: int, seed: int, runner: ChunkRunner | None = None,
                              progress: Progress = None, cancel: Cancel = None) -> pd.DataFrame:
    """Monte Carlo of the second-life decision.

    Every uncertain parameter of the training scenario and of its serving scenario is drawn
    from its distribution, run by the package's one Monte Carlo
    (:func:`tco.studies.montecarlo.run_cells`: seeded chunks, running aggregates).

    Parameters
    ----------
    scenario : tco.inputs.training_scenario.TrainingScenario
        The training scenario.
    samples : int [draws]
        Number of draws.
    seed : int [-]
        The seed.
    runner, progress, cancel : ChunkRunner, Progress, Cancel, optional
        Where the second-life draws run, how their progress shows, and what cancels them (as in
        :func:`tco.studies.montecarlo.run_cells`).

    Returns
    -------
    pandas.DataFrame
        One row per training device: ``p_cascade_best``, ``p_sell_best``, ``p_scrap_best`` [-],
        the premium's mean and P5/P50/P95 [USD per device] (from the aggregates' histogram) and
        the median value of the serving tokens [USD/Mtok].
    """

    serving = serving_scenario(scenario)
    train_params = [p for p in scenario.params.values_list() if is_sampled(p)]
    training = {p.name for p in train_params}
    serve_params = [p for p in serving.params.values_list() if is_sampled(p)]
    plan = SamplingPlan(tuple(train_params + [p for p in serve_params if p.name not in training]))
    check_drawable(plan.params)
    columns = SecondLifeColumns(scenario, tuple(sorted(training)), tuple(p.name for p in serve_params))
    cell = MonteCarloCell(columns, columns.aggregated, plan, int(samples))
    (result,) = run_cells([cell], seed, runner or ChunkRunner(), keep=0, label="cascade", progress=progress, cancel=cancel)
    a = result.aggregates
    out = []
    for name, _ in columns.aggregated[:-1]:
        premium = a[name]
        p5, p50, p95 = premium.quantiles([0.05, 0.5, 0.95])
        out.append({"device": name.removeprefix("premium:"), "samples": int(samples),
                    **{f"p_{n}_best": premium.share(f"{n}_best") for n in ("cascade", "sell", "scrap")},
                    "premium_mean_usd": premium.moments.mean, "premium_p5_usd": p5, "premium_p50_usd": p50,
                    "premium_p95_usd": p95, "value_usd_per_mtok_p50": float(a["value_usd_per_mtok"].quantiles([0.5])[0])})
    return pd.DataFrame(out).set_index("device")
