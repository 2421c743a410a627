"""This machine's capacity as a node registration reads it (psutil), unless ``--capacity`` says otherwise."""

from __future__ import annotations

import psutil

MEBIBYTE = 1024 * 1024


def machine_capacity() -> dict[str, str]:
    """``{"cpu": "<logical cores>", "memory": "<total>Mi"}`` (rounded down to whole MiB)."""
    cores = psutil.cpu_count(logical=True) or 1
    return {"cpu": str(cores), "memory": f"{psutil.virtual_memory().total // MEBIBYTE}Mi"}
