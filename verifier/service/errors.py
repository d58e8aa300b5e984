"""The service's one map from an error to its HTTP answer, `{"error": {"code", "message"[, "detail"]}}`
(docs/api.md lists every code).

Every error class in `verifier.errors` carries its status, code and headers; a route raises the
error (a domain error as it came, or `ApiError` for a reason of HTTP itself) and `error_response`
answers it. Nothing else in the service builds an error answer.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

from verifier.errors import RequestError, VerifierError

# The routes' name for an error of HTTP itself (its status and code are the raise's own).
ApiError = RequestError

SECURITY_HEADERS = {"cache-control": "no-store", "x-content-type-options": "nosniff"}
# Starlette's own refusals (no route, wrong method), in our codes.
_STARLETTE_CODES = {404: "not_found", 405: "method_not_allowed"}
_INTERNAL = "the service failed on this request; it was logged"
log = logging.getLogger("rw.service")


def error_body(code: str, message: str, detail: dict[str, Any] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if detail:
        error["detail"] = detail
    return {"error": error}


def error_response(exc: BaseException) -> JSONResponse:
    """The answer to any error that reached a route: ours by its class's status, code and headers;
    Starlette's by its status; anything else (or an error whose class is the crash, 500) logged and
    answered 500 `internal` with a sentence that names nothing inside."""
    detail: dict[str, Any] | None = None
    if isinstance(exc, HTTPException):
        status, code, message = exc.status_code, _STARLETTE_CODES.get(exc.status_code, "http_error"), str(exc.detail)
        headers: dict[str, str] = dict(exc.headers or {})
    elif isinstance(exc, VerifierError) and exc.http_status != 500:
        status, code, message, headers = exc.http_status, exc.code, str(exc), dict(exc.headers)
        detail = exc.detail if isinstance(exc, RequestError) else None
    else:
        log.error("internal error: %s", type(exc).__name__, exc_info=exc)
        status, code, message, headers = 500, "internal", _INTERNAL, {}
    return JSONResponse(error_body(code, message, detail), status_code=status,
                        headers={**SECURITY_HEADERS, **headers})
