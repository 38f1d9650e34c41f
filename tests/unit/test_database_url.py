"""Database URLs are parsed in one place (``config.parse_database_url``): what it accepts, how it names a
store, and the one-line errors it gives (never holding a user or password)."""

from __future__ import annotations

import pytest

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
