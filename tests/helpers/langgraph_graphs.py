"""Small real LangGraph graphs for the checkpointer's tests, a saver of the old layout, and a command that runs
a graph in a process of its own.

Imported by tests/e2e/test_contrib_langgraph.py on first use (tests/helpers/lazy.py), so that collecting the
suite imports no LangGraph.

``python -m tests.helpers.langgraph_graphs ROLE ADDRESS THREAD [ARG]`` runs the approval graph on a
:class:`~claw_sessiond_client.contrib.langgraph.ClawCheckpointSaver` of the daemon at ADDRESS and
prints one JSON line: ``start`` runs it up to its human-approval interrupt, ``resume`` resumes it
with ARG as the answer, ``race`` runs the barrier graph (two processes meet in its ``wait`` node,
the barrier folder ARG) and prints ``{"conflict": ...}`` instead of failing when the saver refuses
a checkpoint.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import operator
import os
import sys
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver, get_checkpoint_metadata
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from claw_sessiond_client import Message
from claw_sessiond_client.contrib import _langgraph_entries as entries
from claw_sessiond_client.contrib.langgraph import CheckpointConflictError, ClawCheckpointSaver
from claw_sessiond_client.errors import AlreadyExistsError

#: How long a process of the race waits in the barrier for the other one.
BARRIER_S = 15.0


class Steps(TypedDict, total=False):
    """The graphs' state: the steps taken (appended by each node) and the approval's answer."""

    steps: Annotated[list[str], operator.add]
    approved: bool


def _plan(state: Steps) -> Steps:
    return {"steps": ["plan"]}


def _approve(state: Steps) -> Steps:
    answer = interrupt({"question": "run the tool?", "after": list(state.get("steps", []))})
    return {"steps": [f"approval:{answer}"], "approved": answer == "yes"}


def _tool(state: Steps) -> Steps:
    return {"steps": ["tool" if state.get("approved") else "skipped"]}


def approval_graph(checkpointer: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """plan -> approve (a human-approval interrupt) -> tool."""
    builder = StateGraph(Steps)
    builder.add_node("plan", _plan)
    builder.add_node("approve", _approve)
    builder.add_node("tool", _tool)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "approve")
    builder.add_edge("approve", "tool")
    builder.add_edge("tool", END)
    return builder.compile(checkpointer=checkpointer)


def _count(state: Steps) -> Steps:
    return {"steps": [f"n{len(state.get('steps', []))}"]}


def counter_graph(checkpointer: BaseCheckpointSaver[Any], nodes: int = 3) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A chain of ``nodes`` nodes, each appending a step named after the number of steps before it."""
    builder = StateGraph(Steps)
    names = [f"c{i}" for i in range(nodes)]
    for name in names:
        builder.add_node(name, _count)
    builder.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    builder.add_edge(names[-1], END)
    return builder.compile(checkpointer=checkpointer)


def barrier_graph(
    checkpointer: BaseCheckpointSaver[Any], barrier: Path, me: str
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """start -> wait (until two processes are in it, at most BARRIER_S) -> done."""

    def wait(state: Steps) -> Steps:
        (barrier / me).touch()
        end = time.monotonic() + BARRIER_S
        while len(list(barrier.iterdir())) < 2 and time.monotonic() < end:
            time.sleep(0.02)
        return {"steps": [f"wait:{me}"]}

    builder = StateGraph(Steps)
    builder.add_node("start", lambda state: {"steps": [f"start:{me}"]})
    builder.add_node("wait", wait)
    builder.add_node("done", lambda state: {"steps": [f"done:{me}"]})
    builder.add_edge(START, "start")
    builder.add_edge("start", "wait")
    builder.add_edge("wait", "done")
    builder.add_edge("done", END)
    return builder.compile(checkpointer=checkpointer)


class WholeCheckpointSaver(ClawCheckpointSaver):
    """Puts checkpoints as the saver did before channel values had a session of their own: each whole (its
    channel values in it), in an item of header version 1; writes are stored as they still are."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        thread, ns = config["configurable"]["thread_id"], config["configurable"].get("checkpoint_ns", "")
        parent = config["configurable"].get("checkpoint_id")
        c, m = self.serde.dumps_typed(checkpoint), self.serde.dumps_typed(get_checkpoint_metadata(config, metadata))
        header = {"v": 1, "parent": parent, "c": c[0], "m": m[0], "n": len(c[1])}
        item = json.dumps(header, separators=(",", ":")).encode() + b"\n" + c[1] + m[1]
        sid = entries.session_ids(self.prefix, thread, ns)[0]
        with contextlib.suppress(AlreadyExistsError):
            labels = entries.labels(self.prefix, thread, ns, entries.KIND_CHECKPOINTS)
            self.client.create_session(sid, labels=labels)
        entry = Message("other", format=entries.FORMAT_CHECKPOINT, item=item, client_id=checkpoint["id"])
        self.client.append(sid, [entry])
        return {"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}


def main(argv: list[str]) -> int:
    role, address, thread = argv[:3]
    config: Any = {"configurable": {"thread_id": thread}}
    with ClawCheckpointSaver(address=address, autostart=False) as saver:
        if role == "start":
            out = approval_graph(saver).invoke({"steps": []}, config)
            print(json.dumps({"interrupts": [i.value for i in out.get("__interrupt__", [])], "steps": out["steps"]}))
        elif role == "resume":
            out = approval_graph(saver).invoke(Command(resume=argv[3]), config)
            print(json.dumps({"steps": out["steps"], "approved": out.get("approved")}))
        elif role == "race":
            me = f"p{os.getpid()}"
            try:
                out = barrier_graph(saver, Path(argv[3]), me).invoke({"steps": []}, config)
            except CheckpointConflictError as err:
                print(json.dumps({"me": me, "conflict": str(err)}))
            else:
                print(json.dumps({"me": me, "steps": out["steps"]}))
        else:
            print(f"unknown role {role!r}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
