"""The decision checklist of the source talks, answered by the model for one scenario: six steps, each a few
paragraphs and bullet lists in words.

The app's Decide page (``tco_app.pages.decide``) draws them as HTML with a link to the tab that goes deeper, and ``tco
decide`` prints them (text or JSON); both read :func:`checklist`, so the two say the same thing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from tco.core import names as named
from tco.foundation.errors import InputError
from tco.foundation.formatting import quantity, sig
from tco.foundation.labels import param_label
from tco.foundation.plain_values import scalar
from tco.inputs.fleet_settings import fleet_config
from tco.present.comparison import Comparison, compare
from tco.present.fleet_summary import run as run_fleet
from tco.present.flip_text import describe_flip
from tco.present.tables import bounds, held_batch, infeasible_reasons, other_generations
from tco.studies import parse_metric, tornado


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of an answer; ``verdict`` marks the verdict's own headline."""

    text: str
    verdict: bool = False


@dataclass(frozen=True)
class Bullets:
    """A bullet list of an answer, one item a line."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Step:
    """One step of the checklist: its key, title, the app tab that goes deeper, and its answer."""

    key: str
    title: str
    tab: str
    blocks: tuple[Paragraph | Bullets, ...]

    def to_dict(self) -> dict:
        """The step as plain data (``tco decide --format json``)."""
        return {"key": self.key, "title": self.title, "tab": self.tab,
                "blocks": [{"paragraph": b.text} if isinstance(b, Paragraph) else asdict(b) for b in self.blocks]}


#: the steps: (key, title, the app tab that goes deeper)
STEPS = [("workload", "1. Name the workload", "assumptions"), ("objective", "2. Name the objective", "compare"),
         ("bottleneck", "3. Find the bottleneck", "compare"), ("distribution", "4. Measure the distribution", "uncertainty"),
         ("split", "5. Price the split", "fleet"), ("change", "6. Test change", "sensitivity")]


def workload_answer(scenario) -> list:
    """Step 1: what the fleet serves and its latency targets, in words."""
    v = scenario.values()
    per_user = 1.0 / v[named.workload.tpot_target_s]
    kind = "interactive (batch-one-like)" if v[named.workload.tpot_target_s] <= 0.02 else \
        "interactive chat" if v[named.workload.tpot_target_s] <= 0.1 else "throughput (batch) serving"
    return [Paragraph(f"{scenario.structure.model}: {sig(v[named.workload.requests_per_s], 3)} requests/s on average (peak "
                      f"{sig(v[named.workload.peak_to_mean], 3)}x), prompts of {sig(v[named.workload.prompt_tokens], 3)} "
                      f"tokens, answers of {sig(v[named.workload.output_tokens], 3)} tokens."),
            Paragraph(f"Targets: first token within {quantity(v[named.workload.ttft_target_s], 's')}, then a token every "
                      f"{quantity(v[named.workload.tpot_target_s], 's')} ({sig(per_user, 3)} tokens/s per user): {kind}.")]


def objective_answer(scenario, result: Comparison) -> list:
    """Step 2: the objective the verdict answers, and its headline."""
    v = scenario.values()
    return [Paragraph(f"The cheapest cost per million output tokens that meets these targets, levelized over "
                      f"{sig(v[named.economics.horizon_years], 2)} years at a "
                      f"{quantity(v[named.economics.discount_rate], 'fraction')} "
                      f"cost of capital, against the baseline {scenario.structure.baseline}."),
            Paragraph(result.decision.headline, verdict=True)]


def bottleneck_answer(scenario, result: Comparison) -> list:
    """Step 3: what bounds each option's serving step, its batch, TPOT and TTFT, and which target it misses."""
    v = scenario.values()
    items = []
    for name, r in result.results.items():
        where = ", ".join(f"{phase} {what}-bound" for phase, what in bounds(r).items())
        reasons = infeasible_reasons(r)
        status = "meets the targets" if not reasons else "misses: " + "; ".join(reasons)
        spill = scalar(r.spilled_bytes)
        held = held_batch(r)
        generations = other_generations(r)
        items.append(f"{name}: {where}; batch {sig(scalar(r.batch), 3)} at TPOT {quantity(scalar(r.tpot_s), 's')} "
                     f"(target {quantity(v[named.workload.tpot_target_s], 's')}), TTFT {quantity(scalar(r.ttft_s), 's')}"
                     + (f" ({held})" if held else "")
                     + (f"; {quantity(spill, 'B')} per step spill below the fastest memory" if spill > 0 else "")
                     + f"; {status}" + (f" ({generations})" if generations else "") + ".")
    return [Bullets(tuple(items))]


