"""Server logging: structlog, as readable lines on a terminal or JSON lines for a collector.

Tracebacks are printed plainly: structlog's default (rich, with local variables) can take seconds
to render a frame holding ten thousand replicas.
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(log_format: str = "console", level: int = logging.INFO) -> None:
    renderer: structlog.types.Processor
    if log_format == "json":
        renderer = structlog.processors.JSONRenderer()
        exceptions: list[structlog.types.Processor] = [structlog.processors.dict_tracebacks]
    else:
        renderer = structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
        exceptions = []
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            *exceptions,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )
