"""What a failed operation looks like on the wire: the HTTP status and JSON body, secrets scrubbed.

Shared by the HTTP front end (:mod:`ccrawl.serve.ops_http`) and the worker that runs an operation in
a child process (:mod:`ccrawl.serve.worker`), which both answer with the same body.
"""

from __future__ import annotations

import os

from ccrawl.errors import (
    EXIT_CREDENTIAL,
    EXIT_NOTHING,
    EXIT_TEMPORARY,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    Absent,
    CcrawlError,
)
from ccrawl.jsontypes import JSONObject
from ccrawl.serve.binding import BindError

_STATUS = {EXIT_USAGE: 400, EXIT_NOTHING: 404, EXIT_CREDENTIAL: 401, EXIT_UNREACHABLE: 502, EXIT_TEMPORARY: 503}


class OverBudget(CcrawlError):
    """The operation ran past a budget of the server's and was stopped."""

    exit_code = EXIT_TEMPORARY

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def error_body(exc: BaseException) -> tuple[int, JSONObject]:
    """HTTP status and JSON body for an exception an operation raised."""
    if isinstance(exc, BindError):
        return 400, {"error": str(exc), "param": exc.param, "exit_code": EXIT_USAGE}
    if isinstance(exc, OverBudget):
        return exc.status, {"error": str(exc), "exit_code": exc.exit_code}
    if isinstance(exc, Absent):  # the request was fine; the server has no such store yet
        return 503, {"error": scrub(str(exc)), "exit_code": exc.exit_code}
    if isinstance(exc, CcrawlError):
        return _STATUS.get(exc.exit_code, 500), {"error": scrub(str(exc)), "exit_code": exc.exit_code}
    return 500, {"error": scrub(f"internal error: {type(exc).__name__}: {exc}"), "exit_code": 1}


#: environment variables whose values never leave the server in an answer
SECRET_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "CCRAWL_SERVE_TOKEN", "CCRAWL_HF_TOKEN")


def scrub(text: str) -> str:
    """``text`` without URL user-info and without the value of any secret the server holds."""
    from ccrawl.redact import redact_userinfo

    text = redact_userinfo(text)
    for name in SECRET_VARIABLES:
        value = os.environ.get(name)
        if value and len(value) >= 6:
            text = text.replace(value, "***")
    return text
