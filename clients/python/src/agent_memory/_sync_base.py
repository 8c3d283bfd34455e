"""The connection of the sync client: sends with retries, the two streamed operations, and the
wait for a job."""

from __future__ import annotations

import time
from typing import Any, Callable, Iterator, Mapping, Optional, TypeVar

import httpx

from ._transport import (
    DEFAULT_BASE_URL,
    ExportReader,
    ImportData,
    RetryPolicy,
    cut_short,
    decode,
    default_headers,
    filter_param,
    import_headers,
    ndjson_line,
    path,
    query,
    raise_for_problem,
)
from ._types import ExportRecord, Filter, ImportFormat, ImportResult, Job

_Self = TypeVar("_Self", bound="SyncBase")


class SyncBase:
    """The connection, retries and the two streamed operations of :class:`Client`."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: Optional[str] = None,
        *,
        timeout: Optional[float] = 30.0,
        max_retries: int = 2,
        max_retry_wait: float = 60.0,
        headers: Optional[Mapping[str, str]] = None,
        transport: Optional[httpx.BaseTransport] = None,
    ) -> None:
        """``base_url`` is where the server answers, without ``/v1``; ``api_key`` an ``mk_`` or
        ``rk_`` key (the public operations and :meth:`create_tenant` need none). ``transport``
        replaces httpx's (a proxy, a mock)."""
        self._retries = RetryPolicy(max_retries, max_retry_wait)
        self._http = httpx.Client(
            base_url=base_url,
            headers=default_headers(api_key, headers),
            timeout=timeout,
            transport=transport,
        )
        self._sleep: Callable[[float], None] = time.sleep

    def close(self) -> None:
        self._http.close()

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, request: httpx.Request, *, stream: bool = False, replayable: bool = True) -> httpx.Response:
        attempt = 0
        while True:
            response = self._http.send(request, stream=stream)
            wait = self._retries.wait(response, attempt) if replayable else None
            if wait is None:
                break
            response.close()
            self._sleep(wait)
            attempt += 1
        if response.status_code >= 400:
            try:
                response.read()
            finally:
                response.close()
            raise_for_problem(response)
        return response

    def _call(
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
        return decode(self._send(request), expect)

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Optional[Mapping[str, Any]] = None,
        json: Optional[Mapping[str, Any]] = None,
    ) -> Any:
        """Any route, for what the methods do not cover: the decoded JSON answer, or None for an
        empty one; errors and retries as every method."""
        request = self._http.build_request(method, url, params=query(params or {}), json=json)
        response = self._send(request)
        return response.json() if response.content else None

    def export_tenant(
        self, *, audit: Optional[bool] = None, filter: Optional[Filter] = None
    ) -> Iterator[ExportRecord]:
        """``GET /v1/export`` (admin): the tenant as records, read from the stream as they arrive
        (never the whole body in memory). The request goes out at the first ``next()``; a stream
        cut short raises :class:`IncompleteExportError` after the last record it held."""
        request = self._http.build_request("GET", "/v1/export", params=query({"audit": audit, "filter": filter_param(filter)}))
        response = self._send(request, stream=True)
        reader = ExportReader()
        try:
            try:
                for line in response.iter_lines():
                    record = reader.record(line)
                    if record is not None:
                        yield record
            except httpx.TransportError as error:
                raise cut_short(error) from error
            reader.finish()
        finally:
            response.close()

    def import_records(
        self,
        data: ImportData,
        *,
        format: Optional[ImportFormat] = None,
        agent_id: Optional[str] = None,
    ) -> ImportResult:
        """``POST /v1/import`` (admin): ``data`` is the file's bytes or text, or an iterable of
        records (dicts, or lines as str/bytes), which is streamed up, a line each, so that
        ``import_records(other.export_tenant())`` copies a tenant without holding it. A streamed
        body cannot be sent twice, so it is not retried."""
        return self._import(data, format, agent_id, False)

    def import_records_async(
        self,
        data: ImportData,
        *,
        format: Optional[ImportFormat] = None,
        agent_id: Optional[str] = None,
    ) -> Job:
        """``POST /v1/import?async=true`` (admin): the import as a job, queued; its result is what
        :meth:`import_records` answers. The body is kept on the server until the job ends, up to
        its JOB_INPUT_MAX_BYTES (256 MiB by default)."""
        return self._import(data, format, agent_id, True)

    def _import(self, data: ImportData, format: Optional[ImportFormat], agent_id: Optional[str], in_job: bool) -> Any:
        content: Any
        if isinstance(data, (bytes, str)):
            content, replayable = data, True
        else:
            content, replayable = (ndjson_line(r) for r in data), False
        request = self._http.build_request(
            "POST",
            "/v1/import",
            params=query({"format": format, "agent_id": agent_id, "async": True if in_job else None}),
            content=content,
            headers=import_headers(format),
        )
        return self._send(request, replayable=replayable).json()

    def wait_for_job(self, job_id: str, *, timeout: float = 600.0, interval: float = 0.5) -> Job:
        """``GET /v1/jobs/{id}`` until the job has succeeded or failed, every ``interval`` seconds;
        the finished job (``result`` or ``error``). ``TimeoutError`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            job: Job = self._send(self._http.build_request("GET", path("/v1/jobs/{}", job_id))).json()
            if job["state"] in ("succeeded", "failed"):
                return job
            if time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} is still {job['state']} after {timeout} s")
            time.sleep(interval)
