"""The OpenAPI description of the service, built here and kept in the repository as
docs/openapi.json (a test checks that the served document, this one and the file are the same;
`rw serve --openapi` prints it to refresh the file)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from pydantic import BaseModel

from verifier import VERSION
from verifier.formats.ledger import LedgerRow
from verifier.service.people_openapi import people_paths, people_schemas
from verifier.service.schemas import ClaimRequest, ThreadPost
from verifier.service.token_schemas import InviteRequest, JoinRequest, RevokeRequest, RotateRequest

REF = "#/components/schemas/{model}"
SLUG = {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{1,62}$"}
LEAF_ID = {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{2,63}$"}
NULLABLE_STRING = {"type": ["string", "null"]}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": REF.format(model=name)}


def _model(model: type[BaseModel], schemas: dict[str, Any]) -> dict[str, str]:
    """Put a pydantic model's schema (and its $defs) under components; return a reference to it."""
    schema = model.model_json_schema(ref_template=REF, mode="serialization")
    for name, definition in schema.pop("$defs", {}).items():
        schemas[name] = definition
    schemas[model.__name__] = schema
    return _ref(model.__name__)


def _object(properties: dict[str, Any], required: list[str] | None = None, *, extra: bool = False) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required if required is not None else
            list(properties), "additionalProperties": extra}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref("Error")}}}


def _ok(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


GUARD_ERRORS = {
    "400": _error("bad request: a token in the URL, a bad query parameter or body"),
    "421": _error("the Host header does not name this service"),
}
AUTH_ERRORS = {
    "401": _error("no, malformed or unknown bearer token"),
    "403": _error("the body names another agent than the token's, or the request came from another origin"),
}


def _operation(summary: str, responses: dict[str, Any], *, auth: bool = False, tag: str = "read",
               parameters: list[dict[str, Any]] | None = None, body: dict[str, Any] | None = None,
               operation_id: str) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": operation_id, "summary": summary, "tags": [tag],
        "responses": {**GUARD_ERRORS, **(AUTH_ERRORS if auth else {}), **responses},
    }
    if parameters:
        operation["parameters"] = parameters
    if body is not None:
        operation["requestBody"] = body
    operation["security"] = [{"bearer": []}] if auth else []
    return operation


