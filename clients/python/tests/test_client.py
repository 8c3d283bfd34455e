"""The synchronous client against a real server: each operation answers what the contract says."""

from __future__ import annotations

from typing import List

import pytest

from agent_memory import AgentMemoryError, Client, ConversationMessage

from .conftest import Server, Tenant, make_tenant, unique


def test_public_operations_need_no_key(server: Server) -> None:
    with Client(server.url) as anonymous:
        assert anonymous.get_health() == {"status": "ok"}
        assert anonymous.get_readiness()["status"] == "ready"
        assert "agent_memory_" in anonymous.get_metrics()
        assert anonymous.get_open_api()["openapi"].startswith("3.1")
        assert "<html" in anonymous.get_api_reference().lower()


def test_a_tenant_and_its_keys(server: Server) -> None:
    with Client(server.url) as anonymous:
        with pytest.raises(AgentMemoryError) as refused:
            anonymous.create_tenant(unique("org"), setup_token="not-the-token")
        assert (refused.value.status, refused.value.code) == (401, "unauthorized")
    tenant = make_tenant(server)
    with Client(server.url, tenant.admin_key) as admin:
        current = admin.get_current_key()
        assert current["tenant_id"] == tenant.tenant_id
        assert sorted(current["scopes"]) == ["admin", "read", "write"]
        agent = unique("agent")
        made = admin.create_key("bot", scopes=("read", "write"), agent_ids=[agent])
        assert made["api_key"].startswith("rk_") and made["agent_ids"] == [agent]
        assert made["id"] in [k["id"] for k in admin.list_keys()["keys"]]
        with Client(server.url, made["api_key"]) as bot:
            assert bot.get_current_key()["id"] == made["id"]
            with pytest.raises(AgentMemoryError) as other_agent:
                bot.store_memory(unique("other"), "Likes tea")
            assert (other_agent.value.status, other_agent.value.code) == (403, "insufficient_scope")
            admin.revoke_key(made["id"])
            with pytest.raises(AgentMemoryError) as revoked:
                bot.get_current_key()
            assert revoked.value.status == 401


def test_store_memories_answers_one_result_per_item(admin: Client) -> None:
    agent, subject = unique("agent"), unique("customer")
    results = admin.store_memories(
        [
            {"agent_id": agent, "content": "Prefers email", "anchor_external_id": subject},
            {"agent_id": agent, "content": ""},
            {"agent_id": agent, "content": "prefers EMAIL.", "anchor_external_id": subject},
            {"agent_id": agent, "content": "Likes tea", "metadata": {"source": "batch"}},
        ]
    )["results"]
    assert [r.get("outcome") or r["problem"]["status"] for r in results] == ["created", 400, "reinforced", "created"]
    assert results[2]["memory"]["id"] == results[0]["memory"]["id"]
    assert results[1]["problem"]["errors"][0]["path"] == "content"
    assert results[3]["memory"]["binding"] == "private" and results[3]["memory"]["metadata"] == {"source": "batch"}


def test_memories_recall_correct_and_delete(admin: Client) -> None:
    agent, subject = unique("agent"), unique("customer")
    stored = admin.store_memory(agent, "Prefers to be contacted by email", anchor_external_id=subject)
    assert (stored["outcome"], stored["binding"]) == ("created", "anchored")
    again = admin.store_memory(agent, "Prefers to be contacted by email", anchor_external_id=subject)
    assert (again["id"], again["outcome"]) == (stored["id"], "reinforced")
    private = admin.store_memory(agent, "Escalations go to the on-call lead", metadata={"source": "test"})
    assert private["binding"] == "private" and private["metadata"] == {"source": "test"}

    results = admin.recall_memories(agent, "how to contact them by email", anchor_external_id=subject, limit=5)[
        "results"
    ]
    assert results[0]["id"] == stored["id"]
    assert set(results[0]["score_details"]) >= {"semantic", "lexical", "confidence", "recency"}

    assert admin.get_memory(stored["id"])["reinforcement_count"] == 1
    corrected = admin.correct_memory(stored["id"], "Prefers to be contacted by phone")
    assert corrected["corrects"] == stored["id"]
    assert admin.get_memory(stored["id"])["status"] == "superseded"
    superseded = admin.recall_memories(agent, "contacted", anchor_external_id=subject, include_superseded=True)
    assert stored["id"] in [r["id"] for r in superseded["results"]]
    actions = [e["action"] for e in admin.get_memory_history(stored["id"])["events"]]
    assert actions[:2] == ["created", "reinforced"] and "corrected" in actions

    admin.delete_memory(private["id"])
    with pytest.raises(AgentMemoryError) as gone:
        admin.get_memory(private["id"])
    error = gone.value
    assert (error.status, error.code) == (404, "not_found")
    assert error.detail and error.problem["title"]
    assert str(error).startswith("404 not_found: ")


