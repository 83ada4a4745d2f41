"""The glossary: every term of art the app shows, in words, at the foot of every page (:func:`glossary_block`);
views link a term to its entry (:func:`terms_line`), its definition in the link's tooltip too."""

from __future__ import annotations

import re

from dash import html

#: ``(term, definition)``, in the order a reader meets them
GLOSSARY = [
    ("LCOT", "levelized cost of tokens: present value of all costs over the horizon divided by the present value "
             "of the output tokens served, per million (the LCOE idea applied to tokens). Input+output basis beside it."),
    ("TTFT", "time to first token: queueing, prefill of the prompt, and the KV transfer when prefill and decode run "
             "on different devices."),
    ("TPOT", "time per output token: a request's decode time over its output tokens, at the percentile (the decode "
             "steps it lives through, with the prefill of other requests riding in them); 1/TPOT is the speed one user "
             "sees."),
    ("percentile", "the share of requests whose TTFT and TPOT must meet the targets at peak load (p99: all but one in "
                   "a hundred)."),
    ("replica shape", "how one replica of the model spreads over devices: TP (tensor parallel) devices share each "
                      "layer, PP (pipeline) stages hold successive layers, EP/DP (expert and data parallel) ranks share "
                      "a mixture-of-experts model's experts; TP8 x PP72 is 576 devices."),
    ("bound by", "what limits a phase in the roofline: compute (FLOP/s), bandwidth (memory bytes per second) or "
                 "interconnect (chip-to-chip traffic and synchronisation)."),
    ("spilled bytes", "bytes of a decode step that do not fit the device's fastest memory tier (an SRAM chip's "
                      "advantage ends where the KV cache spills)."),
    ("prefill interference", "the share of a colocated replica's cycle spent prefilling other requests' prompts, "
                             "which every decoding request waits through."),
    ("prefix cache hit rate", "the share of prompt tokens whose KV cache is already held (a previous turn of the "
                              "session): prefill skips them; an SRAM-only device holds none."),
    ("accepted tokens per step", "speculative decoding: a draft proposes k tokens, the model verifies them in one "
                                 "step and keeps 1 + a + a^2 + ... + a^k on average (a: acceptance per position)."),
    ("interactivity", "output tokens per second one user sees (1/TPOT); the throughput-interactivity curve trades it "
                      "against output tokens per second per device as more sequences share a replica."),
    ("L/H", "useful life of the specialized hardware over the workload's half-life: above 1 the chip outlives the "
            "workload it was designed for; below 1 generality wins less often."),
    ("half-life", "years until half the demand has moved to workloads the specialized design does not serve at "
                  "its designed efficiency."),
    ("NPV", "present value saved by choosing an option over the baseline (positive: it pays), at the scenario's "
            "discount rate."),
    ("break-even", "the value of one input at which an option ties the baseline; tco reports every crossing in a "
                   "range and the windows between them."),
    ("respin", "a second tape-out after first silicon fails: one more mask set and months of delay; the surveys put "
               "first-silicon success of ASIC projects at about 30 % over twenty years, 14 % in 2024."),
    ("flip condition", "an input that, moved alone within its sourced range, changes the cheapest option."),
    ("tie", "two options whose costs are within the tie tolerance (2 % by default): closer than the inputs are known."),
    ("grade", "evidence of a default: A measured, list price or vendor specification; B analyst or press; C our "
              "estimate (the note shows the arithmetic)."),
    ("disaggregated / split", "prefill on one device pool, decode on another, the KV cache moved between them over "
                              "a link."),
    ("stranded capacity", "specialized device-hours idle while the other pool's queue waits."),
    ("P10 – P90", "the 10th and 90th percentiles of a Monte Carlo metric over its draws: eight draws in ten lie "
                  "between them."),
    ("S1 / ST", "Sobol indices: the share of a metric's variance an input drives alone (first order, S1) and alone "
                "or with others (total, ST), each in [0, 1] within its interval."),
    ("mu* / sigma", "Morris screening: the mean absolute change of a metric when one input moves across its whole "
                    "range (mu*), and the spread of those changes (sigma: high where the input interacts)."),
]
#: the definition of each term
DEFINITIONS = dict(GLOSSARY)


def anchor(term: str) -> str:
    """The id of a term's entry: ``glossary-`` and its letters and digits (``glossary-s1-st``)."""
    return "glossary-" + re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


def glossary_block() -> html.Details:
    """The glossary as the foot of every page: a list of terms, each entry its own link target."""
    return html.Details(id="glossary", className="glossary-box", children=[
        html.Summary("Glossary of the terms"),
        html.Dl(className="glossary", children=[part for term, text in GLOSSARY
                                                for part in (html.Dt(term, id=anchor(term)), html.Dd(text))])])


def term_link(term: str) -> html.A:
    """A link to ``term``'s entry, its definition as the tooltip."""
    return html.A(term, href=f"#{anchor(term)}", title=DEFINITIONS[term], className="term")


def terms_line(*terms: str) -> html.P:
    """``Terms: LCOT · TTFT · ...``, each a link to the glossary, under a view that uses them."""
    parts: list = ["Terms: "]
    for i, term in enumerate(terms):
        parts += ([" · "] if i else []) + [term_link(term)]
    return html.P(parts, className="terms hint")
