"""Filters: a node passes or is ruled out for a task, with the rejection category that names why
(``placement/extension_points.py``); ``topology_spread.py`` also holds the soft variant's scorer, which
shares its counting."""
