"""Decide: the checklist of the source talks, step by step, each with the model's answer for the scenario.

Name the workload -> name the objective -> find the bottleneck -> measure the distribution ->
price the split -> test change. Each step states what the model says for the current scenario
(with its edits) and links to the tab that goes deeper; the terms are in the glossary at the foot of every page
(:mod:`tco_app.glossary`).
"""

from __future__ import annotations

from dash import Output, html

from tco.core import names as named
from tco.foundation.errors import InputError
from tco.foundation.formatting import quantity, sig
from tco.foundation.labels import param_label
from tco.foundation.plain_values import scalar
from tco.inputs.fleet_settings import fleet_config
from tco.present.comparison import compare
from tco.present.fleet_summary import run as run_fleet
from tco.present.flip_text import describe_flip
from tco.present.tables import bounds, held_batch, infeasible_reasons, other_generations
from tco.studies import parse_metric, tornado

from ..callbacks import open_tab_on_click
from ..context import AppContext, view_state

ID = "decide"
LABEL = "Decide"


STEPS = [("workload", "1. Name the workload", "assumptions"), ("objective", "2. Name the objective", "compare"),
         ("bottleneck", "3. Find the bottleneck", "compare"), ("distribution", "4. Measure the distribution", "uncertainty"),
         ("split", "5. Price the split", "fleet"), ("change", "6. Test change", "sensitivity")]
TAB_LABELS = {"assumptions": "Assumptions", "compare": "Compare", "uncertainty": "Uncertainty", "fleet": "Fleet",
              "sensitivity": "Break-even & sensitivity", "lifecycle": "Lifecycle"}


def layout(ctx_: AppContext):
    return html.Div([
        html.P("The checklist of the source talks, answered by the model for the scenario above (with its edits). "
               "Each step links to the tab that goes deeper.", className="hint"),
        html.Ol(id="decide-steps", className="steps", children=[
            html.Li(className="step", children=[
                html.H3(title), html.Div(id=f"decide-{key}", className="step-answer"),
                html.Button(f"Go deeper: {TAB_LABELS[tab]}", id={"type": "goto", "tab": tab, "step": key},
                            className="small-button")])
            for key, title, tab in STEPS]),
        html.P(["Every term is defined in the ", html.A("glossary", href="#glossary"), " at the foot of the page."],
               className="hint"),
    ])


def workload_answer(scenario) -> list:
    v = scenario.values()
    per_user = 1.0 / v[named.workload.tpot_target_s]
    kind = "interactive (batch-one-like)" if v[named.workload.tpot_target_s] <= 0.02 else \
        "interactive chat" if v[named.workload.tpot_target_s] <= 0.1 else "throughput (batch) serving"
    return [html.P(f"{scenario.structure.model}: {sig(v[named.workload.requests_per_s], 3)} requests/s on average (peak "
                   f"{sig(v[named.workload.peak_to_mean], 3)}x), prompts of {sig(v[named.workload.prompt_tokens], 3)} tokens, "
                   f"answers of {sig(v[named.workload.output_tokens], 3)} tokens."),
            html.P(f"Targets: first token within {quantity(v[named.workload.ttft_target_s], 's')}, then a token every "
                   f"{quantity(v[named.workload.tpot_target_s], 's')} ({sig(per_user, 3)} tokens/s per user): {kind}.")]


def objective_answer(scenario, result) -> list:
    v = scenario.values()
    return [html.P(f"The cheapest cost per million output tokens that meets these targets, levelized over "
                   f"{sig(v[named.economics.horizon_years], 2)} years at a "
                   f"{quantity(v[named.economics.discount_rate], 'fraction')} "
                   f"cost of capital, against the baseline {scenario.structure.baseline}."),
            html.P(result.decision.headline, className="verdict-inline")]


def bottleneck_answer(scenario, result) -> list:
    v = scenario.values()
    items = []
    for name, r in result.results.items():
        where = ", ".join(f"{phase} {what}-bound" for phase, what in bounds(r).items())
        reasons = infeasible_reasons(r)
        status = "meets the targets" if not reasons else "misses: " + "; ".join(reasons)
        spill = scalar(r.spilled_bytes)
        held = held_batch(r)
        generations = other_generations(r)
        items.append(html.Li(f"{name}: {where}; batch {sig(scalar(r.batch), 3)} at TPOT {quantity(scalar(r.tpot_s), 's')} "
                             f"(target {quantity(v[named.workload.tpot_target_s], 's')}), TTFT {quantity(scalar(r.ttft_s), 's')}"
                             + (f" ({held})" if held else "")
                             + (f"; {quantity(spill, 'B')} per step spill below the fastest memory" if spill > 0 else "")
                             + f"; {status}" + (f" ({generations})" if generations else "") + "."))
    return [html.Ul(items)]


