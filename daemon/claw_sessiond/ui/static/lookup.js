// #/lookup — where an entry is, by its trace id, or by its client id within a session.
import { getJson } from "./api.js";
import { apiPath, fill, h, problem, route } from "./dom.js";

function form(params) {
  const input = (name, label) => h("label", {}, label, " ", h("input", { name, value: params.get(name) || "", spellcheck: "false", autocomplete: "off" }));
  const node = h(
    "form",
    { class: "filters", "aria-label": "lookup" },
    h("fieldset", {}, h("legend", {}, "by trace id"), input("trace_id", "trace id")),
    h("fieldset", {}, h("legend", {}, "or by client id"), input("client_id", "client id"), input("session_id", "in session")),
    h("button", { type: "submit" }, "look up"),
  );
  node.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(node);
    location.hash = route(["lookup"], Object.fromEntries([...data.entries()].map(([key, value]) => [key, String(value).trim()])));
  });
  return node;
}

export async function showLookup({ view, params, current }) {
  const traceId = params.get("trace_id") || "";
  const clientId = params.get("client_id") || "";
  const results = h("section", { "aria-label": "matches" });
  fill(view, h("h1", {}, "Lookup"), form(params), results);
  if (!traceId && !clientId) {
    return;
  }
  const query = traceId ? { trace_id: traceId } : { client_id: clientId, session_id: params.get("session_id") || "" };
  try {
    const found = await getJson(apiPath(["lookup"], query));
    if (!current()) {
      return;
    }
    const matches = found.matches || [];
    fill(
      results,
      h("h2", {}, `${matches.length} match${matches.length === 1 ? "" : "es"}`),
      found.scanned ? h("p", { class: "muted" }, `looked through ${found.scanned.sessions} session(s), the last ${found.scanned.entries_per_session} entries of each`) : "",
      h("ul", {}, matches.map((match) => h("li", { "data-testid": "lookup-match" }, h("a", { href: route(["s", match.session_id], { at: match.position }) }, match.session_id, " #", match.position)))),
    );
  } catch (error) {
    fill(results, problem(error.message));
  }
}
