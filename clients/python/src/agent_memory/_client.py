"""The synchronous client: one method for each operation of the server's OpenAPI document, named
after its operationId in snake_case (``storeMemory`` is :meth:`Client.store_memory`).

_async_client.py is generated from this file (gen_async.py): edit this one, then regenerate.
"""

from __future__ import annotations

from typing import Any, Dict, Literal, Optional, Sequence

from ._sync_base import SyncBase
from ._transport import as_list, body, filter_param, path
from ._types import (
    Anchor,
    AnchorList,
    AnchorProfile,
    AuditAction,
    AuditList,
    CanonEntry,
    CanonList,
    ConversationMessage,
    CorrectedMemory,
    CreatedApiKey,
    CreatedWebhook,
    CurrentKey,
    FrontDoor,
    DeliveryStatus,
    Health,
    IngestResponse,
    Job,
    JobKind,
    JobList,
    JobState,
    KeyList,
    Memory,
    MemoryHistory,
    Filter,
    MemoryItem,
    Metadata,
    PurgeResult,
    Readiness,
    RecallResponse,
    Scope,
    Session,
    SessionList,
    SessionMemories,
    SetupResponse,
    StoreBatchResponse,
    StoredMemory,
    SubjectExport,
    Webhook,
    WebhookDeliveryList,
    WebhookEventKind,
    WebhookList,
)

# --- operations (gen_async.py copies from here to the end) ---


