"""The README's Python example runs as written, against the test server, with a key in the
environment as the example reads it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from .conftest import REPO, Server, make_tenant

HERE = Path(__file__).resolve().parents[1]


def readme_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("### The Python client", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the README's Python client section has no python example"
    return match.group(1)


def test_the_readme_example_runs_as_written(server: Server) -> None:
    example = readme_example()
    # A tenant of its own: no other test's canon takes a place in its recall.
    tenant = make_tenant(server)
    assert len(example.strip().splitlines()) <= 12
    env = dict(os.environ, AGENT_MEMORY_URL=server.url, AGENT_MEMORY_KEY=tenant.admin_key)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE / "src"), env.get("PYTHONPATH")]))
    ran = subprocess.run([sys.executable, "-c", example], env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0].endswith(" Prefers to be contacted by email")
    assert lines[-1].startswith("404 not_found ")
