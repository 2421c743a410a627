"""The node agent. For now the simulated one: ``loadmaster agent --simulate`` registers N nodes, heartbeats
them, and reports the replicas assigned to them as Running (and Terminating ones as Terminated), speaking
only the REST contract of docs/api.md."""