def distribution_answer(scenario, result) -> list:
    decision = result.decision
    challenger = decision.runner_up if decision.winner == scenario.structure.baseline else decision.winner
    v = scenario.values()
    params = scenario.params
    spread = (f"The model prices the mean request; the sourced ranges: prompts "
              f"{sig(params[named.workload.prompt_tokens].low, 3)}–{sig(params[named.workload.prompt_tokens].high, 3)} tokens, "
              f"answers {sig(params[named.workload.output_tokens].low, 3)}–{sig(params[named.workload.output_tokens].high, 3)} "
              f"tokens, peak-to-mean {sig(params[named.workload.peak_to_mean].low, 3)}–"
              f"{sig(params[named.workload.peak_to_mean].high, 3)} (now {sig(v[named.workload.peak_to_mean], 3)}).")
    out = [html.P(spread)]
    if challenger and challenger != scenario.structure.baseline:
        metric = parse_metric(scenario, f"ratio:{challenger}")
        frame = tornado(scenario, metric).head(3)
        drivers = "; ".join(f"{param_label(r.param)} (cost ratio {tornado_end(r.metric_low, r.misses_low)} at low, "
                            f"{tornado_end(r.metric_high, r.misses_high)} at high)" for r in frame.itertuples())
        out.append(html.P(f"Largest swings of {challenger}'s cost ratio to {scenario.structure.baseline}: {drivers}. "
                          "The Uncertainty tab draws every input at once (Monte Carlo: P(win), exceedance)."))
    return out


def tornado_end(ratio: float, misses: str) -> str:
    """One end of a tornado bar in words: the cost ratio [-], or who misses a latency target there (no ratio)."""
    return f"— ({misses} {'miss' if ',' in misses else 'misses'} a latency target)" if misses else sig(ratio, 3)


def split_answer(scenario) -> list:
    if not any(o.disaggregated for o in scenario.structure.options):
        return [html.P("The scenario has no option that splits prefill and decode across device types: add one to price "
                       "the KV transfer and the stranded capacity (the bundled 'default' and 'fleet-split' have one).")]
    try:
        cfg = fleet_config(scenario)
        lines = [run_fleet(name, scenario, cfg).headline.sentence for name in ("kv-wall", "stranded", "coordination")]
    except InputError as exc:
        return [html.P(f"The fleet analyses cannot run: {exc.errors[0]}")]
    return [html.Ul([html.Li(line) for line in lines])]


def change_answer(scenario, result) -> list:
    decision = result.decision
    if decision.flips:
        flips = [html.Li(describe_flip(f)) for f in decision.flips]
        one = len(decision.flips) == 1
        head = html.P("1 input changes which option is cheapest within its sourced range:" if one else
                      f"{len(decision.flips)} inputs change which option is cheapest within their sourced range, "
                      "nearest first:")
    else:
        flips, head = [], html.P("No single input within its sourced range changes which option is cheapest.")
    lh = [(n, row["life_over_half_life"]) for n, row in result.challengers.iterrows()
          if "life_over_half_life" in row and row["life_over_half_life"] == row["life_over_half_life"]]
    life = ([html.P("L/H (useful life over workload half-life): " + ", ".join(f"{n} {sig(x, 3)}" for n, x in lh)
                    + ". Above 1 the specialized device outlives the workload it was built for (Lifecycle tab).")]
            if lh else [])
    return [head, html.Ul(flips), *life]


def decide_view(scenario):
    """The six answers for one scenario (the callback body; benchmarked)."""
    if getattr(scenario, "kind", "inference") == "training":
        note = [html.P("The guided steps are written for serving (inference) scenarios; for a training run the Compare "
                       "tab gives time to train, cost per run and the inputs that flip the cheapest cluster.")]
        return [note] * len(STEPS)
    result = compare(scenario)
    return [workload_answer(scenario), objective_answer(scenario, result), bottleneck_answer(scenario, result),
            distribution_answer(scenario, result), split_answer(scenario), change_answer(scenario, result)]


def register(app, ctx_: AppContext) -> None:
    @app.callback(*[Output(f"decide-{key}", "children") for key, _, _ in STEPS], view_state(ID),
                  prevent_initial_call=True)
    def steps(state):
        return decide_view(ctx_.scenario(state))

    open_tab_on_click(app, "tabs", "goto", "tab", "step")