def tornado_end(ratio: float, misses: str) -> str:
    """One end of a tornado bar in words: the cost ratio [-], or who misses a latency target there (no ratio)."""
    return f"— ({misses} {'miss' if ',' in misses else 'misses'} a latency target)" if misses else sig(ratio, 3)


def distribution_answer(scenario, result: Comparison) -> list:
    """Step 4: the sourced ranges of the request, and the largest swings of the challenger's cost ratio."""
    decision = result.decision
    challenger = decision.runner_up if decision.winner == scenario.structure.baseline else decision.winner
    v = scenario.values()
    params = scenario.params
    spread = (f"The model prices the mean request; the sourced ranges: prompts "
              f"{sig(params[named.workload.prompt_tokens].low, 3)}–{sig(params[named.workload.prompt_tokens].high, 3)} tokens, "
              f"answers {sig(params[named.workload.output_tokens].low, 3)}–{sig(params[named.workload.output_tokens].high, 3)} "
              f"tokens, peak-to-mean {sig(params[named.workload.peak_to_mean].low, 3)}–"
              f"{sig(params[named.workload.peak_to_mean].high, 3)} (now {sig(v[named.workload.peak_to_mean], 3)}).")
    out = [Paragraph(spread)]
    if challenger and challenger != scenario.structure.baseline:
        metric = parse_metric(scenario, f"ratio:{challenger}")
        frame = tornado(scenario, metric).head(3)
        drivers = "; ".join(f"{param_label(r.param)} (cost ratio {tornado_end(r.metric_low, r.misses_low)} at low, "
                            f"{tornado_end(r.metric_high, r.misses_high)} at high)" for r in frame.itertuples())
        out.append(Paragraph(f"Largest swings of {challenger}'s cost ratio to {scenario.structure.baseline}: {drivers}. "
                             "The Uncertainty tab draws every input at once (Monte Carlo: P(win), exceedance)."))
    return out


def split_answer(scenario) -> list:
    """Step 5: the KV wall, stranded capacity and coordination of the scenario's split, or why there is none."""
    if not any(o.disaggregated for o in scenario.structure.options):
        return [Paragraph("The scenario has no option that splits prefill and decode across device types: add one to "
                          "price the KV transfer and the stranded capacity (the bundled 'default' and 'fleet-split' have "
                          "one).")]
    try:
        cfg = fleet_config(scenario)
        lines = [run_fleet(name, scenario, cfg).headline.sentence for name in ("kv-wall", "stranded", "coordination")]
    except InputError as exc:
        return [Paragraph(f"The fleet analyses cannot run: {exc.errors[0]}")]
    return [Bullets(tuple(lines))]


def change_answer(scenario, result: Comparison) -> list:
    """Step 6: the inputs that change which option is cheapest within their sourced ranges, and L/H."""
    decision = result.decision
    if decision.flips:
        flips = tuple(describe_flip(f) for f in decision.flips)
        head = ("1 input changes which option is cheapest within its sourced range:" if len(flips) == 1 else
                f"{len(flips)} inputs change which option is cheapest within their sourced range, nearest first:")
    else:
        flips, head = (), "No single input within its sourced range changes which option is cheapest."
    lh = [(n, row["life_over_half_life"]) for n, row in result.challengers.iterrows()
          if "life_over_half_life" in row and row["life_over_half_life"] == row["life_over_half_life"]]
    life = ([Paragraph("L/H (useful life over workload half-life): " + ", ".join(f"{n} {sig(x, 3)}" for n, x in lh)
                       + ". Above 1 the specialized device outlives the workload it was built for (Lifecycle tab).")]
            if lh else [])
    return [Paragraph(head), Bullets(flips), *life]


#: what a training scenario's steps say (the checklist is written for serving)
TRAINING_NOTE = ("The guided steps are written for serving (inference) scenarios; for a training run the Compare tab "
                 "gives time to train, cost per run and the inputs that flip the cheapest cluster.")


def checklist(scenario) -> list[Step]:
    """The six steps answered for ``scenario`` (one comparison, one tornado, the fleet analyses of its split)."""
    if getattr(scenario, "kind", "inference") == "training":
        return [Step(key, title, tab, (Paragraph(TRAINING_NOTE),)) for key, title, tab in STEPS]
    result = compare(scenario)
    answers = {"workload": workload_answer(scenario), "objective": objective_answer(scenario, result),
               "bottleneck": bottleneck_answer(scenario, result), "distribution": distribution_answer(scenario, result),
               "split": split_answer(scenario), "change": change_answer(scenario, result)}
    return [Step(key, title, tab, tuple(answers[key])) for key, title, tab in STEPS]
