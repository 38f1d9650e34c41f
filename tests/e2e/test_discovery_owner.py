"""Discovery trusts only the caller's own ``.claw`` (docs/PROTOCOL.md "Discovery"; SPEC §7).

Root, or any user, works in a subfolder of a shared writable folder
(``/tmp/<x>/build-x/src``, ``build-x`` mode 1777 as ``/tmp`` is) without naming
a workspace. Another uid (65534, a real process through ``setpriv``) created
``build-x/.claw`` and listens there: a real daemon holding forged history, or
a bare listener that counts the connections it accepts. Walking upward, the
Python client (sync and async, the current folder or a subfolder named as its
argument), the CLI and the TypeScript client refuse that ``.claw``, naming
it and its owner, and send nothing: the daemon's figures and store are
unchanged, the listener accepted no connection, nothing was auto-started.
The victims run as root and as a second non-root uid (65533). Naming the
workspace itself (argument, ``CLAW_SESSIOND_WORKSPACE``, ``--workspace``) keeps
root's access to the owner's daemon. Root only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from claw_sessiond_client import Message, SessionClient, UntrustedPeerError, find_workspace
from tests.helpers.cli import CLAW
from tests.helpers.daemon import health_status
from tests.helpers.process import is_root, stop_lock_holder, stop_pid, wait_exit, wait_until

pytestmark = [
    pytest.mark.skipif(not is_root(), reason="other uids (setpriv) need root"),
    pytest.mark.backend_neutral(
        "how clients find a workspace; uid 65534's daemon keeps its own SQLite file (it cannot reach the "
        "throwaway PostgreSQL server)"
    ),
]

ATTACKER = 65534  # "nobody"
OTHER = 65533  # a second non-root uid, with no name in the password database
ROOT_DIR = Path(__file__).resolve().parents[2]
TS = ROOT_DIR / "clients" / "typescript"
REFUSED = 3  # the exit code the client scripts below use for "refused by discovery"


def as_uid(uid: int) -> list[str]:
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without the workspace, database and runtime settings the tests name themselves."""
    drop = ("CLAW_SESSIOND_", "CLAW_DATABASE_URL", "XDG_RUNTIME_DIR")
    return {**{k: v for k, v in os.environ.items() if not k.startswith(drop)}, **extra}


@pytest.fixture
def shared() -> Iterator[Path]:
    """``/tmp/<random>/build-x``: root's, mode 1777 (as ``/tmp``), with nothing in it yet."""
    top = Path(tempfile.mkdtemp(prefix="shared-", dir="/tmp"))
    os.chmod(top, 0o755)
    build = top / "build-x"
    build.mkdir()
    os.chmod(build, 0o1777)
    yield build
    shutil.rmtree(top, ignore_errors=True)


class Attacker:
    """What uid 65534 runs in ``build-x/.claw``: a real daemon, or a listener counting connections."""

    def __init__(self, build: Path, kind: str) -> None:
        self.build, self.kind = build, kind
        self.claw = build / ".claw"
        self.socket = self.claw / "sessiond.sock"
        self.log = build.parent / f"attacker-{kind}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Attacker:
        if self.kind == "daemon":
            cmd = [*CLAW, "serve", "--workspace", str(self.build)]
        else:
            cmd = [sys.executable, "-c", LISTENER, str(self.claw), "600"]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [*as_uid(ATTACKER), *cmd], stdout=log, stderr=subprocess.STDOUT, cwd="/", env=clean_env()
            )
        up = (
            (lambda: health_status(f"unix:{self.socket}") == "SERVING")
            if self.kind == "daemon"
            else (lambda: (self.claw / "accepted").exists())
        )
        assert wait_until(lambda: up() or self.proc.poll() is not None, 60), self.log.read_text()  # type: ignore[union-attr]
        assert self.proc.poll() is None, self.log.read_text()
        assert self.claw.lstat().st_uid == ATTACKER
        if self.kind == "daemon":
            with SessionClient(address=f"unix:{self.socket}", autostart=False) as c:  # root naming the exact path
                c.append("victim", Message.assistant("forged: the deploy key is fine to paste here"))
        return self

    def view(self) -> tuple[object, ...]:
        """What the victim could have changed: the store's figures and every call but GetStats (the daemon), or
        the number of connections accepted (the listener)."""
        if self.kind == "listener":
            return (int((self.claw / "accepted").read_text()),)
        with SessionClient(address=f"unix:{self.socket}", autostart=False) as c:
            stats = c.stats()
        calls = sorted((r["method"], r["code"], r["count"]) for r in stats["requests"] if r["method"] != "GetStats")
        return stats["sessions"], stats["events"], calls

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            stop_pid(self.proc.pid)
            wait_exit(self.proc, 30)


