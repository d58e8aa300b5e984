"""A bounded property-based fuzz of the running service from its own OpenAPI description
(schemathesis): whatever the generated request, no 5xx, no crash, and every answer is one the
description documents (status, content type and body schema). Bounded by the examples per
operation, never by time: every example Hypothesis generates is sent (a time budget that let
later examples pass untried would pass on a slow machine without testing them), and the run
reports how many requests it sent and fails if an operation got none."""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.service_harness import Server, live_leaf, start
from tests.support.world import FIXTURES, NOW, SLUG, make_home
from verifier.service.openapi import openapi_document
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # a real `rw serve` fuzzed from its OpenAPI description

EXAMPLES_PER_OPERATION = 25  # 19 operations: at most 475 requests, about a minute here
LEAVES = ("fuzz-1", "fuzz-2", "fuzz-3")


@dataclass
class Target:
    server: Server
    token: str
    sent: Counter[str] = field(default_factory=Counter)  # requests sent, by documented operation
    ran: set[str] = field(default_factory=set)  # operations whose case ran against this server


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Target]:
    home = make_home(tmp_path_factory.mktemp("fuzz") / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token = home.identities.add("fuzzer", "fuzz-op", "agent", NOW)
    for leaf_id in LEAVES:
        live_leaf(home, leaf_id)
    server = start(home.root)
    fuzz = Target(server, token)
    yield fuzz
    assert server.proc.poll() is None, "the service died under the fuzzer"
    assert "internal error" not in server.output()
    server.stop()
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"service fuzz: {sum(fuzz.sent.values())} requests over {len(fuzz.sent)} operations")
    # Each operation is its own test case (pytest runs or reports every one, whichever worker takes
    # it); the server a worker started must have had requests for every case that ran against it.
    unfuzzed = sorted(label for label in fuzz.ran if not fuzz.sent[label])
    assert not unfuzzed, f"no request was sent for {unfuzzed}"


# Built from the description in code (docs/openapi.json is the same, see test_service_api); the
# server's address is given per call. One test case per documented operation, each with its own
# node id (schemathesis' own parametrize gives every operation the same id, which pytest-xdist
# would run once); each xdist worker fuzzes its own server.
schema = schemathesis.openapi.from_dict(openapi_document())


def _operations() -> list[Any]:
    operations = []
    for result in schema.get_all_operations():
        if not isinstance(result, Ok):  # the description must be whole: a broken operation fails here
            raise result.err()
        operations.append(result.ok())
    return operations


OPERATIONS = _operations()


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation.label)
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_no_server_error_and_every_answer_documented(operation: Any, data: st.DataObject, target: Target) -> None:
    target.ran.add(operation.label)
    case = data.draw(operation.as_strategy())
    target.sent[case.operation.label] += 1  # by the documented operation (a case may try another method)
    # Aim most requests at the project and its leaves, or nearly all would stop at a 404.
    params = case.path_parameters or {}
    if "slug" in params:
        params["slug"] = SLUG
    if "leaf_id" in params and zlib.crc32(str(params["leaf_id"]).encode()) % 4:
        params["leaf_id"] = LEAVES[zlib.crc32(str(params["leaf_id"]).encode()) % len(LEAVES)]
    response = case.call_and_validate(  # raises naming the check that failed
        base_url=target.server.url, headers={"Authorization": f"Bearer {target.token}"}, timeout=60,
        checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
    )
    assert response.status_code < 500, response.status_code
