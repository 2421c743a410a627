"""The only code that loops, sleeps, reads the clock, logs and writes the store, split by flow:
``scheduling/`` (the scheduler service), ``reconciling/`` (the controller loop), ``requests/`` (what the
API's handlers do) and ``plane/`` (the plumbing under them); ``control_plane``, ``config`` and
``wiring`` at the root compose them into one running control plane.
"""
