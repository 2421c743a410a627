"""Timelines (``shared/spec/timeline-format.md``): the whole control plane run over virtual time.

The harness runs the same code as ``loadmaster server`` with three parts swapped: the event loops clock
(``virtual_loop.py``), the store (memory) and the agents (simulated, driven by the file).
"""
