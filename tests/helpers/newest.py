"""The adapters' suites against the newest release of each framework: a report, never a failure.

The client's extras pin the exact framework versions the adapters are tested against (the CI
run proves those). ``.ci/run`` then runs ``python -m tests.helpers.newest``, which asks the
package index for each pinned framework's newest release and, for those newer than their pins,
installs them all into one venv beside the test venv (one that does not resolve here is only
reported), fetches their sdists where the tests read one, and runs their adapters' tests there
once. It prints one line per framework (the same, newer and passing, newer and differing with
the failing test ids, or newer but not installable here) and exits 0 whatever the frameworks
did: an upstream break is seen the day it happens without stopping a landing. It exits non-zero
only when it cannot run at all (no index answer is not that: it is reported).

Tests marked ``pin_check`` assert the pins themselves; they are left out of the newest run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tests.helpers.sdist import pins

ROOT: Final = Path(__file__).resolve().parents[2]

#: Each pinned framework's adapter tests (files under tests/); tests/unit/test_newest.py checks
#: that every pin has an entry and every file exists.
SUITES: Final[dict[str, tuple[str, ...]]] = {
    "openai-agents": ("e2e/test_contrib_openai_agents.py", "e2e/test_contrib_openai_agents_sdk.py"),
    "langchain-core": ("e2e/test_langchain.py", "e2e/test_langchain_sdist.py"),
    "google-adk": ("e2e/test_contrib_adk.py",),
    "langgraph": ("e2e/test_contrib_langgraph.py",),
    "langgraph-checkpoint": ("e2e/test_contrib_langgraph.py",),
}
#: Frameworks whose own tests come from their sdist (``tests/helpers/sdist.py``).
SDIST_SUITES: Final = frozenset({"openai-agents", "langchain-core"})
#: Bounds of one framework's run (install, tests).
INSTALL_TIMEOUT_S: Final = 600
TESTS_TIMEOUT_S: Final = 900


@dataclass(frozen=True)
class Outcome:
    project: str
    pinned: str
    newest: str | None
    #: "same", "passes", "differs", "not-installable", "no-answer"
    verdict: str
    detail: str = ""

    def line(self) -> str:
        head = f"{self.project}: pinned {self.pinned}"
        if self.verdict == "no-answer":
            return f"{head}; the index gave no newest release ({self.detail})"
        if self.verdict == "same":
            return f"{head} is the newest release"
        text = {
            "passes": "the adapter's tests pass on it",
            "differs": "the adapter's tests DIFFER on it",
            "not-installable": "it does not install here",
        }[self.verdict]
        return f"{head}; newest {self.newest}: {text}" + (f"\n    {self.detail}" if self.detail else "")


def newest_release(python: str, project: str) -> str:
    """The newest release of ``project`` the index offers (``pip index versions``'s first line)."""
    proc = subprocess.run(
        [python, "-m", "pip", "index", "versions", project, "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    m = re.match(rf"{re.escape(project)} \(([^)\s]+)\)", proc.stdout.strip(), re.IGNORECASE)
    if proc.returncode != 0 or m is None:
        raise LookupError((proc.stderr.strip().splitlines() or ["no answer"])[-1])
    return m.group(1)


def failed_ids(pytest_output: str) -> list[str]:
    """The ids of the tests that failed or errored, from pytest's ``-ra`` summary."""
    return sorted({m.group(2) for m in re.finditer(r"^(FAILED|ERROR) (\S+)", pytest_output, re.MULTILINE)})


def _run(cmd: list[str], timeout_s: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s, env=env, check=False)


def installable(base_python: str, project: str, newest: str) -> str | None:
    """None if ``project==newest`` resolves here (the resolver alone: seconds), else why not."""
    proc = _run(
        [base_python, "-m", "pip", "install", "-q", "--dry-run", "--disable-pip-version-check", f"{project}=={newest}"],
        INSTALL_TIMEOUT_S,
    )
    return None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["(no message)"])[-1]


def try_newest(newer: dict[str, tuple[str, str]], base_python: str) -> list[Outcome]:
    """Install every ``project==newest`` of ``newer`` (project → (pinned, newest)) into one venv beside
    the test venv and run their adapters' tests there once; each project's outcome is its own files'."""
    venv = ROOT / ".venv-newest"
    shutil.rmtree(venv, ignore_errors=True)
    python = str(venv / "bin" / "python")

    def every(verdict: str, detail: str) -> list[Outcome]:
        return [Outcome(p, pinned, newest, verdict, detail) for p, (pinned, newest) in sorted(newer.items())]

    try:
        steps = [
            [base_python, "-m", "venv", str(venv)],
            [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", ".[test]"],
            [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            + [f"{p}=={newest}" for p, (_, newest) in sorted(newer.items())],
        ]
        for step in steps:
            proc = _run(step, INSTALL_TIMEOUT_S)
            if proc.returncode != 0:
                return every("not-installable", (proc.stderr.strip().splitlines() or ["(no message)"])[-1])
        fetch = sorted(set(newer) & SDIST_SUITES)
        if fetch:
            proc = _run([python, "-m", "tests.helpers.sdist", *fetch], INSTALL_TIMEOUT_S)
            if proc.returncode != 0:
                return every("not-installable", f"the sdists: {proc.stderr.strip()[-300:]}")
        files = sorted({f"tests/{name}" for p in newer for name in SUITES[p]})
        env = {**os.environ, "CLAW_FULL": "1"}
        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not pin_check", *files]
        proc = _run(cmd, TESTS_TIMEOUT_S, env)
        failed = failed_ids(proc.stdout)
        if proc.returncode != 0 and not failed:
            return every("differs", (proc.stdout.strip().splitlines() or ["(no output)"])[-1])
        outcomes = []
        for p, (pinned, newest) in sorted(newer.items()):
            mine = [f for f in failed if f.split("::")[0] in {f"tests/{name}" for name in SUITES[p]}]
            outcomes.append(Outcome(p, pinned, newest, "differs" if mine else "passes", "\n    ".join(mine[:40])))
        return outcomes
    except subprocess.TimeoutExpired as exc:
        command = " ".join(map(str, exc.cmd[:4]))
        return every("differs", f"{command}: no end in {exc.timeout}s")
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def main(argv: list[str]) -> int:
    if argv:
        print("usage: python -m tests.helpers.newest   (no arguments; see the module's docstring)", file=sys.stderr)
        return 2
    python = sys.executable
    outcomes = []
    newer: dict[str, tuple[str, str]] = {}
    for project, pinned in sorted(pins().items()):
        if project not in SUITES:
            outcomes.append(Outcome(project, pinned, None, "no-answer", "no suite named in tests/helpers/newest.py"))
            continue
        try:
            newest = newest_release(python, project)
        except (LookupError, subprocess.TimeoutExpired) as exc:
            outcomes.append(Outcome(project, pinned, None, "no-answer", str(exc)))
            continue
        if newest == pinned:
            outcomes.append(Outcome(project, pinned, newest, "same"))
        elif (why := installable(python, project, newest)) is not None:
            outcomes.append(Outcome(project, pinned, newest, "not-installable", why))
        else:
            newer[project] = (pinned, newest)
    if newer:
        outcomes.extend(try_newest(newer, python))
    print("The adapters against each framework's newest release (a report: it never fails the run):")
    for outcome in sorted(outcomes, key=lambda o: o.project):
        print(f"  {outcome.line()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
