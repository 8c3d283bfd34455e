"""A real server for the tests: `node bin/agent-memory.js serve` from the repository's checkout
(built: `npm ci` builds it), on a free port, on PGlite in a temporary DATA_DIR, or on the Postgres
database TEST_DATABASE_URL names; a tenant made with the setup token, as the README's walk-through
does."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from agent_memory import Client

REPO = Path(__file__).resolve().parents[3]
READY_WITHIN_S = 180


@dataclass(frozen=True)
class Server:
    url: str
    setup_token: str


@dataclass(frozen=True)
class Tenant:
    tenant_id: str
    admin_key: str


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH")
    if not (REPO / "dist" / "cli" / "main.js").exists():
        pytest.fail("the checkout is not built: run `npm ci` (or `npm run build`) first")
    port = free_port()
    token = secrets.token_urlsafe(32)
    work = tmp_path_factory.mktemp("server")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DATABASE_READ_URL", "METRICS_PORT")}
    env.update(
        PORT=str(port),
        HOST="127.0.0.1",
        SETUP_TOKEN=token,
        EMBEDDER="hash",
        LOG_LEVEL="warn",
        DATA_DIR=str(work / "data"),
        # The webhook tests' receiver listens on loopback, which is refused otherwise.
        WEBHOOK_ALLOW_PRIVATE="true",
    )
    database_url = os.environ.get("TEST_DATABASE_URL")
    if database_url:
        env["DATABASE_URL"] = database_url
    log_path = work / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([node, "bin/agent-memory.js", "serve"], cwd=REPO, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_WITHIN_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"the server exited ({process.returncode}):\n{log_path.read_text()[-4000:]}")
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"/readyz did not answer 200 within {READY_WITHIN_S} s:\n{log_path.read_text()[-4000:]}")
            time.sleep(0.2)
        yield Server(url=url, setup_token=token)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def make_tenant(server: Server) -> Tenant:
    with Client(server.url) as anonymous:
        made = anonymous.create_tenant(unique("python-client"), setup_token=server.setup_token)
    return Tenant(tenant_id=made["tenant_id"], admin_key=made["api_key"])


@pytest.fixture
def tenant(server: Server) -> Tenant:
    """A tenant for each test: no other test's canon or keys show in its answers."""
    return make_tenant(server)


@pytest.fixture
def admin(server: Server, tenant: Tenant) -> Iterator[Client]:
    with Client(server.url, tenant.admin_key) as client:
        yield client
