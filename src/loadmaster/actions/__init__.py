"""The scheduling actions (KAI order: allocate, consolidate, reclaim, preempt, stale_gang_eviction), each
reading and changing one Session through its Statement; ``victims/`` is the victim search they share.
"""
