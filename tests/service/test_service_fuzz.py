"""A bounded property-based fuzz of the running service from its own OpenAPI description
(schemathesis): whatever the generated request, no 5xx, no crash, and every answer is one the
description documents (status, content type and body schema). Bounded twice: examples per
operation, and a time budget for the whole run."""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.service_harness import Server, live_leaf, start
from tests.support.world import FIXTURES, NOW, SLUG, make_home
from verifier.pipeline.project import init_project
from verifier.service.openapi import openapi_document

pytestmark = pytest.mark.slow  # a real `rw serve` fuzzed from its OpenAPI description

EXAMPLES_PER_OPERATION = 25
BUDGET_S = 150.0  # the whole run stops sending after this, however many examples are left
LEAVES = ("fuzz-1", "fuzz-2", "fuzz-3")


@dataclass
class Target:
    server: Server
    token: str
    started: float


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    home = make_home(tmp_path_factory.mktemp("fuzz") / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token = home.identities.add("fuzzer", "fuzz-op", "agent", NOW)
    for leaf_id in LEAVES:
        live_leaf(home, leaf_id)
    server = start(home.root)
    yield Target(server, token, time.monotonic())
    assert server.proc.poll() is None, "the service died under the fuzzer"
    assert "internal error" not in server.output()
    server.stop()


# Built from the description in code (docs/openapi.json is the same, see test_service_api); the
# server's address is given per call.
schema = schemathesis.openapi.from_dict(openapi_document())


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
def test_no_server_error_and_every_answer_documented(case: Any, target: Target) -> None:
    if time.monotonic() - target.started > BUDGET_S:
        return
    # Aim most requests at the project and its leaves, or nearly all would stop at a 404.
    params = case.path_parameters or {}
    if "slug" in params:
        params["slug"] = SLUG
    if "leaf_id" in params and zlib.crc32(str(params["leaf_id"]).encode()) % 4:
        params["leaf_id"] = LEAVES[zlib.crc32(str(params["leaf_id"]).encode()) % len(LEAVES)]
    case.call_and_validate(
        base_url=target.server.url, headers={"Authorization": f"Bearer {target.token}"}, timeout=60,
        checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
    )
