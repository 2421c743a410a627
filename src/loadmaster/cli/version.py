"""``loadmaster --version``: this installation's version and the Python it runs on."""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version


def version_line() -> str:
    try:
        installed = version("loadmaster")
    except PackageNotFoundError:  # run from a source tree that was never installed
        installed = "unknown"
    return f"loadmaster {installed} (Python {platform.python_version()})"
