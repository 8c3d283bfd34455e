"""The async client is what gen_async.py makes of the sync one, not a copy drifting by hand."""

from __future__ import annotations

import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def test_the_async_client_is_generated_from_the_sync_one() -> None:
    spec = importlib.util.spec_from_file_location("gen_async", HERE / "gen_async.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    written = (HERE / "src" / "agent_memory" / "_async_client.py").read_text(encoding="utf-8")
    assert written == generator.render(), "run: python3 clients/python/gen_async.py"
