"""One module per ``loadmaster`` command, each with a ``register(app)`` that ``cli/main.py`` calls."""
