"""The server's log lines: plain text, or one JSON object per line for log collectors
(``log_format = "json"``)."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """``{"time": ..., "level": ..., "logger": ..., "message": ...}`` (and ``"exception"``
    with the traceback when there is one), one line each: a message's own line breaks are
    escaped by JSON, so one record is always one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def admin_lines_to_stderr() -> None:
    """Print the admin log's lines (logger ``canasta.admin``) on standard error, for an admin
    command run by hand, from cron or a systemd timer (its journal keeps them), without
    touching any other logger."""
    admin = logging.getLogger("canasta.admin")
    admin.handlers[:] = [logging.StreamHandler(sys.stderr)]
    admin.handlers[0].setFormatter(logging.Formatter("canasta-server: %(message)s"))
    admin.setLevel(logging.INFO)
    admin.propagate = False


def configure(level: str, log_format: str) -> None:
    """Send the log to standard error, as text or JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
