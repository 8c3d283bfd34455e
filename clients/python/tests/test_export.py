"""Export streams: records come off the wire as they arrive, a stream cut short is an error, and an
export imports into another tenant, streamed up as it is read."""

from __future__ import annotations

import asyncio
import json
from typing import Iterator, List

import httpx
import pytest

from agent_memory import AgentMemoryError, AsyncClient, Client, IncompleteExportError

from .conftest import Server, make_tenant, unique


def test_an_export_imports_into_another_tenant_record_by_record(server: Server) -> None:
    source, target = make_tenant(server), make_tenant(server)
    agent, subject = unique("agent"), unique("customer")
    with Client(server.url, source.admin_key) as a, Client(server.url, target.admin_key) as b:
        session = a.start_session(agent, anchor_external_id=subject)
        a.store_memory(agent, "Prefers email", anchor_external_id=subject)
        a.store_memory(agent, "Is travelling", session_id=session["id"])
        records = list(a.export_tenant(audit=True))
        types = [r["type"] for r in records]
        assert types[0] == "header" and types[-1] == "end"
        assert types.count("memory") == 2 and "audit" in types
        assert records[-1]["counts"]["memories"] == 2

        result = b.import_records(a.export_tenant())
        assert result["imported"]["memories"] == 2 and result["imported"]["anchors"] == 1
        assert b.import_records(a.export_tenant())["existing"] > 0
        anchors = b.list_anchors(anchor_external_id=subject)["anchors"]
        assert [m["content"] for m in b.get_anchor_profile(anchors[0]["id"])["memories"]] == ["Prefers email"]


def test_an_import_of_text_and_of_a_mem0_document(server: Server) -> None:
    tenant = make_tenant(server)
    with Client(server.url, tenant.admin_key) as admin:
        mem0 = json.dumps({"results": [{"id": "m-1", "memory": "Likes jazz", "user_id": unique("user")}]})
        assert admin.import_records(mem0, format="mem0", agent_id="importer")["imported"]["memories"] == 1
        with pytest.raises(AgentMemoryError) as refused:
            admin.import_records(b'{"type":"nonsense"}\n')
        assert refused.value.status == 400 and refused.value.detail.startswith("line 1:")


def test_async_export_and_import(server: Server) -> None:
    source, target = make_tenant(server), make_tenant(server)

    async def main() -> None:
        async with AsyncClient(server.url, source.admin_key) as a, AsyncClient(server.url, target.admin_key) as b:
            await a.store_memory(unique("agent"), "Reads the news at seven", anchor_external_id=unique("subject"))
            types = [r["type"] async for r in a.export_tenant()]
            assert types[0] == "header" and types[-1] == "end" and "memory" in types
            result = await b.import_records(a.export_tenant())
            assert result["imported"]["memories"] == 1

    asyncio.run(main())


class Pulled:
    """A response body handed out in chunks, counting how many were taken."""

    def __init__(self, lines: List[bytes]) -> None:
        self.lines = lines
        self.taken = 0

    def __iter__(self) -> Iterator[bytes]:
        for line in self.lines:
            self.taken += 1
            yield line


def streaming_client(body: Pulled) -> Client:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/export"
        return httpx.Response(200, headers={"Content-Type": "application/x-ndjson"}, content=body)

    return Client("http://agent-memory.test", "mk_test", transport=httpx.MockTransport(handler))


def ndjson(*records: dict) -> List[bytes]:
    return [json.dumps(r).encode() + b"\n" for r in records]


def test_records_are_read_as_they_arrive_not_after_the_whole_body() -> None:
    body = Pulled(
        ndjson({"type": "header"}, *({"type": "memory", "id": str(i)} for i in range(1000)), {"type": "end"})
    )
    with streaming_client(body) as client:
        records = client.export_tenant()
        assert next(records)["type"] == "header"
        assert body.taken < 10
        assert sum(1 for _ in records) == 1001
        assert body.taken == len(body.lines)


def test_a_stream_without_its_end_record_raises_after_its_records() -> None:
    body = Pulled(ndjson({"type": "header"}, {"type": "memory", "id": "1"}))
    with streaming_client(body) as client:
        read = []
        with pytest.raises(IncompleteExportError):
            for record in client.export_tenant():
                read.append(record["type"])
        assert read == ["header", "memory"]
