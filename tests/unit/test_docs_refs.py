"""The docs cite only what the repository holds, and their figures come from one place.

- Every relative link of README.md, docs/*.md, the clients' READMEs and CHANGELOG.md names a file
  of the checkout, and its ``#anchor`` a heading of that page (GitHub's heading ids).
- No page cites what a reader of the repository cannot open: an issue number, the design
  specification or review the project was built from, or its seeds. The plans under
  ``docs/plans/`` are the record of one piece of work, named by it, and are not checked.
- The schema versions shown in sample output are this build's (SQLite's in the CLI page,
  PostgreSQL's in the PostgreSQL pages).
- Test counts of the suite are given in one place, docs/development.md (the PostgreSQL design
  record keeps dated history, which is not a current figure).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from claw_sessiond.storage.postgres.schema import SCHEMA_VERSION as POSTGRES_SCHEMA
from claw_sessiond.storage.sqlite.schema import SCHEMA_VERSION as SQLITE_SCHEMA

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted(ROOT.glob("clients/*/README.md")),
]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```$", re.M | re.S)
_CITATIONS = re.compile(r"\b[Ii]ssue \d+|\bSPEC\b|§|CODE-REVIEW|shared/design|seeds/")
_TEST_COUNT = re.compile(r"\b\d{1,3}(?:,\d{3})+ (?:of [\d,]+ )?tests\b")
#: The one page with the suite's current counts, and the dated record that keeps old ones.
_COUNTS_PAGE = ROOT / "docs" / "development.md"
_RECORDS = {ROOT / "docs" / "postgres-design.md", ROOT / "CHANGELOG.md"}


def _ids(path: Path) -> set[str]:
    """The heading ids of a Markdown page, as GitHub makes them (duplicates get -1, -2, ...)."""
    ids: set[str] = set()
    seen: dict[str, int] = {}
    for line in _FENCE.sub("", path.read_text()).splitlines():
        if not line.startswith("#"):
            continue
        text = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text.replace("`", "")).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids


def _prose(path: Path) -> str:
    return path.read_text()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_name_files_and_headings_that_exist(page: Path) -> None:
    broken = []
    for target in _LINK.findall(_FENCE.sub("", page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not the repository's
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _ids(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_cites_what_the_repository_does_not_hold(page: Path) -> None:
    found = [
        f"line {page.read_text().count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}"
        for m in _CITATIONS.finditer(page.read_text())
    ]
    assert not found, f"{page.relative_to(ROOT)} cites outside the repository: {found}"


def test_sample_output_shows_this_builds_schema_versions() -> None:
    shown = {
        ROOT / "docs" / "cli.md": SQLITE_SCHEMA,
        ROOT / "docs" / "postgres.md": POSTGRES_SCHEMA,
    }
    wrong = []
    for page, version in shown.items():
        for block in _FENCE.findall(page.read_text()):
            for m in re.finditer(r"schema_version:?\s+(\d+)", block):
                if int(m.group(1)) != version:
                    wrong.append(f"{page.name}: {m.group(0)!r}, this build's is {version}")
    assert not wrong, wrong


def test_test_counts_come_from_one_page() -> None:
    elsewhere = [
        f"{p.relative_to(ROOT)}: {m.group(0)!r}"
        for p in PAGES
        if p != _COUNTS_PAGE and p not in _RECORDS
        for m in _TEST_COUNT.finditer(p.read_text())
    ]
    assert not elsewhere, f"test counts belong in {_COUNTS_PAGE.relative_to(ROOT)}: {elsewhere}"
    assert _TEST_COUNT.search(_COUNTS_PAGE.read_text())
