"""Server logging: structlog, as readable lines on a terminal or JSON lines for a collector.

Everything the process logs goes the same way: the standard library's loggers (uvicorn's errors,
asyncio's "Task was destroyed" and unhandled-exception reports) and Python warnings are rendered by
the same structlog renderer, so ``--log-format json`` yields nothing but JSON lines.

Tracebacks are printed plainly: structlog's default (rich, with local variables) can take seconds
to render a frame holding ten thousand replicas.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog

CHATTY_LIBRARIES = ("uvicorn", "httpx", "httpcore")
CHATTY_LEVEL = logging.WARNING


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time (a test runner swaps it)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _: TextIO) -> None:
        pass


def configure_logging(log_format: str = "console", level: int = logging.INFO) -> None:
    renderer: structlog.types.Processor
    if log_format == "json":
        renderer = structlog.processors.JSONRenderer()
        # without locals: a frame holding ten thousand replicas would be a megabyte line
        exceptions: list[structlog.types.Processor] = [
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            )
        ]
    else:
        renderer = structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
        exceptions = []
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, *exceptions, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )
    handler = _CurrentStderr()
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *exceptions, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    # uvicorn's start/stop lines repeat the server's own "serving"/"shutting down" events, and httpx logs
    # every request at info; their warnings and errors still show
    for chatty in CHATTY_LIBRARIES:
        logging.getLogger(chatty).setLevel(max(level, CHATTY_LEVEL))
    logging.captureWarnings(True)
