"""Stored objects turned into what the scheduler sees (``core.model``): nodes, replicas as tasks and
jobs, a job's own fields, worker templates, and the whole cluster rebuilt from the store."""
