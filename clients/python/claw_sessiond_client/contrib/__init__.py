"""Framework adapters: glue between the client and an agent framework, one subpackage each.

An adapter lives in ``claw_sessiond_client.contrib.<framework>`` and imports
the framework it adapts; that framework is installed only through the
adapter's own optional extra, installed with the daemon (the commands:
:mod:`claw_sessiond_client.install`), so the client itself keeps depending
on grpcio, protobuf and googleapis-common-protos alone. Nothing outside ``contrib`` imports from it.
An adapter only uses the public API (``from claw_sessiond_client import ...``).

- ``claw_sessiond_client.contrib.langchain``: a LangChain chat message history
  (extra ``langchain``).
- :mod:`claw_sessiond_client.contrib.adk`: ``ClawSessionService``, Google ADK's
  ``BaseSessionService`` (extra ``adk``).
- :mod:`claw_sessiond_client.contrib.langgraph`: ``ClawCheckpointSaver``, a LangGraph
  checkpointer (extra ``langgraph``).
"""

from __future__ import annotations

__all__: list[str] = []
