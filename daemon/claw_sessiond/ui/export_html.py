"""A session's exports: the daemon's Export as a JSONL attachment, and one self-contained HTML page.

The HTML page has no script at all and its own Content-Security-Policy (``default-src 'none';
style-src 'unsafe-inline'``, in a meta element and the answer's header): every stored string is
escaped (:func:`html.escape`, quotes included) and shown as text, so the page is safe to open from a
file anywhere. It holds the whole visible history (the look-only Load's entries).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any, Final

from aiohttp import web

from .api import SOURCE
from .params import NotStored, json_route, stored
from .shapes import entry_json, session_json

__all__ = ["HTML_CSP", "render", "routes"]

#: The exported page's own policy: inline CSS only, nothing else (no script, no image, no request).
HTML_CSP: Final = "default-src 'none'; style-src 'unsafe-inline'"
_STYLE: Final = (
    "body{font:14px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}"
    ".e{border-left:4px solid #ccc;margin:.8rem 0;padding:.3rem .8rem}.user{border-color:#3a7}"
    ".assistant{border-color:#37a}.tool{border-color:#a73}.system{border-color:#888}"
    ".m{color:#666;font-size:12px}pre{white-space:pre-wrap;word-break:break-word;margin:.3rem 0}"
    ".r{background:#fff4e5}.s{background:#eef6ff}"
)


routes = web.RouteTableDef()


def _filename(session_id: str, suffix: str) -> str:
    """A file name for the attachment: the id's safe characters only."""
    return (re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:100] or "session") + suffix


def _text(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _entry(e: dict[str, Any]) -> str:
    marks = []
    if e["synthetic"]:
        marks.append(f"interrupted, not re-run ({e['synthetic']['reason']})")
    if e["supersedes"]:
        marks.append(f"real result arrived later (supersedes position {e['supersedes']})")
    if e["cancelled"]:
        marks.append("cancelled")
    head = f"#{e['position']} {e['role']}" + (f" {e['name']}" if e["name"] else "")
    meta = " · ".join(str(x) for x in (e["created_at"] or "", e["trace_id"], *marks) if x)
    parts = [f'<div class="e {_text(e["role"])}{" r" if e["synthetic"] else ""}{" s" if e["supersedes"] else ""}">']
    parts.append(f"<div><b>{_text(head)}</b> <span class=m>{_text(meta)}</span></div>")
    if e["content"]:
        parts.append(f"<pre>{_text(e['content'])}</pre>")
    for call in e["tool_calls"]:
        parts.append(f"<pre>→ {_text(call['name'])}({_text(call['arguments'])}) [{_text(call['id'])}]</pre>")
    if e["tool_call_id"]:
        parts.append(f"<div class=m>result of {_text(e['tool_call_id'])}</div>")
    if e["item"] is not None or "item_b64" in e:
        parts.append(f"<pre>{_text(e['format'])}: {_text(e['item'] if e['item'] is not None else e['item_b64'])}</pre>")
    parts.append("</div>")
    return "".join(parts)


def render(session: dict[str, Any], entries: list[dict[str, Any]]) -> str:
    """The whole page of one session (``session_json`` and ``entry_json`` shapes)."""
    labels = ", ".join(f"{k}={v}" for k, v in sorted(session["labels"].items()))
    head = (
        f'<!doctype html><html><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{HTML_CSP}">'
        f"<title>{_text(session['id'])}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{_text(session['id'])}</h1>"
        f"<p class=m>{_text(session['workdir'])} · {_text(labels)} · {len(entries)} entries · "
        f"{_text(json.dumps(session['usage']))}</p>"
    )
    return head + "".join(_entry(e) for e in entries) + "</body></html>\n"


@routes.get("/api/sessions/{session_id}/export.html")
@json_route
async def export_html(request: web.Request) -> web.StreamResponse:
    session_id = request.match_info["session_id"]
    result = stored(await request.app[SOURCE].load(session_id))
    page = render(session_json(result), [entry_json(m) for m in result.messages])
    return web.Response(
        text=page,
        content_type="text/html",
        headers={
            "Content-Disposition": f'attachment; filename="{_filename(session_id, ".html")}"',
            "Content-Security-Policy": HTML_CSP,
        },
    )


@routes.get("/api/sessions/{session_id}/export.jsonl")
@json_route
async def export_jsonl(request: web.Request) -> web.StreamResponse:
    session_id = request.match_info["session_id"]
    lines = request.app[SOURCE].export(session_id)
    try:
        first = await anext(lines)  # an unknown session is refused here, before the answer starts
    except StopAsyncIteration:
        raise NotStored(session_id) from None
    response = web.StreamResponse(
        headers={
            "Content-Type": "application/x-ndjson; charset=utf-8",
            "Content-Disposition": f'attachment; filename="{_filename(session_id, ".jsonl")}"',
        }
    )
    await response.prepare(request)
    await response.write(first.encode() + b"\n")
    async for line in lines:
        await response.write(line.encode() + b"\n")
    await response.write_eof()
    return response
