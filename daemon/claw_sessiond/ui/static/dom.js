// The one place the viewer builds DOM. Every stored string reaches the page as text
// (createTextNode) or as the value of an attribute from SAFE_ATTRIBUTES; links go only to the
// viewer's own routes (#/...) or its API (/api/...), with ids through encodeURIComponent.
// No innerHTML, no inline style, no event-handler attributes anywhere.

const SVG_NS = "http://www.w3.org/2000/svg";

// Attributes data may fill: none of them runs script or loads anything.
const SAFE_ATTRIBUTES = new Set([
  "class", "title", "role", "tabindex", "type", "name", "placeholder", "value", "for", "id",
  "colspan", "open", "checked", "min", "max", "step", "download", "accesskey", "autocomplete",
  "spellcheck", "datetime", "disabled",
  // SVG geometry and paint
  "x", "y", "x1", "y1", "x2", "y2", "width", "height", "viewBox", "fill", "stroke",
  "stroke-width", "text-anchor", "dominant-baseline", "font-size", "transform", "preserveAspectRatio",
]);

/** An own link: "#/..." routes or "/api/..." paths built by route()/apiPath(); anything else is refused. */
function safeHref(value) {
  const href = String(value);
  if (href.startsWith("#/") || href.startsWith("/api/")) {
    return href;
  }
  throw new Error(`refused link ${JSON.stringify(href.slice(0, 80))}`);
}

function setAttribute(node, key, value) {
  if (value === undefined || value === null || value === false) {
    return;
  }
  if (key === "href") {
    node.setAttribute("href", safeHref(value));
  } else if (key.startsWith("data-") || key.startsWith("aria-") || SAFE_ATTRIBUTES.has(key)) {
    node.setAttribute(key, value === true ? "" : String(value));
  } else {
    throw new Error(`refused attribute ${key}`);
  }
}

function append(node, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) {
      continue;
    }
    if (Array.isArray(child)) {
      append(node, child);
    } else if (child instanceof Node) {
      node.appendChild(child);
    } else {
      node.appendChild(document.createTextNode(String(child)));
    }
  }
  return node;
}

/** h("a", {href: route("s", id)}, "text", childNode, [more]) — attributes as above, children as text or nodes. */
export function h(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    setAttribute(node, key, value);
  }
  return append(node, children);
}

/** The same for SVG elements (the usage charts). */
export function svg(tag, attributes, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    setAttribute(node, key, value);
  }
  return append(node, children);
}

/** "#/s/<id>" and friends: each part through encodeURIComponent, then query parameters. */
export function route(parts, params) {
  const path = "#/" + parts.map((part) => encodeURIComponent(String(part))).join("/");
  return path + query(params);
}

/** "/api/<parts>?<params>" with the same encoding. */
export function apiPath(parts, params) {
  return "/api/" + parts.map((part) => encodeURIComponent(String(part))).join("/") + query(params);
}

function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== undefined && one !== null && one !== "" && one !== false) {
        search.append(key, one === true ? "1" : String(one));
      }
    }
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** Replace a node's children. */
export function fill(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** A time as the viewer shows it (UTC, seconds), or "" for none. */
export function when(value) {
  if (value === undefined || value === null || value === "" || value === 0) {
    return "";
  }
  const date = typeof value === "number" ? new Date(value > 1e12 ? value : value * 1000) : new Date(value);
  if (Number.isNaN(date.getTime())) {
    return String(value);
  }
  return date.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

/** Cost in micros as money: "0.0123 USD". */
export function money(micros, currency) {
  if (!micros) {
    return "";
  }
  return `${(Number(micros) / 1e6).toFixed(4)}${currency ? " " + currency : ""}`;
}

/** A count with thin grouping ("12,345"). */
export function count(value) {
  return Number(value || 0).toLocaleString("en-US");
}

/** A message line for failures. */
export function problem(text) {
  return h("p", { class: "error", role: "alert" }, text);
}
