"""Filters (docs/api.md, "Filters") through both clients: recall by POST and the filtered lists."""

from __future__ import annotations

import asyncio
from typing import List

import pytest

from agent_memory import AgentMemoryError, AsyncClient, Client

from .conftest import Server, Tenant, unique


def ids(items: List[dict]) -> List[str]:  # type: ignore[type-arg]
    return sorted(item["id"] for item in items)


def test_recall_and_lists_take_a_filter(admin: Client) -> None:
    agent, subject = unique("agent"), unique("customer")
    billing = admin.store_memory(
        agent, "An invoice was sent for the March order", anchor_external_id=subject, metadata={"topic": "billing"}
    )
    admin.store_memory(
        agent, "Prefers to be contacted by email", anchor_external_id=subject, metadata={"topic": "contact"}
    )
    found = admin.recall_memories_post(
        agent, "invoice email", anchor_external_id=subject, limit=10, filter={"metadata.topic": "billing"}
    )
    assert ids(found["results"]) == [billing["id"]]
    either = admin.recall_memories_post(
        agent,
        "invoice email",
        anchor_external_id=subject,
        filter={"$or": [{"metadata.topic": "billing"}, {"metadata.topic": {"$in": ["contact"]}}]},
    )
    assert len(either["results"]) == 2

    anchor_id = billing["anchor_id"]
    assert anchor_id is not None
    profile = admin.get_anchor_profile(anchor_id, filter={"metadata.topic": {"$ne": "contact"}})
    assert ids(profile["memories"]) == [billing["id"]]
    exported = admin.export_anchor(anchor_id, filter={"metadata.topic": "billing"})
    assert ids(exported["memories"]) == [billing["id"]]
    assert admin.list_canon(filter={"metadata.topic": "billing"})["canon"] == []


def test_a_bad_filter_is_named_by_its_path(admin: Client) -> None:
    with pytest.raises(AgentMemoryError) as refused:
        admin.recall_memories_post(unique("agent"), "anything", filter={"metadata.topic": {"$regex": "bill"}})
    assert (refused.value.status, refused.value.code) == (400, "invalid_request")
    assert [e["path"] for e in refused.value.errors] == ["filter.metadata.topic.$regex"]


def test_the_async_client_filters_too(server: Server, tenant: Tenant) -> None:
    agent, subject = unique("agent"), unique("customer")

    async def main() -> None:
        async with AsyncClient(server.url, tenant.admin_key) as memory:
            kept = await memory.store_memory(agent, "Pays by card", anchor_external_id=subject, metadata={"n": 2})
            await memory.store_memory(agent, "Lives in Porto", anchor_external_id=subject, metadata={"n": 1})
            found = await memory.recall_memories_post(
                agent, "card Porto", anchor_external_id=subject, filter={"metadata.n": {"$gt": 1}}
            )
            assert [r["id"] for r in found["results"]] == [kept["id"]]
            exported = [r async for r in memory.export_tenant(filter={"metadata.n": 2}) if r["type"] == "memory"]
            assert [r["id"] for r in exported] == [kept["id"]]

    asyncio.run(main())
