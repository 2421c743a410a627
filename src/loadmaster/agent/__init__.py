"""The node agents, speaking only the REST contract of docs/api.md (never the server's code).

``loadmaster agent --name NODE`` (``node_agent``) runs the replicas placed on NODE as processes
(``runtime/``), reports their state and health, executes the leader's commands and adopts its processes
after a restart (docs/agent.md). ``loadmaster agent --simulate`` (``simulation/``) registers N nodes,
heartbeats them, and reports the replicas assigned to them as Running (and Terminating ones as
Terminated) without running anything.

Rooms: ``link/`` speaks to the server (both agents); ``host/`` is the machine as a node; ``replicas/``
is the real agent's replicas; ``runtime/`` is what runs a replica (processes); ``simulation/`` is the
simulated agent. ``process.py`` runs either agent until a signal, ``agent_http.py`` is the real agent's
own endpoint.
"""
