"""One file per placement plugin (filters and scorers); ``placement/registry.py`` registers them by name."""
