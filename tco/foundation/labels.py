"""How a person reads a parameter: a label from its dotted name, and a value with a readable unit.

The label comes from the field table (:mod:`tco.foundation.fields`: the field's description) and the
dotted name's prefix (the device, link, model or pool it belongs to), so
``devices.groq-lpu.price_usd`` reads "groq-lpu unit price" and
``workload.tpot_target_s`` "time-per-output-token target". Values keep 3-4 significant
figures and move to a readable unit (4.3 ms, $1.2M, 3.35 TB/s, 9 %); a missing or
non-finite value is an em dash. The CLI, the app, the verdict and the workbook use these;
the outputs have their own display units in :mod:`tco.core.outputs`.
"""

from __future__ import annotations

import re

from tco.foundation.fields import FIELDS

#: prefixes of the dotted name whose second segment names a thing (a device, model, link, site, option)
_NAMED = {"devices", "models", "links", "sites", "options"}


#: labels where the field's description reads badly as a label (too long to read in a sentence: over ~60 characters,
#: the description stays the field's definition, tco.foundation.fields, and the glossary's where it is a term)
_LABELS = {"external_units": "units sold to others", "prompt_tokens": "mean prompt length",
           "output_tokens": "mean output length", "cycle_overhead_s": "fixed overhead per serving step",
           "collective_efficiency": "all-reduce speed (share of link bandwidth)",
           "prefill_collective_efficiency": "prompt-token all-reduce speed (share of link bandwidth)",
           "expert_compute_efficiency": "routed-expert GEMM efficiency (share of dense)",
           "all_to_all_efficiency": "expert all-to-all speed (share of link bandwidth)",
           "all_to_all_latency_s": "fixed time per expert all-to-all",
           "expert_imbalance": "busiest expert rank's load over the mean",
           "micro_batch_overlap": "share of expert all-to-alls hidden by two-batch overlap",
           "prefix_cache_hbm_fraction": "share of HBM kept for the prefix cache",
           "phase_overlap": "overlap of the weight and attention phases",
           "memory_compute_overlap": "overlap of memory traffic and arithmetic",
           "collective_bits": "bits per element its collectives move",
           "acceptance_rate": "draft acceptance rate per position",
           "token_budget_tokens": "token budget per micro-batch",
           "percentile": "latency percentile",
           "cost_halving_years": "years for the best general cost per token to halve"}


#: fields read as "<thing> <short label>" where the description is generic (memory tiers, links)
_SHORT = {"capacity_bytes": "capacity", "bandwidth_bytes_per_s": "bandwidth", "latency_s": "latency"}


def field_label(field: str) -> str:
    """The short human label of a field: its description without parentheses or what follows ``;`` or ``:``."""
    if field in _LABELS:
        return _LABELS[field]
    spec = FIELDS.get(field)
    text = spec.description if spec and spec.description else field.replace("_", " ")
    text = re.sub(r"\s*\([^)]*\)", "", text)
    return re.split(r"[;:]", text, maxsplit=1)[0].strip()


def param_label(name: str) -> str:
    """A dotted parameter name in words: ``devices.groq-lpu.price_usd`` -> ``groq-lpu unit price``."""
    head, _, middle = name.rpartition(".")[0].partition(".")
    field = name.rsplit(".", 1)[-1]
    if not head:
        return field_label(field)
    if head in _NAMED and middle:  # ids may hold dots (llama-3.1-70b): the owner is all between head and field
        if head == "devices" and ".memory." in f".{middle}.":  # devices.X.memory.TIER.field
            owner, _, tier = middle.partition(".memory.")
            return f"{owner} {tier.upper() if len(tier) <= 4 else tier} {_SHORT.get(field, field_label(field))}"
        if head == "links":
            return f"{middle} link {_SHORT.get(field, field_label(field))}"
        if head == "options":  # options.OPTION.ROLE.field
            owner, _, role = middle.rpartition(".")
            owner, role = (owner, role) if owner else (role, "")
            return f"{owner} {role + ' ' if role and role != 'colocated' else ''}{field_label(field)}"
        return f"{middle} {field_label(field)}"
    if head in ("workload", "economics", "program") and not middle:
        return field_label(field)
    if head == "program":  # program.nre.design_usd
        return f"{middle.upper() if middle == 'nre' else middle} {field_label(field)}"
    return " ".join(x for x in (head.replace("_", " "), middle.replace(".", " "), field_label(field)) if x)
