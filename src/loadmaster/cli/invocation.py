"""How this ``loadmaster`` was started, as a command a person can type again in the same shell.

``scripts/setup`` leaves the command at ``.venv/bin/loadmaster``, which is not on ``PATH``; telling that
user to run a bare ``loadmaster`` fails. So: ``loadmaster`` when that name on ``PATH`` is this very
script, else the path that was typed (relative to the current directory when it is under it), else
``python -m loadmaster`` with this interpreter (for ``python -m loadmaster`` and anything unrecognised).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

COMMAND_NAME = "loadmaster"


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def as_typed(path: Path, cwd: Path, *, executable: bool = False) -> str:
    """``path`` relative to ``cwd`` when it lies under it (``.venv/bin/loadmaster``), else absolute.

    An executable in ``cwd`` itself gets ``./`` (a bare name would be looked up on PATH instead)."""
    absolute = path if path.is_absolute() else cwd / path
    try:
        relative = absolute.relative_to(cwd)
    except ValueError:
        return str(absolute)
    return f"./{relative}" if executable and len(relative.parts) == 1 else str(relative)


def command_prefix(
    argv0: str | None = None,
    *,
    path_env: str | None = None,
    cwd: Path | None = None,
    python: str | None = None,
) -> str:
    """The words that start this CLI again, e.g. ``loadmaster``, ``.venv/bin/loadmaster`` or
    ``/usr/bin/python3 -m loadmaster`` (quoted for a POSIX shell)."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    cwd = Path.cwd() if cwd is None else cwd
    python = sys.executable if python is None else python
    script = Path(argv0)
    if argv0 and script.name == COMMAND_NAME and (cwd / script).is_file():
        on_path = shutil.which(COMMAND_NAME, path=os.environ.get("PATH") if path_env is None else path_env)
        if on_path is not None and _same_file(Path(on_path), cwd / script):
            return COMMAND_NAME
        if "/" in argv0:
            return shlex.quote(as_typed(script, cwd, executable=True))
    python_words = shlex.quote(as_typed(Path(python), cwd, executable=True) if "/" in python else python)
    return f"{python_words} -m loadmaster"
