"""Trace replay: a recorded workload through the real scheduler on a virtual clock (``loadmaster replay``).

A trace (``traces/``) is nodes and jobs with arrival times and runtimes. ``simulation`` replays it: jobs
arrive, every scheduling cycle is the scheduler's own ``run_cycle`` over the cluster as it stands, its
decisions (binds, evictions, moves) take effect at once, and jobs leave when their runtime has passed.
``figures`` turns what happened into the summary's numbers and ``report`` into one HTML page.
"""
