"""A file holding a database password that other users may read: ``serve`` refuses it, ``doctor`` fails it.

``.claw/config.toml`` whose ``database`` URL has a password, and the file of
``--database-file``, are secrets like an ssh key: mode 0644 (or group
readable, or owned by another user) is refused at start with one line naming
the file, its mode and ``chmod 600`` (a configuration error, exit 2), and the
password itself is never printed. Without a password the same file may be
readable. The database named here listens nowhere (port 1): a file that passes
the check makes ``serve`` fail later, at the connection, which proves the
check let it through without needing a server.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import claw
from tests.helpers.process import is_root

pytestmark = pytest.mark.backend_neutral("refused while reading the configuration, before any store is opened")

NOBODY = 65534
SECRET = "Secret-pw-71q"
WITH_PASSWORD = f"postgresql://claw:{SECRET}@127.0.0.1:1/sessions"
IN_QUERY = f"postgresql://claw@127.0.0.1:1/sessions?password={SECRET}"
WITHOUT_PASSWORD = "postgresql://claw@127.0.0.1:1/sessions"


def _serve(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return claw("serve", "--workspace", str(ws), *args, cwd=ws, timeout_s=60)


def _config(ws: Path, url: str, mode: int) -> Path:
    claw_dir = ws / ".claw"
    claw_dir.mkdir(mode=0o700, exist_ok=True)
    path = claw_dir / "config.toml"
    path.write_text(f'database = "{url}"\n')
    os.chmod(path, mode)
    return path


def _assert_refused(proc: subprocess.CompletedProcess[str], path: Path, mode: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("claw-sessiond: configuration error:"), proc.stderr
    assert str(path) in lines[0] and f"mode {mode}" in lines[0] and f"chmod 600 {path}" in lines[0], lines[0]
    assert SECRET not in proc.stderr + proc.stdout, "the refusal printed the password"


def _assert_passed_the_check(proc: subprocess.CompletedProcess[str]) -> None:
    """serve read the URL and went on to connect (nothing listens on port 1)."""
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "127.0.0.1:1" in proc.stderr and "cannot connect" in proc.stderr, proc.stderr
    assert "configuration error" not in proc.stderr and SECRET not in proc.stderr, proc.stderr


@pytest.mark.parametrize(("url", "mode"), [(WITH_PASSWORD, 0o644), (WITH_PASSWORD, 0o640), (IN_QUERY, 0o604)])
def test_serve_refuses_a_config_toml_with_a_password_others_may_read(workspace: Path, url: str, mode: int) -> None:
    path = _config(workspace, url, mode)
    _assert_refused(_serve(workspace), path, f"{mode:04o}")
    assert sorted(p.name for p in (workspace / ".claw").iterdir()) == ["config.toml"], "nothing else is written"


@pytest.mark.skipif(not is_root(), reason="a file owned by another uid needs root (chown)")
def test_serve_refuses_a_config_toml_with_a_password_owned_by_another_user(workspace: Path) -> None:
    path = _config(workspace, WITH_PASSWORD, 0o600)
    os.chown(path, NOBODY, NOBODY)
    proc = _serve(workspace)
    _assert_refused(proc, path, "0600")
    assert f"uid {NOBODY}" in proc.stderr, proc.stderr


@pytest.mark.smoke
def test_a_private_config_toml_or_one_without_a_password_passes(workspace: Path) -> None:
    _config(workspace, WITH_PASSWORD, 0o600)
    _assert_passed_the_check(_serve(workspace))
    _config(workspace, WITHOUT_PASSWORD, 0o644)  # nothing secret in it: readable is fine
    _assert_passed_the_check(_serve(workspace))


@pytest.mark.parametrize("mode", [0o644, 0o660, 0o604])
def test_serve_refuses_a_database_file_with_a_password_others_may_read(
    workspace: Path, tmp_path: Path, mode: int
) -> None:
    path = tmp_path / "database-url"
    path.write_text(WITH_PASSWORD + "\n")
    os.chmod(path, mode)
    _assert_refused(_serve(workspace, "--database-file", str(path)), path, f"{mode:04o}")
    assert not (workspace / ".claw").exists(), "a refused start creates nothing"
    os.chmod(path, 0o600)
    _assert_passed_the_check(_serve(workspace, "--database-file", str(path)))
    path.write_text(WITHOUT_PASSWORD + "\n")
    os.chmod(path, 0o644)
    _assert_passed_the_check(_serve(workspace, "--database-file", str(path)))


def test_doctor_fails_a_config_toml_with_a_password_others_may_read(workspace: Path) -> None:
    """doctor used to call .claw/ private with such a file in it."""
    path = _config(workspace, WITH_PASSWORD, 0o644)
    proc = claw("doctor", "--workspace", str(workspace), "--json", cwd=workspace)
    assert proc.returncode == 1, proc.stderr
    checks = {c["check"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["database"]["status"] == "fail", checks
    assert str(path) in checks["database"]["detail"] and "chmod 600" in checks["database"]["detail"], checks
    assert checks["permissions"]["status"] == "fail", checks
    assert "config.toml 0644" in checks["permissions"]["detail"], checks
    assert SECRET not in proc.stdout + proc.stderr
    os.chmod(path, 0o600)
    checks = {
        c["check"]: c for c in json.loads(claw("doctor", "--workspace", str(workspace), "--json").stdout)["checks"]
    }
    assert checks["permissions"]["status"] == "ok", checks
    assert "holds a database password" not in json.dumps(checks), checks


def test_the_read_only_views_refuse_it_too(workspace: Path) -> None:
    """ls/export without a daemon read the configuration the daemon reads, and refuse what it refuses."""
    path = _config(workspace, WITH_PASSWORD, 0o644)
    proc = claw("ls", "--workspace", str(workspace), cwd=workspace)
    assert proc.returncode == 1 and f"chmod 600 {path}" in proc.stderr, proc.stderr
    assert SECRET not in proc.stdout + proc.stderr


@pytest.mark.parametrize("where", ["PGPASSFILE", "HOME", "passfile="])
def test_serve_refuses_a_password_file_others_may_read(workspace: Path, tmp_path: Path, where: str) -> None:
    """The libpq password file a URL without a password reads: the client library would skip a loose one
    with a warning, and the connection then fail for want of a password; serve says why instead."""
    home = tmp_path / "home"
    home.mkdir()
    path = home / ".pgpass" if where == "HOME" else tmp_path / "pgpass"
    path.write_text(f"127.0.0.1:1:sessions:claw:{SECRET}\n")
    os.chmod(path, 0o644)
    url = f"{WITHOUT_PASSWORD}?passfile={path}" if where == "passfile=" else WITHOUT_PASSWORD
    env = {"HOME": str(home)} if where == "HOME" else {"PGPASSFILE": str(path)} if where == "PGPASSFILE" else {}
    refused = claw("serve", "--workspace", str(workspace), "--database", url, cwd=workspace, env=env)
    _assert_refused(refused, path, "0644")
    assert "PGPASSFILE: holds database passwords" in refused.stderr, refused.stderr
    (workspace / ".claw").mkdir(mode=0o700)  # the read-only view needs one
    offline = claw("ls", "--workspace", str(workspace), cwd=workspace, env={**env, "CLAW_DATABASE_URL": url})
    assert offline.returncode == 1 and f"chmod 600 {path}" in offline.stderr, offline.stderr
    os.chmod(path, 0o600)
    _assert_passed_the_check(claw("serve", "--workspace", str(workspace), "--database", url, cwd=workspace, env=env))
