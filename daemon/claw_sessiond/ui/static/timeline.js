// #/s/<id>[?at=P] — one session as a timeline: the last page of entries (or the page around P),
// "older" pages on demand (a 10,000-entry session is never loaded whole), the log's events
// (clear, edit, fork, ...) between the entries at their positions, the calls in flight with
// their owners, and live: new entries over the server's SSE route while the page is open.
import { aboutServer, getJson } from "./api.js";
import { apiPath, count, fill, h, money, problem, route, when } from "./dom.js";
import { ownerText, renderEntry } from "./entry.js";
import { labelChips } from "./sessions.js";

const PAGE = 200;

class Timeline {
  constructor(sessionId, view) {
    this.sessionId = sessionId;
    this.view = view;
    this.calls = new Map(); // call id -> {call, at}
    this.results = new Map(); // call id -> position of its result
    this.inFlight = new Map(); // call id -> in-flight record
    this.events = [];
    this.first = null; // the first loaded position
    this.last = -1; // the last loaded position
    this.atTail = true;
    this.list = h("div", { class: "entries", role: "feed", "aria-label": "entries" });
    this.flyingBox = h("section", { class: "in-flight", "aria-label": "calls in flight" });
    this.olderBox = h("div", { class: "older" });
    this.newerBox = h("div", { class: "newer" });
    this.live = h("span", { class: "live", "data-testid": "live-indicator", "data-state": "connecting", role: "status" }, "○ connecting");
    this.source = null;
  }

  get links() {
    return { sessionId: this.sessionId, calls: this.calls, results: this.results, inFlight: this.inFlight };
  }

  learn(entries) {
    for (const entry of entries) {
      for (const call of entry.tool_calls || []) {
        this.calls.set(call.id, { call, at: entry.position });
      }
      if (entry.tool_call_id && !entry.synthetic) {
        this.results.set(entry.tool_call_id, entry.position);
      } else if (entry.tool_call_id && !this.results.has(entry.tool_call_id)) {
        this.results.set(entry.tool_call_id, entry.position);
      }
    }
  }

  /** The rows of a page: entries and the log's events between them, in position order. */
  rows(entries, from, to) {
    const events = this.events.filter((event) => event.position >= from && event.position <= to);
    const rows = [];
    let e = 0;
    for (const entry of entries) {
      while (e < events.length && events[e].position <= entry.position) {
        rows.push(eventRow(events[e++]));
      }
      rows.push(renderEntry(entry, this.links));
    }
    while (e < events.length) {
      rows.push(eventRow(events[e++]));
    }
    return rows;
  }

  /** Re-render the entries holding these calls (their state changed: answered, owned, released). */
  refreshCalls(callIds) {
    for (const id of callIds) {
      const holder = this.calls.get(id);
      const node = holder && this.list.querySelector(`[data-testid=entry][data-position="${Number(holder.at)}"]`);
      if (node && node.entryData) {
        const fresh = renderEntry(node.entryData, this.links);
        fresh.entryData = node.entryData;
        node.replaceWith(fresh);
      }
    }
  }

  setInFlight(records) {
    const before = [...this.inFlight.keys()];
    this.inFlight = new Map((records || []).map((record) => [record.call_id, record]));
    fill(
      this.flyingBox,
      this.inFlight.size
        ? [
            h("h2", {}, "In flight"),
            h(
              "ul",
              {},
              [...this.inFlight.values()].map((record) => {
                const run = record.run || {};
                return h(
                  "li",
                  { "data-testid": "in-flight", "data-owned": run.run_id ? "1" : "0" },
                  h("span", { class: "name" }, record.name || (this.calls.get(record.call_id) || { call: {} }).call.name || "call"),
                  " ",
                  h("code", {}, record.call_id),
                  run.run_id ? [" — owned by ", h("strong", {}, run.label || "a live run"), ownerText(run)] : " — pending approval (no live run owns it)",
                );
              }),
            ),
          ]
        : "",
    );
    this.refreshCalls(new Set([...before, ...this.inFlight.keys()]));
  }

