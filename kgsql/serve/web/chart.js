// An answer's chart on kgsql's page: the Vega-Lite spec the service built (bars, a line, a scatter, or the
// answer's geometries on a plain map), drawn with vega-embed as SVG. window.kgsql.chart is the drawn view
// (tests read it); a newer answer's chart replaces an older one still drawing.
"use strict";

let chartTurn = 0;

async function drawChart(spec) {
  const box = document.getElementById("chart");
  const turn = ++chartTurn;
  if (window.kgsql.chart) window.kgsql.chart.finalize();
  window.kgsql.chart = null;
  box.replaceChildren();
  box.hidden = !spec;
  if (!spec) return;
  if (typeof vegaEmbed === "undefined") {
    box.textContent = "The chart library is not installed (./run install copies it with npm).";
    return;
  }
  try {
    // as wide as the panel, axes and labels included (the spec's own width suits a notebook)
    const fitted = { ...spec, width: Math.max(200, box.clientWidth - 10),
                     autosize: { type: "fit-x", contains: "padding" } };
    const result = await vegaEmbed(box, fitted, { actions: false, renderer: "svg" });
    if (turn !== chartTurn) { result.finalize(); return; }
    window.kgsql.chart = result.view;
  } catch (err) {
    if (turn === chartTurn) box.textContent = `The chart could not be drawn: ${err.message}`;
  }
}