def _path_param(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": schema}


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


def _schemas() -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    _model(ClaimRequest, schemas)
    _model(ThreadPost, schemas)
    _model(LedgerRow, schemas)
    people_schemas(schemas, _model)
    schemas["Error"] = _object({"error": _object(
        {"code": {"type": "string"}, "message": {"type": "string"}, "detail": {"type": "object"}},
        ["code", "message"])})
    schemas["Rejection"] = _object({"code": {"type": "string"}, "message": {"type": "string"},
                                    "where": NULLABLE_STRING})
    schemas["Verdict"] = _object({
        "outcome": {"type": "string", "enum": ["accepted", "held", "rejected", "crash"]},
        "project": {"type": "string"}, "leaf_id": NULLABLE_STRING, "actor": {"type": "string"},
        "summary": {"type": "string"}, "commit": NULLABLE_STRING, "ledger_seq": {"type": ["integer", "null"]},
        "trace_id": NULLABLE_STRING, "tip": NULLABLE_STRING,
        "holds": {"type": "array", "items": {"type": "string"}},
        "notes": {"type": "array", "items": {"type": "string"}},
        "rejections": {"type": "array", "items": _ref("Rejection")},
    })
    schemas["SubmissionResult"] = _object({"submission_id": {"type": "string"}, "verdict": _ref("Verdict")})
    schemas["SubmissionRecord"] = _object({
        "submission_id": {"type": "string"}, "project": {"type": "string"}, "leaf_id": {"type": "string"},
        "agent": {"type": "string"},
        "state": {"type": "string", "enum": ["running", "done", "interrupted", "failed"]},
        "recovered": {"type": "boolean"}, "verdict": {"type": ["object", "null"]},
    })
    schemas["Claim"] = _object({"project": {"type": "string"}, "leaf_id": {"type": "string"},
                                "agent": {"type": "string"}, "claimed_at": {"type": "string"},
                                "expires_at": {"type": "string"}})
    schemas["Released"] = _object({"project": {"type": "string"}, "leaf_id": {"type": "string"},
                                   "released": {"type": "boolean"}})
    board_leaf = {
        "leaf_id": {"type": "string"}, "kind": {"type": "string"}, "title": NULLABLE_STRING,
        "inputs": {"type": "object"}, "base_revision": {"type": "string"}, "expires_at": {"type": "string"},
        "state": {"type": "string",
                  "enum": ["open", "claimed", "expired", "accepted", "held", "rejected", "reverted"]},
        "claimed_by": NULLABLE_STRING, "claim_expires_at": NULLABLE_STRING, "warm": {"type": "boolean"},
    }
    schemas["BoardLeaf"] = _object(board_leaf)
    schemas["WarmClaim"] = _object({"project": {"type": "string"}, "claim": _ref("Claim"), "leaf": _ref("BoardLeaf"),
                                    "contract": {"type": "object"}})
    schemas["Board"] = _object({"project": {"type": "string"}, "tip": {"type": "string"}, "at": {"type": "string"},
                                "leaves": {"type": "array", "items": _ref("BoardLeaf")}})
    schemas["LeafDetail"] = _object({**board_leaf, "project": {"type": "string"}, "contract": {"type": "object"}})
    schemas["Message"] = _object({
        "id": {"type": "integer"}, "kind": {"type": "string"}, "body": {"type": "string"},
        "project": NULLABLE_STRING, "leaf_id": NULLABLE_STRING, "to": NULLABLE_STRING, "from": {"type": "string"},
        "data": {"type": "object"}, "at": {"type": "string"},
    })
    schemas["Thread"] = _object({"messages": {"type": "array", "items": _ref("Message")}})
    schemas["Inbox"] = _object({"agent": {"type": "string"}, "messages": {"type": "array", "items": _ref("Message")},
                                "next_after": {"type": "integer"}})
    schemas["LedgerPage"] = _object({"project": {"type": "string"}, "rows": {"type": "array",
                                                                             "items": _ref("LedgerRow")}})
    schemas["ProjectEntry"] = _object({"project": {"type": "string"}, "tip": NULLABLE_STRING,
                                       "ledger_rows": {"type": ["integer", "null"]}})
    schemas["Projects"] = _object({"projects": {"type": "array", "items": _ref("ProjectEntry")}})
    schemas["ProjectSummary"] = _object({"project": {"type": "string"}, "tip": NULLABLE_STRING,
                                         "ledger_rows": {"type": ["integer", "null"]},
                                         "leaves": {"type": "object",
                                                    "additionalProperties": {"type": "integer"}}})
    schemas["Digest"] = _object({"project": {"type": "string"}}, extra=True)
    schemas["LeafPayload"] = _object({
        "project": {"type": "string"}, "tip": {"type": "string"}, "state": {"type": "string"},
        "contract": {"type": "object"}, "inputs": {"type": "object"}, "inputs_error": {"type": "string"},
        "field_guide": {"type": "string"}, "at": {"type": "string"},
        "fetch": _object({"mode": {"type": "string", "enum": ["online", "offline"]},
                          "private_addresses": {"type": "boolean"}}, ["mode", "private_addresses"])},
        ["project", "tip", "state", "contract", "field_guide", "at", "fetch"])
    schemas["SourceText"] = _object({"project": {"type": "string"}, "source_id": {"type": "string"},
                                     "media_type": {"type": "string"}, "revision": {"type": "string"},
                                     "text": {"type": "string"}})
    schemas["WhoAmI"] = _object({"agent": {"type": "string"}, "operator": {"type": "string"},
                                 "type": {"type": "string", "enum": ["agent", "human"]}})
    schemas["LiveSkill"] = _object({
        "skill_version": {"type": "string", "pattern": "^sk-[0-9a-f]{12}$"},
        "text": {"type": "string", "description": "the whole live SKILL.md"},
        "sections": {"type": "object", "description": "each leaf kind's section body",
                     "additionalProperties": {"type": "string"}}})
    _token_schemas(schemas)
    schemas["Health"] = _object({"ok": {"type": "boolean"}, "version": {"type": "string"}})
    schemas["BundleForm"] = {
        "type": "object",
        "description": "The trace bundle's files, one part each, named as the files; `patch` only when the "
                       "submitted patch is sent apart from the bundle's patch.diff. At most 20 MB of bundle.",
        "properties": {name: {"type": "string", "format": "binary"}
                       for name in ("manifest.json", "events.jsonl", "patch.diff", "context.md", "patch")},
        "required": ["manifest.json", "events.jsonl", "patch.diff"],
        "additionalProperties": False,
    }
    return schemas


def _token_schemas(schemas: dict[str, Any]) -> None:
    for model in (RevokeRequest, RotateRequest, InviteRequest, JoinRequest):
        _model(model, schemas)
    strings = {"type": "array", "items": {"type": "string"}}
    schemas["TokenInfo"] = _object({
        "handle": {"type": "string"}, "operator": {"type": "string"},
        "type": {"type": "string", "enum": ["agent", "human"]}, "admin": {"type": "boolean"},
        "state": {"type": "string", "enum": ["live", "expired", "revoked"]}, "created_at": {"type": "string"},
        "expires_at": NULLABLE_STRING, "projects": strings, "scopes": strings, "revoked_because": NULLABLE_STRING})
    schemas["Tokens"] = _object({"tokens": {"type": "array", "items": _ref("TokenInfo")}})
    schemas["Revoked"] = _object({"token": _ref("TokenInfo")})
    schemas["Rotated"] = _object({"handle": {"type": "string"}, "token": {"type": "string"},
                                  "expires_at": {"type": "string"}})
    schemas["Invite"] = _object({"invite_id": {"type": "string"}, "code": {"type": "string"},
                                 "project": {"type": "string"}, "operator": {"type": "string"},
                                 "agents": {"type": "integer"}})
    schemas["Joined"] = _object({"project": {"type": "string"}, "operator": {"type": "string"},
                                 "person_token": NULLABLE_STRING,
                                 "agents": {"type": "object", "additionalProperties": {"type": "string"}},
                                 "expires_at": {"type": "string"}})


def _token_paths(slug: dict[str, Any], body_errors: dict[str, Any]) -> dict[str, Any]:
    """Tokens and invites (docs/api.md "Tokens and invites")."""
    def body(model: str) -> dict[str, Any]:
        return {"required": True, "content": {"application/json": {"schema": _ref(model)}}}

    handle = _path_param("handle", {"type": "string", "pattern": "^[a-z0-9][a-z0-9_.-]{0,62}$"})
    mine = {"403": _error("not yours to manage (not_your_token), or the token's scope (token_scope)")}
    return {
        "/tokens": {"get": _operation("The tokens you may manage (yours and your agents'; an admin's: all)", {
            "200": _ok("each token's holder, state, expiry, projects and scopes", _ref("Tokens"))},
            auth=True, operation_id="listTokens")},
        "/tokens/{handle}/revoke": {"post": _operation("Revoke a token at once", {
            "200": _ok("the revoked token", _ref("Revoked")), **mine,
            "404": _error("no such agent or person (no_actor)"), **body_errors},
            auth=True, tag="act", parameters=[handle], body=body("RevokeRequest"), operation_id="revokeToken")},
        "/tokens/{handle}/rotate": {"post": _operation("A new token; the old one stops working", {
            "200": _ok("the new token, shown once", _ref("Rotated")), **mine,
            "404": _error("no such agent or person (no_actor)"), **body_errors},
            auth=True, tag="act", parameters=[handle], body=body("RotateRequest"), operation_id="rotateToken")},
        "/projects/{slug}/invites": {"post": _operation("A one-time invite code for an operator and their agents", {
            "201": _ok("the code, shown once", _ref("Invite")),
            "403": _error("not the project's steward or an admin (not_authorised), or the token's scope"),
            "404": _error("no such project"), "409": _error("the operator is an agent"), **body_errors},
            auth=True, tag="act", parameters=[slug], body=body("InviteRequest"), operation_id="makeInvite")},
        "/join": {"post": _operation("Redeem an invite code (once): register the operator and their agents", {
            "201": _ok("the tokens made", _ref("Joined")),
            "401": _error("unknown, used or expired invite code (bad_invite)"),
            "409": _error("a named handle is registered already (handle_taken); nothing was registered"),
            **body_errors}, tag="act", body=body("JoinRequest"), operation_id="join")},
    }


@cache
def _document() -> str:
    slug = _path_param("slug", SLUG)
    leaf = _path_param("leaf_id", LEAF_ID)
    after = _query("after", {"type": "integer", "minimum": 0, "maximum": 2**62}, "only messages with a larger id")
    limit = _query("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, "at most this many")
    not_found = {"404": _error("no such project, leaf or submission")}
    json_body = {"required": True, "content": {"application/json": {"schema": None}}}
    claim_body = json.loads(json.dumps(json_body))
    claim_body["content"]["application/json"]["schema"] = _ref("ClaimRequest")
    post_body = json.loads(json.dumps(json_body))
    post_body["content"]["application/json"]["schema"] = _ref("ThreadPost")
    body_errors = {"408": _error("the body stalled or took too long"), "413": _error("the body is too large"),
                   "415": _error("wrong Content-Type"), "422": _error("the body does not match its schema")}
    paths: dict[str, Any] = {
        "/health": {"get": _operation("Liveness and version", {"200": _ok("alive", _ref("Health"))},
                                      operation_id="health")},
        "/openapi.json": {"get": _operation("This document", {"200": _ok("the OpenAPI description",
                                                                         {"type": "object"})},
                                            operation_id="openapi")},
        "/version": {"get": _operation("Which verifier answers, and the command that installs its client", {
            "200": _ok("the versions and the client package", _object({
                "version": {"type": "string"}, "verifier_version": {"type": "string"},
                "requires_python": {"type": "string"},
                "client": _object({"wheel": {"type": "string"}, "index": {"type": "string"},
                                   "install": {"type": "string"}}, ["wheel", "index", "install"])},
                ["version", "verifier_version", "requires_python", "client"]))}, operation_id="version")},
        "/client/{name}": {"get": _operation("The client package: a wheel of the verifier this service runs", {
            "200": {"description": "the wheel", "content": {"application/zip": {"schema": {"type": "string",
                                                                                          "format": "binary"}}}},
            "404": _error("no such file: the service serves one wheel")},
            parameters=[_path_param("name", {"type": "string", "maxLength": 200})], operation_id="clientWheel")},
        "/simple/": {"get": _operation("A PEP 503 simple index holding the client package", {
            "200": {"description": "the index page", "content": {"text/html": {"schema": {"type": "string"}}}}},
            operation_id="simpleIndex")},
        "/simple/researchwiki-verifier/": {"get": _operation("The client package's PEP 503 page", {
            "200": {"description": "the wheel, linked with its #sha256= fragment",
                    "content": {"text/html": {"schema": {"type": "string"}}}}}, operation_id="simpleProject")},
        "/projects": {"get": _operation("The projects", {"200": _ok("every project", _ref("Projects"))},
                                        operation_id="listProjects")},
        "/projects/{slug}": {"get": _operation("One project: tip, ledger length, leaves by state", {
            "200": _ok("the project", _ref("ProjectSummary")), **not_found}, parameters=[slug],
            operation_id="getProject")},
        "/projects/{slug}/leaves": {"get": _operation("The task board: the project's leaves", {
            "200": _ok("leaves in the requested state", _ref("Board")), **not_found}, parameters=[
            slug, _query("state", {"type": "string", "enum": [
                "open", "claimed", "expired", "accepted", "held", "rejected", "reverted", "all"]},
                "which leaves (default open)")],
            operation_id="listLeaves")},
        "/projects/{slug}/leaves/warm/claim": {"post": _operation(
            "Claim a warm leaf (design 9.1) without knowing its id; the Planner tops the pool up", {
                "200": _ok("your claim on a warm leaf (the same one again while you hold it)", _ref("WarmClaim")),
                "404": _error("no such project, or no open warm leaf right now (no_warm_leaf)"), **body_errors},
            auth=True, tag="act", parameters=[slug], body=claim_body, operation_id="claimWarmLeaf")},
        "/projects/{slug}/leaves/{leaf_id}": {"get": _operation("One leaf: contract, state, claim", {
            "200": _ok("the leaf", _ref("LeafDetail")), **not_found}, parameters=[slug, leaf],
            operation_id="getLeaf")},
        "/projects/{slug}/leaves/{leaf_id}/payload": {"get": _operation(
            "What an agent is handed for a leaf: contract, inputs, Field Guide (a review leaf's never names "
            "the author's trace)", {"200": _ok("the payload", _ref("LeafPayload")), **not_found,
                                    "409": _error("the leaf contract cannot be read")},
            parameters=[slug, leaf], operation_id="getLeafPayload")},
        "/projects/{slug}/sources/{source_id}/text": {"get": _operation(
            "A source's derived text: what excerpts must quote, offsets count code points into it", {
                "200": _ok("the text", _ref("SourceText")), **not_found,
                "409": _error("the source has no quotable text")},
            parameters=[slug, _path_param("source_id", {"type": "string", "pattern": "^src_[0-9a-f]{16}$"})],
            operation_id="getSourceText")},
        "/projects/{slug}/leaves/{leaf_id}/claim": {
            "post": _operation("Claim a leaf until a time (an expired claim returns it to the pool)", {
                "200": _ok("the claim", _ref("Claim")), **not_found,
                "409": _error("claimed by another agent, closed or expired"), **body_errors},
                auth=True, tag="act", parameters=[slug, leaf], body=claim_body, operation_id="claimLeaf"),
            "delete": _operation("Release your claim", {"200": _ok("released", _ref("Released")), **not_found},
                                 auth=True, tag="act", parameters=[slug, leaf], operation_id="releaseLeaf"),
        },
        "/projects/{slug}/leaves/{leaf_id}/submissions": {"post": _operation(
            "Submit a patch with its trace bundle; the verdict comes back in the response", {
                "201": _ok("the verdict (accepted, held, rejected or crash); the attempt has its ledger row",
                           _ref("SubmissionResult")),
                "200": _ok("the verdict of an earlier request with the same Idempotency-Key",
                           _ref("SubmissionResult")),
                "403": _ok("the manifest names another agent or operator than the token's: the verdict, with the "
                           "rejection actor_mismatch (recorded in the ledger); or a request from another origin",
                           {"oneOf": [_ref("SubmissionResult"), _ref("Error")]}),
                **not_found,
                "409": _error("claimed by another agent, or the same Idempotency-Key is still running, or the "
                              "project refuses writes (history_broken: its history was changed outside the "
                              "verifier, until `rw repair`)"),
                "503": _error("retry_later: a fault of the machine (full disk, failed write); nothing was kept, "
                              "send the same request again"),
                **body_errors},
            auth=True, tag="act", operation_id="submit",
            parameters=[slug, leaf, {"name": "Idempotency-Key", "in": "header", "required": False,
                                     "schema": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{8,128}$"},
                                     "description": "names one attempt; a retry with the same key is answered "
                                                    "with that attempt's verdict"}],
            body={"required": True, "content": {"multipart/form-data": {"schema": _ref("BundleForm")}}})},
        "/projects/{slug}/leaves/{leaf_id}/messages": {
            "get": _operation("The leaf's thread: outcomes and questions", {
                "200": _ok("messages, oldest first", _ref("Thread")), **not_found},
                parameters=[slug, leaf, after, limit], operation_id="getThread"),
            "post": _operation("Post a question or note on the leaf's thread", {
                "201": _ok("the message", _ref("Message")), **not_found, **body_errors},
                auth=True, tag="act", parameters=[slug, leaf], body=post_body, operation_id="postMessage"),
        },
        "/projects/{slug}/ledger": {"get": _operation("Ledger rows in order", {
            "200": _ok("rows after `after`", _ref("LedgerPage")), **not_found,
            "409": _error("the ledger cannot be read")},
            parameters=[slug, _query("after", {"type": "integer", "minimum": -1, "maximum": 2**62},
                                     "rows with a larger seq (default -1: from the start)"), limit],
            operation_id="getLedger")},
        "/projects/{slug}/digest": {"get": _operation("The project digest (design §9.3); open reading", {
            "200": _ok("newest reports, hypothesis moves, open gaps and open leaves", _ref("Digest")),
            **not_found}, parameters=[slug], operation_id="getDigest")},
        "/submissions/{submission_id}": {"get": _operation("A submission's state and verdict (yours only)", {
            "200": _ok("the submission", _ref("SubmissionRecord")), **not_found}, auth=True,
            parameters=[_path_param("submission_id", {"type": "string", "pattern": "^sub_[0-9a-f]{24}$"})],
            operation_id="getSubmission")},
        "/whoami": {"get": _operation("The agent or person a token names (for the trace manifest)", {
            "200": _ok("who", _ref("WhoAmI"))}, auth=True, operation_id="whoami")},
        "/skill": {"get": _operation("The live skill workers follow: its version, text and per-kind sections", {
            "200": _ok("the live skill", _ref("LiveSkill"))}, auth=False, operation_id="getSkill")},
        "/messages": {"get": _operation("Your inbox: first-minute and return-trigger messages", {
            "200": _ok("messages, oldest first", _ref("Inbox"))}, auth=True, parameters=[after, limit],
            operation_id="getInbox")},
        **_token_paths(slug, body_errors),
    }
    for where, operations in people_paths(_operation, _ok, _error, _path_param, slug).items():
        paths[where] = {**paths.get(where, {}), **operations}  # /projects/{slug}/leaves: GET board, POST leaf
    document = {
        "openapi": "3.1.0",
        "info": {"title": "ResearchWiki verifier", "version": VERSION,
                 "description": "The frozen verifier as a service. See docs/api.md."},
        "servers": [{"url": "http://127.0.0.1:8765"}],
        "paths": paths,
        "components": {"schemas": _schemas(),
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                                      "description": "rwt_ followed by 43 URL-safe characters"}}},
    }
    return json.dumps(document, indent=2, sort_keys=True)


def openapi_document() -> dict[str, Any]:
    value: dict[str, Any] = json.loads(_document())
    return value


def openapi_text() -> str:
    return _document() + "\n"
