"""One vectorized call equals many scalar calls; year-by-year flows equal the closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import tco
from tco.core import cashflow
from tco.core.comparison import comparison
from tco.core.evaluate import evaluate
from tco.core.outputs import COST_LINES
from tco.studies.sampling import draw_chunk, sampling_plan


def random_values(scenario, n, seed=0):
    """Every uncertain parameter drawn from its distribution within [low, high] (integers rounded)."""
    return scenario.values() | draw_chunk(sampling_plan(scenario), seed, 0, n)


@pytest.mark.parametrize("name", ["default", "custom-asic"])
def test_vectorized_equals_scalar_calls(name):
    scenario = tco.load_scenario(name)
    n = 10_000 if name == "default" else 1_000
    values = random_values(scenario, n)
    vector = evaluate(scenario.structure, values)
    vector_cmp = comparison(scenario.structure, vector, values)
    keys = ("lcot_usd_per_mtok", "pv_cost_usd", "tpot_s", "ttft_s", "batch", "devices", "feasible", "spilled_bytes")
    vector_flat = {option: r.flat() for option, r in vector.items()}
    for i in range(n):
        point = {k: (v[i] if np.ndim(v) else v) for k, v in values.items()}
        scalar = evaluate(scenario.structure, point)
        for option, result in scalar.items():
            for key in keys:
                assert vector_flat[option][key][i] == pytest.approx(float(getattr(result, key)), rel=1e-12, abs=1e-300), \
                    (i, option, key)
        if i % 97 == 0:
            for option, result in scalar.items():  # every output, pools and links included
                for key, value in result.flat().items():
                    assert vector_flat[option][key][i] == pytest.approx(float(value), rel=1e-12, abs=1e-300), (i, option, key)
            scalar_cmp = comparison(scenario.structure, scalar, point)
            for option, row in scalar_cmp.items():
                for key, value in row.flat().items():
                    assert vector_cmp[option].flat()[key][i] == pytest.approx(float(value), rel=1e-12, nan_ok=True)


@pytest.mark.parametrize("name", ["default", "custom-asic", "batch-offline", "voice-agent"])
def test_yearly_cash_flows_sum_to_the_present_values(name):
    scenario = tco.load_scenario(name)
    values = random_values(scenario, 500, seed=1)
    results = evaluate(scenario.structure, values)
    for option in scenario.structure.options:
        r = results[option.name]
        flows = cashflow.yearly_cash_flows(option, r, values)
        np.testing.assert_allclose(flows.present_value(flows.total_usd), r.pv_cost_usd, rtol=1e-10)
        np.testing.assert_allclose(flows.present_value(flows.output_tokens), r.pv_tokens, rtol=1e-10)
        for line in COST_LINES:  # every cash-flow line against its closed-form present value
            np.testing.assert_allclose(flows.present_value(flows.lines[line.line]), getattr(r, line.name), rtol=1e-10, atol=1e-6)
