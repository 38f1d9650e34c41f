// One timeline entry: role, position and time; content (long content folded); tool calls with
// their results' places; a tool result with its call's name; items of other formats in one line,
// expandable; the marks (repaired: "interrupted — not re-run"; a late real result: "real result
// arrived later"; pending approval; cancelled; orphan); per-entry usage; the raw JSON on demand.
import { count, h, money, route, when } from "./dom.js";
import { roleClass } from "./sessions.js";

const FOLD_CHARS = 1200;
const FOLD_LINES = 16;
const SUMMARY_CHARS = 160;

/** Long text folded: the first lines shown, the whole on "show all" (filled in only when opened). */
export function foldedText(text, className) {
  const value = String(text);
  const lines = value.split("\n");
  if (value.length <= FOLD_CHARS && lines.length <= FOLD_LINES) {
    return h("pre", { class: className }, value);
  }
  const head = lines.slice(0, FOLD_LINES).join("\n").slice(0, FOLD_CHARS);
  const full = h("pre", { class: className });
  const details = h(
    "details",
    { class: "fold" },
    h("summary", {}, `show all (${count(value.length)} characters, ${count(lines.length)} lines)`),
    full,
  );
  const preview = h("pre", { class: `${className} preview` }, head, "…");
  details.addEventListener("toggle", () => {
    if (details.open && !full.firstChild) {
      full.textContent = value;
    }
    preview.hidden = details.open;
  });
  return h("div", {}, preview, details);
}

/** "raw JSON" on demand: the entry as stored, built only when asked. */
function rawJson(entry) {
  const details = h("details", { class: "raw" }, h("summary", {}, "raw JSON"));
  details.addEventListener("toggle", () => {
    if (details.open && details.children.length === 1) {
      details.appendChild(h("pre", { class: "json" }, JSON.stringify(entry, null, 2)));
    }
  });
  return details;
}

function usageLine(usage) {
  if (!usage || typeof usage !== "object") {
    return "";
  }
  const parts = [];
  for (const [key, value] of Object.entries(usage)) {
    if (typeof value === "number" && value && key !== "cost_micros") {
      parts.push(`${key.replace(/_tokens$/, "").replaceAll("_", " ")} ${count(value)}`);
    } else if (typeof value === "string" && value && key !== "currency") {
      parts.push(value);
    }
  }
  const cost = money(usage.cost_micros, usage.currency);
  if (cost) {
    parts.push(cost);
  }
  return parts.length ? h("p", { class: "usage muted", title: "usage of this entry" }, parts.join(" · ")) : "";
}

function mark(testid, className, text, title) {
  return h("span", { class: `mark ${className}`, "data-testid": testid, title: title || "" }, text);
}

/** A one-line summary of an item of another format (its JSON or text, shortened). */
function itemSummary(entry) {
  const item = entry.item !== null && entry.item !== undefined ? entry.item : entry.item_b64 ? `base64: ${entry.item_b64}` : "";
  const text = String(item).replace(/\s+/g, " ");
  return text.length > SUMMARY_CHARS ? text.slice(0, SUMMARY_CHARS) + "…" : text;
}

/**
 * The entry's element. `calls` maps a call id to {call, at} (the entry holding it), `results` a call id to the
 * position of its result, `inFlight` a call id to its in-flight record (owner), `repaired` positions repaired.
 */
