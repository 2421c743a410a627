"""Where a cycle's decide step runs: in the server's process or in a worker process, and what goes to
the worker and comes back."""
