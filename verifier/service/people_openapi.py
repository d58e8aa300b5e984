"""The OpenAPI description of a person's endpoints (verifier.service.people_routes), merged into
the service's one document by verifier.service.openapi."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from verifier.service.people_schemas import (
    REVISION_PATTERN,
    EmptyBody,
    LeafBody,
    ReasonBody,
    RepairBody,
    RevertBody,
    VerdictBody,
    WakeBody,
)

Schema = dict[str, object]
REF = "#/components/schemas/{model}"
BODIES: tuple[type[BaseModel], ...] = (EmptyBody, LeafBody, ReasonBody, RepairBody, RevertBody, VerdictBody, WakeBody)


def people_schemas(schemas: dict[str, object], model: Callable[[type[BaseModel], dict[str, object]], object]) -> None:
    """Put the bodies' schemas and the answers' shapes under components."""
    for body in BODIES:
        model(body, schemas)
    schemas["PersonAction"] = {"type": "object", "description": "what landed: the commit and ledger row, and "
                               "the action's own fields (docs/api.md, People)", "additionalProperties": True,
                               "properties": {"project": {"type": "string"}}, "required": ["project"]}


def _ref(name: str) -> Schema:
    return {"$ref": REF.format(model=name)}


def people_paths(operation: Callable[..., Schema], ok: Callable[[str, Schema], Schema],
                 error: Callable[[str], Schema], path_param: Callable[[str, Schema], Schema],
                 slug: Schema) -> dict[str, Schema]:
    """The paths of a person's endpoints; `operation`, `ok`, `error` and `path_param` are the
    document's own builders, so every operation has the same guard and auth answers."""

    def body(name: str) -> Schema:
        return {"required": True, "content": {"application/json": {"schema": _ref(name)}}}

    refused = {"403": error("not_authorised: the project gives the caller no authority for this (the message "
                            "names the role and who holds it; docs/authority.md), or a request from another origin"),
               "404": error("no such project, held object, hypothesis or commit"),
               "409": error("the state refuses it (conflict, history_broken, key_held, unreadable)"),
               "422": error("the body does not match its schema, the reason is empty or not one line of plain "
                            "text, or a leaf's id or inputs are not well formed"),
               "408": error("the body stalled or took too long"), "413": error("the body is too large"),
               "415": error("wrong Content-Type")}
    done = ok("what landed", _ref("PersonAction"))
    anything = ok("the answer", {"type": "object"})
    object_id = path_param("object_id", {"type": "string"})
    hypothesis = path_param("hypothesis_id", {"type": "string", "pattern": "^H[1-9][0-9]{0,5}$"})

    def act(summary: str, name: str, operation_id: str, parameters: list[Schema], status: str = "200") -> Schema:
        return operation(summary, {status: done, **refused}, auth=True, tag="people", parameters=parameters,
                         body=body(name), operation_id=operation_id)

    def read(summary: str, operation_id: str, *, auth: bool = False) -> Schema:
        extra = {"403": error("not_authorised: only the steward and the admins read it")} if auth else {}
        return operation(summary, {"200": anything, "404": error("no such project"), **extra}, auth=auth, tag="people",
                         parameters=[slug], operation_id=operation_id)

    names: Schema = {"type": "array", "items": {"type": "string"}}
    edited: Schema = {"type": "object",
                      "properties": {"verdict": _ref("Verdict"), "sealed": names,
                                     "note": {"type": ["string", "null"]}, "submission_id": {"type": "string"}},
                      "required": ["verdict", "sealed", "note"]}
    edit = operation(
        "A person's edit (PROJECT.md, hypotheses, sources, reports...), as `rw submit SLUG --patch`: the "
        "verdict comes back in the response", {
            "201": ok("the verdict, and the baselines the edit left to seal (sealed, note); submission_id when "
                      "it carried an Idempotency-Key", edited),
            "200": ok("the answer to an earlier request with the same Idempotency-Key", edited),
            **refused, "400": error("bad_form: the form has no patch; bad_query: base is not a commit id; "
                                    "bad_idempotency_key"),
            "409": error("the state refuses it (conflict, history_broken), or the same Idempotency-Key is still "
                         "running (in_progress)"),
            "422": error("idempotency_key_reused: the key names another edit")},
        auth=True, tag="people", operation_id="edit",
        parameters=[slug, {"name": "base", "in": "query", "required": False,
                           "schema": {"type": "string", "pattern": REVISION_PATTERN},
                           "description": "the commit the patch was made against (default: the tip)"},
                    {"name": "Idempotency-Key", "in": "header", "required": False,
                     "schema": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{8,128}$"},
                     "description": "names one edit; a retry with the same key is answered with its first answer"}],
        body={"required": True, "content": {"multipart/form-data": {"schema": _ref("BundleForm")}}})
    return {
        "/projects/{slug}/edits": {"post": edit},
        "/projects/{slug}/holds": {"get": read("The hold queue: what waits for the steward", "listHolds")},
        "/projects/{slug}/holds/{object_id}/approve": {"post": act(
            "The steward approves a held object into the corpus", "ReasonBody", "approveHold", [slug, object_id])},
        "/projects/{slug}/holds/{object_id}/reject": {"post": act(
            "The steward rejects a held object (the ledger keeps the decision)", "ReasonBody", "rejectHold",
            [slug, object_id])},
        "/projects/{slug}/reverts": {"post": act(
            "The steward or a maintainer reverts a contribution, with a reason", "RevertBody", "revert", [slug],
            "201")},
        "/projects/{slug}/verdicts": {"get": read("The Resolver's proposals waiting for the steward",
                                                  "listVerdicts")},
        "/projects/{slug}/verdicts/{hypothesis_id}": {"post": act(
            "The steward sets or overrides a verdict", "VerdictBody", "setVerdict", [slug, hypothesis])},
        "/projects/{slug}/verdicts/{hypothesis_id}/approve": {"post": act(
            "The steward approves the Resolver's proposal", "ReasonBody", "approveVerdict", [slug, hypothesis])},
        "/projects/{slug}/leaves": {"post": act(
            "The steward or a maintainer writes a leaf by hand (as `rw leaf add`)", "LeafBody", "addLeaf", [slug],
            "201")},
        "/projects/{slug}/repair": {"post": act(
            "Put a broken history back on a ledger commit (steward, maintainer, admin)", "RepairBody", "repair",
            [slug])},
        "/projects/{slug}/seal": {"post": act(
            "Seal every active hypothesis's missing baseline (steward, maintainer, admin)", "EmptyBody", "seal",
            [slug])},
        "/projects/{slug}/planner/wake": {"post": act(
            "Wake the Planner once (steward, maintainer, admin)", "WakeBody", "wakePlanner", [slug])},
        "/projects/{slug}/scores": {"get": read("The v0 components per operator, side by side", "getScores")},
        "/projects/{slug}/ledger/verify": {"get": read("`rw ledger --verify`: the hash chain, the commits and the "
                                                       "anchor", "verifyLedger")},
        "/projects/{slug}/eval": {"get": read("`rw eval SLUG`: the design's §12 numbers for the project",
                                              "getEval")},
        "/projects/{slug}/audit": {"get": read("The project's refused authentications and authority checks",
                                               "getAudit", auth=True)},
        "/projects/{slug}/traces": {"get": read("The project's newest traced attempts (the steward's and the "
                                                "admins'; ?kind=, ?outcome=, ?limit=)", "listTraces", auth=True)},
        "/projects/{slug}/traces/{trace_id}": {"get": operation(
            "One trace of the project: the outcomes citing it and its bundle files",
            {"200": anything, "404": error("no such project, or no such trace among the project's"),
             "403": error("not_authorised: only the steward and the admins read traces")}, auth=True, tag="people",
            parameters=[slug, path_param("trace_id", {"type": "string", "maxLength": 200})],
            operation_id="getTrace")},
    }
