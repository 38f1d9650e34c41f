"""Database URLs are parsed in one place (``config.parse_database_url``): what it accepts, how it names a
store, and the one-line errors it gives (never holding a user or password)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from claw_sessiond import config
from claw_sessiond.claw_dir import password_file, url_has_password
from claw_sessiond.config import ConfigError, parse_database_url, redact_url


@pytest.mark.parametrize(
    ("url", "backend", "target"),
    [
        ("", "sqlite", "the SQLite file .claw/sessions.db"),
        ("sqlite:", "sqlite", "the SQLite file .claw/sessions.db"),
        ("postgresql://claw@db.example/claw", "postgresql", "db.example:5432/claw"),
        ("postgres://u:pw@h1:5433,h2/app?sslmode=require", "postgresql", "h1:5433,h2:5432/app"),
        ("postgresql://u@[::1]:6000/x", "postgresql", "[::1]:6000/x"),
        ("postgresql://claw@/t?host=/tmp/sock&port=5444", "postgresql", "/tmp/sock:5444/t"),
        ("postgresql:///d", "postgresql", "localhost:5432/d"),
    ],
)
def test_accepted_urls_and_the_store_they_name(url: str, backend: str, target: str) -> None:
    parsed = parse_database_url(url)
    assert (parsed.backend, parsed.target) == (backend, target)
    assert "pw" not in parsed.target


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("postgresql://u:secret@db:notaport/x", "is not a number"),
        ("postgresql://u:secret@db:70000/x", "is not a number"),
        ("postgresql://u:secret@[::1/x", "not a valid URL"),
        ("postgresql://u:secret@[::zz]:5432/x", "not a valid URL"),
        ("postgresql://u:secret@fe80::1:5432/x", "IPv6 address must be written"),
        ("mysql://u:secret@h/x", "must be a postgresql:// URL"),
        ("claw.db", "must be a postgresql:// URL"),
    ],
)
def test_malformed_urls_are_one_line_config_errors_without_the_password(url: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_database_url(url)
    text = str(caught.value)
    assert problem in text and "secret" not in text and "\n" not in text, text
    assert text.startswith("database: ")


def test_password_is_stripped_redacted_and_carried_as_a_parameter() -> None:
    parsed = parse_database_url("postgresql://u:s3cr%40t@h/d?password=other&sslmode=require")
    assert parsed.has_password and parsed.user == "u"
    assert parsed.without_password() == "postgresql://u@h/d?sslmode=require"
    assert redact_url(parsed.url) == "postgresql://u:***@h/d?password=***&sslmode=require"
    again = parse_database_url(parsed.with_password("p&w"))
    assert again.has_password and again.same_store(parsed)
    assert not parse_database_url("postgresql://u@h/d").has_password


def test_same_store_compares_servers_and_database_not_users() -> None:
    a = parse_database_url("postgresql://alice@h:5432/d")
    assert a.same_store(parse_database_url("postgresql://bob@h/d"))
    assert not a.same_store(parse_database_url("postgresql://alice@h/other"))
    assert not a.same_store(parse_database_url("postgresql://alice@h2/d"))
    assert not a.same_store(parse_database_url("sqlite:"))


def test_the_password_file_a_url_names_and_whether_it_holds_a_password() -> None:
    named = parse_database_url("postgresql://u@h/d?passfile=/srv/pgpass&sslmode=require")
    assert (named.passfile, named.has_password) == ("/srv/pgpass", False)
    assert parse_database_url("postgresql://u@h/d").passfile == ""
    assert url_has_password("postgresql://u:pw@h/d") and url_has_password("postgresql://u@h/d?password=pw")
    assert not url_has_password("postgresql://u@h/d") and not url_has_password("sqlite:")
    assert url_has_password("mysql://u:pw@h/d")  # not a URL of ours: judged by its shape, still refused if readable


def test_password_file_follows_the_parsed_url(tmp_path: Path) -> None:
    pgpass = tmp_path / "pgpass"
    pgpass.write_text("h:5432:d:u:pw\n")
    env = {"HOME": str(tmp_path / "nohome")}
    assert password_file(f"postgresql://u@h/d?passfile={pgpass}", env) == pgpass
    assert password_file(f"postgresql://u:pw@h/d?passfile={pgpass}", env) is None  # the URL has its password
    assert password_file("postgresql://u@h/d", {**env, "PGPASSFILE": str(pgpass)}) == pgpass
    assert password_file("sqlite:", {**env, "PGPASSFILE": str(pgpass)}) is None


def test_only_config_takes_a_url_apart() -> None:
    """The URL is parsed once: no daemon module but ``config.py`` calls urllib's URL splitters."""
    splitters = {"urlsplit", "urlparse", "parse_qs", "parse_qsl"}
    package = Path(config.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path == Path(config.__file__):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
            if name in splitters:
                offenders.append(f"{path.relative_to(package)}:{node.lineno} {name}")
    assert not offenders, "parse database URLs with config.parse_database_url:\n" + "\n".join(offenders)
