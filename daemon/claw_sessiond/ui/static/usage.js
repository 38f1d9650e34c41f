// #/usage — usage across sessions: by model and by day, as bar charts drawn here in SVG (no
// library), with the totals and the cost where the store has prices; a since/until range.
import { getJson } from "./api.js";
import { apiPath, count, fill, h, money, problem, route, svg } from "./dom.js";

const BAR = 22;
const LABEL_WIDTH = 180;
const CHART_WIDTH = 640;

function tokensOf(row) {
  return Number(row.input_tokens || 0) + Number(row.output_tokens || 0) + Number(row.cache_read_tokens || 0) + Number(row.cache_write_tokens || 0);
}

/** Horizontal stacked bars (input, output, cache read, cache write) one row per key. */
function barChart(rows, title) {
  const max = Math.max(1, ...rows.map(tokensOf));
  const span = CHART_WIDTH - LABEL_WIDTH - 110;
  const height = rows.length * BAR + 30;
  const parts = [
    ["input_tokens", "bar-input"],
    ["output_tokens", "bar-output"],
    ["cache_read_tokens", "bar-cache-read"],
    ["cache_write_tokens", "bar-cache-write"],
  ];
  const chart = svg(
    "svg",
    { class: "chart", "data-testid": "usage-chart", viewBox: `0 0 ${CHART_WIDTH} ${height}`, width: CHART_WIDTH, height, role: "img", "aria-label": title },
    svg("title", {}, title),
  );
  rows.forEach((row, index) => {
    const y = index * BAR + 4;
    const key = String(row.key || "(none)");
    chart.appendChild(svg("text", { x: LABEL_WIDTH - 6, y: y + BAR / 2 + 1, "text-anchor": "end", "dominant-baseline": "middle", class: "chart-label" }, key.length > 26 ? key.slice(0, 25) + "…" : key));
    let x = LABEL_WIDTH;
    for (const [field, className] of parts) {
      const width = (Number(row[field] || 0) / max) * span;
      if (width > 0) {
        chart.appendChild(
          svg("rect", { x: x.toFixed(1), y, width: Math.max(width, 1).toFixed(1), height: BAR - 6, class: className }, svg("title", {}, `${key}: ${field.replace(/_tokens$/, "").replace("_", " ")} ${count(row[field])}`)),
        );
        x += width;
      }
    }
    chart.appendChild(svg("text", { x: x + 6, y: y + BAR / 2 + 1, "dominant-baseline": "middle", class: "chart-value" }, count(tokensOf(row))));
  });
  const legend = svg("g", { transform: `translate(${LABEL_WIDTH}, ${height - 12})` });
  parts.forEach(([field, className], index) => {
    legend.appendChild(svg("rect", { x: index * 110, y: -8, width: 10, height: 10, class: className }));
    legend.appendChild(svg("text", { x: index * 110 + 14, y: 1, class: "chart-legend" }, field.replace(/_tokens$/, "").replace("_", " ")));
  });
  chart.appendChild(legend);
  return chart;
}

const FIELDS = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"];

/** The server's rows are per key and currency: one row per key here, its costs listed by currency. */
function byKey(rows) {
  const merged = new Map();
  for (const row of rows) {
    const key = String(row.key || "(none)");
    const into = merged.get(key) || { key, costs: [] };
    for (const field of FIELDS) {
      into[field] = Number(into[field] || 0) + Number(row[field] || 0);
    }
    if (row.cost_micros) {
      into.costs.push(money(row.cost_micros, row.currency));
    }
    merged.set(key, into);
  }
  return [...merged.values()];
}

function table(rows, totals, keyName) {
  const line = (row, key) =>
    h(
      "tr",
      {},
      h("td", {}, key),
      FIELDS.map((field) => h("td", { class: "num" }, count(row[field]))),
      h("td", { class: "num" }, row.costs.length ? row.costs.join(" + ") : "—"),
    );
  const total = byKey((Array.isArray(totals) ? totals : totals ? [totals] : []).map((row) => ({ ...row, key: "total" })));
  return h(
    "table",
    { class: "usage-table" },
    h("thead", {}, h("tr", {}, [keyName, "input", "output", "cache read", "cache write", "cost"].map((name) => h("th", {}, name)))),
    h("tbody", {}, rows.map((row) => line(row, row.key))),
    total.length ? h("tfoot", {}, total.map((row) => line(row, "total"))) : "",
  );
}

function rangeForm(params) {
  const field = (name, label) => h("label", {}, label, " ", h("input", { type: "date", name, value: params.get(name) || "" }));
  const form = h("form", { class: "filters", "aria-label": "usage range" }, field("since", "since"), field("until", "until"), h("button", { type: "submit" }, "show"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    location.hash = route(["usage"], { since: data.get("since"), until: data.get("until") });
  });
  return form;
}

async function section(by, title, keyName, range) {
  const box = h("section", { class: "usage", "aria-label": title }, h("h2", {}, title));
  try {
    const found = await getJson(apiPath(["usage"], { by, ...range }));
    const rows = byKey(found.rows || []);
    if (by === "day") {
      rows.sort((a, b) => a.key.localeCompare(b.key));
    }
    box.append(rows.length ? barChart(rows, title) : h("p", { class: "muted" }, "no usage recorded"));
    if (found.truncated) {
      box.append(h("p", { class: "muted" }, "(the server cut this report short: narrow the range)"));
    }
    box.append(table(rows, found.totals, keyName));
  } catch (error) {
    box.append(problem(error.message));
  }
  return box;
}

export async function showUsage({ view, params, current }) {
  const range = { since: params.get("since") || "", until: params.get("until") || "" };
  fill(view, h("h1", {}, "Usage"), rangeForm(params), h("p", { class: "muted" }, "loading…"));
  const [byModel, byDay] = await Promise.all([section("model", "By model", "model", range), section("day", "By day", "day (UTC)", range)]);
  if (current()) {
    fill(view, h("h1", {}, "Usage"), rangeForm(params), byModel, byDay);
  }
}
