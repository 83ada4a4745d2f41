"""Plotly figures of the fleet analyses: axis titles carry units (the same as the tables: latencies in ms,
routing costs per 1,000 answers); look and palette from :mod:`tco.present.figure_style`."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from tco.present.figure_style import PALETTE, style

USD_MTOK = "USD per million output tokens"
PROMPT_HOVER = "%{x:,.0f} prompt tokens<br>%{y:,.4g} " + USD_MTOK


def _layout(fig: go.Figure, title: str, x: str, y: str, log_x: bool = False, height: int | None = None) -> go.Figure:
    style(fig, title, x, y, height)
    if log_x:
        fig.update_xaxes(type="log")
    return fig


def _log_ticks(values) -> list[float]:
    """1-2-5 ticks per decade spanning ``values`` (positive), for a readable log axis; one per decade beyond four
    decades (the KV wall's link cost lies six decades below the fleets' costs)."""
    v = [x for x in values if x > 0 and math.isfinite(x)]
    if not v:
        return []
    low, high = math.floor(math.log10(min(v))), math.ceil(math.log10(max(v)))
    ticks = [m * 10.0**e for e in range(low, high + 1) for m in ((1, 2, 5) if high - low <= 4 else (1,))]
    return [t for t in ticks if min(v) / 2 <= t <= max(v) * 2]


def _mark_prompt(fig: go.Figure, x: float, text: str, colour: str = "#000000", row: int = 0) -> None:
    """A dashed vertical line at prompt length ``x`` with a label (annotations on a log axis take log10 positions);
    labels of several lines go one ``row`` lower each, so they never overprint."""
    fig.add_vline(x=x, line_dash="dash", line_color=colour)
    fig.add_annotation(x=math.log10(x), y=1 - 0.1 * row, xref="x", yref="y domain", text=text, showarrow=False,
                       xanchor="left", yanchor="top", bgcolor="rgba(255,255,255,0.8)")


def _cost_line(fig, x, cost, feasible, name, color) -> None:
    """A solid line where the option meets its latency targets, dotted where it misses them."""
    fig.add_scatter(x=x, y=cost.where(feasible), name=name, line={"color": color}, legendgroup=name,
                    hovertemplate=PROMPT_HOVER)
    if not feasible.all():
        # infeasible points and their neighbours, so the dotted part joins the solid one
        near_infeasible = ~(feasible & feasible.shift(1, fill_value=True) & feasible.shift(-1, fill_value=True))
        fig.add_scatter(x=x, y=cost.where(near_infeasible), mode="lines",
                        name=f"{name}: misses a latency target", line={"color": color, "dash": "dot", "width": 1},
                        legendgroup=name, showlegend=False, hovertemplate=PROMPT_HOVER)


def kv_wall_figure(result) -> go.Figure:
    """Cost of the split and its colocated counterparts over prompt length; dotted where a latency target is missed.

    Parameters
    ----------
    result : tco.dynamics.kv_wall.KVWallResult
        The KV-wall analysis: its table and break-evens.

    Returns
    -------
    plotly.graph_objects.Figure
        Costs [USD/Mtok, log axis] against prompt length [tokens] (log axis), the KV link's cost and a
        dashed line at each break-even.
    """
    t = result.table
    fig = go.Figure()
    _cost_line(fig, t["prompt_tokens"], t["split_usd_per_mtok"], t["split_feasible"], f"{result.option} (split)", PALETTE[0])
    for i, (role, name) in enumerate(result.counterparts.items(), start=1):
        _cost_line(fig, t["prompt_tokens"], t[f"{name}_usd_per_mtok"], t[f"{name}_feasible"],
                   f"{name} (colocated, {role} device)", PALETTE[i])
    fig.add_scatter(x=t["prompt_tokens"], y=t["link_usd_per_mtok"], name="KV link cost",
                    line={"color": PALETTE[3], "dash": "dot"}, hovertemplate=PROMPT_HOVER)  # as in kv_gain_figure
    wall = result.breakevens["prompt_tokens"]
    for row, x in enumerate(wall.get("crossings") or ([wall["value"]] if wall["value"] is not None else [])):
        _mark_prompt(fig, x, f"break-even {x:,.0f} tokens", row=row)
    # costs span decades over the prompt range (the default: 0.3 to ~700 USD per million over 128 to 131,000 tokens):
    # on a linear axis every short-prompt cost sat on the zero line
    costs = t[[c for c in t.columns if c.endswith("_usd_per_mtok") and c != "decode_gain_usd_per_mtok"]].to_numpy().ravel()
    fig.update_yaxes(type="log", tickvals=_log_ticks(costs), tickformat="~g")
    return _layout(fig, "KV transfer wall (dotted: misses a latency target)", "prompt length [tokens]", f"cost [{USD_MTOK}]",
                   log_x=True)


def kv_gain_figure(result) -> go.Figure:
    """The split's decode gain against its KV link cost over prompt length, and where the decode KV spills.

    Parameters
    ----------
    result : tco.dynamics.kv_wall.KVWallResult
        Its table's decode gain, link cost and spill onset are drawn.

    Returns
    -------
    plotly.graph_objects.Figure
        Gain and cost [USD/Mtok] against prompt length [tokens] (log axis), with the spill onset.
    """
    t = result.table
    fig = go.Figure()
    fig.add_scatter(x=t["prompt_tokens"], y=t["decode_gain_usd_per_mtok"], name="decode gain (before the link)",
                    line={"color": PALETTE[2]}, hovertemplate=PROMPT_HOVER)
    fig.add_scatter(x=t["prompt_tokens"], y=t["link_usd_per_mtok"], name="KV transfer cost (link)",
                    line={"color": PALETTE[3], "dash": "dot"}, hovertemplate=PROMPT_HOVER)
    spill = result.breakevens["spill_onset_prompt_tokens"]["value"]
    if spill is not None:
        _mark_prompt(fig, spill, f"decode KV spills from {spill:,.0f} tokens")
    return _layout(fig, "Decode gain against KV transfer cost", "prompt length [tokens]",
                   f"gain or cost [{USD_MTOK}]", log_x=True)


def stranded_figure(result) -> go.Figure:
    """Cost per token served by sizing policy, for the split fleet and the homogeneous GPU fleet.

    Parameters
    ----------
    result : tco.dynamics.stranded.StrandedResult
        The quarter simulation's summary per policy and fleet.

    Returns
    -------
    plotly.graph_objects.Figure
        Bars of cost [USD per M output tokens served] per policy and fleet; the hover adds the
        stranded share and the late hours.
    """
    s = result.summary
    fig = go.Figure()
    for i, fleet in enumerate(s["fleet"].unique()):
        rows = s[s["fleet"] == fleet]
        fig.add_bar(x=rows["policy"], y=rows["usd_per_mtok"], name=f"{fleet}: cost", marker_color=PALETTE[i],
                    customdata=rows[["stranded_share", "violation_hours"]],
                    hovertemplate="%{x}: %{y:,.4g} USD per million output tokens served<br>"
                                  "stranded %{customdata[0]:.1%}, %{customdata[1]} late hours")
    return _layout(fig, "Quarter simulation by sizing policy", "pool sizing policy",
                   "cost [USD per million output tokens served]")


def backlog_figure(result, policy: str) -> go.Figure:
    """Requests queued at the end of each hour per pool; a policy under which nothing ever waits says so.

    Parameters
    ----------
    result : tco.dynamics.stranded.StrandedResult
        The quarter simulation (its hourly table).
    policy : str
        The sizing policy shown (``today``, ``peak``, ``flex``).

    Returns
    -------
    plotly.graph_objects.Figure
        Backlog [requests] against the hour of the quarter [h] for the split fleet's prefill
        and decode pools and the homogeneous GPU fleet.
    """
    h = result.hourly[result.hourly["policy"] == policy]
    fig = go.Figure()
    columns = (("prefill_backlog_req", "split fleet: prefill pool"), ("decode_backlog_req", "split fleet: decode pool"),
               ("gpu_fleet_backlog_req", "homogeneous GPU fleet"))
    for i, (col, name) in enumerate(columns):
        fig.add_scatter(x=h["hour"], y=h[col], name=name, line={"color": PALETTE[i]},
                        hovertemplate="hour %{x:,.0f}: %{y:,.0f} requests queued<extra>" + name + "</extra>")
    if not any(h[col].max() > 0 for col, _ in columns):
        fig.add_annotation(text=f"no request waits past the hour under '{policy}': every pool keeps up all quarter",
                           x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, bgcolor="rgba(255,255,255,0.9)")
        fig.update_yaxes(range=[0, 1])
    return _layout(fig, f"Backlog per hour, policy '{policy}'", "hour of the quarter [h]", "backlog [requests]")


def coordination_figure(result) -> go.Figure:
    """Cost of the split fleet against the specialized pool's utilization, beside the GPU fleet's.

    Parameters
    ----------
    result : tco.dynamics.coordination.CoordinationResult
        Its curve over utilization.

    Returns
    -------
    plotly.graph_objects.Figure
        Cost [USD/Mtok] against utilization [0-1].
    """
    c = result.curve
    fig = go.Figure()
    fig.add_scatter(x=c["utilization"], y=c["split_usd_per_mtok"], name="split fleet")
    fig.add_scatter(x=c["utilization"], y=c["gpu_usd_per_mtok"], name="homogeneous GPU fleet", line={"dash": "dash"})
    return _layout(fig, f"Coordination break-even ({result.pool} pool utilization)",
                   f"{result.pool} pool utilization [0-1]", "cost [USD per million output tokens]")


#: the y axes of the interactivity view: column -> (axis title, log axis)
INTERACTIVITY_AXES = {"tokens_per_s_per_device": ("output tokens/s per device", False),
                      "usd_per_mtok": ("cost [" + USD_MTOK + "]", True),
                      "tokens_per_s_per_mw": ("output tokens/s per provisioned MW", False)}
#: line styles of a device's layouts: the searched one, then the tensor-parallel ones, narrowest first
LAYOUT_DASHES = ("solid", "dot", "dash", "longdash", "dashdot")


def interactivity_figure(frontier, y: str = "tokens_per_s_per_device") -> go.Figure:
    """Throughput (or cost, or output per provisioned MW) against output tokens/s per user, one line per device and
    layout over concurrency (colour: the device; dash: the layout, solid the searched one), the scenario's options at
    their operating point (stars, on the throughput axis) and the interactivity its TPOT target asks (a dashed
    vertical line).

    Parameters
    ----------
    frontier : tco.dynamics.interactivity.InteractivityFrontier
        The curves and operating points.
    y : str
        A column of :data:`INTERACTIVITY_AXES`.

    Returns
    -------
    plotly.graph_objects.Figure
        Output tokens/s per user [tokens/s] on x; the chosen quantity on y.
    """
    title, log_y = INTERACTIVITY_AXES[y]
    curves = frontier.curves
    devices = list(dict.fromkeys(curves["device"])) if len(curves) else []
    fig = go.Figure()
    for (device, layout), rows in curves.groupby(["device", "layout"], sort=False):
        rows = rows.sort_values("concurrency")
        layouts = list(dict.fromkeys(curves.loc[curves["device"] == device, "layout"]))
        fig.add_scatter(x=rows["tokens_per_s_per_user"], y=rows[y], mode="lines+markers", name=f"{device} {layout}",
                        text=[f"{device} {shape}, {b:,.0f} sequences per replica"
                              for shape, b in zip(rows["shape"], rows["concurrency"], strict=True)],
                        line={"color": PALETTE[devices.index(device) % len(PALETTE)],
                              "dash": LAYOUT_DASHES[layouts.index(layout) % len(LAYOUT_DASHES)]},
                        marker={"size": 5}, hovertemplate="%{text}<br>%{x:,.4g} tokens/s per user<br>%{y:,.4g}<extra></extra>")
    if y == "tokens_per_s_per_device" and len(frontier.operating):
        op = frontier.operating
        fig.add_scatter(x=op["tokens_per_s_per_user"], y=op["tokens_per_s_per_device"], mode="markers+text",
                        name="the scenario's options at peak", text=list(op["option"]), textposition="top center",
                        marker={"symbol": "star", "size": 13, "color": "#000000"},
                        hovertemplate="%{text}: %{x:,.4g} tokens/s per user, %{y:,.4g} per device<extra></extra>")
    _mark_prompt(fig, 1.0 / frontier.tpot_target_s, f"TPOT target {1e3 * frontier.tpot_target_s:,.3g} ms")
    fig.update_xaxes(type="log", tickvals=_log_ticks(curves["tokens_per_s_per_user"]), tickformat="~g")
    if log_y:
        fig.update_yaxes(type="log", tickvals=_log_ticks(curves[y]), tickformat="~g")
    return _layout(fig, f"{title} against output tokens/s per user, over concurrency",
                   "output tokens/s per user (interactivity)", title, height=520)


#: a placement's marker by its prefill device (its colour is its decode device's), so that every pair of up to eight
#: devices is told apart: the frontier's default devices grow with a roadmap's generations (sixteen placements of four)
PLACEMENT_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star", "pentagon", "cross")


#: the frontier's y axes: the column, its axis title, the unit in the hover text and the frontier flag of each latency
PARETO_Y = {"usd_per_mtok": ("cost [USD per million output tokens]", USD_MTOK, "Cost against latency by placement"),
            "tokens_per_s_per_mw": ("output tokens/s served per provisioned MW", "tokens/s per MW",
                                    "Output at fixed power against latency by placement")}


def pareto_figure(table, latency: str = "tpot_s", y: str = "usd_per_mtok") -> go.Figure:
    """Feasible points of cost (or output per provisioned MW) against latency by placement (colour: the decode device;
    marker: the prefill device, open where it decodes speculatively), and the Pareto frontier.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`tco.dynamics.pareto.pareto`'s table.
    latency : str
        ``tpot_s`` or ``ttft_s``: the latency axis (the frontier at fixed power is against TPOT).
    y : str
        ``usd_per_mtok`` (lower is better) or ``tokens_per_s_per_mw`` (higher is better): :data:`PARETO_Y`.

    Returns
    -------
    plotly.graph_objects.Figure
        Cost [USD/Mtok] or output [tokens/s per MW] (log) against TPOT or TTFT [ms] (log), points labelled with the
        phase placement and the spilled bytes.
    """
    ok = table[table["feasible"]]
    power = y == "tokens_per_s_per_mw"
    latency = "tpot_s" if power else latency
    name = latency[:4].upper()
    title, unit, heading = PARETO_Y[y]
    hover = "%{text}<br>" + name + " %{x:.3g} ms<br>%{y:,.4g} " + unit
    fig = go.Figure()
    devices = list(dict.fromkeys([*table["decode_device"], *table["prefill_device"]]))
    for placement, rows in ok.groupby("placement", sort=False):
        prefill, decode = rows["prefill_device"].iloc[0], rows["decode_device"].iloc[0]
        speculative = rows["speculation"].iloc[0] != "none"
        symbol = PLACEMENT_SYMBOLS[devices.index(prefill) % len(PLACEMENT_SYMBOLS)] + ("-open" if speculative else "")
        marker = {"color": PALETTE[devices.index(decode) % len(PALETTE)], "symbol": symbol, "size": 7}
        fig.add_scatter(x=rows[latency] * 1e3, y=rows[y], mode="markers", name=placement, text=rows["label"],
                        marker=marker, hovertemplate=hover)
    front = ok[ok["on_frontier_power" if power else f"on_frontier_{latency[:4]}"]].sort_values(latency)
    fig.add_scatter(x=front[latency] * 1e3, y=front[y], mode="lines", name="Pareto frontier",
                    text=front["label"], line={"color": "#000000", "dash": "dot"}, hovertemplate=hover)
    fig.update_yaxes(type="log", tickvals=_log_ticks(ok[y]), tickformat="~g")
    fig.update_xaxes(tickvals=_log_ticks(ok[latency] * 1e3), tickformat="~g")
    return _layout(fig, heading, f"{name} [ms]", title, log_x=True, height=460)


def tree_figure(costs) -> go.Figure:
    """Cost per device and leaf of the specialization tree (NRE and half-life included).

    Parameters
    ----------
    costs : pandas.DataFrame
        The ``costs`` table of :func:`tco.dynamics.tree.tree`.

    Returns
    -------
    plotly.graph_objects.Figure
        Bars of cost [USD per M tokens] (log) per leaf and device.
    """
    fig = go.Figure()
    for i, (device, rows) in enumerate(costs[costs["view"] == "with NRE and half-life"].groupby("device", sort=False)):
        fig.add_bar(x=rows["leaf"], y=rows["usd_per_mtok"], name=device, marker_color=PALETTE[i % len(PALETTE)])
    fig.update_yaxes(type="log")
    return _layout(fig, "Specialization tree (NRE and half-life included)", "leaf",
                   "cost [USD per million tokens]")


def routing_figure(result) -> go.Figure:
    """Cost per useful answer against the share routed to the small model, beside the large model alone.

    Parameters
    ----------
    result : tco.dynamics.routing.RoutingResult
        The routing analysis, whose curve over router shares is drawn.

    Returns
    -------
    plotly.graph_objects.Figure
        Cost [USD per 1,000 useful answers] against the router share [0-1].
    """
    c = result.curve
    fig = go.Figure()
    hover = "routed %{x:.0%}: %{y:,.4g} USD per 1,000 useful answers"
    fig.add_scatter(x=c["router_share"], y=c["usd_per_useful_answer"] * 1e3, name="with router", line={"color": PALETTE[0]},
                    hovertemplate=hover)
    fig.add_scatter(x=c["router_share"], y=c["large_only_usd_per_answer"] * 1e3, name="large model only",
                    line={"dash": "dash", "color": PALETTE[1]}, hovertemplate=hover)
    fig.update_xaxes(tickformat=".0%")
    fig.update_yaxes(tickformat="~g")
    return _layout(fig, "Routing to a small model", "share of requests routed to the small model",
                   "cost [USD per 1,000 useful answers]")


def roadmap_figure(table, target: float) -> go.Figure:
    """Each lever's factor and the cumulative factor in output tokens per joule, against the target.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`tco.dynamics.roadmap.roadmap`'s table.
    target : float [-]
        The tokens-per-watt factor aimed at (a dashed line).

    Returns
    -------
    plotly.graph_objects.Figure
        Bars of factors [-] per lever and the cumulative line.
    """
    fig = go.Figure()
    fig.add_bar(x=table["lever"], y=table["factor"], name="lever factor", marker_color=PALETTE[1],
                text=[f"{f:.2f}x" for f in table["factor"]], hovertemplate="%{x}: %{y:.3g}x output tokens per joule")
    fig.add_scatter(x=table["lever"], y=table["cumulative"], name="cumulative", line={"color": PALETTE[0]},
                    hovertemplate="after %{x}: %{y:.3g}x output tokens per joule")
    fig.add_hline(y=target, line_dash="dash", annotation_text=f"target {target:g}x")
    return _layout(fig, "Tokens-per-watt levers", "lever (applied in order)", "gain in output tokens per joule [x]")
