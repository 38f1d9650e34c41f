"""The LangGraph checkpointer (``claw_sessiond_client.contrib.langgraph``) on a real daemon, with real graphs.

LangGraph's own conformance suite for checkpointers (``langgraph-checkpoint-conformance``, every
base and extended capability) runs against it; real graphs (``tests/helpers/langgraph_graphs.py``)
run on it side by side with LangGraph's ``InMemorySaver`` and must end in the same states; an
interrupt is resumed from another process and after a daemon restart; two processes running one
thread get a clear conflict.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from claw_sessiond_client import SessionClient
from claw_sessiond_client.contrib import _langgraph_entries as entries
from claw_sessiond_client.errors import InvalidRequestError
from tests.helpers.cli import on_daemon
from tests.helpers.daemon import ROOT, DaemonProcess
from tests.helpers.lazy import LazyModule

if TYPE_CHECKING:
    from claw_sessiond_client.contrib.langgraph import ClawCheckpointSaver

# LangGraph, the checkpointer and the graphs, imported by the first test that uses them (collection loads no
# framework: tests/helpers/lazy.py).
adapter = LazyModule("claw_sessiond_client.contrib.langgraph")
graphs = LazyModule("tests.helpers.langgraph_graphs")
checkpoints = LazyModule("langgraph.checkpoint.base")
savers = LazyModule("langgraph.checkpoint.memory")
commands = LazyModule("langgraph.types")


@pytest.fixture
def saver(module_daemon: DaemonProcess) -> Iterator[ClawCheckpointSaver]:
    with adapter.ClawCheckpointSaver(
        address=module_daemon.address, autostart=False, prefix=f"t{uuid.uuid4().hex[:8]}"
    ) as s:
        yield s


def _thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"thread-{uuid.uuid4().hex[:8]}"}}


def _run(*args: str, timeout_s: float = 120) -> dict[str, Any]:
    """One role of tests/helpers/langgraph_graphs.py in a process of its own; its JSON line."""
    proc = subprocess.run(
        [sys.executable, "-m", "tests.helpers.langgraph_graphs", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, f"{args[0]} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.smoke
@pytest.mark.both_backends(
    "the checkpointer's point reads, prefix reads and DeleteEntries run on each backend's own SQL"
)
def test_langgraphs_conformance_suite_passes_every_base_and_extended_check(module_daemon: DaemonProcess) -> None:
    from langgraph.checkpoint.conformance import checkpointer_test, validate
    from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

    made: list[ClawCheckpointSaver] = []

    @checkpointer_test(name="ClawCheckpointSaver")
    async def claw() -> Any:
        s = adapter.ClawCheckpointSaver(
            address=module_daemon.address, autostart=False, prefix=f"c{uuid.uuid4().hex[:8]}"
        )
        made.append(s)
        yield s
        s.close()

    report = asyncio.run(validate(claw))
    results = {name: (r.passed, r.tests_passed, r.tests_failed, r.failures) for name, r in report.results.items()}
    assert set(results) == {c.value for c in ALL_CAPABILITIES}
    failed = {name: r for name, r in results.items() if r[0] is not True}
    assert not failed, f"capabilities not passed (None: not detected): {failed}"
    assert sum(r[1] for r in results.values()) == 81, results  # every check of 0.0.2 ran
    assert len(made) == len(ALL_CAPABILITIES)


def _same_steps(graph_a: Any, graph_b: Any, config_a: Any, config_b: Any, inputs: list[Any]) -> list[Any]:
    """Feed both graphs the same inputs; after every step (each stored before the next one runs) both
    states are equal. The states seen."""
    seen = []
    for given in inputs:
        for a, b in zip(
            graph_a.stream(given, config_a, stream_mode="values", durability="sync"),
            graph_b.stream(given, config_b, stream_mode="values", durability="sync"),
            strict=True,
        ):
            assert _plain(a) == _plain(b)
            assert graph_a.get_state(config_a).values == graph_b.get_state(config_b).values
            seen.append(a)
    return seen


def _plain(state: dict[str, Any]) -> dict[str, Any]:
    """A streamed state with each interrupt as its value (an interrupt's id derives from random checkpoint ids)."""
    return {k: [i.value for i in v] if k == "__interrupt__" else v for k, v in state.items()}


def _history(graph: Any, config: Any) -> list[tuple[Any, Any, Any]]:
    return [(s.values, s.next, s.metadata.get("step")) for s in graph.get_state_history(config)]


def test_a_graphs_state_equals_in_memory_savers_after_every_step(saver: ClawCheckpointSaver) -> None:
    memory = savers.InMemorySaver()
    claw_config, memory_config = _thread(), _thread()
    graph, reference = graphs.counter_graph(saver), graphs.counter_graph(memory)
    seen = _same_steps(graph, reference, claw_config, memory_config, [{"steps": ["x"]}, {"steps": ["y"]}])
    assert seen[-1]["steps"] == ["x", "n1", "n2", "n3", "y", "n5", "n6", "n7"]
    assert _history(graph, claw_config) == _history(reference, memory_config)
    approval, approval_ref = graphs.approval_graph(saver), graphs.approval_graph(memory)
    claw_config, memory_config = _thread(), _thread()
    _same_steps(approval, approval_ref, claw_config, memory_config, [{"steps": []}, commands.Command(resume="yes")])
    assert _history(approval, claw_config) == _history(approval_ref, memory_config)
    assert approval.get_state(claw_config).values["steps"] == ["plan", "approval:yes", "tool"]


def test_the_async_methods_run_a_graph_as_the_sync_ones(saver: ClawCheckpointSaver) -> None:
    async def run() -> tuple[Any, Any]:
        config = _thread()
        graph = graphs.approval_graph(saver)
        first = await graph.ainvoke({"steps": []}, config)
        second = await graph.ainvoke(commands.Command(resume="no"), config)
        states = [s.values async for s in graph.aget_state_history(config)]
        return (first, second), states

    (first, second), states = asyncio.run(run())
    assert [i.value["question"] for i in first["__interrupt__"]] == ["run the tool?"]
    assert second["steps"] == ["plan", "approval:no", "skipped"]
    assert states[0]["steps"] == second["steps"] and len(states) >= 4


@pytest.mark.smoke
def test_an_interrupt_is_resumed_from_another_process(module_daemon: DaemonProcess) -> None:
    thread = f"approve-{uuid.uuid4().hex[:8]}"
    started = _run("start", module_daemon.address, thread)
    assert started["interrupts"] == [{"question": "run the tool?", "after": ["plan"]}]
    assert started["steps"] == ["plan"]
    resumed = _run("resume", module_daemon.address, thread, "yes")
    assert resumed == {"steps": ["plan", "approval:yes", "tool"], "approved": True}


def test_an_interrupt_survives_a_daemon_restart(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    daemon = DaemonProcess(ws).start()
    thread = "approve/after restart"  # any string is a thread id
    try:
        assert _run("start", daemon.address, thread)["steps"] == ["plan"]
        assert daemon.terminate() == 0
        daemon.start()
        assert _run("resume", daemon.address, thread, "no") == {
            "steps": ["plan", "approval:no", "skipped"],
            "approved": False,
        }
    finally:
        daemon.stop()


def test_a_thread_of_whole_checkpoints_is_read_and_resumed_as_in_memory_saver(
    saver: ClawCheckpointSaver, module_daemon: DaemonProcess
) -> None:
    memory, config, memory_config = savers.InMemorySaver(), _thread(), _thread()
    with graphs.WholeCheckpointSaver(address=module_daemon.address, autostart=False, prefix=saver.prefix) as old:
        graphs.approval_graph(old).invoke({"steps": []}, config)  # stopped at the approval, stored whole
    graphs.approval_graph(memory).invoke({"steps": []}, memory_config)
    blobs = saver.client.list_sessions_page(labels={entries.LABEL_SAVER: saver.prefix, entries.LABEL_KIND: "blobs"})
    assert blobs.sessions == []  # the thread holds whole checkpoints alone
    graph, reference = graphs.approval_graph(saver), graphs.approval_graph(memory)
    assert _history(graph, config) == _history(reference, memory_config)
    assert graph.get_state(config).values == {"steps": ["plan"]}
    _same_steps(graph, reference, config, memory_config, [commands.Command(resume="yes"), {"steps": ["again"]}])
    assert _history(graph, config) == _history(reference, memory_config)
    assert graph.get_state(config).values["steps"][:3] == ["plan", "approval:yes", "tool"]
    # A child put after a whole checkpoint names the channel it did not change by its version alone.
    config = {"configurable": {"thread_id": f"whole-{uuid.uuid4().hex[:8]}", "checkpoint_ns": ""}}
    parent = {
        **checkpoints.empty_checkpoint(),
        "channel_values": {"a": 1, "b": 2},
        "channel_versions": {"a": "1", "b": "1"},
    }
    with graphs.WholeCheckpointSaver(address=module_daemon.address, autostart=False, prefix=saver.prefix) as old:
        old.put(config, parent, {"step": 0}, {"a": "1", "b": "1"})
    bid = entries.session_ids(saver.prefix, config["configurable"]["thread_id"], "")[2]
    with adapter.ClawCheckpointSaver(address=module_daemon.address, autostart=False, prefix=saver.prefix) as fresh:
        read = fresh.get_tuple(config)
        assert read is not None and read.checkpoint["channel_values"] == {"a": 1, "b": 2}
        assert len(list(fresh.list(config))) == 1
        assert saver.client.load(bid, no_repair=True).messages == []  # a read writes nothing
        # A child put stores the parent's values the child names by their versions with its own.
        child = {
            **checkpoints.empty_checkpoint(),
            "channel_values": {"a": 1, "b": 3},
            "channel_versions": {"a": "1", "b": "2"},
        }
        stored = fresh.put(read.config, child, {"step": 1, "run_id": "kids"}, {"b": "2"})
    assert sorted(e.client_id for e in saver.client.load(bid, no_repair=True).messages) == ["a/1", "b/1", "b/2"]
    assert [t.checkpoint["channel_values"] for t in saver.list(config)] == [{"a": 1, "b": 3}, {"a": 1, "b": 2}]
    assert (got := saver.get_tuple(stored)) is not None and got.checkpoint["channel_values"] == {"a": 1, "b": 3}
    # A fork off the old parent (by a saver that never read it) finds the values all the same.
    fork = {
        **checkpoints.empty_checkpoint(),
        "channel_values": {"a": 5, "b": 2},
        "channel_versions": {"a": "5", "b": "1"},
    }
    forked = saver.put(read.config, fork, {"step": 1, "run_id": "kids"}, {"a": "5"})
    assert (got := saver.get_tuple(forked)) is not None and got.checkpoint["channel_values"] == {"a": 5, "b": 2}
    # Deleting the children keeps the values the old parent names: the saver (which knows they are stored) puts
    # one more child off it, and that child reads back whole.
    saver.delete_for_runs(["kids"])
    assert sorted(e.client_id for e in saver.client.load(bid, no_repair=True).messages) == ["a/1", "b/1"]
    saver.prune([config["configurable"]["thread_id"]])
    assert sorted(e.client_id for e in saver.client.load(bid, no_repair=True).messages) == ["a/1", "b/1"]
    again = {
        **checkpoints.empty_checkpoint(),
        "channel_values": {"a": 1, "b": 7},
        "channel_versions": {"a": "1", "b": "7"},
    }
    last = saver.put(read.config, again, {"step": 1}, {"b": "7"})
    assert (got := saver.get_tuple(last)) is not None and got.checkpoint["channel_values"] == {"a": 1, "b": 7}


def test_delete_for_runs_and_prune_remove_the_channel_values_no_checkpoint_left_names(
    saver: ClawCheckpointSaver,
) -> None:
    thread = f"values-{uuid.uuid4().hex[:8]}"
    bid = entries.session_ids(saver.prefix, thread, "")[2]
    config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}

    def put(parent: Any, values: dict[str, int], versions: dict[str, str], changed: list[str], run: str) -> Any:
        checkpoint = {**checkpoints.empty_checkpoint(), "channel_values": values, "channel_versions": versions}
        return saver.put(parent, checkpoint, {"run_id": run}, {ch: versions[ch] for ch in changed})

    def stored() -> list[str]:
        return sorted(e.client_id for e in saver.client.load(bid, no_repair=True).messages)

    c1 = put(config, {"a": 1, "b": 1}, {"a": "1", "b": "1"}, ["a", "b"], "r1")
    c2 = put(c1, {"a": 1, "b": 2}, {"a": "1", "b": "2"}, ["b"], "r2")
    put(c2, {"a": 3, "b": 2}, {"a": "3", "b": "2"}, ["a"], "r1")
    assert stored() == ["a/1", "a/3", "b/1", "b/2"]
    saver.delete_for_runs(["r1"])
    assert stored() == ["a/1", "b/2"]  # what c2, the one checkpoint left, names
    assert [t.checkpoint["channel_values"] for t in saver.list(config)] == [{"a": 1, "b": 2}]
    put(c2, {"a": 1, "b": 4}, {"a": "1", "b": "4"}, ["b"], "r3")
    saver.prune([thread])
    assert stored() == ["a/1", "b/4"]
    assert [t.checkpoint["channel_values"] for t in saver.list(config)] == [{"a": 1, "b": 4}]
    saver.delete_thread(thread)
    assert saver.client.list_sessions_page(labels={entries.LABEL_THREAD: thread}).sessions == []


class SessionCountingClient(SessionClient):
    """A real client that counts the entries each Load returns, by session."""

    loaded: dict[str, int]

    def load(self, session_id: str, *args: Any, **kwargs: Any) -> Any:
        result = super().load(session_id, *args, **kwargs)
        self.loaded[session_id] = self.loaded.get(session_id, 0) + len(result.messages)
        return result


def test_delete_for_runs_and_prune_read_the_checkpoints_once(module_daemon: DaemonProcess) -> None:
    with SessionCountingClient(address=module_daemon.address, autostart=False) as client:
        saver = adapter.ClawCheckpointSaver(client, prefix=f"o{uuid.uuid4().hex[:8]}")
        thread = f"once-{uuid.uuid4().hex[:8]}"
        sid = entries.session_ids(saver.prefix, thread, "")[0]
        config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        for i in range(30):
            checkpoint = {
                **checkpoints.empty_checkpoint(),
                "channel_values": {"a": i},
                "channel_versions": {"a": str(i)},
            }
            config = saver.put(config, checkpoint, {"run_id": "odd" if i % 2 else "even"}, {"a": str(i)})
        client.loaded = {}
        saver.delete_for_runs(["odd"])
        assert client.loaded[sid] <= 30  # one pass over the 30 checkpoints (not one more to find the values used)
        whole: Any = {"configurable": {"thread_id": thread}}
        assert len(list(saver.list(whole))) == 15
        client.loaded = {}
        saver.prune([thread])
        assert client.loaded[sid] <= 15  # the newest, then the 14 before it to delete: no third read
        assert [t.checkpoint["channel_values"] for t in saver.list(whole)] == [{"a": 28}]


def test_a_daemon_with_a_low_batch_bound_serves_reads_of_more_values_than_it(tmp_path: Path) -> None:
    """A ``list`` page asks for the values of all its checkpoints in one Load: past ``--max-batch-messages`` the
    saver asks again in parts of the bound the refusal names."""
    ws = tmp_path / "ws"
    ws.mkdir()
    daemon = DaemonProcess(ws, "--max-batch-messages", "5").start()
    try:
        with adapter.ClawCheckpointSaver(address=daemon.address, autostart=False) as saver:
            config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
            for i in range(4):
                versions = {ch: str(i) for ch in "abcd"}
                checkpoint = {
                    **checkpoints.empty_checkpoint(),
                    "channel_values": dict.fromkeys("abcd", i),
                    "channel_versions": versions,
                }
                config = saver.put(config, checkpoint, {"step": i}, versions)
            history = list(saver.list({"configurable": {"thread_id": "t"}}, limit=3))  # 12 values in one read
            assert [t.checkpoint["channel_values"] for t in history] == [dict.fromkeys("abcd", i) for i in (3, 2, 1)]
    finally:
        daemon.stop()


def test_time_travel_resumes_and_forks_from_an_older_checkpoint_as_in_memory_saver(
    saver: ClawCheckpointSaver,
) -> None:
    memory = savers.InMemorySaver()
    runs = []
    for checkpointer in (saver, memory):
        graph = graphs.counter_graph(checkpointer)
        config = _thread()
        graph.invoke({"steps": ["a"]}, config)
        history = list(graph.get_state_history(config))
        older = next(s for s in history if s.next == ("c1",))  # after c0, before c1
        replayed = graph.invoke(None, older.config)  # resume from the older checkpoint
        forked_config = graph.update_state(older.config, {"steps": ["edited"]})
        forked = graph.invoke(None, forked_config)
        runs.append((replayed, forked, [(s.values, s.next) for s in graph.get_state_history(config)]))
    assert runs[0] == runs[1]
    replayed, forked, history = runs[0]
    assert replayed["steps"] == ["a", "n1", "n2", "n3"]
    assert forked["steps"] == ["a", "n1", "edited", "n3", "n4"]
    assert [values["steps"] for values, _ in history[:2]] == [
        ["a", "n1", "edited", "n3", "n4"],
        ["a", "n1", "edited", "n3"],
    ]


def test_two_processes_running_one_thread_get_a_clear_conflict(module_daemon: DaemonProcess, tmp_path: Path) -> None:
    thread = f"race-{uuid.uuid4().hex[:8]}"
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    command = [sys.executable, "-m", "tests.helpers.langgraph_graphs", "race", module_daemon.address, thread]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [*command, str(barrier)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env
        )
        for _ in range(2)
    ]
    outs = []
    try:
        for proc in procs:
            stdout, stderr = proc.communicate(timeout=120)
            assert proc.returncode == 0, stderr
            outs.append(json.loads(stdout.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
    conflicts = [o for o in outs if "conflict" in o]
    winners = [o for o in outs if "steps" in o]
    assert len(conflicts) == 1 and len(winners) == 1, outs
    assert "moved on" in conflicts[0]["conflict"]
    me = winners[0]["me"]
    assert winners[0]["steps"][-2:] == [f"wait:{me}", f"done:{me}"], winners
    # nothing the winner was told is stored is missing: its final state is the thread's newest checkpoint
    with adapter.ClawCheckpointSaver(address=module_daemon.address, autostart=False) as reader:
        newest = reader.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
        assert newest is not None
        assert newest.checkpoint["channel_values"]["steps"] == winners[0]["steps"]


def test_any_string_is_a_thread_id_and_a_too_long_one_is_refused_before_anything_is_written(
    saver: ClawCheckpointSaver, module_daemon: DaemonProcess
) -> None:
    graph = graphs.counter_graph(saver, nodes=1)
    for thread in ("user/123", "..", "", " padded ", "tab\there", "é" * 128, "a" * 256):
        config = {"configurable": {"thread_id": thread}}
        assert graph.invoke({"steps": ["s"]}, config)["steps"] == ["s", "n1"]
        assert graph.get_state(config).values["steps"] == ["s", "n1"]
    listed = {t.config["configurable"]["thread_id"] for t in saver.list(None)}
    assert {"user/123", "..", "", " padded ", "tab\there", "é" * 128, "a" * 256} <= listed
    with SessionClient(address=module_daemon.address, autostart=False) as client:
        before = client.list_sessions_page(labels={entries.LABEL_SAVER: saver.prefix}).total
        with pytest.raises(ValueError, match="at most 256 bytes"):
            graph.invoke({"steps": ["s"]}, {"configurable": {"thread_id": "a" * 257}})
        assert client.list_sessions_page(labels={entries.LABEL_SAVER: saver.prefix}).total == before
    with pytest.raises(ValueError, match="prefix"):
        adapter.ClawCheckpointSaver(address=module_daemon.address, autostart=False, prefix="a/b")


class CountingClient(SessionClient):
    """A real client that counts the entries each Load returns (to see what a read touches)."""

    loaded: list[int]

    def load(self, *args: Any, **kwargs: Any) -> Any:
        result = super().load(*args, **kwargs)
        self.loaded.append(len(result.messages))
        return result


def test_point_reads_touch_what_they_return_not_the_threads_history(module_daemon: DaemonProcess) -> None:
    with CountingClient(address=module_daemon.address, autostart=False) as client:
        client.loaded = []
        saver = adapter.ClawCheckpointSaver(client, prefix=f"p{uuid.uuid4().hex[:8]}")
        graph = graphs.counter_graph(saver, nodes=10)
        config = _thread()
        for _ in range(8):  # 8 runs of 12 checkpoints, each with its writes
            graph.invoke({"steps": ["x"]}, config)
        history = list(saver.list(config))
        assert len(history) == 8 * 12
        oldest, middle = history[-1].config, history[len(history) // 2].config

        def touched(read: Any) -> int:
            client.loaded = []
            read()
            return sum(client.loaded)

        # A checkpoint read touches its entry, its channel values (one per channel it names) and its writes.
        each = 1 + max(len(t.checkpoint["channel_versions"]) for t in history) + 2
        assert touched(lambda: saver.get_tuple(config)) <= each
        assert touched(lambda: saver.get_tuple(oldest)) <= each
        assert touched(lambda: list(saver.list(config, limit=3))) <= 3 * each
        assert touched(lambda: list(saver.list(config, before=middle, limit=3))) <= 1 + 3 * each
        # A filtered list reads pages from its limit's size up: the second newest is found on the second page.
        second = {"step": history[1].metadata["step"]}
        assert touched(lambda: list(saver.list(config, filter=second, limit=1))) <= 1 + 2 + each


def test_a_thread_deleted_by_another_saver_is_a_conflict_then_starts_again_labelled(
    saver: ClawCheckpointSaver, module_daemon: DaemonProcess
) -> None:
    graph = graphs.counter_graph(saver, nodes=1)
    config = _thread()
    graph.invoke({"steps": ["a"]}, config)
    newest = saver.get_tuple(config)
    assert newest is not None
    with adapter.ClawCheckpointSaver(address=module_daemon.address, autostart=False, prefix=saver.prefix) as other:
        other.delete_thread(config["configurable"]["thread_id"])
        assert other.get_tuple(config) is None
        with pytest.raises(adapter.CheckpointConflictError, match="moved on past checkpoint"):
            saver.put(newest.config, {**newest.checkpoint, "id": str(uuid.uuid4())}, {}, {"steps": "x"})
        assert saver.get_tuple(config) is None  # nothing was stored
        assert graph.invoke({"steps": ["b"]}, config)["steps"] == ["b", "n1"]
        assert [t.config["configurable"]["thread_id"] for t in other.list(None, limit=1)] == [
            config["configurable"]["thread_id"]
        ]  # the session is labelled again: found by a list of every thread
        other.delete_thread(config["configurable"]["thread_id"])
        assert saver.get_tuple(config) is None
        for sid in entries.session_ids(saver.prefix, config["configurable"]["thread_id"], ""):
            assert saver.client.load(sid, no_repair=True).messages == []  # every session of it went, labelled


def test_a_checkpoint_or_writes_past_the_daemons_bounds_are_refused_whole(saver: ClawCheckpointSaver) -> None:
    config = {"configurable": {"thread_id": f"big-{uuid.uuid4().hex[:8]}", "checkpoint_ns": ""}}
    checkpoint = checkpoints.empty_checkpoint()
    checkpoint["channel_values"] = {"x": "a" * (17 << 20)}  # over --max-entry-bytes (16 MiB)
    checkpoint["channel_versions"] = {"x": saver.get_next_version(None, None)}
    with pytest.raises(InvalidRequestError, match="max-entry-bytes"):
        saver.put(config, checkpoint, {}, checkpoint["channel_versions"])
    assert saver.get_tuple(config) is None
    stored = saver.put(config, checkpoints.empty_checkpoint(), {}, {})
    with pytest.raises(InvalidRequestError, match="at most 10000"):
        saver.put_writes(stored, [("a", i) for i in range(10_001)], "task")
    newest = saver.get_tuple(config)
    assert newest is not None and newest.pending_writes == []


def test_a_thread_is_watched_live_and_found_by_the_cli(
    saver: ClawCheckpointSaver, module_daemon: DaemonProcess
) -> None:
    thread = f"watched-{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": thread}}
    sid = entries.session_ids(saver.prefix, thread, "")[0]
    graph = graphs.counter_graph(saver)
    graph.invoke({"steps": []}, config)  # 5 checkpoints before the watch starts
    seen: list[str] = []
    watcher = SessionClient(address=module_daemon.address, autostart=False)

    def watch() -> None:
        with contextlib.suppress(Exception):  # ends when the client is closed below
            for event in watcher.watch(sid):
                if event.message is not None and event.message.format == entries.FORMAT_CHECKPOINT:
                    seen.append(event.message.client_id)
                if len(seen) >= 10:
                    return

    reader = threading.Thread(target=watch, daemon=True)
    reader.start()
    try:
        graph.invoke({"steps": []}, config)  # 5 more, live
        reader.join(60)
    finally:
        watcher.close()
        reader.join(10)
    assert seen == [t.config["configurable"]["checkpoint_id"] for t in reversed(list(saver.list(config)))]
    listed = on_daemon(module_daemon, "ls", "--label", f"langgraph.thread={thread}", "-q")
    assert listed.returncode == 0, listed.stderr
    assert sid in listed.stdout.split()
    shown = on_daemon(module_daemon, "show", sid)
    assert shown.returncode == 0, shown.stderr
