"""Only the invoked command's module is imported: simulate starts without the server's web stack."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from loadmaster.cli.main import main
sys.argv = ["loadmaster", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print("fastapi" in sys.modules, "loadmaster.cli.commands.server" in sys.modules)
"""


def loaded_after(*args: str) -> str:
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True)
    return result.stdout.strip().splitlines()[-1]


def test_simulate_does_not_import_the_web_stack() -> None:
    assert loaded_after("simulate", "--help") == "False False"


def test_the_root_help_loads_every_command_so_all_are_listed() -> None:
    assert loaded_after("--help") == "True True"
