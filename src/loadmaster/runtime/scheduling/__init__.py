"""Scheduling flow: the leader's scheduler service and what it needs.

Rooms: ``model/`` is the scheduler's model of the cluster, kept in step with the cache; ``deciding/``
runs the cycle's decide step (in a worker process, or in the server's); ``preview/``, ``scale_up/``,
``explaining/`` (why, stickiness, queue state) and ``telemetry/`` (the cycle's gauges) serve the API and
``/metrics``. Beside the service: writing a plan back (``cycle_writes.py``), the retry policy and its
backoff's end (``retry_policy.py``, ``room_events.py``), restarts' nodes, stale gangs, time-slots,
address slots and the GPU shapes learnt.
"""
