"""Text holding NUL (U+0000) is stored as written on every backend (PostgreSQL's ``text`` holds no NUL and
its ``->>`` refuses the JSON escape of one: an append of such a message once failed there with
UNAVAILABLE), and the message stays searchable by its words before the first NUL (SQLite's full-text index
reads text up to a NUL; PostgreSQL's reads every word)."""

from __future__ import annotations

import json

import pytest

from claw_sessiond.errors import SessiondError
from claw_sessiond.model import LoadWindow, Message
from claw_sessiond.queries import SearchFilter, fts_query
from claw_sessiond.storage import Storage
from tests.storage._support import (
    WORKDIR,
    append,
    assistant,
    attach,
    export_lines,
    history,
    import_lines,
    read,
    renamed,
    result,
    usage,
    user,
)
from tests.storage.test_edits import edit
from tests.storage.test_sessions import fork

NUL_TEXTS = ("\x00", "needle a\x00b", "\\u0000 needle \x00\x00 x", "\\\x00")


async def test_messages_holding_nul_round_trip_and_stay_searchable(storage: Storage) -> None:
    for text in NUL_TEXTS:
        await append(storage, "nul", user(text))
    assert [m.content for m in await read(storage, "nul")] == list(NUL_TEXTS)
    hits, more = await storage.search(fts_query("needle", raw=False), SearchFilter(), 10)
    assert sorted(h.position for h in hits) == [2, 3] and not more
    hits, _ = await storage.search(fts_query("needle", raw=False), SearchFilter(role="user"), 10)
    assert len(hits) == 2


async def test_ids_and_names_holding_nul_are_stored_and_found(storage: Storage) -> None:
    """Every string a request carries into a column of its own (a client id, a call id, a model name) may
    hold NUL as on SQLite, and is found again by it (PostgreSQL's text holds no NUL: such columns store it
    escaped)."""
    tagged = Message("user", "x", client_id="\x00", name="n\x00", metadata='{"k": "\\u0000"}')
    await append(storage, "ids", tagged, assistant("call\x00a", "call\x00b", "\\0"))
    await append(storage, "ids", result("call\x00a"), result("call\x00b"), result("\\0"))
    loaded = await read(storage, "ids")
    assert [m.client_id for m in loaded] == ["\x00", "", "", "", ""]
    assert loaded[0].name == "n\x00" and loaded[0].metadata == '{"k": "\\u0000"}'
    assert [c.id for c in loaded[1].tool_calls] == ["call\x00a", "call\x00b", "\\0"]
    assert [m.tool_call_id for m in loaded[2:]] == ["call\x00a", "call\x00b", "\\0"]
    # the same client id again is refused (found through its column), another with a different escape is not
    with pytest.raises(SessiondError):
        await append(storage, "ids", Message("user", "again", client_id="\x00"), expected=5)
    await append(storage, "ids", Message("user", "other", client_id="\\x00"), expected=5)
    await append(storage, "ids", Message("user", "other2", client_id="\x01"), expected=6)
    run = await attach(storage, "ids", 7, "label \x00")  # a run's label has a column of its own too
    storage.runs.unregister(run.run_id)
    await usage(storage, "ids", input_tokens=3, model="m\x00", pricing_version="v\x00")
    await usage(storage, "ids", input_tokens=4, model="m\x00", pricing_version="v\x00")
    await usage(storage, "ids", input_tokens=5, model="m", pricing_version="v")


#: Call ids holding NUL, U+0001, a backslash before NUL, and the six characters of NUL's JSON escape.
ODD_IDS = ("c\x00", "c\x01", "c\\\x00", "c\\u0000", "c\x01\x01")


