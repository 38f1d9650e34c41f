"""The viewer's pages keep their rendering rule in the source (the browser tests prove it at run time,
tests/e2e/test_ui_browser.py, in the full tier): no API that parses a string as markup or code, no inline
script, style or event handler, nothing from another origin; only dom.js sets attributes."""

from __future__ import annotations

import re
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "daemon" / "claw_sessiond" / "ui" / "static"
#: What would turn a stored string into markup or code.
PARSERS = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\"on")


def code_of(path: Path) -> str:
    """A script without its whole-line comments (which may name what it must not do)."""
    return "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith(("//", "*", "/*")))


def test_no_script_parses_strings_as_markup_or_code() -> None:
    scripts = sorted(STATIC.glob("*.js"))
    assert {p.name for p in scripts} >= {"app.js", "dom.js", "sessions.js", "timeline.js", "entry.js", "usage.js"}
    for path in scripts:
        found = PARSERS.findall(code_of(path))
        assert found == [], f"{path.name}: {found}"
        if path.name != "dom.js":  # the one builder sets attributes, from its safe list
            assert "setAttribute(" not in code_of(path), f"{path.name} sets attributes itself"


def test_the_page_has_no_inline_script_style_or_handler_and_nothing_from_elsewhere() -> None:
    html = (STATIC / "index.html").read_text()
    assert re.findall(r"<script(?![^>]*\bsrc=\"/static/)", html) == []
    assert re.findall(r"<style|\sstyle=|\son[a-z]+=", html, re.I) == []
    assert re.findall(r"(?:src|href)=\"(?:https?:)?//", html) == []
    for path in STATIC.glob("*.js"):
        imports = re.findall(r"^import\b[^;]*?from\s*[\"']([^\"']+)|\bimport\(\s*[\"']([^\"']+)", code_of(path), re.M)
        assert all(name.startswith("./") for pair in imports for name in pair if name), (path.name, imports)
        assert imports or path.name in ("api.js", "dom.js"), f"{path.name}: its imports were not found"
