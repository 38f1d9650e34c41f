"""What the tests share, in one place (imported as ``tests.helpers.<module>``).

- ``daemon``: real daemon subprocesses (:class:`~tests.helpers.daemon.DaemonProcess`), the health
  check, a bare Watch, ``FULL``/``scale`` for the long robustness runs, fresh client processes, free ports;
- ``process``: waiting for processes and conditions, daemons found or stopped by pid;
- ``cli``: the real CLI in a fresh process, in a pipe or on a pseudo-terminal;
- ``data``: realistic sessions written through a client, export lines of old sessions, the
  legacy session files, deeply nested JSON;
- ``inspect``: what a daemon stored, read without going through the daemon, in backend-neutral terms;
- ``sqlite_file``: the SQLite files themselves (paths, digests, read-only connections, old
  databases); for the tests under ``tests/storage/sqlite/`` and for ``inspect`` only;
- ``metrics``: ``--metrics`` daemons under a service's descriptor limits, and their scrapes;
- ``figures``: the robustness figures printed at the end of the run;
- ``crash_writer``: the writer process of the crash test (``python -m tests.helpers.crash_writer``).
"""
