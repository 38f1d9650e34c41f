"""The ADK side of tests/e2e/test_contrib_adk.py: ADK's names it uses, the adapter's, and what it builds.

The test module reads all of them through a :class:`~tests.helpers.lazy.LazyModule`, so that collecting the
suite imports neither google-adk nor google-genai (~1.9 CPU-s a process); only the process that runs one of its
tests imports this module. Here: events (:func:`event`, :func:`state_event`, :func:`complete_event`) and a
real ADK ``Runner`` on a scripted model (:func:`runner`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService, Session
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types
from pydantic import Field

from claw_sessiond_client.contrib._adk_mapping import app_scope, label_value, name_of, session_key, user_scope
from claw_sessiond_client.contrib.adk import ClawSessionService

__all__ = [
    "AlreadyExistsError",
    "ClawSessionService",
    "Event",
    "EventActions",
    "GetSessionConfig",
    "InMemorySessionService",
    "ScriptedModel",
    "Session",
    "SessionNotFoundError",
    "StaleSessionError",
    "ToolConfirmation",
    "app_scope",
    "complete_event",
    "event",
    "label_value",
    "name_of",
    "runner",
    "session_key",
    "state_event",
    "types",
    "user_scope",
    "weather",
]


def event(text: str | None = None, *, role: str = "user", ts: float | None = None, **kw: Any) -> Event:
    """An event with a text part (or no content), stamped ``ts`` (default: now)."""
    content = types.Content(role=role, parts=[types.Part(text=text)]) if text is not None else None
    author = "user" if role == "user" else "agent"
    return Event(invocation_id="inv-1", author=author, content=content, timestamp=ts or time.time(), **kw)


def state_event(delta: dict[str, Any], ts: float | None = None) -> Event:
    return event(None, actions=EventActions(state_delta=delta), ts=ts)


def complete_event() -> Event:
    """An event with (almost) every field ADK has set, bytes included."""
    return Event(
        invocation_id="inv-9",
        author="planner",
        branch="root.planner",
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="let me think", thought=True, thought_signature=b"\x00\xffsig"),
                types.Part(text="Checking the weather."),
                types.Part(
                    function_call=types.FunctionCall(id="call-1", name="weather", args={"city": "Paris", "n": 2**60})
                ),
                types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG\r\n\x1a\n")),
            ],
        ),
        actions=EventActions(
            state_delta={"mood": "sunny", "app:units": "metric", "user:home": {"city": "Paris"}},
            artifact_delta={"map.png": 3},
            transfer_to_agent="reporter",
            escalate=True,
            skip_summarization=True,
            requested_tool_confirmations={
                "call-1": ToolConfirmation(hint="allow?", confirmed=False, payload={"k": [1]})
            },
            compaction=EventCompaction(
                start_timestamp=1.5,
                end_timestamp=2.5,
                compacted_content=types.Content(role="model", parts=[types.Part(text="summary")]),
            ),
            end_of_agent=True,
            agent_state={"step": 3},
            rewind_before_invocation_id="inv-0",
        ),
        long_running_tool_ids={"call-1"},
        grounding_metadata=types.GroundingMetadata(web_search_queries=["paris weather"]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=12, candidates_token_count=5, cached_content_token_count=2, thoughts_token_count=1
        ),
        citation_metadata=types.CitationMetadata(citations=[types.Citation(uri="https://example.com", start_index=1)]),
        custom_metadata={"trace": [1, None, True, 1.25]},
        model_version="gemini-test",
        finish_reason=types.FinishReason.STOP,
        turn_complete=True,
        interrupted=False,
        avg_logprobs=-0.25,
        output={"answer": 42},
        input_transcription=types.Transcription(text="hello", finished=True),
        timestamp=1_765_000_000.123456,
    )


class ScriptedModel(BaseLlm):
    """A model that answers from a script: first a tool call, then text (no network)."""

    model: str = "scripted"
    replies: list[types.Content] = Field(default_factory=list)

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncIterator[LlmResponse]:
        yield LlmResponse(content=self.replies.pop(0))


def weather(city: str) -> dict[str, Any]:
    """The weather of a city."""
    return {"city": city, "sky": "clear"}


def runner(service: BaseSessionService, app: str) -> Runner:
    """A runner of a forecaster agent on :class:`ScriptedModel` (two runs' replies) storing in ``service``."""
    replies = [
        types.Content(
            role="model", parts=[types.Part(function_call=types.FunctionCall(name="weather", args={"city": "Oslo"}))]
        ),
        types.Content(role="model", parts=[types.Part(text="Clear in Oslo.")]),
    ] * 2
    agent = LlmAgent(name="forecaster", model=ScriptedModel(replies=replies), tools=[weather], output_key="forecast")
    return Runner(agent=agent, app_name=app, session_service=service)