  place(entries, where) {
    const nodes = this.rows(entries, entries.length ? entries[0].position : 0, entries.length ? entries[entries.length - 1].position : 0);
    for (const node of nodes) {
      if (node.dataset && node.dataset.position !== undefined) {
        node.entryData = entries.find((entry) => entry.position === Number(node.dataset.position));
      }
    }
    if (where === "start") {
      this.list.prepend(...nodes);
    } else {
      this.list.append(...nodes);
    }
  }

  olderButton(hasOlder) {
    fill(
      this.olderBox,
      hasOlder ? h("button", { type: "button", "data-testid": "older-button", class: "page-button" }, `older entries (before #${this.first})`) : h("p", { class: "muted" }, "the start of the session"),
    );
    const button = this.olderBox.querySelector("button");
    if (button) {
      button.addEventListener("click", () => this.loadOlder(button));
    }
  }

  async loadOlder(button) {
    button.disabled = true;
    try {
      const page = await getJson(apiPath(["sessions", this.sessionId], { before: this.first, limit: PAGE }));
      const entries = page.entries || [];
      this.learn(entries);
      const anchor = this.list.firstElementChild;
      const offset = anchor ? anchor.getBoundingClientRect().top : 0;
      this.place(entries, "start");
      if (entries.length) {
        this.first = entries[0].position;
      }
      if (anchor) {
        window.scrollBy(0, anchor.getBoundingClientRect().top - offset);
      }
      this.olderButton(page.has_older && entries.length > 0);
      const first = this.list.querySelector("[data-testid=entry]");
      if (first) {
        first.focus({ preventScroll: true });
      }
    } catch (error) {
      fill(this.olderBox, problem(error.message));
    }
  }

  async loadNewer(button) {
    button.disabled = true;
    try {
      const page = await getJson(apiPath(["sessions", this.sessionId], { after: this.last, limit: PAGE }));
      const entries = page.entries || [];
      this.learn(entries);
      this.place(entries, "end");
      if (entries.length) {
        this.last = entries[entries.length - 1].position;
      }
      this.atTail = !page.has_newer;
      this.newerButton();
    } catch (error) {
      fill(this.newerBox, problem(error.message));
    }
  }

  newerButton() {
    fill(this.newerBox, this.atTail ? "" : h("button", { type: "button", class: "page-button", "data-testid": "newer-button" }, `newer entries (after #${this.last})`));
    const button = this.newerBox.querySelector("button");
    if (button) {
      button.addEventListener("click", () => this.loadNewer(button));
    }
  }

  /** A new entry from the live stream: appended when the view shows the tail; its call's entry re-rendered. */
  onEntry(entry) {
    if (entry.position <= this.last) {
      return;
    }
    if (!this.atTail) {
      this.newerButton();
      return;
    }
    this.learn([entry]);
    this.place([entry], "end");
    this.last = entry.position;
    if (entry.tool_call_id) {
      this.refreshCalls([entry.tool_call_id]);
    }
  }

  /** Follow the session live, unless the viewer reads a stopped store (offline: no live updates). */
  async connect(reload) {
    let offline = false;
    try {
      offline = Boolean((await aboutServer()).offline);
    } catch {
      offline = false;
    }
    if (offline) {
      this.live.dataset.state = "offline";
      this.live.textContent = "○ offline view: no live updates";
      return () => {};
    }
    const source = new EventSource(apiPath(["sessions", this.sessionId, "live"], { after: Math.max(this.last, this.liveAfter ?? -1) }));
    this.source = source;
    const state = (name, text) => {
      this.live.dataset.state = name;
      this.live.textContent = text;
    };
    source.addEventListener("open", () => state("open", "● live"));
    source.addEventListener("error", () => state(source.readyState === EventSource.CLOSED ? "closed" : "connecting", source.readyState === EventSource.CLOSED ? "○ not live" : "○ reconnecting"));
    source.addEventListener("entry", (event) => this.onEntry(JSON.parse(event.data)));
    source.addEventListener("end", (event) => {
      source.close();
      const said = JSON.parse(event.data || "{}").error;
      state("closed", said ? `○ live updates ended: ${said}` : "○ live updates ended");
      const again = h("button", { type: "button", class: "page-button" }, "reload");
      again.addEventListener("click", () => reload());
      this.live.append(" ", again);
    });
    source.addEventListener("edit", () => reload());
    source.addEventListener("clear", () => reload());
    // The server's every "run" event carries the calls in flight (ui/live.py).
    source.addEventListener("run", (event) => this.setInFlight(JSON.parse(event.data).in_flight));
    return () => source.close();
  }
}

