"""The real agent's replicas: the assignments it follows, and how each is launched, supervised,
health-checked, adopted after an agent restart and reported."""
