"""API errors: one exception carrying an HTTP status, a stable code and a sentence, rendered as
`{"error": {"code": ..., "message": ...}}` (docs/api.md lists every code)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.responses import JSONResponse


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, *, headers: Mapping[str, str] | None = None,
                 detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})
        self.detail = detail


SECURITY_HEADERS = {"cache-control": "no-store", "x-content-type-options": "nosniff"}


def error_body(code: str, message: str, detail: dict[str, Any] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if detail:
        error["detail"] = detail
    return {"error": error}


def error_response(error: ApiError) -> JSONResponse:
    return JSONResponse(error_body(error.code, error.message, error.detail), status_code=error.status,
                        headers={**SECURITY_HEADERS, **error.headers})
