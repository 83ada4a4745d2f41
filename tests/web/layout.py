"""A layout audit of the app in a real browser: overlapping text and clipped charts, by bounding boxes.

:func:`audit` runs in the page and returns every problem it finds in what is shown:

- **clipped chart**: a chart's title, legend, axis title, tick label, annotation or colour-bar
  title that reaches outside the chart's SVG, or an SVG taller or wider than its box;
- **overlap**: a legend over an axis title or tick labels, an axis title over tick labels, an
  annotation over a legend, an axis title, tick labels or another annotation;
- **page**: a page wider than the window, a text field narrower than 40 px, two controls of a
  form row on top of each other, a row of controls over a chart (the sweep dropdown that covered
  the tornado's axis).

:func:`walk` visits every tab (and every Fleet section), waits until every view has answered, and yields
``(name, width, problems)`` at each window width; the browser test asserts that none has a problem, and
``scripts/app-screenshots.py`` takes the screenshots of ``docs/img`` with the same walk.
"""

from __future__ import annotations

import time

from dropdowns import choose

AUDIT_JS = r"""
() => {
  const problems = [];
  const box = (el) => { const r = el.getBoundingClientRect(); return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom,
                                                                      w: r.width, h: r.height}; };
  const area = (a, b) => Math.max(0, Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0)) *
                         Math.max(0, Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0.5 && r.height > 0.5; };
  const text = (el) => (el.textContent || "").trim().slice(0, 60);
  const TOL = 1.5;
  document.querySelectorAll(".js-plotly-plot").forEach((plot) => {
    const holder = plot.closest(".chart") || plot.parentElement;
    const name = holder && holder.id ? holder.id : "chart";
    const svg = plot.querySelector("svg.main-svg");
    if (!svg || !visible(svg)) return;
    const s = box(svg), p = box(plot.parentElement);  // the graph's own box (dcc.Graph's element, its style height)
    const size = (b) => `${Math.round(b.w)}x${Math.round(b.h)}`;
    if (s.y1 > p.y1 + TOL || s.x1 > p.x1 + TOL)
      problems.push(`${name}: the chart (${size(s)}) is larger than its box (${size(p)})`);
    const parts = {
      title: [...plot.querySelectorAll(".gtitle")],
      legend: [...plot.querySelectorAll("g.legend")],
      axistitle: [...plot.querySelectorAll([".g-xtitle", ".g-ytitle", ".g-x2title", ".g-y2title", ".g-x3title", ".g-y3title"]
                                           .map((c) => c + " text").join(", "))],
      tick: [...plot.querySelectorAll(".xtick text, .ytick text, .x2tick text, .y2tick text, .y3tick text")],
      annotation: [...plot.querySelectorAll("g.annotation")],
      colorbar: [...plot.querySelectorAll(".cbtitle text, .colorbar .cbaxis text")],
    };
    for (const [kind, els] of Object.entries(parts)) {
      for (const el of els.filter(visible)) {
        const b = box(el);
        if (b.x0 < s.x0 - TOL || b.x1 > s.x1 + TOL || b.y0 < s.y0 - TOL || b.y1 > s.y1 + TOL)
          problems.push(`${name}: ${kind} '${text(el)}' is clipped (outside the chart)`);
      }
    }
    const pairs = [["legend", "axistitle"], ["legend", "tick"], ["legend", "title"], ["axistitle", "tick"],
                   ["annotation", "legend"], ["annotation", "axistitle"], ["annotation", "tick"], ["annotation", "annotation"],
                   ["title", "axistitle"], ["colorbar", "legend"]];
    for (const [a, b] of pairs) {
      const as = parts[a].filter(visible), bs = parts[b].filter(visible);
      as.forEach((x, i) => bs.forEach((y, j) => {
        if (a === b && j <= i) return;
        const overlap = area(box(x), box(y));
        if (overlap > 4) problems.push(`${name}: ${a} '${text(x)}' overlaps ${b} '${text(y)}' (${Math.round(overlap)} px²)`);
      }));
    }
  });
  const doc = document.documentElement;
  if (doc.scrollWidth > window.innerWidth + 2)
    problems.push(`page: ${doc.scrollWidth} px wide in a ${window.innerWidth} px window`);
  document.querySelectorAll("input[type=text], input[type=number], input:not([type])").forEach((el) => {
    if (visible(el) && el.getBoundingClientRect().width < 40 && !el.closest(".dash-spreadsheet"))
      problems.push(`field '${el.id || el.name}' is ${Math.round(el.getBoundingClientRect().width)} px wide`);
  });
  const charts = [...document.querySelectorAll(".chart")].filter(visible);
  document.querySelectorAll(".controls, .toolbar").forEach((row) => {
    if (!visible(row)) return;
    charts.forEach((c) => {
      const overlap = area(box(row), box(c.querySelector(".js-plotly-plot") || c));
      if (overlap > 4) problems.push(`controls '${row.id || text(row)}' cover the chart ${c.id} (${Math.round(overlap)} px²)`);
    });
  });
  document.querySelectorAll(".controls, .toolbar").forEach((row) => {
    const items = [...row.children].filter(visible);
    items.forEach((x, i) => items.slice(i + 1).forEach((y) => {
      const overlap = area(box(x), box(y));
      if (overlap > 4) problems.push(`controls: '${x.id || text(x)}' overlaps '${y.id || text(y)}'`);
    }));
  });
  return problems;
}
"""

