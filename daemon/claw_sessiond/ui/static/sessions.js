// #/ — the sessions list: filters (labels, updated between, open calls, repairs, id contains),
// pages (the server's page tokens; the route keeps the token so Back works), and the search box
// (the daemon's Search; hits' matched parts in <mark>, as text).
import { getJson } from "./api.js";
import { apiPath, count, fill, h, money, problem, route, when } from "./dom.js";

const PAGE = 50;
const FILTERS = ["label", "id_contains", "updated_after", "updated_before", "has_open_calls", "has_repairs"];

/** The route's filters as the API's parameters (labels: "k=v, k=v" in one box, one parameter each). */
function filtersOf(params) {
  const labels = (params.get("label") || "")
    .split(",")
    .map((one) => one.trim())
    .filter((one) => one.includes("="));
  return {
    label: labels,
    id_contains: params.get("id_contains") || "",
    updated_after: isoOf(params.get("updated_after")),
    updated_before: isoOf(params.get("updated_before")),
    has_open_calls: params.get("has_open_calls") === "1",
    has_repairs: params.get("has_repairs") === "1",
  };
}

function isoOf(local) {
  if (!local) {
    return "";
  }
  const date = new Date(local.endsWith("Z") ? local : local + "Z");
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

function filterForm(params) {
  const field = (name, label, attributes) =>
    h("label", {}, label, " ", h("input", { name, value: params.get(name) || "", ...attributes }));
  const box = (name, label) =>
    h("label", { class: "check" }, h("input", { type: "checkbox", name, checked: params.get(name) === "1" }), " ", label);
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "filter sessions" },
    field("label", "labels", { placeholder: "key=value, key=value", spellcheck: "false" }),
    field("id_contains", "id contains", { spellcheck: "false" }),
    field("updated_after", "updated after (UTC)", { type: "datetime-local", step: "1" }),
    field("updated_before", "before", { type: "datetime-local", step: "1" }),
    box("has_open_calls", "open calls"),
    box("has_repairs", "repairs"),
    h("button", { type: "submit" }, "filter"),
    h("a", { href: "#/", class: "reset" }, "reset"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const next = {};
    for (const name of FILTERS) {
      const value = data.get(name);
      if (value) {
        next[name] = value === "on" ? "1" : value;
      }
    }
    const q = params.get("q");
    location.hash = route([], { ...next, q });
  });
  return form;
}

function searchForm(params) {
  const input = h("input", {
    type: "search",
    name: "q",
    value: params.get("q") || "",
    placeholder: "search content (press /)",
    "data-testid": "search-input",
    "aria-label": "search content",
    spellcheck: "false",
  });
  const form = h("form", { class: "search", role: "search" }, input, h("button", { type: "submit" }, "search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = Object.fromEntries([...params.entries()].filter(([key]) => key !== "q" && key !== "page_token" && key !== "back"));
    location.hash = route([], { ...next, q: input.value.trim() });
  });
  return form;
}

/** One search hit: where it is (a link to the entry) and its snippet, matched parts in <mark>. */
function hitRow(hit) {
  const snippet = (hit.snippet || []).map((part) => (part.hit ? h("mark", {}, part.text) : part.text));
  return h(
    "li",
    { "data-testid": "search-hit" },
    h("a", { href: route(["s", hit.session_id], { at: hit.position }) }, hit.session_id, " @", hit.position),
    " ",
    h("span", { class: `role role-${roleClass(hit.role)}` }, hit.role || ""),
    " ",
    h("span", { class: "snippet" }, snippet),
  );
}

export function roleClass(role) {
  return ["user", "assistant", "tool", "system"].includes(role) ? role : "other";
}

async function searchResults(q) {
  const box = h("section", { class: "hits", "aria-label": "search results" }, h("p", { class: "muted" }, "searching…"));
  getJson(apiPath(["search"], { q, limit: 100 }))
    .then((found) => {
      const hits = found.hits || [];
      fill(
        box,
        h("h2", {}, `${hits.length} hit${hits.length === 1 ? "" : "s"} for `, h("q", {}, q)),
        hits.length ? h("ol", { class: "hit-list" }, hits.map(hitRow)) : h("p", { class: "muted" }, "nothing found"),
        found.truncated ? h("p", { class: "muted" }, "(more hits than shown)") : "",
      );
    })
    .catch((error) => fill(box, problem(error.message)));
  return box;
}

export function labelChips(labels) {
  return Object.entries(labels || {}).map(([key, value]) => h("span", { class: "chip", title: `${key}=${value}` }, key, "=", value));
}

function sessionRow(session) {
  const usage = session.usage || {};
  const tokens = Number(usage.input_tokens || 0) + Number(usage.output_tokens || 0);
  return h(
    "tr",
    { "data-testid": "session-row" },
    h("td", { class: "id" }, h("a", { href: route(["s", session.id]), "data-testid": "session-link" }, session.id), " ", labelChips(session.labels)),
    h("td", { class: "num" }, count(session.message_count)),
    h("td", { class: "time" }, h("time", { datetime: session.updated_at || "" }, when(session.updated_at))),
    h("td", { class: "num", title: `in ${count(usage.input_tokens)} · out ${count(usage.output_tokens)}` }, tokens ? count(tokens) : "", " ", money(usage.cost_micros, usage.currency)),
    h(
      "td",
      { class: "flags" },
      session.open_calls ? h("span", { class: "flag open", title: "calls without a result" }, `${session.open_calls} open`) : "",
      session.repairs ? h("span", { class: "flag repaired", title: "interrupted calls repaired" }, `${session.repairs} repaired`) : "",
    ),
  );
}

export async function showSessions({ view, params, current }) {
  const filters = filtersOf(params);
  const token = params.get("page_token") || "";
  const back = params.getAll("back");
  const q = params.get("q") || "";
  const list = h("section", { "aria-label": "sessions" }, h("p", { class: "muted" }, "loading…"));
  fill(view, h("h1", {}, "Sessions"), searchForm(params), q ? await searchResults(q) : "", filterForm(params), list);
  let page;
  try {
    page = await getJson(apiPath(["sessions"], { ...filters, limit: PAGE, page_token: token }));
  } catch (error) {
    fill(list, problem(error.message));
    return;
  }
  if (!current()) {
    return;
  }
  const sessions = page.sessions || [];
  const here = Object.fromEntries([...params.entries()].filter(([key]) => key !== "page_token" && key !== "back"));
  const pager = h(
    "nav",
    { class: "pager", "aria-label": "pages" },
    back.length ? h("a", { href: route([], { ...here, page_token: back[back.length - 1] === "-" ? "" : back[back.length - 1], back: back.slice(0, -1) }) }, "← newer") : "",
    page.total === null || page.total === undefined ? " " : ` ${count(page.total)} session${page.total === 1 ? "" : "s"} `,
    page.next_page_token ? h("a", { href: route([], { ...here, page_token: page.next_page_token, back: [...back, token || "-"] }) }, "older →") : "",
  );
  fill(
    list,
    sessions.length
      ? h(
          "table",
          { class: "sessions" },
          h("thead", {}, h("tr", {}, ["session", "entries", "updated", "usage", ""].map((name) => h("th", {}, name)))),
          h("tbody", {}, sessions.map(sessionRow)),
        )
      : h("p", { class: "muted" }, "no sessions match"),
    pager,
  );
}
