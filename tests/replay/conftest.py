"""The shared traces folder (read, never copied): beside the checkout, further up for a worktree or a
clone elsewhere, or where LOADMASTER_TRACES says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def traces_folder() -> Path:
    if os.environ.get("LOADMASTER_TRACES"):
        return Path(os.environ["LOADMASTER_TRACES"])
    for base in (*ROOT.parents, Path("/work")):
        if (base / "shared" / "traces").is_dir():
            return base / "shared" / "traces"
    raise FileNotFoundError("no shared/traces folder above the checkout; set LOADMASTER_TRACES")


@pytest.fixture(scope="session")
def traces() -> Path:
    return traces_folder()
