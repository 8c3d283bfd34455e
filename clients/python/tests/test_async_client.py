"""The asynchronous client against a real server: the same operations, awaited."""

from __future__ import annotations

import asyncio

import pytest

from agent_memory import AgentMemoryError, AsyncClient

from .conftest import Server, Tenant, unique


def test_store_recall_and_a_session_awaited(server: Server, tenant: Tenant) -> None:
    agent, subject = unique("agent"), unique("customer")

    async def main() -> None:
        async with AsyncClient(server.url, tenant.admin_key) as memory:
            assert (await memory.get_health())["status"] == "ok"
            stored = await memory.store_memory(agent, "Prefers email", anchor_external_id=subject)
            assert stored["outcome"] == "created" and stored["anchor_id"] is not None
            session = await memory.start_session(agent, anchor_external_id=subject)
            await memory.store_memory(agent, "Is travelling until Friday", session_id=session["id"])
            recalled, profile = await asyncio.gather(
                memory.recall_memories(agent, "email", anchor_external_id=subject, session_id=session["id"]),
                memory.get_anchor_profile(stored["anchor_id"]),
            )
            assert stored["id"] in [r["id"] for r in recalled["results"]]
            assert [m["id"] for m in profile["memories"]] == [stored["id"]]
            assert (await memory.end_session(session["id"]))["status"] == "ended"
            await memory.delete_memory(stored["id"])
            with pytest.raises(AgentMemoryError) as gone:
                await memory.get_memory(stored["id"])
            assert (gone.value.status, gone.value.code) == (404, "not_found")

    asyncio.run(main())


def test_a_wrong_key_is_unauthorized(server: Server) -> None:
    async def main() -> None:
        async with AsyncClient(server.url, "mk_" + "x" * 40) as memory:
            with pytest.raises(AgentMemoryError) as refused:
                await memory.list_canon()
            assert (refused.value.status, refused.value.code) == (401, "unauthorized")

    asyncio.run(main())