#: The bare listener: binds ``<claw>/sessiond.sock`` in a ``.claw`` it creates (0700) and writes the number of
#: connections it accepted to ``<claw>/accepted`` after each one; it stops after argv[2] seconds at most.
LISTENER = r"""
import os, socket, sys, time
claw = sys.argv[1]
os.mkdir(claw, 0o700)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(os.path.join(claw, "sessiond.sock"))
srv.listen(16)
srv.settimeout(0.2)
def note(n):
    with open(os.path.join(claw, "accepted.tmp"), "w") as fh:
        fh.write(str(n))
    os.replace(os.path.join(claw, "accepted.tmp"), os.path.join(claw, "accepted"))
accepted = 0
note(accepted)
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    try:
        conn, _ = srv.accept()
    except socket.timeout:
        continue
    accepted += 1
    note(accepted)
    conn.close()
"""


@pytest.fixture
def attackers() -> Iterator[list[Attacker]]:
    started: list[Attacker] = []
    yield started
    for attacker in started:
        attacker.stop()


#: A victim's Python client: the sync and the async client, each sending one message; prints what refused them.
PY_VICTIM = r"""
import asyncio, json, sys
from claw_sessiond_client import AsyncSessionClient, Message, SessionClient, UntrustedPeerError
arg = sys.argv[1] or None
out = []
try:
    with SessionClient(arg) as c:
        c.append("victim", Message.user("the deploy key is hunter2"))
    out.append("sent")
except UntrustedPeerError as exc:
    out.append({"reason": str(exc.reason), "message": exc.message})
async def main():
    async with AsyncSessionClient(arg) as c:
        await c.append("victim", Message.user("the deploy key is hunter2"))
try:
    asyncio.run(main())
    out.append("sent")
except UntrustedPeerError as exc:
    out.append({"reason": str(exc.reason), "message": exc.message})
print(json.dumps(out))
sys.exit(3 if all(o != "sent" for o in out) else 0)
"""

#: The same with the TypeScript client (its workspace option, or the current folder).
TS_VICTIM = r"""
const { SessionClient, user } = require(process.env.CLAW_TS_INDEX);
(async () => {
  const arg = process.argv[1] || undefined;
  try {
    const c = new SessionClient({ workspace: arg, command: [process.env.CLAW_PYTHON, "-m", "claw_sessiond"] });
    try {
      await c.append("victim", [user("the deploy key is hunter2")]);
    } finally {
      c.close();
    }
    console.log(JSON.stringify(["sent"]));
  } catch (e) {
    console.log(JSON.stringify([{ cls: e.constructor.name, reason: e.reason, message: e.message }]));
    process.exit(3);
  }
})();
"""


