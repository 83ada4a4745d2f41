/* tco app: clientside callbacks (no network round trip). */
window.dash_clientside = Object.assign({}, window.dash_clientside, {
  tco: {
    /* the title of a chart, kept in its figure's layout.meta (see app/charts.py) */
    chartTitle: function (figure) {
      return (figure && figure.layout && figure.layout.meta && figure.layout.meta.title) || "";
    },
    /* the user's state copied to the page in view, when it changed since that page last saw it (app/main.py:
       VIEW_PAGES, in order); the other pages keep theirs, so they recompute nothing until they are shown */
    viewStates: function (state, tab) {
      const pages = ["compare", "decide", "cases", "sensitivity", "lifecycle", "fleet"];
      const seen = Array.prototype.slice.call(arguments, 2);
      const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
      return pages.map((page, i) => (page === tab && state && !same(seen[i], state)) ? state
                                                                                    : window.dash_clientside.no_update);
    }
  }
});
