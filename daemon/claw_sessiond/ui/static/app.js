// The viewer: a one-page app over hash routes (#/, #/s/<id>, #/usage, #/lookup). No framework:
// each view is a function that fills <main> and may return a cleanup (the live view's stream).
import { aboutServer } from "./api.js";
import { fill, h, problem } from "./dom.js";
import { showLookup } from "./lookup.js";
import { showSessions } from "./sessions.js";
import { showTimeline } from "./timeline.js";
import { showUsage } from "./usage.js";

const view = document.getElementById("view");
let cleanup = null;
let generation = 0;

/** The route of location.hash: its path parts (decoded) and its query parameters. */
function parseHash() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, search = ""] = raw.split("?", 2);
  const parts = path.split("/").filter(Boolean).map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
  return { parts, params: new URLSearchParams(search) };
}

async function render() {
  if (cleanup) {
    cleanup();
    cleanup = null;
  }
  const mine = ++generation;
  const { parts, params } = parseHash();
  const context = { view, params, current: () => mine === generation };
  try {
    let result;
    if (parts.length === 0) {
      result = await showSessions(context);
    } else if (parts[0] === "s" && parts.length === 2) {
      result = await showTimeline(context, parts[1]);
    } else if (parts[0] === "usage") {
      result = await showUsage(context);
    } else if (parts[0] === "lookup") {
      result = await showLookup(context);
    } else {
      fill(view, h("h1", {}, "Not found"), h("p", {}, "No such view: ", location.hash), h("a", { href: "#/" }, "sessions"));
    }
    if (mine === generation) {
      cleanup = typeof result === "function" ? result : null;
    } else if (typeof result === "function") {
      result();
    }
  } catch (error) {
    if (mine === generation) {
      fill(view, problem(error.message));
    }
  }
}

async function showInfo() {
  const info = document.getElementById("info");
  try {
    const about = await aboutServer();
    const state = about.offline ? "offline (read-only view of a stopped store)" : about.daemon_running ? "daemon running" : "daemon not running";
    fill(info, h("span", { class: "workspace", title: "workspace" }, about.workspace), " · ", about.backend, " · ", state, " · v", about.version);
  } catch (error) {
    fill(info, problem(error.message));
  }
}

/** Keys: "/" focuses the search box, j/k walk the timeline's entries, g and u switch views. */
function onKey(event) {
  const target = event.target;
  if (event.ctrlKey || event.metaKey || event.altKey) {
    return;
  }
  if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) {
    if (event.key === "Escape") {
      target.blur();
    }
    return;
  }
  if (event.key === "/") {
    const search = document.querySelector("[data-testid=search-input]");
    if (search) {
      event.preventDefault();
      search.focus();
    }
  } else if (event.key === "j" || event.key === "k") {
    const entries = [...document.querySelectorAll("[data-testid=entry]")];
    if (entries.length === 0) {
      return;
    }
    const at = entries.indexOf(document.activeElement);
    const next = event.key === "j" ? Math.min(at + 1, entries.length - 1) : Math.max(at - 1, 0);
    entries[at === -1 ? (event.key === "j" ? 0 : entries.length - 1) : next].focus();
  } else if (event.key === "g") {
    location.hash = "#/";
  } else if (event.key === "u") {
    location.hash = "#/usage";
  }
}

window.addEventListener("hashchange", render);
document.addEventListener("keydown", onKey);
showInfo();
render();
