"""Attacks on the app, run in capped children (see harness.py): each builds the app and sends
what a crafted request would, returning what the server answered."""

from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path

DEFAULT_STATE = {"scenario": "default", "upload": None, "set": {}}


def _app():
    from preloaded_app import APP  # built in the fork server

    return APP


def _answer(response) -> dict:
    """Status, size and text of a callback response; for the controller also its state and messages."""
    answer = {"status": response.status_code, "bytes": len(response.data), "text": response.get_data(as_text=True)[:20000]}
    if response.status_code == 200:
        outputs = json.loads(response.data).get("response", {})
        answer["state"] = outputs.get("state", {}).get("data")
        # table edits answer in edit-errors; a link, a crafted state or an upload in the messages under the header
        answer["edits"] = json.dumps([outputs.get("edit-errors", {}).get("children"),
                                      outputs.get("messages", {}).get("children")])
        answer["upload"] = json.dumps(outputs.get("messages", {}).get("children"))
        answer["builder"] = json.dumps(outputs.get("builder-messages", {}).get("children"))
    return answer


def dash_post(output: str, inputs: dict, state: dict, changed: str) -> dict:
    """POST one callback request (``/_dash-update-component``) to a fresh app, values given by ``id.property``."""
    app = _app()
    spec = app.callback_map[output]

    def items(kind, values):
        return [{"id": item["id"], "property": item["property"], "value": values.get(f"{item['id']}.{item['property']}")}
                for item in spec[kind]]

    if output.startswith(".."):
        outputs = [{"id": json.loads(ident) if ident.startswith("{") else ident, "property": prop}
                   for ident, prop in (part.rsplit(".", 1) for part in output.strip(".").split("..."))]
    else:
        ident, prop = output.rsplit(".", 1)
        outputs = {"id": json.loads(ident) if ident.startswith("{") else ident, "property": prop}
    body = {"output": output, "outputs": outputs, "inputs": items("inputs", inputs), "state": items("state", state),
            "changedPropIds": [changed]}
    return _answer(app.server.test_client().post("/_dash-update-component", json=body))


MAP = '{"name":"map","type":"chart"}.figure'


def controller(changed: str, search: str = "", upload: str | None = None, upload_name: str | None = None,
               rows: list | None = None, state: dict | None = DEFAULT_STATE) -> dict:
    """The state-owning callback (its outputs start with the state and the address), as a crafted request would drive
    it."""
    key = next(k for k in _app().callback_map if k.startswith("..state.data...url.search..."))
    return dash_post(key, {"url.search": search, "upload.contents": upload, "params-table.data_timestamp": 1},
                     {"upload.filename": upload_name, "params-table.data": rows, "state.data": state,
                      "scenario-key.data": None}, changed)


def upload_yaml(text: str, name: str = "attack.yaml") -> dict:
    contents = "data:application/x-yaml;base64," + base64.b64encode(text.encode()).decode()
    return controller("upload.contents", upload=contents, upload_name=name)


def map_cells(n) -> dict:
    return dash_post(MAP, {"map-x.value": "economics.discount_rate", "map-y.value": "workload.requests_per_s",
                           "map-n.value": n, "sens-metric.value": "ratio:groq"}, {"state.data": DEFAULT_STATE}, "map-n.value")


def monte_carlo(samples, seed=1) -> str:
    """The Monte Carlo view's answer (a background callback's body, called as the job runner would)."""
    from tco_app.context import AppContext
    from tco_app.pages.uncertainty import monte_carlo_view
    from tco_app.state import scenario_choices

    ctx = AppContext(scenario_choices(), "default")
    _figure, _exceedance, table = monte_carlo_view(ctx, DEFAULT_STATE, "ratio:groq", samples, seed)
    return str(table)


def sobol(n) -> str:
    from tco_app.context import AppContext
    from tco_app.pages.uncertainty import sobol_view
    from tco_app.state import scenario_choices

    figure = sobol_view(AppContext(scenario_choices(), "default"), DEFAULT_STATE, "ratio:groq", n, 1)
    annotations = (figure.get("layout", {}) if isinstance(figure, dict) else figure.to_plotly_json()["layout"]).get(
        "annotations") or []
    return str(annotations[0]["text"]) if annotations else "ran"


def oversized_request(size: int) -> int:
    """A request body of ``size`` bytes to the callback endpoint: the HTTP status."""
    app = _app()
    return app.server.test_client().post("/_dash-update-component", data=b"{" + b" " * size + b"}",
                                         content_type="application/json").status_code


def workbook_download(name: str, folder: str) -> dict:
    """The app's workbook download for a scenario named ``name``; what it is called and what it left in ``folder``."""
    from tco_app.pages.assumptions import workbook_download as download

    import tco

    scenario = tco.load_scenario("default")
    scenario = tco.inputs.loading.scenario_from_dict({**scenario.to_dict(), "name": name})
    tempfile.tempdir = folder  # the download's temporary folder is created here
    answer = download(scenario)
    return {"filename": answer["filename"], "left": sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*"))}


def preloaded() -> list[str]:
    """Which of the fork server's preloaded modules a child finds already imported."""
    import sys

    from harness import PRELOAD

    return [name for name in PRELOAD if name not in sys.modules]