class Client(SyncBase):
    """A client of the REST API: ``with Client(base_url, api_key) as memory: ...``.

    Every method answers the decoded body as a typed dict, raises :class:`AgentMemoryError` for
    an answer of 400 or above, and retries a 429 or 503 after its Retry-After (``max_retries``
    times, 2 by default). Optional arguments left as None are left out of the request.
    """

    # Operations: the public ones.

    def get_front_door(self) -> FrontDoor:
        """``GET /``: where the console, the API reference and the OpenAPI document are."""
        return self._call("GET", "/")

    def get_health(self) -> Health:
        """``GET /healthz``: the process runs."""
        return self._call("GET", "/healthz")

    def get_readiness(self) -> Readiness:
        """``GET /readyz``: the database answers (a 503 raises, after the retries)."""
        return self._call("GET", "/readyz")

    def get_metrics(self, *, token: Optional[str] = None) -> str:
        """``GET /metrics``: Prometheus text; ``token`` when the server sets METRICS_TOKEN."""
        headers = {"Authorization": f"Bearer {token}"} if token else None
        return self._call("GET", "/metrics", headers=headers, expect="text")

    def get_open_api(self) -> Dict[str, Any]:
        """``GET /v1/openapi.json``: the OpenAPI 3.1 document of every route."""
        return self._call("GET", "/v1/openapi.json")

    def get_api_reference(self) -> str:
        """``GET /docs``: the API reference page (HTML)."""
        return self._call("GET", "/docs", expect="text")

    # Tenancy and keys.

    def create_tenant(self, org_name: str, *, setup_token: str) -> SetupResponse:
        """``POST /v1/setup``: a tenant and its first key (all scopes), with the server's
        SETUP_TOKEN; needs no API key."""
        return self._call(
            "POST", "/v1/setup", json=body({"org_name": org_name}), headers={"X-Setup-Token": setup_token}
        )

    def get_current_key(self) -> CurrentKey:
        """``GET /v1/keys/current``: the calling key and its tenant."""
        return self._call("GET", "/v1/keys/current")

    def create_key(
        self,
        name: str,
        *,
        scopes: Optional[Sequence[Scope]] = None,
        agent_ids: Optional[Sequence[str]] = None,
    ) -> CreatedApiKey:
        """``POST /v1/keys`` (admin): a key (scopes default read and write), bound to
        ``agent_ids`` when given; ``api_key`` is in this answer only."""
        fields = {"name": name, "scopes": as_list(scopes), "agent_ids": as_list(agent_ids)}
        return self._call("POST", "/v1/keys", json=body(fields))

    def list_keys(self) -> KeyList:
        """``GET /v1/keys`` (admin)."""
        return self._call("GET", "/v1/keys")

    def revoke_key(self, key_id: str) -> None:
        """``DELETE /v1/keys/{id}`` (admin)."""
        return self._call("DELETE", path("/v1/keys/{}", key_id), expect="none")

    # Memories.

    def store_memory(
        self,
        agent_id: str,
        content: str,
        *,
        anchor_external_id: Optional[str] = None,
        anchor_id: Optional[str] = None,
        session_id: Optional[str] = None,
        metadata: Optional[Metadata] = None,
        occurred_at: Optional[str] = None,
        expires_at: Optional[str] = None,
        ttl_seconds: Optional[int] = None,
        pinned: Optional[bool] = None,
    ) -> StoredMemory:
        """``POST /v1/memories``: ``outcome`` says whether it was created, reinforced or promoted.
        A subject (``anchor_external_id`` or ``anchor_id``) binds it to the subject, a session
        alone to the session, neither keeps it private to the agent. ``occurred_at`` is when it
        happened (ISO-8601); ``expires_at`` or ``ttl_seconds`` when it leaves recall; ``pinned``
        keeps it from decaying, expiring or being superseded (``contradicts`` names it instead)."""
        fields = {
            "agent_id": agent_id,
            "content": content,
            "anchor_external_id": anchor_external_id,
            "anchor_id": anchor_id,
            "session_id": session_id,
            "metadata": metadata,
            "occurred_at": occurred_at,
            "expires_at": expires_at,
            "ttl_seconds": ttl_seconds,
            "pinned": pinned,
        }
        return self._call("POST", "/v1/memories", json=body(fields))

    def store_memories(self, items: Sequence[MemoryItem]) -> StoreBatchResponse:
        """``POST /v1/memories/batch``: up to 500 items, each the body of ``store_memory``, stored
        in order; one result per item: ``outcome`` and ``memory``, or the item's ``problem``. An
        item's refusal fails that item only, and raises nothing."""
        return self._call("POST", "/v1/memories/batch", json={"items": [body(dict(item)) for item in items]})

    def store_memories_async(self, items: Sequence[MemoryItem]) -> Job:
        """``POST /v1/memories/batch?async=true``: the batch as a job, queued (follow it with
        :meth:`get_job` or ``wait_for_job``); its result is what :meth:`store_memories` answers."""
        return self._call(
            "POST",
            "/v1/memories/batch",
            params={"async": True},
            json={"items": [body(dict(item)) for item in items]},
        )

    def recall_memories(
        self,
        agent_id: str,
        query: str,
        *,
        anchor_external_id: Optional[str] = None,
        anchor_id: Optional[str] = None,
        session_id: Optional[str] = None,
        limit: Optional[int] = None,
        include_superseded: Optional[bool] = None,
        as_of: Optional[str] = None,
    ) -> RecallResponse:
        """``GET /v1/memories/recall``: ``results`` ranked by ``score``, each with its parts.
        ``as_of`` (ISO-8601, not in the future) answers as memory stood then."""
        params = {
            "as_of": as_of,
            "agent_id": agent_id,
            "query": query,
            "anchor_external_id": anchor_external_id,
            "anchor_id": anchor_id,
            "session_id": session_id,
            "limit": limit,
            "include_superseded": include_superseded,
        }
        return self._call("GET", "/v1/memories/recall", params=params)

    def recall_memories_post(
        self,
        agent_id: str,
        query: str,
        *,
        anchor_external_id: Optional[str] = None,
        anchor_id: Optional[str] = None,
        session_id: Optional[str] = None,
        limit: Optional[int] = None,
        include_superseded: Optional[bool] = None,
        as_of: Optional[str] = None,
        filter: Optional[Filter] = None,
    ) -> RecallResponse:
        """``POST /v1/memories/recall``: as :meth:`recall_memories`, with a ``filter`` applied
        before ranking, e.g. ``filter={"metadata.topic": "billing"}``."""
        fields = {
            "agent_id": agent_id,
            "query": query,
            "anchor_external_id": anchor_external_id,
            "anchor_id": anchor_id,
            "session_id": session_id,
            "limit": limit,
            "include_superseded": include_superseded,
            "as_of": as_of,
            "filter": filter,
        }
        return self._call("POST", "/v1/memories/recall", json=body(fields))

    def get_memory(self, memory_id: str) -> Memory:
        """``GET /v1/memories/{id}``."""
        return self._call("GET", path("/v1/memories/{}", memory_id))

    def correct_memory(
        self,
        memory_id: str,
        content: str,
        *,
        agent_id: Optional[str] = None,
        metadata: Optional[Metadata] = None,
        expires_at: Optional[str] = None,
        ttl_seconds: Optional[int] = None,
        pinned: Optional[bool] = None,
    ) -> CorrectedMemory:
        """``PATCH /v1/memories/{id}``: a new memory takes the old one's place (``corrects``),
        with the old one's expiry and pin unless given here."""
        fields = {
            "content": content,
            "agent_id": agent_id,
            "metadata": metadata,
            "expires_at": expires_at,
            "ttl_seconds": ttl_seconds,
            "pinned": pinned,
        }
        return self._call("PATCH", path("/v1/memories/{}", memory_id), json=body(fields))

    def update_memory(
        self,
        memory_id: str,
        *,
        pinned: Optional[bool] = None,
        expires_at: Optional[str] = None,
        ttl_seconds: Optional[int] = None,
        clear_expiry: bool = False,
        agent_id: Optional[str] = None,
    ) -> Memory:
        """``PATCH /v1/memories/{id}`` without content: pins or unpins it, or sets its expiry
        (``clear_expiry=True`` for never), in place."""
        fields = body({"pinned": pinned, "expires_at": expires_at, "ttl_seconds": ttl_seconds, "agent_id": agent_id})
        if clear_expiry:
            fields["expires_at"] = None
        return self._call("PATCH", path("/v1/memories/{}", memory_id), json=fields)

    def delete_memory(self, memory_id: str) -> None:
        """``DELETE /v1/memories/{id}``: a hard delete."""
        return self._call("DELETE", path("/v1/memories/{}", memory_id), expect="none")

    def get_memory_history(self, memory_id: str) -> MemoryHistory:
        """``GET /v1/memories/{id}/history``: its audit events, oldest first."""
        return self._call("GET", path("/v1/memories/{}/history", memory_id))

    def ingest_conversation(
        self,
        agent_id: str,
        messages: Sequence[ConversationMessage],
        *,
        conversation_id: Optional[str] = None,
        anchor_external_id: Optional[str] = None,
        anchor_id: Optional[str] = None,
        session_id: Optional[str] = None,
        metadata: Optional[Metadata] = None,
    ) -> IngestResponse:
        """``POST /v1/agents/{id}/conversations/ingest``: the facts of a conversation, stored."""
        fields = {
            "messages": list(messages),
            "conversation_id": conversation_id,
            "anchor_external_id": anchor_external_id,
            "anchor_id": anchor_id,
            "session_id": session_id,
            "metadata": metadata,
        }
        return self._call("POST", path("/v1/agents/{}/conversations/ingest", agent_id), json=body(fields))

    def ingest_conversation_async(
        self,
        agent_id: str,
        messages: Sequence[ConversationMessage],
        *,
        conversation_id: Optional[str] = None,
        anchor_external_id: Optional[str] = None,
        anchor_id: Optional[str] = None,
        session_id: Optional[str] = None,
        metadata: Optional[Metadata] = None,
    ) -> Job:
        """``POST /v1/agents/{id}/conversations/ingest?async=true``: the ingest as a job, queued
        (follow it with :meth:`get_job` or ``wait_for_job``); its result is what
        :meth:`ingest_conversation` answers."""
        fields = {
            "messages": list(messages),
            "conversation_id": conversation_id,
            "anchor_external_id": anchor_external_id,
            "anchor_id": anchor_id,
            "session_id": session_id,
            "metadata": metadata,
        }
        return self._call(
            "POST",
            path("/v1/agents/{}/conversations/ingest", agent_id),
            params={"async": True},
            json=body(fields),
        )

    # Anchors (subjects).

    def create_anchor(
        self,
        anchor_external_id: str,
        *,
        name: Optional[str] = None,
        metadata: Optional[Metadata] = None,
    ) -> Anchor:
        """``POST /v1/anchors``: the subject of that external id, created if new."""
        fields = {"anchor_external_id": anchor_external_id, "name": name, "metadata": metadata}
        return self._call("POST", "/v1/anchors", json=body(fields))

    def list_anchors(
        self,
        *,
        anchor_external_id: Optional[str] = None,
        anchor_external_id_prefix: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AnchorList:
        """``GET /v1/anchors``: oldest first; pass ``next_cursor`` back as ``cursor``."""
        params = {
            "anchor_external_id": anchor_external_id,
            "anchor_external_id_prefix": anchor_external_id_prefix,
            "limit": limit,
            "cursor": cursor,
        }
        return self._call("GET", "/v1/anchors", params=params)

    def get_anchor(self, anchor_id: str) -> Anchor:
        """``GET /v1/anchors/{id}``."""
        return self._call("GET", path("/v1/anchors/{}", anchor_id))

    def purge_anchor(self, anchor_id: str, *, purge: Literal[True]) -> PurgeResult:
        """``DELETE /v1/anchors/{id}?purge=true`` (admin): erases the subject, its memories,
        sessions and their audit events. ``purge=True`` confirms it, as the API asks."""
        return self._call("DELETE", path("/v1/anchors/{}", anchor_id), params={"purge": purge})

    def get_anchor_profile(
        self,
        anchor_id: str,
        *,
        status: Optional[Literal["active", "superseded"]] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        changed_since: Optional[str] = None,
        filter: Optional[Filter] = None,
    ) -> AnchorProfile:
        """``GET /v1/anchors/{id}/memories``: the durable profile, highest confidence first;
        with ``status="superseded"``, the memories it replaced, latest first; with
        ``changed_since``, only what changed since then, superseded ones included; with
        ``filter``, only those that pass it."""
        params = {
            "status": status,
            "limit": limit,
            "cursor": cursor,
            "changed_since": changed_since,
            "filter": filter_param(filter),
        }
        return self._call("GET", path("/v1/anchors/{}/memories", anchor_id), params=params)

    def list_anchor_sessions(
        self, anchor_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> SessionList:
        """``GET /v1/anchors/{id}/sessions``: latest first."""
        params = {"limit": limit, "cursor": cursor}
        return self._call("GET", path("/v1/anchors/{}/sessions", anchor_id), params=params)

    # Sessions.

    def start_session(
        self,
        agent_id: str,
        *,
        anchor_external_id: Optional[str] = None,
        anchor_id: Optional[str] = None,
        metadata: Optional[Metadata] = None,
    ) -> Session:
        """``POST /v1/sessions``."""
        fields = {
            "agent_id": agent_id,
            "anchor_external_id": anchor_external_id,
            "anchor_id": anchor_id,
            "metadata": metadata,
        }
        return self._call("POST", "/v1/sessions", json=body(fields))

    def get_session(self, session_id: str) -> Session:
        """``GET /v1/sessions/{id}``."""
        return self._call("GET", path("/v1/sessions/{}", session_id))

    def list_session_memories(
        self,
        session_id: str,
        *,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        changed_since: Optional[str] = None,
        filter: Optional[Filter] = None,
    ) -> SessionMemories:
        """``GET /v1/sessions/{id}/memories``: oldest first, superseded ones included; with
        ``changed_since``, only what changed since then; with ``filter``, only those that pass it."""
        params = {"limit": limit, "cursor": cursor, "changed_since": changed_since, "filter": filter_param(filter)}
        return self._call("GET", path("/v1/sessions/{}/memories", session_id), params=params)

    def end_session(self, session_id: str) -> Session:
        """``POST /v1/sessions/{id}/end``: idempotent."""
        return self._call("POST", path("/v1/sessions/{}/end", session_id))

    # Canon.

    def write_canon(self, agent_id: str, content: str, *, metadata: Optional[Metadata] = None) -> CanonEntry:
        """``POST /v1/canon`` (admin): tenant-wide policy; the existing entry for the same text."""
        fields = {"agent_id": agent_id, "content": content, "metadata": metadata}
        return self._call("POST", "/v1/canon", json=body(fields))

    def list_canon(
        self, *, limit: Optional[int] = None, cursor: Optional[str] = None, filter: Optional[Filter] = None
    ) -> CanonList:
        """``GET /v1/canon``."""
        params = {"limit": limit, "cursor": cursor, "filter": filter_param(filter)}
        return self._call("GET", "/v1/canon", params=params)

    def get_canon(self, canon_id: str) -> CanonEntry:
        """``GET /v1/canon/{id}``."""
        return self._call("GET", path("/v1/canon/{}", canon_id))

    def delete_canon(self, canon_id: str) -> None:
        """``DELETE /v1/canon/{id}`` (admin)."""
        return self._call("DELETE", path("/v1/canon/{}", canon_id), expect="none")

    # Audit and portability (export_tenant and import_records stream, see the base class).

    def list_audit_events(
        self,
        *,
        anchor_id: Optional[str] = None,
        memory_id: Optional[str] = None,
        action: Optional[AuditAction] = None,
        since: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AuditList:
        """``GET /v1/audit`` (admin): ids and counts, never content."""
        params = {
            "anchor_id": anchor_id,
            "memory_id": memory_id,
            "action": action,
            "since": since,
            "limit": limit,
            "cursor": cursor,
        }
        return self._call("GET", "/v1/audit", params=params)

    # Jobs (requests sent with async=true; wait_for_job and import_records_async are in the base class).

    def get_job(self, job_id: str) -> Job:
        """``GET /v1/jobs/{id}``: queued, running (with progress), succeeded (with the synchronous
        call's body as ``result``) or failed (with a problem as ``error``)."""
        return self._call("GET", path("/v1/jobs/{}", job_id))

    def list_jobs(
        self,
        *,
        state: Optional[JobState] = None,
        kind: Optional[JobKind] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> JobList:
        """``GET /v1/jobs``: the tenant's jobs, newest first."""
        return self._call("GET", "/v1/jobs", params={"state": state, "kind": kind, "limit": limit, "cursor": cursor})

    def export_anchor(self, anchor_id: str, *, filter: Optional[Filter] = None) -> SubjectExport:
        """``GET /v1/anchors/{id}/export``: everything bound to one subject (with ``filter``, only
        the memories that pass it)."""
        params = {"filter": filter_param(filter)}
        return self._call("GET", path("/v1/anchors/{}/export", anchor_id), params=params)

    # Webhooks (docs/webhooks.md).

    def create_webhook(
        self,
        url: str,
        events: Sequence[WebhookEventKind],
        *,
        description: Optional[str] = None,
        enabled: Optional[bool] = None,
    ) -> CreatedWebhook:
        """``POST /v1/webhooks`` (admin, a key not bound to agents): ``secret`` (``whsec_…``, to
        verify deliveries' ``webhook-signature``) is in this answer only."""
        fields = {"url": url, "events": list(events), "description": description, "enabled": enabled}
        return self._call("POST", "/v1/webhooks", json=body(fields))

    def list_webhooks(self) -> WebhookList:
        """``GET /v1/webhooks`` (admin): never their secrets."""
        return self._call("GET", "/v1/webhooks")

    def get_webhook(self, webhook_id: str) -> Webhook:
        """``GET /v1/webhooks/{id}`` (admin): ``disabled_reason`` says why the service disabled it."""
        return self._call("GET", path("/v1/webhooks/{}", webhook_id))

    def update_webhook(
        self,
        webhook_id: str,
        *,
        url: Optional[str] = None,
        events: Optional[Sequence[WebhookEventKind]] = None,
        description: Optional[str] = None,
        enabled: Optional[bool] = None,
    ) -> Webhook:
        """``PATCH /v1/webhooks/{id}`` (admin): what is given changes; ``enabled=True`` resumes a
        disabled endpoint's pending deliveries at once."""
        fields = {"url": url, "events": as_list(events), "description": description, "enabled": enabled}
        return self._call("PATCH", path("/v1/webhooks/{}", webhook_id), json=body(fields))

    def delete_webhook(self, webhook_id: str) -> None:
        """``DELETE /v1/webhooks/{id}`` (admin): with its deliveries."""
        return self._call("DELETE", path("/v1/webhooks/{}", webhook_id), expect="none")

    def list_webhook_deliveries(
        self,
        webhook_id: str,
        *,
        status: Optional[DeliveryStatus] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> WebhookDeliveryList:
        """``GET /v1/webhooks/{id}/deliveries`` (admin): newest first, never payloads."""
        params = {"status": status, "limit": limit, "cursor": cursor}
        return self._call("GET", path("/v1/webhooks/{}/deliveries", webhook_id), params=params)

