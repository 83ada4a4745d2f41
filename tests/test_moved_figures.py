"""Each option evaluated only where a value it reads moves (:class:`tco.analysis.evaluation.MovedCostFigures`, the
flip search's and the break-even's evaluations) gives the figures of one evaluation of every option at every point,
and the names an option reads are its own device's, the shared terms' and the baseline's
(:func:`tco.core.evaluate.option_reads`)."""

from __future__ import annotations

import numpy as np
import pytest

import tco
from tco.analysis.evaluation import MovedCostFigures, evaluate_scenario
from tco.core.evaluate import option_reads

INFERENCE = [n for n in tco.bundled_scenarios() if getattr(tco.load_scenario(n), "kind", "inference") == "inference"]


def _one_at_a_time(scenario, points: int = 5) -> dict[str, np.ndarray]:
    """The flip search's updates: point ``k`` moves one uncertain parameter alone (low, high and between, a few
    points each), every other parameter at its base value."""
    params = list(scenario.params.uncertain())
    base = scenario.params.values()
    count = len(params) * points
    updates = {p.name: np.full(count, float(base[p.name])) for p in params}
    for j, p in enumerate(params):
        updates[p.name][j * points:(j + 1) * points] = np.linspace(p.low, p.high, points)
    return updates


def _one_across_its_range(scenario, points: int = 9) -> dict[str, np.ndarray]:
    """A break-even's updates: the mean prompt length (which every option reads) at every point, its range spanned."""
    p = scenario.params["workload.prompt_tokens"]
    return {p.name: np.linspace(p.low, p.high, points)}


@pytest.mark.parametrize("moves", [_one_at_a_time, _one_across_its_range])
@pytest.mark.parametrize("name", INFERENCE)
def test_moved_figures_equal_every_option_evaluated_at_every_point(name, moves):
    """Each option alone at its own points (a flip search's updates) or all together (a break-even's): the figures
    of one evaluation of every option at every point."""
    scenario = tco.load_scenario(name)
    updates = moves(scenario)
    whole, _ = evaluate_scenario(scenario, updates)
    moved = MovedCostFigures(scenario)(updates)
    assert list(moved) == list(whole)
    for option, figures in moved.items():
        for field in ("lcot_usd_per_mtok", "pv_cost_usd", "feasible"):
            expected = np.broadcast_to(getattr(whole[option], field), figures.feasible.shape)
            np.testing.assert_allclose(getattr(figures, field), expected, rtol=1e-12, err_msg=f"{option}.{field}")


def test_an_option_reads_its_own_device_and_the_baselines_never_another_challengers():
    """voice-agent: h100 (the baseline), groq, cerebras, and a split with prefill on h100 and decode on groq. The
    Cerebras option reads Cerebras' figures and the H100's (it is charged the baseline's cost for the work it loses
    to workload shifts), never the LPU's; the baseline reads neither challenger's; all read the workload."""
    scenario = tco.load_scenario("voice-agent")
    reads = option_reads(scenario.structure, scenario.values())
    assert list(reads) == ["h100", "groq", "cerebras", "h100-prefill+groq-decode"]

    def devices(option):
        return {n.split(".")[1] for n in reads[option] if n.startswith("devices.")}

    assert devices("h100") == {"h100-sxm"}
    assert devices("cerebras") == {"cerebras-cs3", "h100-sxm"}
    assert devices("h100-prefill+groq-decode") == {"groq-lpu", "h100-sxm"}
    assert all("workload.prompt_tokens" in names for names in reads.values())
    assert any(n.startswith("links.") for n in reads["h100-prefill+groq-decode"])
    assert not any(n.startswith("links.") for n in reads["cerebras"])
