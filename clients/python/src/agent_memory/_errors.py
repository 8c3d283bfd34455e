"""The one exception an API error raises, and the one a cut export stream raises."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import httpx


class AgentMemoryError(Exception):
    """An answer of 400 or above: the server's RFC 9457 problem document, whole.

    ``code`` is the problem's stable code (``not_found``, ``conflict``, ``rate_limited``, …; the
    catalogue is docs/api.md §2), or ``http_error`` when the answer carried no problem document
    (a proxy's page, say). ``errors`` names each field a 400 refused.
    """

    status: int
    code: str
    detail: str
    title: str
    type: str
    errors: List[Dict[str, str]]
    retry_after: Optional[float]
    problem: Dict[str, Any]

    def __init__(self, problem: Dict[str, Any], retry_after: Optional[float] = None) -> None:
        self.problem = problem
        self.status = int(problem["status"])
        self.code = str(problem["code"])
        self.detail = str(problem.get("detail", ""))
        self.title = str(problem.get("title", ""))
        self.type = str(problem.get("type", "about:blank"))
        self.errors = list(problem.get("errors", []))
        self.retry_after = retry_after
        super().__init__(f"{self.status} {self.code}: {self.detail}")

    @classmethod
    def from_response(cls, response: httpx.Response, retry_after: Optional[float] = None) -> "AgentMemoryError":
        """The error a failed answer stands for; its body must have been read."""
        problem: Any = None
        try:
            problem = json.loads(response.content)
        except ValueError:
            pass
        if not (isinstance(problem, dict) and isinstance(problem.get("code"), str)):
            problem = {
                "type": "about:blank",
                "title": response.reason_phrase,
                "status": response.status_code,
                "code": "http_error",
                "detail": f"the server answered {response.status_code} without a problem document",
            }
        problem.setdefault("status", response.status_code)
        return cls(problem, retry_after)


class IncompleteExportError(Exception):
    """An export stream that ended without its closing ``end`` record: it was cut short (the
    server failed mid-way, or the connection dropped), so the records read are not the tenant."""
