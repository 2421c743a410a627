"""One router per resource; ``api.app`` includes them, the generic ``/api/{kind}`` routes last."""
