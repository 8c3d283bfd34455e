"""Webhooks through both clients: an endpoint on a receiver of the test's own (loopback, which the
test server allows), a delivery signed the Standard Webhooks way and checked here by the scheme's
own rule, its record in the deliveries list, and the endpoint changed and deleted."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from agent_memory import AgentMemoryError, AsyncClient, Client

from .conftest import Server, Tenant, unique

Received = Tuple[Dict[str, str], bytes]


@pytest.fixture
def receiver() -> Iterator[Tuple[str, List[Received]]]:
    got: List[Received] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            got.append(({k.lower(): v for k, v in self.headers.items()}, raw))
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/hook", got
    finally:
        httpd.shutdown()
        httpd.server_close()


def wait_for(got: List[Received], count: int, within_s: float = 20) -> None:
    deadline = time.monotonic() + within_s
    while len(got) < count:
        assert time.monotonic() < deadline, f"{len(got)} deliveries, not {count}"
        time.sleep(0.05)


def signature_valid(secret: str, headers: Dict[str, str], raw: bytes) -> bool:
    key = base64.b64decode(secret[len("whsec_") :])
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + raw
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(
        hmac.compare_digest(part.split(",", 1)[1], expected) for part in headers["webhook-signature"].split(" ")
    )


def test_an_endpoint_gets_signed_events_without_content(
    admin: Client, receiver: Tuple[str, List[Received]]
) -> None:
    url, got = receiver
    made = admin.create_webhook(url, ["memory.created"], description="crm")
    assert made["secret"].startswith("whsec_") and made["enabled"] is True
    assert "secret" not in admin.get_webhook(made["id"])
    assert [w["id"] for w in admin.list_webhooks()["webhooks"]] == [made["id"]]

    content = f"The door code is {unique('code')}"
    stored = admin.store_memory(unique("agent"), content)
    wait_for(got, 1)
    headers, raw = got[0]
    assert signature_valid(made["secret"], headers, raw)
    assert not signature_valid("whsec_" + base64.b64encode(b"x" * 32).decode(), headers, raw)
    event = json.loads(raw)
    assert event["type"] == "memory.created" and event["data"]["memory_id"] == stored["id"]
    assert content.encode() not in raw

    deadline = time.monotonic() + 10
    while (page := admin.list_webhook_deliveries(made["id"], status="delivered", limit=5))["deliveries"] == []:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert page["deliveries"][0]["event_id"] == headers["webhook-id"]

    paused = admin.update_webhook(made["id"], enabled=False, events=["*"])
    assert (paused["enabled"], paused["events"]) == (False, ["*"])
    admin.delete_webhook(made["id"])
    with pytest.raises(AgentMemoryError) as gone:
        admin.get_webhook(made["id"])
    assert gone.value.status == 404


def test_an_unknown_event_kind_is_refused_and_the_async_client_awaits(
    server: Server, tenant: Tenant
) -> None:
    async def main() -> None:
        async with AsyncClient(server.url, tenant.admin_key) as client:
            with pytest.raises(AgentMemoryError) as refused:
                await client.create_webhook("https://example.com/hook", ["memory.eaten"])  # type: ignore[list-item]
            assert refused.value.status == 400
            made = await client.create_webhook("https://example.com/hook", ["subject.purged"], enabled=False)
            assert made["enabled"] is False
            assert (await client.list_webhook_deliveries(made["id"]))["deliveries"] == []
            assert (await client.update_webhook(made["id"], description="compliance"))["description"] == "compliance"
            await client.delete_webhook(made["id"])

    asyncio.run(main())
