"""Where the packaging and install-line tests make their fresh virtualenvs, and the environment pip runs in there.

Both tests write and then remove tens of thousands of small files per virtualenv (the frameworks'
dependencies). :func:`scratch` puts them on a memory file system when there is one with room
(:data:`TMPFS`, at least :data:`TMPFS_ROOM` free: a Docker container's default 64 MB /dev/shm is
passed over), else in the system's temporary folder; the folder is made by ``mkdtemp`` (mode
0700, a fresh name: another local user can neither read it nor plant a file in it) and removed
at exit. Nothing a command installs or promises depends on which file system it is on.

:func:`pip_env` is the environment: none of the test's own ``PYTHONPATH``/``VIRTUAL_ENV``, nor a
``PYTHONDONTWRITEBYTECODE`` the machine sets (the installed commands keep the bytecode of what they
import, as on a user's machine, instead of compiling it again in each check: the openai-agents and
langchain groups 54.6 CPU-s before, 48.8 after, one sitting), pip
quiet and never prompting, no wheel cache (pip keeps none for a folder or a git URL without a
commit anyway), and its temporary files (each build's isolated environment, the clones of git
forms) inside the scratch folder. A command's meaning does not change with any of these.

:func:`pip_in` is how both tests run their pip on a virtualenv made without one: the test's own pip,
run by the virtualenv's interpreter through pip's ``__pip-runner__.py``. That is the process
``pip --python VENV/bin/python`` starts after parsing its arguments, so it is the same pip doing
the same work, without the first process (0.3-0.4 CPU-s of each of the ~40 pip runs: ``pip check``
0.98 CPU-s by ``--python``, 0.52 by the runner, same sitting). :func:`distributions` reads a virtualenv's
distributions from its site-packages in the test's process, as the virtualenv's own
``importlib.metadata`` (or ``pip list``) finds them, without starting a process there.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

import pip

#: The memory file system the virtualenvs go on when it has room.
TMPFS = Path("/dev/shm")
#: The free space :data:`TMPFS` must have for a scratch folder: the largest, the google-adk or the bench
#: extra's venv with its clone and the repository, measured at most 0.26 GB; two xdist workers may each hold one.
TMPFS_ROOM = 1024**3


def _scratch_parent() -> str | None:
    try:
        usage = shutil.disk_usage(TMPFS)
    except OSError:
        return None
    return str(TMPFS) if usage.free >= TMPFS_ROOM and os.access(TMPFS, os.W_OK | os.X_OK) else None


@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A fresh private folder (on :data:`TMPFS` when it has room), removed at exit."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=_scratch_parent()))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def pip_env(scratch: Path) -> dict[str, str]:
    """The environment pip and the installed commands run in (see the module's docstring)."""
    tmp = scratch / "tmp"
    tmp.mkdir(mode=0o700, exist_ok=True)
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env |= {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", "PIP_NO_CACHE_DIR": "1"}
    return env | {"TMPDIR": str(tmp)}


def pip_in(venv: Path) -> list[str]:
    """The command that runs this test's pip on ``venv`` (see the module's docstring); add pip's arguments."""
    runner = Path(pip.__file__).parent / "__pip-runner__.py"
    assert runner.is_file(), f"{runner}: pip {pip.__version__} has no runner; the tests need pip 22.3 or newer"
    return [str(venv / "bin" / "python"), str(runner)]


def site_packages(venv: Path) -> Path:
    """Where ``venv`` (made by this interpreter) installs distributions."""
    return Path(sysconfig.get_path("purelib", "venv", vars={"base": str(venv), "platbase": str(venv)}))


def distributions(venv: Path) -> dict[str, metadata.Distribution]:
    """The distributions installed in ``venv``, by name in lower case with ``-`` for ``_``."""
    found = metadata.distributions(path=[str(site_packages(venv))])
    return {dist.metadata["Name"].lower().replace("_", "-"): dist for dist in found}