async def test_odd_call_ids_go_through_repair_windows_forks_edits_and_copies(storage: Storage) -> None:
    await append(storage, "odd", user("q"), assistant(*ODD_IDS), result(ODD_IDS[0]), user("u1"), user("u2"))
    loaded = await storage.load("odd", WORKDIR, "t")  # repairs the four unanswered calls, at positions 6..9
    assert sorted(r.tool_call_id for r in loaded.repairs) == sorted(ODD_IDS[1:])
    assert (await storage.load("odd", WORKDIR, "t")).repairs == []  # found answered by their ids
    full = await read(storage, "odd")
    assert [m.position for m in full] == [1, 2, 3, 6, 7, 8, 9, 4, 5]
    assert [m.tool_call_id for m in full[2:7]] == list(ODD_IDS)
    # a window holding the assistant but not its far results still brings them along (joined by id in SQL)
    got = await history(storage, await storage.load("odd", WORKDIR, "w", repair=False, window=LoadWindow(last=8)))
    assert [m.position for m in got] == [2, 3, 6, 7, 8, 9, 4, 5]
    # a late result supersedes its repair (found by id), a second one is refused
    await append(storage, "odd", result(ODD_IDS[3], "late"), expected=9)
    with pytest.raises(SessiondError):
        await append(storage, "odd", result(ODD_IDS[3], "again"), expected=10)
    # a fork copies the calls' index; the fork's Load repairs nothing
    await fork(storage, "odd", "odd-fork")
    assert (await storage.load("odd-fork", WORKDIR, "t")).repairs == []
    # export and import elsewhere: the same history, nothing to repair
    await import_lines(storage, renamed(await export_lines(storage, "odd"), "odd-copy"))
    assert await read(storage, "odd-copy") == await read(storage, "odd")
    assert (await storage.load("odd-copy", WORKDIR, "t")).repairs == []
    # removing the assistant and its results by an edit leaves no call behind
    await edit(storage, "odd", remove_last=9, expected=10)
    await append(storage, "odd", assistant(*ODD_IDS), expected=11)  # the ids are free again
    assert sorted(r.tool_call_id for r in (await storage.load("odd", WORKDIR, "t")).repairs) == sorted(ODD_IDS)


async def test_model_names_holding_nul_are_totalled_reported_and_searched(storage: Storage) -> None:
    for model in ("m\x00", "m\x00", "m", "m\x01", "m\\u0000"):
        await usage(storage, "u", input_tokens=1, model=model, pricing_version=model)
    _totals, by_model = await storage.usage_by_model("u")
    assert [(m.model, m.pricing_version, m.usage.input_tokens) for m in by_model] == [
        ("m", "m", 1),
        ("m\x00", "m\x00", 2),
        ("m\x01", "m\x01", 1),
        ("m\\u0000", "m\\u0000", 1),
    ]
    rows, more = await storage.usage_report("", "", by_session=False)
    assert [(r.model, r.pricing_version, r.input_tokens) for r in rows] == [
        (m.model, m.pricing_version, m.usage.input_tokens) for m in by_model
    ] and not more


async def test_a_model_is_one_group_however_its_payload_spells_it(storage: Storage) -> None:
    """A live usage event escapes non-ASCII (``\\u00e9``), an imported one keeps it as written, an older one may
    leave the model out: the report counts each model once (it read the payload's JSON text once: two rows)."""
    await usage(storage, "live", input_tokens=1, model="é\x00", pricing_version="v")
    await import_lines(storage, renamed(await export_lines(storage, "live"), "imported"))
    await usage(storage, "a", input_tokens=1)
    lines = []
    for line in await export_lines(storage, "a"):
        obj = json.loads(line)
        if obj.get("type") == "usage":
            del obj["payload"]["model"], obj["payload"]["pricing_version"]
        lines.append(json.dumps(obj))
    await import_lines(storage, renamed(lines, "b"))
    rows, _ = await storage.usage_report("", "", by_session=False)
    assert [(r.model, r.pricing_version, r.input_tokens) for r in rows] == [("", "", 2), ("é\x00", "v", 2)]


@pytest.mark.parametrize("call_id", ["c\x00a", "c\x01", "plain"])
async def test_a_window_finds_the_far_result_of_a_call_id_holding_nul(storage: Storage, call_id: str) -> None:
    await append(storage, "w", user("q"), assistant(call_id), user("u"), result(call_id), user("v"))
    full = await read(storage, "w")
    assert [m.position for m in full] == [1, 2, 4, 3, 5]
    got = await history(storage, await storage.load("w", WORKDIR, "w", repair=False, window=LoadWindow(last=3)))
    assert [m.position for m in got] == [4, 3, 5]  # the result leads: its call is before the window


async def test_a_search_or_a_filter_holding_nul_is_answered(storage: Storage) -> None:
    await append(storage, "s", user("needle here"))
    for raw in (True, False):
        hits, _ = await storage.search(fts_query("needle\x00", raw=raw), SearchFilter(), 10)
        assert [h.position for h in hits] == [1]
