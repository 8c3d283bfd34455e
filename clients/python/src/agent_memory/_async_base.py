"""The connection of the async client: sends with retries, the two streamed operations, and the
wait for a job."""

from __future__ import annotations

import time
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, Optional, TypeVar

import anyio
import httpx

from ._transport import (
    DEFAULT_BASE_URL,
    AsyncImportData,
    ExportReader,
    RetryPolicy,
    async_lines,
    cut_short,
    decode,
    default_headers,
    filter_param,
    import_headers,
    path,
    query,
    raise_for_problem,
)
from ._types import ExportRecord, Filter, ImportFormat, ImportResult, Job

_Self = TypeVar("_Self", bound="AsyncBase")


class AsyncBase:
    """The connection, retries and the two streamed operations of :class:`AsyncClient`."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: Optional[str] = None,
        *,
        timeout: Optional[float] = 30.0,
        max_retries: int = 2,
        max_retry_wait: float = 60.0,
        headers: Optional[Mapping[str, str]] = None,
        transport: Optional[httpx.AsyncBaseTransport] = None,
    ) -> None:
        """As :class:`Client`; use it as ``async with AsyncClient(...) as memory:``."""
        self._retries = RetryPolicy(max_retries, max_retry_wait)
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers=default_headers(api_key, headers),
            timeout=timeout,
            transport=transport,
        )
        self._sleep: Callable[[float], Awaitable[None]] = anyio.sleep

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self: _Self) -> _Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(
        self, request: httpx.Request, *, stream: bool = False, replayable: bool = True
    ) -> httpx.Response:
        attempt = 0
        while True:
            response = await self._http.send(request, stream=stream)
            wait = self._retries.wait(response, attempt) if replayable else None
            if wait is None:
                break
            await response.aclose()
            await self._sleep(wait)
            attempt += 1
        if response.status_code >= 400:
            try:
                await response.aread()
            finally:
                await response.aclose()
            raise_for_problem(response)
        return response

    async def _call(
        self,
        method: str,
        url: str,
        *,
        params: Optional[Mapping[str, Any]] = None,
        json: Optional[Mapping[str, Any]] = None,
        headers: Optional[Mapping[str, str]] = None,
        expect: str = "json",
    ) -> Any:
        request = self._http.build_request(method, url, params=query(params or {}), json=json, headers=headers)
        return decode(await self._send(request), expect)

    async def request(
        self,
        method: str,
        url: str,
        *,
        params: Optional[Mapping[str, Any]] = None,
        json: Optional[Mapping[str, Any]] = None,
    ) -> Any:
        """As :meth:`Client.request`."""
        request = self._http.build_request(method, url, params=query(params or {}), json=json)
        response = await self._send(request)
        return response.json() if response.content else None

    async def export_tenant(
        self, *, audit: Optional[bool] = None, filter: Optional[Filter] = None
    ) -> AsyncIterator[ExportRecord]:
        """As :meth:`Client.export_tenant`: ``async for record in memory.export_tenant():``."""
        request = self._http.build_request("GET", "/v1/export", params=query({"audit": audit, "filter": filter_param(filter)}))
        response = await self._send(request, stream=True)
        reader = ExportReader()
        try:
            try:
                async for line in response.aiter_lines():
                    record = reader.record(line)
                    if record is not None:
                        yield record
            except httpx.TransportError as error:
                raise cut_short(error) from error
            reader.finish()
        finally:
            await response.aclose()

    async def import_records(
        self,
        data: AsyncImportData,
        *,
        format: Optional[ImportFormat] = None,
        agent_id: Optional[str] = None,
    ) -> ImportResult:
        """As :meth:`Client.import_records`; ``data`` may also be an async iterable, so that
        ``await memory.import_records(other.export_tenant())`` copies a tenant."""
        return await self._import(data, format, agent_id, False)

    async def import_records_async(
        self,
        data: AsyncImportData,
        *,
        format: Optional[ImportFormat] = None,
        agent_id: Optional[str] = None,
    ) -> Job:
        """As :meth:`Client.import_records_async`."""
        return await self._import(data, format, agent_id, True)

    async def _import(
        self, data: AsyncImportData, format: Optional[ImportFormat], agent_id: Optional[str], in_job: bool
    ) -> Any:
        content: Any
        if isinstance(data, (bytes, str)):
            content, replayable = data, True
        else:
            content, replayable = async_lines(data), False
        request = self._http.build_request(
            "POST",
            "/v1/import",
            params=query({"format": format, "agent_id": agent_id, "async": True if in_job else None}),
            content=content,
            headers=import_headers(format),
        )
        return (await self._send(request, replayable=replayable)).json()

    async def wait_for_job(self, job_id: str, *, timeout: float = 600.0, interval: float = 0.5) -> Job:
        """As :meth:`Client.wait_for_job`."""
        deadline = time.monotonic() + timeout
        while True:
            job: Job = (await self._send(self._http.build_request("GET", path("/v1/jobs/{}", job_id)))).json()
            if job["state"] in ("succeeded", "failed"):
                return job
            if time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} is still {job['state']} after {timeout} s")
            await anyio.sleep(interval)
