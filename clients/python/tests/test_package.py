"""The package builds with the standard tooling and no download (setuptools as Debian ships it),
into a wheel holding the client, its type marker, and nothing of the tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def test_a_wheel_builds_offline_with_the_client_and_its_types(tmp_path: Path) -> None:
    # A copy, so that the build's folders (build/, *.egg-info) land outside the checkout.
    source = tmp_path / "source"
    shutil.copytree(HERE, source, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "build", "*.egg-info"))
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = tmp_path.glob("agent_memory_client-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("__init__.py", "_client.py", "_async_client.py", "_types.py", "py.typed"):
        assert f"agent_memory/{needed}" in names
    assert not [n for n in names if n.startswith("tests/") or "gen_async" in n]
    metadata = next(n for n in names if n.endswith("METADATA"))
    lines = zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
    requires = [line for line in lines if line.startswith("Requires-Dist:")]
    assert sorted(r.split()[1].split(">")[0] for r in requires) == ["anyio", "httpx"]