def test_event_time_expiry_pins_and_as_of(admin: Client) -> None:
    agent, subject = unique("agent"), unique("customer")
    said = admin.store_memory(
        agent, "Moved to Lisbon", anchor_external_id=subject, occurred_at="2025-06-01T10:00:00Z", ttl_seconds=3600
    )
    assert said["occurred_at"] == "2025-06-01T10:00:00.000Z" and said["expires_at"] is not None
    pinned = admin.update_memory(said["id"], pinned=True, clear_expiry=True)
    assert pinned["pinned"] is True and pinned["expires_at"] is None
    assert "corrects" not in pinned
    other = admin.store_memory(agent, "Moved to Porto", anchor_external_id=subject)
    assert other.get("contradicts") == [said["id"]]
    past = admin.recall_memories(agent, "where did they move", anchor_external_id=subject, as_of=said["created_at"])
    assert [r["id"] for r in past["results"]] == [said["id"]]
    changed = admin.get_anchor_profile(said["anchor_id"] or "", changed_since=said["created_at"])
    assert {m["id"] for m in changed["memories"]} == {said["id"], other["id"]}


def test_a_refused_field_is_named(admin: Client) -> None:
    with pytest.raises(AgentMemoryError) as refused:
        admin.recall_memories(unique("agent"), "anything", limit=1000)
    assert (refused.value.status, refused.value.code) == (400, "invalid_request")
    assert [e["path"] for e in refused.value.errors] == ["limit"]


def test_subjects_sessions_and_their_lists(admin: Client) -> None:
    agent, subject = unique("agent"), unique("patient")
    anchor = admin.create_anchor(subject, name="A patient", metadata={"ward": "3"})
    assert admin.create_anchor(subject)["id"] == anchor["id"]
    assert admin.get_anchor(anchor["id"])["name"] == "A patient"
    assert [a["id"] for a in admin.list_anchors(anchor_external_id=subject)["anchors"]] == [anchor["id"]]
    assert admin.list_anchors(anchor_external_id_prefix=subject[:-2], limit=1)["anchors"][0]["id"] == anchor["id"]

    session = admin.start_session(agent, anchor_id=anchor["id"], metadata={"channel": "chat"})
    assert admin.get_session(session["id"])["status"] == "active"
    memory = admin.store_memory(agent, "Is travelling until Friday", session_id=session["id"])
    assert memory["binding"] == "session"
    listed = admin.list_session_memories(session["id"], limit=10)
    assert [m["id"] for m in listed["memories"]] == [memory["id"]] and listed["next_cursor"] is None
    assert [s["id"] for s in admin.list_anchor_sessions(anchor["id"])["sessions"]] == [session["id"]]
    ended = admin.end_session(session["id"])
    assert ended["status"] == "ended" and ended["expires_at"] is not None

    durable = admin.store_memory(agent, "Allergic to penicillin", anchor_id=anchor["id"])
    profile = admin.get_anchor_profile(anchor["id"])
    assert profile["anchor"]["id"] == anchor["id"] and [m["id"] for m in profile["memories"]] == [durable["id"]]

    exported = admin.export_anchor(anchor["id"])
    assert exported["format"] == "agent-memory-subject"
    assert {m["id"] for m in exported["memories"]} == {memory["id"], durable["id"]}

    with pytest.raises(AgentMemoryError) as unconfirmed:
        admin.purge_anchor(anchor["id"], purge=False)  # type: ignore[arg-type]
    assert unconfirmed.value.status == 400
    purged = admin.purge_anchor(anchor["id"], purge=True)
    assert purged["purged"] is True and purged["deleted"] == {"memories": 2, "sessions": 1}
    with pytest.raises(AgentMemoryError):
        admin.get_anchor(anchor["id"])


def test_canon_and_audit(admin: Client) -> None:
    text = f"Never share a customer's details ({unique('policy')})"
    entry = admin.write_canon("admin", text, metadata={"owner": "legal"})
    assert entry["binding"] == "canon"
    assert admin.write_canon("admin", text)["id"] == entry["id"]
    assert admin.get_canon(entry["id"])["content"] == text
    listed = admin.list_canon(limit=200)["canon"]
    assert entry["id"] in [c["id"] for c in listed]
    written = admin.list_audit_events(action="canon_written", limit=200)["events"]
    assert entry["id"] in [e["memory_id"] for e in written]
    admin.delete_canon(entry["id"])
    with pytest.raises(AgentMemoryError) as gone:
        admin.get_canon(entry["id"])
    assert gone.value.code == "not_found"


def test_ingest_a_conversation(admin: Client) -> None:
    agent, subject = unique("agent"), unique("customer")
    messages: List[ConversationMessage] = [
        {"role": "user", "content": "I live in Lisbon.", "id": "m1"},
        {"role": "assistant", "content": "Noted.", "id": "m2"},
    ]
    first = admin.ingest_conversation(agent, messages, conversation_id="c1", anchor_external_id=subject)
    assert first["extractor"] == "heuristic"
    assert any("Lisbon" in m["content"] for m in first["memories"])
    assert admin.ingest_conversation(agent, messages, conversation_id="c1", anchor_external_id=subject)[
        "skipped_messages"
    ] == 2


def test_request_reaches_any_route(admin: Client, tenant: Tenant) -> None:
    assert admin.request("GET", "/v1/keys/current")["tenant_id"] == tenant.tenant_id
