"""The answers of the API as TypedDicts: plain dicts at run time, typed for a checker.

Each mirrors a schema of the server's OpenAPI document (a test compares their keys), so a field the
server adds shows up as a failing test here rather than as a key the types do not know.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict

Scope = Literal["read", "write", "admin"]
Binding = Literal["private", "anchored", "session", "canon"]
MemoryStatus = Literal["active", "superseded"]
Outcome = Literal["created", "reinforced", "promoted"]
AuditAction = Literal[
    "created",
    "reinforced",
    "superseded",
    "promoted",
    "merged",
    "corrected",
    "deleted",
    "updated",
    "expired",
    "session_ended",
    "canon_written",
    "canon_deleted",
    "anchor_purged",
    "key_created",
    "key_revoked",
    "job_finished",
    "import_finished",
]
JobKind = Literal["ingest", "import", "batch"]
JobState = Literal["queued", "running", "succeeded", "failed"]
WebhookEventKind = Literal[
    "memory.created",
    "memory.reinforced",
    "memory.promoted",
    "memory.merged",
    "memory.superseded",
    "memory.corrected",
    "memory.deleted",
    "memory.updated",
    "memory.expired",
    "subject.purged",
    "session.ended",
    "canon.written",
    "canon.deleted",
    "import.finished",
    "job.finished",
    "*",
]
DeliveryStatus = Literal["pending", "delivered", "failed"]
ImportFormat = Literal["agent-memory", "mem0", "mcp-memory"]
Metadata = Dict[str, Any]
# A memory filter (docs/api.md, "Filters"): {"metadata.topic": "billing"},
# {"metadata.priority": {"$gte": 2}}, {"$or": [...]}.
Filter = Dict[str, Any]


class Health(TypedDict):
    status: Literal["ok"]


class FrontDoor(TypedDict):
    name: Literal["agent-memory"]
    version: str
    console: str
    docs: str
    openapi: str
    mcp: str
    health: str


class ReadReplicas(TypedDict):
    configured: int
    answering: int


class _ReadinessOptional(TypedDict, total=False):
    read_replicas: ReadReplicas


class Readiness(_ReadinessOptional):
    status: Literal["ready"]


class SetupResponse(TypedDict):
    tenant_id: str
    api_key: str
    message: str


class ApiKey(TypedDict):
    id: str
    name: str
    key_prefix: str
    scopes: List[Scope]
    created_at: str
    last_used_at: Optional[str]
    revoked_at: Optional[str]
    agent_ids: Optional[List[str]]


class CurrentKey(ApiKey):
    tenant_id: str


class CreatedApiKey(TypedDict):
    id: str
    name: str
    key_prefix: str
    scopes: List[Scope]
    created_at: str
    agent_ids: Optional[List[str]]
    api_key: str


class KeyList(TypedDict):
    keys: List[ApiKey]


class Memory(TypedDict):
    id: str
    agent_id: str
    content: str
    binding: Binding
    anchor_id: Optional[str]
    anchor_external_id: Optional[str]
    session_id: Optional[str]
    status: MemoryStatus
    confidence: float
    effective_confidence: float
    reinforcement_count: int
    superseded_by: Optional[str]
    superseded_at: Optional[str]
    metadata: Metadata
    occurred_at: str
    created_at: str
    updated_at: str
    last_reinforced_at: str
    expires_at: Optional[str]
    pinned: bool


class _StoredMemoryOptional(TypedDict, total=False):
    supersedes: List[str]
    contradicts: List[str]


class StoredMemory(Memory, _StoredMemoryOptional):
    outcome: Outcome


class _MemoryItemOptional(TypedDict, total=False):
    anchor_external_id: str
    anchor_id: str
    session_id: str
    metadata: Metadata
    occurred_at: str
    expires_at: Optional[str]
    ttl_seconds: int
    pinned: bool


class MemoryItem(_MemoryItemOptional):
    """One item of :meth:`Client.store_memories`: the body of ``POST /v1/memories``."""

    agent_id: str
    content: str


class FieldError(TypedDict):
    path: str
    message: str


class _ProblemOptional(TypedDict, total=False):
    errors: List[FieldError]


class Problem(_ProblemOptional):
    type: str
    title: str
    status: int
    code: str
    detail: str


class BatchItemResult(TypedDict, total=False):
    """``outcome`` and ``memory`` when the item was stored, ``problem`` when it was not."""

    outcome: Outcome
    memory: StoredMemory
    problem: Problem


class StoreBatchResponse(TypedDict):
    results: List[BatchItemResult]


class ScoreDetails(TypedDict):
    semantic: float
    lexical: float
    confidence: float
    recency: float
    prior: float


class RecallResult(Memory):
    score: float
    score_details: ScoreDetails


class RecallResponse(TypedDict):
    results: List[RecallResult]


class _CorrectedMemoryOptional(TypedDict, total=False):
    # Set by a correction (content given); absent when a PATCH only pinned or set the expiry.
    corrects: str


class CorrectedMemory(Memory, _CorrectedMemoryOptional):
    pass


class AuditActor(TypedDict):
    key_id: Optional[str]
    agent_id: Optional[str]


class AuditEvent(TypedDict):
    id: str
    at: str
    action: AuditAction
    memory_id: Optional[str]
    anchor_id: Optional[str]
    session_id: Optional[str]
    actor: AuditActor
    changes: Dict[str, Any]


class MemoryHistory(TypedDict):
    events: List[AuditEvent]


class _ConversationMessageOptional(TypedDict, total=False):
    id: str
    name: str
    created_at: str


class ConversationMessage(_ConversationMessageOptional):
    """One message of a conversation to ingest (an input: `id` and `created_at` are optional)."""

    role: Literal["user", "assistant", "system"]
    content: str


class IngestResponse(TypedDict):
    extractor: str
    memories: List[StoredMemory]
    skipped_messages: int


class Anchor(TypedDict):
    id: str
    anchor_external_id: str
    name: Optional[str]
    metadata: Metadata
    created_at: str
    memory_count: int
    last_activity_at: Optional[str]


class AnchorList(TypedDict):
    anchors: List[Anchor]
    next_cursor: Optional[str]


class PurgeCounts(TypedDict):
    memories: int
    sessions: int


class PurgeResult(TypedDict):
    purged: Literal[True]
    anchor_id: str
    deleted: PurgeCounts


class AnchorProfile(TypedDict):
    anchor: Anchor
    memories: List[Memory]
    next_cursor: Optional[str]


class Session(TypedDict):
    id: str
    agent_id: str
    anchor_id: Optional[str]
    anchor_external_id: Optional[str]
    status: Literal["active", "ended"]
    started_at: str
    ended_at: Optional[str]
    expires_at: Optional[str]
    metadata: Metadata


class SessionList(TypedDict):
    sessions: List[Session]
    next_cursor: Optional[str]


class SessionMemories(TypedDict):
    session: Session
    memories: List[Memory]
    next_cursor: Optional[str]


class CanonEntry(TypedDict):
    id: str
    agent_id: str
    content: str
    binding: Literal["canon"]
    metadata: Metadata
    created_at: str


class CanonList(TypedDict):
    canon: List[CanonEntry]
    next_cursor: Optional[str]


class AuditList(TypedDict):
    events: List[AuditEvent]
    next_cursor: Optional[str]


class ExportedMemory(Memory):
    mentioned_in_sessions: List[str]


class SubjectExport(TypedDict):
    format: Literal["agent-memory-subject"]
    version: int
    exported_at: str
    anchor: Anchor
    sessions: List[Session]
    memories: List[ExportedMemory]


class ImportCounts(TypedDict):
    anchors: int
    sessions: int
    memories: int
    canon: int
    audit: int


class ImportResult(TypedDict):
    lines: int
    imported: ImportCounts
    existing: int


class Job(TypedDict):
    """A request sent with ``async=true``, run in the background (docs/api.md §5 Jobs)."""

    id: str
    kind: JobKind
    state: JobState
    agent_ids: Optional[List[str]]
    progress: Dict[str, int]
    result: Optional[Dict[str, Any]]
    """Once succeeded: the body the synchronous call answers (an IngestResponse or an ImportResult)."""
    error: Optional[Dict[str, Any]]
    """Once failed: the problem (``code``, ``detail``, …) the synchronous call would have answered."""
    attempts: int
    created_at: str
    started_at: Optional[str]
    finished_at: Optional[str]


class JobList(TypedDict):
    jobs: List[Job]
    next_cursor: Optional[str]


ExportRecord = Dict[str, Any]
"""One line of `GET /v1/export`: a dict whose `type` is header, anchor, session, memory, canon, audit
or end (docs/portability.md gives each record's fields)."""


class Webhook(TypedDict):
    id: str
    url: str
    events: List[str]
    description: Optional[str]
    enabled: bool
    created_at: str
    updated_at: str
    disabled_reason: Optional[str]
    disabled_at: Optional[str]
    failing_since: Optional[str]
    last_success_at: Optional[str]


class CreatedWebhook(Webhook):
    secret: str


class WebhookList(TypedDict):
    webhooks: List[Webhook]


class WebhookDelivery(TypedDict):
    event_id: str
    event_type: str
    status: DeliveryStatus
    attempts: int
    created_at: str
    next_attempt_at: Optional[str]
    last_attempt_at: Optional[str]
    last_status_code: Optional[int]
    last_error: Optional[str]
    delivered_at: Optional[str]


class WebhookDeliveryList(TypedDict):
    deliveries: List[WebhookDelivery]
    next_cursor: Optional[str]