#: the views visited: (name, tab id, Fleet section or None)
VIEWS = [("compare", "compare", None), ("decide", "decide", None), ("cases", "cases", None),
         ("assumptions", "assumptions", None), ("sensitivity", "sensitivity", None), ("uncertainty", "uncertainty", None),
         ("lifecycle", "lifecycle", None), ("fleet", "fleet", "summary"), ("fleet-kv", "fleet", "kv"),
         ("fleet-stranded", "fleet", "stranded"), ("fleet-pareto", "fleet", "pareto"),
         ("fleet-interactivity", "fleet", "interactivity"),
         ("fleet-coordination", "fleet", "coordination"), ("fleet-routing", "fleet", "routing")]

SETTLED_JS = r"""
() => document.querySelectorAll('[data-dash-is-loading="true"]').length === 0 &&
      ![...document.querySelectorAll('.js-plotly-plot .annotation-text')].some(t => t.textContent.includes('computing'))
"""


#: a view is complete when it has stayed settled (:data:`SETTLED_JS`) this long [s]: Dash marks a callback as loading
#: within a frame of its request, so a chain of callbacks keeps the page unsettled until its last one answers
QUIET_S = 0.25

#: two animation frames: the charts a callback's answer redraws are painted after the first
PAINTED_JS = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


def time_to_settle(page, start: float, quiet_s: float = QUIET_S, timeout_s: float = 30.0) -> float:
    """Seconds from ``start`` (``time.perf_counter()``) until the page settled (:data:`SETTLED_JS`) and stayed so for
    ``quiet_s``: the moment the view is complete."""
    settled_at = None
    while time.perf_counter() - start < timeout_s:
        now = time.perf_counter()
        if page.evaluate(SETTLED_JS):
            settled_at = settled_at or now
            if now - settled_at >= quiet_s:
                return settled_at - start
        else:
            settled_at = None
        page.wait_for_timeout(20)
    raise TimeoutError("the page did not settle")


def settle(page, timeout_s: float = 30.0) -> None:
    """Wait until no view is waiting for a callback and no chart still says 'computing...', for :data:`QUIET_S` in a
    row, and the charts are painted (:data:`PAINTED_JS`)."""
    time_to_settle(page, time.perf_counter(), timeout_s=timeout_s)
    page.evaluate(PAINTED_JS)


def audit(page) -> list[str]:
    return page.evaluate(AUDIT_JS)


def walk(page, url: str, widths: tuple[int, ...], before=None):
    """Open the app at ``url`` and visit every view; yields ``(view name, width, problems)`` once it has settled at
    each window width of ``widths`` [px] in turn (the page opens at the first: the others are a user widening or
    narrowing the window, charts re-laid out by Plotly's autosize, no view computed twice).

    ``before(page, name)`` runs after a view has settled at the first width (e.g. to run Monte Carlo).
    """
    page.set_viewport_size({"width": widths[0], "height": 900})
    page.goto(url)
    page.wait_for_selector("#verdict:not(:empty)", timeout=30000)
    for name, tab, section in VIEWS:
        page.click(f"#tab-{tab}")
        if section:
            page.click(f"#fleet-tab-{section}")
        settle(page)
        if before is not None:
            before(page, name)
        for i, width in enumerate(widths):
            if i:
                page.set_viewport_size({"width": width, "height": 900})
                settle(page)
            yield name, width, audit(page)
        if len(widths) > 1:
            page.set_viewport_size({"width": widths[0], "height": 900})


def run_uncertainty(page, name):
    """On the Uncertainty tab, draw the Monte Carlo and Sobol charts before the audit."""
    if name != "uncertainty":
        return
    page.fill("#mc-samples", "2000")
    page.click("#mc-run")
    page.wait_for_selector("#mc-table", timeout=60000)
    choose(page, "sobol-n", "16")
    page.click("#sobol-run")
    page.wait_for_function("() => !document.querySelector('#sobol-run').disabled && "
                           "document.querySelectorAll('#sobol-box .ytick').length > 2", timeout=120000)
    settle(page)
