"""Retries: a 429 or 503 is sent again after its Retry-After, a bounded number of times; what
cannot be waited for or sent again is raised at once, as the problem the server answered."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Iterator, List, Tuple

import httpx
import pytest

from agent_memory import AgentMemoryError, AsyncClient, Client, Health

UNAVAILABLE = {
    "type": "https://agent-memory.dev/errors/unavailable",
    "title": "Service unavailable",
    "status": 503,
    "code": "unavailable",
    "detail": "the database is unavailable",
}
RATE_LIMITED = {**UNAVAILABLE, "status": 429, "code": "rate_limited", "title": "Too many requests"}
HEALTH = {"status": "ok"}


def problem(body: dict, retry_after: str) -> httpx.Response:
    return httpx.Response(
        body["status"],
        headers={"Content-Type": "application/problem+json", "Retry-After": retry_after},
        content=json.dumps(body).encode(),
    )


def scripted(*answers: httpx.Response) -> Tuple[httpx.MockTransport, List[httpx.Request]]:
    """A transport answering each request with the next answer, recording the requests."""
    queue: Iterator[httpx.Response] = iter(answers)
    seen: List[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(request)
        return next(queue)

    return httpx.MockTransport(handler), seen


def client(transport: httpx.MockTransport, **options: float) -> Tuple[Client, List[float]]:
    slept: List[float] = []
    made = Client("http://agent-memory.test", "mk_test", transport=transport, **options)  # type: ignore[arg-type]
    made._sleep = slept.append
    return made, slept


def test_a_429_is_sent_again_after_its_retry_after() -> None:
    transport, seen = scripted(problem(RATE_LIMITED, "3"), httpx.Response(200, json=HEALTH))
    memory, slept = client(transport)
    assert memory.get_health() == HEALTH
    assert slept == [3.0] and len(seen) == 2


def test_a_post_is_sent_again_whole() -> None:
    stored = {"id": "m1", "outcome": "created"}
    transport, seen = scripted(problem(UNAVAILABLE, "5"), httpx.Response(201, json=stored))
    memory, slept = client(transport)
    assert memory.store_memory("bot", "Likes tea", anchor_external_id="c-1") == stored
    assert slept == [5.0]
    sent = {"agent_id": "bot", "content": "Likes tea", "anchor_external_id": "c-1"}
    assert [json.loads(r.content) for r in seen] == [sent, sent]


def test_retries_are_bounded_and_the_last_problem_is_raised() -> None:
    transport, seen = scripted(*(problem(UNAVAILABLE, "5") for _ in range(3)))
    memory, slept = client(transport, max_retries=2)
    with pytest.raises(AgentMemoryError) as raised:
        memory.get_health()
    error = raised.value
    assert (error.status, error.code, error.detail) == (503, "unavailable", "the database is unavailable")
    assert error.retry_after == 5.0
    assert slept == [5.0, 5.0] and len(seen) == 3


def test_a_wait_longer_than_allowed_is_raised_at_once() -> None:
    transport, seen = scripted(problem(RATE_LIMITED, "120"))
    memory, slept = client(transport, max_retry_wait=60)
    with pytest.raises(AgentMemoryError) as raised:
        memory.get_health()
    assert raised.value.code == "rate_limited" and raised.value.retry_after == 120.0
    assert slept == [] and len(seen) == 1


def test_retry_after_as_an_http_date() -> None:
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    transport, _ = scripted(problem(RATE_LIMITED, later), httpx.Response(200, json=HEALTH))
    memory, slept = client(transport)
    memory.get_health()
    assert len(slept) == 1 and 25 < slept[0] <= 30


def test_no_retry_after_backs_off_and_other_errors_are_not_retried() -> None:
    bare = httpx.Response(503, text="upstream down")
    transport, seen = scripted(bare, httpx.Response(404, json={**UNAVAILABLE, "status": 404, "code": "not_found"}))
    memory, slept = client(transport)
    with pytest.raises(AgentMemoryError) as raised:
        memory.get_health()
    assert raised.value.code == "not_found" and slept == [0.5] and len(seen) == 2


def test_an_answer_without_a_problem_document_is_an_http_error() -> None:
    transport, _ = scripted(httpx.Response(502, text="<html>bad gateway</html>"))
    memory, _ = client(transport)
    with pytest.raises(AgentMemoryError) as raised:
        memory.get_health()
    assert (raised.value.status, raised.value.code) == (502, "http_error")


def test_a_streamed_import_is_not_sent_twice() -> None:
    transport, seen = scripted(problem(UNAVAILABLE, "1"))
    memory, slept = client(transport)
    with pytest.raises(AgentMemoryError):
        memory.import_records(iter([{"type": "header"}]))
    assert slept == [] and len(seen) == 1


def test_the_async_client_retries_alike() -> None:
    transport, seen = scripted(problem(RATE_LIMITED, "2"), problem(UNAVAILABLE, "1"), httpx.Response(200, json=HEALTH))
    slept: List[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def main() -> Health:
        async with AsyncClient("http://agent-memory.test", transport=transport) as memory:
            memory._sleep = sleep
            return await memory.get_health()

    assert asyncio.run(main()) == HEALTH
    assert slept == [2.0, 1.0] and len(seen) == 3