export function renderEntry(entry, links) {
  const role = entry.role || "";
  const isItem = entry.format && entry.format !== "chat" && entry.format !== "message";
  const marks = [];
  if (entry.synthetic) {
    const reason = entry.synthetic.reason ? ` (${entry.synthetic.reason})` : "";
    marks.push(mark("entry-repaired", "repaired", "interrupted — not re-run", `a synthetic result the daemon wrote${reason}`));
  }
  if (entry.supersedes) {
    marks.push(mark("entry-superseded", "superseded", "real result arrived later", `supersedes the repair at ${entry.supersedes}`));
  }
  if (entry.cancelled) {
    marks.push(mark("entry-cancelled", "cancelled", "cancelled — did not run"));
  }
  if (entry.orphan) {
    marks.push(mark("entry-orphan", "orphan", "orphan result (its call was unknown)"));
  }
  const head = h(
    "header",
    { class: "entry-head" },
    h("a", { class: "pos", href: route(["s", links.sessionId], { at: entry.position }), title: "link to this entry" }, `#${entry.position}`),
    " ",
    h("span", { class: `role role-${roleClass(role)}` }, isItem ? entry.format : role),
    entry.name ? [" ", h("span", { class: "name" }, entry.name)] : "",
    " ",
    h("time", { datetime: entry.created_at || "" }, when(entry.created_at)),
    entry.trace_id ? [" ", h("span", { class: "meta", title: "trace id" }, "trace ", entry.trace_id)] : "",
    entry.client_id ? [" ", h("span", { class: "meta", title: "client id" }, "client ", entry.client_id)] : "",
    marks.length ? [" ", marks] : "",
  );
  const body = [];
  if (entry.tool_call_id) {
    const call = links.calls.get(entry.tool_call_id);
    body.push(
      h(
        "p",
        { class: "pairing" },
        "↳ result of ",
        call ? h("a", { href: route(["s", links.sessionId], { at: call.at }) }, call.call.name || "call", " #", call.at) : "call",
        " ",
        h("code", {}, entry.tool_call_id),
      ),
    );
  }
  if (isItem) {
    const summary = h("details", { class: "item" }, h("summary", {}, h("code", {}, itemSummary(entry))));
    summary.addEventListener("toggle", () => {
      if (summary.open && summary.children.length === 1) {
        summary.appendChild(foldedText(entry.item !== null && entry.item !== undefined ? entry.item : entry.item_b64 || "", "item-text"));
      }
    });
    body.push(summary);
  } else if (entry.content) {
    body.push(foldedText(entry.content, "content"));
  }
  for (const call of entry.tool_calls || []) {
    body.push(callBlock(call, links));
  }
  const node = h(
    "article",
    {
      class: `entry role-${roleClass(role)}${entry.synthetic ? " is-repaired" : ""}${isItem ? " is-item" : ""}`,
      "data-testid": "entry",
      "data-position": entry.position,
      "data-role": role,
      tabindex: "0",
      "aria-label": `entry ${entry.position}, ${role}`,
    },
    head,
    body,
    usageLine(entry.usage),
    rawJson(entry),
  );
  return node;
}

/** " · pid N · host H" of a run (its host only when the daemon names one: several daemons on PostgreSQL). */
export function ownerText(run) {
  return `${run.pid ? ` · pid ${run.pid}` : ""}${run.host ? ` · ${run.host}` : ""}`;
}

/** A tool call: name, arguments (folded), and where its result is — or who runs it, or that it waits. */
function callBlock(call, links) {
  const flying = links.inFlight.get(call.id);
  const answeredAt = links.results.get(call.id);
  let state;
  if (answeredAt !== undefined) {
    state = h("a", { href: route(["s", links.sessionId], { at: answeredAt }), class: "answered" }, "result #", answeredAt);
  } else if (flying && flying.run && flying.run.run_id) {
    const run = flying.run;
    state = h("span", { class: "mark running", "data-testid": "entry-running" }, "running — owned by ", run.label || "a live run", ownerText(run));
  } else if (flying) {
    state = h("span", { class: "mark pending", "data-testid": "entry-pending" }, "pending approval");
  } else {
    state = h("span", { class: "muted" }, "no result yet");
  }
  let argumentsText = String(call.arguments || "");
  try {
    argumentsText = JSON.stringify(JSON.parse(argumentsText), null, 2);
  } catch {
    // shown as stored
  }
  return h(
    "div",
    { class: "call" },
    h("p", { class: "call-head" }, "⚙ ", h("span", { class: "name" }, call.name || ""), " ", h("code", {}, call.id || ""), " → ", state),
    argumentsText ? foldedText(argumentsText, "arguments") : "",
  );
}
