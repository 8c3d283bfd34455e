"""Jobs: the async variants of ingest and import, followed with get_job, list_jobs and wait_for_job."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from agent_memory import AgentMemoryError, AsyncClient, Client, ConversationMessage

from .conftest import Server, Tenant, make_tenant, unique

MESSAGES = [
    ConversationMessage(role="user", content="I live in Porto and I work as a baker.", id="m1"),
    ConversationMessage(role="user", content="My brother is called Rui.", id="m2"),
]


def without_ids(body: object) -> object:
    """Two tenants' results differ in ids and times only."""
    text = json.dumps(body, sort_keys=True)
    for key in ("id", "anchor_id", "session_id", "created_at", "updated_at", "last_reinforced_at", "occurred_at"):
        text = re.sub(rf'"{key}": "[^"]*"', f'"{key}": "-"', text)
    return json.loads(text)


def test_an_async_ingest_succeeds_with_the_synchronous_answer(server: Server, admin: Client) -> None:
    agent = unique("agent")
    queued = admin.ingest_conversation_async(agent, MESSAGES, conversation_id="c1")
    assert queued["kind"] == "ingest" and queued["state"] in ("queued", "running")
    assert queued["agent_ids"] == [agent]
    done = admin.wait_for_job(queued["id"], timeout=60)
    assert done["state"] == "succeeded" and done["error"] is None
    assert admin.get_job(queued["id"]) == done
    assert [j["id"] for j in admin.list_jobs(kind="ingest")["jobs"]] == [queued["id"]]

    other = make_tenant(server)
    with Client(server.url, other.admin_key) as elsewhere:
        sync = elsewhere.ingest_conversation(agent, MESSAGES, conversation_id="c1")
        assert without_ids(done["result"]) == without_ids(sync)
        with pytest.raises(AgentMemoryError) as hidden:
            elsewhere.get_job(queued["id"])
        assert (hidden.value.status, hidden.value.code) == (404, "not_found")


def test_an_async_import_and_a_failed_job(admin: Client) -> None:
    header = {"type": "header", "format": "agent-memory-export", "version": 1, "embedder": "any"}
    queued = admin.import_records_async([header], format="agent-memory")
    done = admin.wait_for_job(queued["id"], timeout=60)
    assert done["state"] == "succeeded"
    assert done["result"] == {
        "lines": 1,
        "imported": {"anchors": 0, "sessions": 0, "memories": 0, "canon": 0, "audit": 0},
        "existing": 0,
    }
    bad = admin.import_records_async(json.dumps(header) + '\n{"type": "memory"}\n')
    failed = admin.wait_for_job(bad["id"], timeout=60)
    assert failed["state"] == "failed" and failed["result"] is None
    assert failed["error"] is not None and failed["error"]["code"] == "invalid_request"
    assert [j["id"] for j in admin.list_jobs(state="failed")["jobs"]] == [bad["id"]]


def test_an_async_batch_succeeds_with_the_per_item_results(admin: Client) -> None:
    agent = unique("agent")
    items = [
        {"agent_id": agent, "content": "Prefers tea over coffee"},
        {"agent_id": agent, "content": " "},
    ]
    queued = admin.store_memories_async(items)
    assert queued["kind"] == "batch" and queued["agent_ids"] == [agent]
    done = admin.wait_for_job(queued["id"], timeout=60)
    assert done["state"] == "succeeded"
    results = done["result"]["results"]
    assert results[0]["outcome"] == "created" and results[1]["problem"]["code"] == "invalid_request"


def test_jobs_awaited(server: Server, tenant: Tenant) -> None:
    async def main() -> None:
        async with AsyncClient(server.url, tenant.admin_key) as memory:
            queued = await memory.ingest_conversation_async(unique("agent"), MESSAGES)
            done = await memory.wait_for_job(queued["id"], timeout=60, interval=0.1)
            assert done["state"] == "succeeded"
            assert (await memory.get_job(queued["id"]))["state"] == "succeeded"
            assert (await memory.list_jobs())["jobs"][0]["id"] == queued["id"]

    asyncio.run(main())