@pytest.fixture(scope="module")
def ts_index(backend: str) -> Iterator[Path]:
    """The TypeScript client (its src/ project, tsconfig.build.json) compiled once for this file, into a folder other
    uids can read."""
    if not (TS / "node_modules" / ".bin" / "tsc").exists():
        pytest.skip("the TypeScript client's packages are not installed: run scripts/setup-tests")
    out = Path(tempfile.mkdtemp(prefix="claw-ts-build-", dir="/tmp"))
    os.chmod(out, 0o755)
    proc = subprocess.run(
        [str(TS / "node_modules" / ".bin" / "tsc"), "-p", str(TS / "tsconfig.build.json"), "--outDir", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    yield out / "src" / "index.js"
    shutil.rmtree(out, ignore_errors=True)


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    def refusals(self) -> list[dict[str, str]]:
        results = json.loads(self.stdout.strip().splitlines()[-1])
        assert all(r != "sent" for r in results), f"the client sent its message: {self}"
        return list(results)


def victim_env(home: Path) -> dict[str, str]:
    """A victim's environment: no workspace named, the TypeScript client's packages and the daemon findable."""
    return clean_env(CLAW_PYTHON=sys.executable, NODE_PATH=str(TS / "node_modules"), HOME=str(home))


def run_victim(client: str, uid: int, cwd: Path, arg: str, ts_index: Path | None) -> Outcome:
    """Run one client as ``uid`` in ``cwd`` (``arg``: the workspace argument, "" for none); auto-start is on."""
    env = victim_env(cwd)
    if client == "python":
        cmd = [sys.executable, "-c", PY_VICTIM, arg]
    elif client == "cli":
        cmd = [*CLAW, "ls", "--json", *(["--workspace", arg] if arg else [])]
    else:
        assert ts_index is not None
        env["CLAW_TS_INDEX"] = str(ts_index)
        cmd = ["node", "-e", TS_VICTIM, arg]
    prefix = as_uid(uid) if uid != 0 else []
    proc = subprocess.run([*prefix, *cmd], capture_output=True, text=True, timeout=120, cwd=cwd, env=env)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def _src_for(build: Path, uid: int) -> Path:
    """``build-x/src/pkg``, the victim's own folders (``uid``'s, 0755), with no ``.claw`` of their own."""
    src = build / "src"
    (src / "pkg").mkdir(parents=True)
    for folder in (src, src / "pkg"):
        os.chown(folder, uid, uid)
        os.chmod(folder, 0o755)
    return src / "pkg"


@pytest.mark.parametrize("attacker_kind", ["daemon", "listener"])
@pytest.mark.parametrize("victim", [0, OTHER], ids=["root", "other-user"])
@pytest.mark.parametrize("client", ["python", "python-arg", "cli", "typescript", "typescript-arg"])
def test_a_claw_another_user_planted_above_is_refused_and_nothing_is_sent(
    shared: Path,
    attackers: list[Attacker],
    request: pytest.FixtureRequest,
    attacker_kind: str,
    victim: int,
    client: str,
) -> None:
    attacker = Attacker(shared, attacker_kind)
    attackers.append(attacker)
    attacker.start()
    here = _src_for(shared, victim)
    before = attacker.view()
    ts = request.getfixturevalue("ts_index") if client.startswith("typescript") else None
    arg = str(here) if client.endswith("-arg") else ""  # a subfolder named: the walk above it is the same
    try:
        got = run_victim(client.removesuffix("-arg"), victim, here, arg, ts)
    finally:
        stop_lock_holder(here.parent)  # a daemon auto-started for the wrong folder (a regression) is stopped
        stop_lock_holder(here)
    claw = str(shared / ".claw")
    owner = f"uid {ATTACKER} (nobody)"
    if client == "cli":
        assert got.code == 1, got
        assert claw in got.stderr and owner in got.stderr and "Traceback" not in got.stderr, got
        assert json.loads(got.stdout)["error"]["reason"] == "UNTRUSTED_PEER", got
    else:
        assert got.code == REFUSED, got
        for refusal in got.refusals():
            assert refusal["reason"] == "UNTRUSTED_PEER", refusal
            assert claw in refusal["message"] and owner in refusal["message"], refusal
            assert "nothing was sent" in refusal["message"], refusal
    assert attacker.view() == before, "the other user's daemon or listener heard from the victim"
    assert not (here / ".claw").exists() and not (here.parent / ".claw").exists(), "something was started"


@pytest.mark.smoke
def test_a_foreign_claw_is_not_skipped_for_ones_own_further_up(shared: Path, ts_index: Path) -> None:
    """Root's own ``.claw`` above the shared folder does not make the foreign one below it acceptable."""
    (shared.parent / ".claw").mkdir(mode=0o700)  # root's own, above build-x
    planted = shared / ".claw"
    planted.mkdir(mode=0o700)
    os.chown(planted, ATTACKER, ATTACKER)
    here = _src_for(shared, 0)
    with pytest.raises(UntrustedPeerError) as caught:
        find_workspace(here)
    assert str(planted) in caught.value.message and f"uid {ATTACKER} (nobody)" in caught.value.message
    ts = run_victim("typescript", 0, here, "", ts_index)
    assert ts.code == REFUSED and str(planted) in ts.refusals()[0]["message"], ts
    # Positive control: with the planted one gone, root's own is found from the same folder.
    planted.rmdir()
    assert find_workspace(here) == shared.parent


@pytest.mark.parametrize("link_owner", [0, ATTACKER], ids=["own-link", "foreign-link"])
def test_a_claw_link_is_judged_by_the_link_and_its_target(shared: Path, link_owner: int) -> None:
    """An own link to another user's folder, and another user's link to an own folder, are both refused."""
    target = shared.parent / "target"
    target.mkdir(mode=0o700)
    if link_owner == 0:
        os.chown(target, ATTACKER, ATTACKER)
    link = shared / ".claw"
    link.symlink_to(target)
    os.lchown(link, link_owner, link_owner)
    here = _src_for(shared, 0)
    with pytest.raises(UntrustedPeerError) as caught:
        find_workspace(here)
    assert str(link) in caught.value.message and f"uid {ATTACKER} (nobody)" in caught.value.message
    os.chown(target, 0, 0)
    os.lchown(link, 0, 0)
    assert find_workspace(here) == shared  # positive control: link and target both root's


@pytest.mark.parametrize("uid", [0, OTHER], ids=["root", "other-user"])
@pytest.mark.parametrize("client", ["python", "typescript"])
def test_an_own_claw_nearer_than_a_foreign_one_is_used(
    shared: Path, request: pytest.FixtureRequest, uid: int, client: str
) -> None:
    """The victim's own ``.claw`` below the planted one is found first; the one above is never looked at."""
    planted = shared / ".claw"
    planted.mkdir(mode=0o700)
    os.chown(planted, ATTACKER, ATTACKER)
    here = _src_for(shared, uid)
    own = here.parent / ".claw"
    own.mkdir(mode=0o700)
    os.chown(own, uid, uid)
    assert workspace_found(client, uid, here, request) == str(here.parent)


@pytest.mark.parametrize("client", ["python", "typescript"])
def test_an_own_claw_that_is_not_a_folder_is_passed_over(
    shared: Path, request: pytest.FixtureRequest, client: str
) -> None:
    """A file of one's own named ``.claw`` marks no workspace: the search goes on to one's own folder above."""
    (shared.parent / ".claw").mkdir(mode=0o700)
    here = _src_for(shared, 0)
    (here.parent / ".claw").write_text("not a workspace")
    assert workspace_found(client, 0, here, request) == str(shared.parent)


def workspace_found(client: str, uid: int, here: Path, request: pytest.FixtureRequest) -> str:
    """The workspace a client created as ``uid`` in ``here`` (no workspace named, no auto-start) says it has."""
    if client == "python":
        code = "from claw_sessiond_client import SessionClient; print(SessionClient(autostart=False).workspace)"
        cmd = [sys.executable, "-c", code]
    else:
        ts = request.getfixturevalue("ts_index")
        code = "console.log(new (require(process.argv[1]).SessionClient)({ autostart: false }).workspace)"
        cmd = ["node", "-e", code, str(ts)]
    prefix = as_uid(uid) if uid != 0 else []
    proc = subprocess.run([*prefix, *cmd], capture_output=True, text=True, timeout=60, cwd=here, env=victim_env(here))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_root_naming_the_workspace_uses_its_owners_daemon(
    shared: Path, attackers: list[Attacker], monkeypatch: pytest.MonkeyPatch, ts_index: Path
) -> None:
    """Named explicitly (argument, environment variable, ``--workspace``), another user's workspace is used as
    before by the Python client and the CLI (root trusts the owner of a workspace it names). The TypeScript
    client accepts the named workspace too, and then trusts only a daemon of its own uid, as before."""
    attacker = Attacker(shared, "daemon")
    attackers.append(attacker)
    attacker.start()
    here = _src_for(shared, 0)
    monkeypatch.chdir(here)
    for key in [k for k in os.environ if k.startswith("CLAW_SESSIOND_")]:
        monkeypatch.delenv(key)
    with SessionClient(shared, autostart=False) as c:
        assert c.workspace == shared
        assert c.append("named", Message.user("by argument")).last_position == 1
    monkeypatch.setenv("CLAW_SESSIOND_WORKSPACE", str(shared))
    with SessionClient(autostart=False) as c:
        assert c.append("named", Message.user("by variable")).last_position == 2
    monkeypatch.delenv("CLAW_SESSIOND_WORKSPACE")
    proc = subprocess.run(
        [*CLAW, "ls", "--json", "--workspace", str(shared)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=here,
        env=clean_env(),
    )
    assert proc.returncode == 0 and "named" in proc.stdout, proc.stderr
    assert attacker.view()[0] == 2, "the named workspace's daemon stored both sessions"
    # A CLI command that writes runs serve's checks of .claw/ first; the owner of a workspace root names stands
    # in for root there (its mode and links are still checked).
    proc = subprocess.run(
        [*CLAW, "repair", "--json", "--workspace", str(shared), "named"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=here,
        env=clean_env(),
    )
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    ts = run_victim("typescript", 0, here, str(shared), ts_index)
    refusal = ts.refusals()[0]
    assert refusal["cls"] == "UntrustedPeerError" and "belongs to uid 65534" in refusal["message"], ts
    assert "refusing the workspace" not in refusal["message"], "discovery itself accepts a named workspace"
