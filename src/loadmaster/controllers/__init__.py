"""Controllers: pure ``reconcile(desired, observed, now) -> list[Change]`` functions, no I/O.

Each controller compares what users declared (deployments, jobs) or what time implies (heartbeats)
with what the store holds (replicas, nodes) and returns the changes that close the gap. The runtime
(``runtime/reconciling/controller_loop.py``) feeds them views of the cached objects and writes their changes
with compare-and-swap on each object's revision, so a change computed from a stale view is refused
rather than applied twice. Every controller takes ``now`` (those without timers ignore it), so the
loop calls them all alike. They are level-triggered: running one twice on the same input returns
the same changes, and running it on its own output returns none.

Controllers do not import ``loadmaster.manifests`` (the layer contract keeps the two siblings
independent): they see plain views (``views.py``) and name replicas by their identity fields, and the
runtime turns a ``CreateReplicas`` change into replica objects with the manifests' builders.

Rooms: ``changes.py`` and ``views.py`` are the vocabulary every controller speaks; jobs, restarts,
replacements, time-slots and garbage collection sit beside them; ``deployments/`` holds the services'
slots and rolling updates, ``nodes/`` what happens when a node fails or leaves, ``rebalancing/`` the
pressure rebalancer.
"""
