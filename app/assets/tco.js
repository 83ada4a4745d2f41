/* tco app: clientside callbacks (no network round trip). */
window.dash_clientside = Object.assign({}, window.dash_clientside, {
  tco: {
    /* the title of a chart, kept in its figure's layout.meta (see app/charts.py) */
    chartTitle: function (figure) {
      return (figure && figure.layout && figure.layout.meta && figure.layout.meta.title) || "";
    }
  }
});
