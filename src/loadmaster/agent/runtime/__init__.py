"""How the node agent runs a replica: the ``Runtime`` protocol and its one driver so far, processes."""
