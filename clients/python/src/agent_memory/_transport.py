"""What the sync and async clients share: request parts, the retry policy (429 and 503, bounded and
paced by Retry-After), answers decoded or raised as AgentMemoryError, NDJSON lines both ways."""

from __future__ import annotations

import collections.abc
import json
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, AsyncIterable, AsyncIterator, Dict, Iterable, List, Mapping, Optional, Union
from urllib.parse import quote

import httpx

from ._errors import AgentMemoryError, IncompleteExportError
from ._types import ExportRecord, ImportFormat

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
# The two statuses the contract promises are safe to send again: a 429 was refused before anything
# ran, and a 503 stored nothing half-way (docs/api.md §2). Both carry Retry-After.
RETRY_STATUSES = frozenset({429, 503})

Record = Union[bytes, str, Mapping[str, Any]]
ImportData = Union[bytes, str, Iterable[Record]]
AsyncImportData = Union[bytes, str, Iterable[Record], AsyncIterable[Record]]


def path(template: str, *segments: str) -> str:
    """A path with each segment escaped: an agent id may hold `/` or `?`."""
    return template.format(*(quote(str(s), safe="") for s in segments))


def query(params: Mapping[str, Any]) -> Dict[str, str]:
    """Query parameters without the unset ones; booleans as the API spells them."""
    out: Dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        out[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out


def filter_param(value: Optional[Mapping[str, Any]]) -> Optional[str]:
    """A filter as a query parameter takes it: its JSON."""
    return None if value is None else json.dumps(value, separators=(",", ":"))


def body(fields: Mapping[str, Any]) -> Dict[str, Any]:
    """A JSON body without the unset fields (the API refuses none of them as null, but leaves
    out means "the default", which is what an unset argument says)."""
    return {key: value for key, value in fields.items() if value is not None}


def as_list(values: Optional[Iterable[str]]) -> Optional[List[str]]:
    return None if values is None else list(values)


def retry_after(response: httpx.Response) -> Optional[float]:
    """Retry-After in seconds (a number of seconds or an HTTP date), or None."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


class RetryPolicy:
    """At most ``max_retries`` more attempts after a 429 or 503, each after the answer's
    Retry-After (else 0.5 s, 1 s, 2 s, …); an answer asking for more than ``max_retry_wait``
    seconds is raised at once rather than waited for."""

    def __init__(self, max_retries: int, max_retry_wait: float) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait

    def wait(self, response: httpx.Response, attempt: int) -> Optional[float]:
        if response.status_code not in RETRY_STATUSES or attempt >= self.max_retries:
            return None
        after = retry_after(response)
        wait = after if after is not None else 0.5 * 2**attempt
        return wait if wait <= self.max_retry_wait else None


def default_headers(api_key: Optional[str], extra: Optional[Mapping[str, str]]) -> Dict[str, str]:
    out = {"Accept": "application/json"}
    if api_key:
        out["Authorization"] = f"Bearer {api_key}"
    out.update(extra or {})
    return out


def decode(response: httpx.Response, expect: str) -> Any:
    if expect == "none":
        return None
    if expect == "text":
        return response.text
    return response.json()


def raise_for_problem(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise AgentMemoryError.from_response(response, retry_after(response))


def import_headers(format: Optional[ImportFormat]) -> Dict[str, str]:
    # mem0's export is one JSON document; every other format is a line a record.
    return {"Content-Type": "application/json" if format == "mem0" else "application/x-ndjson"}


def ndjson_line(record: Record) -> bytes:
    if isinstance(record, bytes):
        line = record
    elif isinstance(record, str):
        line = record.encode("utf-8")
    else:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return line if line.endswith(b"\n") else line + b"\n"


class ExportReader:
    """Turns the lines of an export into records and notices a stream cut before its end."""

    def __init__(self) -> None:
        self.ended = False

    def record(self, line: str) -> Optional[ExportRecord]:
        if not line.strip():
            return None
        record = json.loads(line)
        if isinstance(record, dict) and record.get("type") == "end":
            self.ended = True
        return record

    def finish(self) -> None:
        if not self.ended:
            raise IncompleteExportError("the export ended without its end record: it was cut short")


def cut_short(error: httpx.TransportError) -> IncompleteExportError:
    return IncompleteExportError(f"the export stream broke off: {error}")


async def async_lines(data: Union[Iterable[Record], AsyncIterable[Record]]) -> AsyncIterator[bytes]:
    if isinstance(data, collections.abc.AsyncIterable):
        async for record in data:
            yield ndjson_line(record)
    else:
        for record in data:
            yield ndjson_line(record)