function eventRow(event) {
  const detail = event.detail === undefined || event.detail === null ? "" : typeof event.detail === "string" ? event.detail : JSON.stringify(event.detail);
  return h(
    "div",
    { class: `event event-${String(event.type).replace(/[^a-z_]/g, "")}`, "data-testid": "event", "data-type": event.type, role: "note" },
    "— ",
    h("strong", {}, event.type),
    ` at #${event.position} `,
    h("time", {}, when(event.at)),
    event.type === "fork" && event.detail && event.detail.from
      ? [" · forked from ", h("a", { href: route(["s", event.detail.from], { at: event.position }) }, event.detail.from)]
      : detail
        ? [" · ", h("span", { class: "detail" }, detail)]
        : "",
  );
}

function header(session, sessionId, repairs) {
  const usage = session.usage || {};
  return h(
    "header",
    { class: "session-head" },
    h("h1", {}, h("span", { class: "muted" }, "session "), h("span", { class: "id" }, sessionId)),
    h("p", {}, labelChips(session.labels)),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "workdir"),
      h("dd", {}, h("code", {}, session.workdir || "")),
      h("dt", {}, "created"),
      h("dd", {}, when(session.created_at)),
      h("dt", {}, "updated"),
      h("dd", {}, when(session.updated_at)),
      h("dt", {}, "last position"),
      h("dd", {}, String(session.last_position ?? "")),
      h("dt", {}, "usage"),
      h("dd", {}, `in ${count(usage.input_tokens)} · out ${count(usage.output_tokens)}`, usage.cost_micros ? ` · ${money(usage.cost_micros, usage.currency)}` : ""),
      h("dt", {}, "repairs"),
      h("dd", {}, String((repairs || []).length)),
    ),
    h(
      "p",
      { class: "exports" },
      "export: ",
      h("a", { href: apiPath(["sessions", sessionId, "export.jsonl"]), download: "", "data-testid": "export-jsonl" }, "JSONL"),
      " · ",
      h("a", { href: apiPath(["sessions", sessionId, "export.html"]), download: "", "data-testid": "export-html" }, "HTML page"),
    ),
  );
}

export async function showTimeline({ view, params, current }, sessionId) {
  const at = params.has("at") ? Number(params.get("at")) : null;
  const query = at === null || Number.isNaN(at) ? { limit: PAGE } : { before: at + PAGE / 2, limit: PAGE };
  const page = await getJson(apiPath(["sessions", sessionId], query));
  if (!current()) {
    return null;
  }
  const timeline = new Timeline(sessionId, view);
  const entries = page.entries || [];
  timeline.events = page.events || [];
  timeline.learn(entries);
  timeline.first = entries.length ? entries[0].position : page.first_position ?? 0;
  timeline.last = entries.length ? entries[entries.length - 1].position : page.session.last_position ?? -1;
  timeline.liveAfter = page.session.last_position ?? timeline.last;
  timeline.atTail = !page.has_newer;
  fill(view, header(page.session, sessionId, page.repairs), h("p", {}, timeline.live), timeline.flyingBox, timeline.olderBox, timeline.list, timeline.newerBox);
  timeline.setInFlight(page.in_flight);
  timeline.place(entries, "end");
  timeline.olderButton(Boolean(page.has_older));
  timeline.newerButton();
  if (at !== null) {
    const target = timeline.list.querySelector(`[data-testid=entry][data-position="${at}"]`);
    if (target) {
      target.classList.add("target");
      target.scrollIntoView({ block: "center" });
      target.focus({ preventScroll: true });
    }
  } else {
    window.scrollTo(0, document.body.scrollHeight);
  }
  const reload = () => window.dispatchEvent(new HashChangeEvent("hashchange"));
  return await timeline.connect(reload);
}
