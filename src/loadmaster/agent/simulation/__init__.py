"""The simulated agent (``loadmaster agent --simulate``): N nodes that run nothing and report what a
real node would."""
