"""The ``/metrics`` gauges a cycle leaves: per queue, and GPU fragmentation per node and cluster-wide."""
