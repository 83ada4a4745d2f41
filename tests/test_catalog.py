"""The sourced catalog: every entry validates, every number has a source, a date and a range."""

from __future__ import annotations

import pytest

from tco.catalog import LLM, Device, Economics, Link, NodeCosts, load_catalog, validated
from tco.params import Quantity

CATALOG = load_catalog()
REQUIRED_DEVICES = {"h100-sxm", "h200-sxm", "b200", "mi300x", "tpu-v6e", "groq-lpu", "cerebras-cs3", "custom-decode-asic"}
REQUIRED_MODELS = {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "mixtral-8x7b", "deepseek-v3"}


def quantities(entry):
    for value in entry.__dict__.values():
        if isinstance(value, Quantity):
            yield value
        elif isinstance(value, list):
            for item in value:
                yield from quantities(item)


def entries():
    for kind, model, table in (("device", Device, CATALOG.devices), ("model", LLM, CATALOG.models),
                               ("link", Link, CATALOG.links), ("node", NodeCosts, CATALOG.nodes)):
        for ident, data in table.items():
            yield f"{kind}:{ident}", model, {**data, "id": ident} if kind in ("link",) else data
    yield "economics", Economics, CATALOG.economics


@pytest.mark.parametrize(("name", "model", "data"), list(entries()), ids=lambda x: x if isinstance(x, str) else "")
def test_entry_validates_and_is_sourced(name, model, data):
    entry = validated(model, data, name)
    for q in quantities(entry):
        assert q.source and q.date, (name, q)
        assert q.low is None or q.low <= q.value, (name, q)
        assert q.high is None or q.value <= q.high, (name, q)


def test_required_entries_present():
    assert set(CATALOG.devices) >= REQUIRED_DEVICES
    assert set(CATALOG.models) >= REQUIRED_MODELS
    assert CATALOG.models["deepseek-v3"].get("kv_elements_per_token")
    assert {"5nm", "7nm"} <= set(CATALOG.nodes)
