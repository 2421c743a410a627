"""The data dir and the files in it are private to the server's user, whatever the umask says.

The database holds every token's hash and the whole cluster's state, and the data dir holds the admin
token in clear: a umask of 000 (common in containers) would otherwise leave the dir 0777 and the
database 0644 (SQLite's default). So the dir is created 0700 and every file the server creates in it
0600. SQLite creates its ``-wal`` and ``-shm`` files with the database file's mode, so a database
made 0600 before SQLite opens it keeps its companions 0600 too; an existing database (and companions)
is brought down to 0600 as it is opened. A data dir that already exists keeps its mode: it may be a
directory the operator chose for other reasons (``--data-dir .``).
"""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def private_dir(path: Path) -> Path:
    """``path``, created 0700 if missing (its missing parents get the usual mode)."""
    if not path.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            path.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            pass  # created meanwhile by someone else: theirs to set
        else:
            os.chmod(path, PRIVATE_DIR_MODE)  # mkdir's mode is masked by the umask; set it exactly
    return path


def private_file(path: Path) -> Path:
    """``path`` created empty if missing, and 0600 either way."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)
    finally:
        os.close(fd)
    return path


def private_database(db_path: Path) -> Path:
    """The SQLite database file and the companions it already has, 0600 (see the module doc)."""
    private_file(db_path)
    for suffix in SQLITE_COMPANIONS:
        companion = db_path.with_name(db_path.name + suffix)
        if companion.exists():
            os.chmod(companion, PRIVATE_FILE_MODE)
    return db_path
