"""The REST API (docs/api.md): FastAPI routes over the control plane; ``create_app(plane)`` builds it."""
