"""The ``loadmaster`` command line: ``commands/`` holds one module per command (``main.py`` registers
them), ``views/`` renders answers as tables and text, ``remote/`` talks to a server; beside them, how a
command fails (``failures.py``), what ``-f`` names (``manifest_files.py``) and what ``up`` starts and
waits for (``local_processes.py``, ``placements.py``, ``invocation.py``). No scheduling logic lives here.
"""
