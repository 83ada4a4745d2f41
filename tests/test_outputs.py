"""The output table: every output the core returns has one row (unit, meaning, format), and the
typed results agree with it and with each other."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tco
from tco.core.comparison import analyse
from tco.core.outputs import (
    CASH_FLOW_LINES,
    COMPARISON_OUTPUTS,
    COST_LINES,
    LINK_OUTPUTS,
    OPTION_OUTPUTS,
    POOL_OUTPUTS,
    YEARLY_COSTS,
    iter_outputs,
)
from tco.studies.sampling import draw_chunk, sampling_plan

SCENARIOS = tco.bundled_scenarios()


def test_every_table_row_is_complete():
    for level, spec in iter_outputs():
        assert spec.unit and spec.meaning and spec.label, (level, spec.name)
        assert spec.scale > 0 and isinstance(format(1.0, spec.fmt), str), (level, spec.name)
        assert "0-1" not in spec.unit, f"{spec.name}: shares are 'fraction'"


def test_display_formats_by_hand():
    # 0.0591775 s -> "59" ms; 0.00619835 s -> "6.2" ms; 2.5e9 B spilled -> "2.50" GB; 0.83 utilization -> "83" %
    assert OPTION_OUTPUTS["ttft_s"].format(0.0591775) == "59"
    assert OPTION_OUTPUTS["tpot_s"].format(0.00619835) == "6.2"
    assert OPTION_OUTPUTS["spilled_bytes"].format(2.5e9) == "2.50"
    assert POOL_OUTPUTS["utilization"].format(0.83) == "83"
    assert OPTION_OUTPUTS["ttft_s"].title == "time to first token, ms"
    assert OPTION_OUTPUTS["lcot_usd_per_mtok"].format(math.nan) == "—" == COMPARISON_OUTPUTS["irr"].format(None)
    # a "g" format keeps 4 significant figures without an exponent: 45.6874 -> "45.69"; 20,000.4 -> "20,000";
    # -145.435e6 USD in M USD -> "-145.4"; 0.2220 -> "0.222" (trailing zero dropped)
    assert OPTION_OUTPUTS["lcot_usd_per_mtok"].format(45.6874) == "45.69"
    assert OPTION_OUTPUTS["lcot_usd_per_mtok"].format(20000.4) == "20,000"
    assert COMPARISON_OUTPUTS["npv_usd"].format(-145.435e6) == "-145.4"
    assert OPTION_OUTPUTS["lcot_usd_per_mtok_all_tokens"].format(0.2220) == "0.222"
    # years of advantage <= 0 is not an advantage: the value stays, the reader is told (the roadmap led already)
    assert COMPARISON_OUTPUTS["years_of_advantage"].format(0.0) == "0.0 (never ahead)"
    assert COMPARISON_OUTPUTS["years_of_advantage"].format(-2.86) == "-2.9 (never ahead)"
    assert COMPARISON_OUTPUTS["years_of_advantage"].format(1.26) == "1.3"
    assert COMPARISON_OUTPUTS["hardware_cycle_years"].format(0.0) == "0.0 (never ahead)"


def test_cost_lines_are_the_cash_flow_lines():
    assert CASH_FLOW_LINES == ("capex_usd", "nre_usd", "energy_usd", "facility_usd", "maintenance_usd", "links_usd",
                               "rental_usd", "reauthoring_usd", "porting_usd", "workload_shift_usd", "bridge_usd",
                               "residual_usd")
    assert set(YEARLY_COSTS.values()) <= set(CASH_FLOW_LINES)


@pytest.mark.parametrize("name", SCENARIOS)
def test_results_carry_exactly_the_table_outputs(name):
    scenario = tco.load_scenario(name)
    values = scenario.values() | draw_chunk(sampling_plan(scenario), 5, 0, 50)
    analysis = analyse(scenario.structure, values)
    for option in scenario.structure.options:
        r = analysis.options[option.name]
        flat = r.flat()
        assert set(r.outputs()) == set(OPTION_OUTPUTS)
        for key in flat:
            prefix, _, field = key.rpartition(".")
            table = {"": OPTION_OUTPUTS, "links": LINK_OUTPUTS}.get(prefix, POOL_OUTPUTS)
            assert field in table, key
            assert prefix in ("", "links") or prefix in {p.role for p in option.pools}, key
        assert len({np.shape(v) for v in flat.values()}) == 1  # one common shape
        # the option's cost is the sum of its cost lines, in the table's order
        np.testing.assert_array_equal(r.pv_cost_usd, sum(getattr(r, line.name) for line in COST_LINES))
    for c in analysis.challengers.values():
        assert set(c.flat()) <= set(COMPARISON_OUTPUTS)


def test_breakeven_nre_ties_the_built_option(asic_can_win):
    # scale every NRE part so the program's NRE equals the break-even NRE: the option then costs what the baseline does
    # (a 6-year half-life and a million units sold to others give the ASIC a margin to spend on NRE)
    asic_scenario = asic_can_win.with_values({"workload.half_life_years": 6.0, "program.external_units": 1e6})
    analysis = tco.analyse_scenario(asic_scenario)
    checked = 0
    for name, c in analysis.challengers.items():
        if np.isnan(c.breakeven_nre_usd):
            continue  # loses even with free NRE
        checked += 1
        target = float(c.breakeven_nre_usd)
        factor = target / float(c.nre_usd)
        values = asic_scenario.values()
        at = analyse(asic_scenario.structure, {k: (v * factor if k.startswith("program.nre.") else v)
                                               for k, v in values.items()})
        assert float(at.options[name].pv_cost_usd) == pytest.approx(float(at.baseline.pv_cost_usd), rel=1e-9)
        assert float(at.challengers[name].npv_usd) == pytest.approx(0.0, abs=1e-6 * float(at.baseline.pv_cost_usd))
    assert checked >= 1
