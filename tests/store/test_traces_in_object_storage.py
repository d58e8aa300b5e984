"""The trace store on S3-compatible object storage behaves as the local one: content-addressed,
written once, a bounded quarantine — against a real S3 server (moto, its own process) on loopback."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import pytest

from tests.support.servers import s3_server
from verifier.errors import ConflictError
from verifier.formats.trace import TraceRecord
from verifier.store.objecttraces import ObjectTraceStore
from verifier.wiring import open_home

pytestmark = pytest.mark.slow  # an S3-compatible server (moto) as its own process

BUCKET = "rw-traces"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    with s3_server() as url:
        boto3.client("s3", endpoint_url=url, region_name="us-east-1").create_bucket(Bucket=BUCKET)
        yield url


def _store(endpoint: str, prefix: str) -> ObjectTraceStore:
    return ObjectTraceStore.connect(BUCKET, prefix=prefix, endpoint_url=endpoint, region="us-east-1")


def _record(n: int, digest: str = "a") -> TraceRecord:
    return TraceRecord(f"trc_{n:016x}", digest * 64, None, "L1", 3)  # type: ignore[arg-type]


BUNDLE = {"manifest.json": b"{}\n", "events.jsonl": b'{"e": 1}\n', "patch.diff": b"--- a\n+++ b\n"}


def test_a_bundle_is_stored_once_and_read_back_whole(endpoint: str) -> None:
    store = _store(endpoint, "once/")
    record = _record(1)
    assert not store.exists(record.trace_id)
    assert store.put(record, BUNDLE) is True
    assert store.put(record, BUNDLE) is False
    assert store.exists(record.trace_id)
    assert store.read(record.trace_id) == BUNDLE
    assert store.ids() == [record.trace_id]
    assert store.clean_incoming() == 0


def test_another_bundle_under_a_taken_id_is_refused_and_the_first_kept(endpoint: str) -> None:
    store = _store(endpoint, "collide/")
    store.put(_record(2), BUNDLE)
    with pytest.raises(ConflictError, match="taken by another bundle"):
        store.put(_record(2, digest="b"), {"manifest.json": b"other\n"})
    assert store.read(_record(2).trace_id) == BUNDLE


def test_racing_submissions_of_one_bundle_store_it_exactly_once(endpoint: str) -> None:
    store = _store(endpoint, "race/")
    with ThreadPoolExecutor(8) as pool:
        stored = list(pool.map(lambda _: store.put(_record(3), BUNDLE), range(8)))
    assert stored.count(True) == 1
    assert store.read(_record(3).trace_id) == BUNDLE


def test_the_quarantine_keeps_the_newest_per_agent_and_stays_readable(endpoint: str) -> None:
    store = _store(endpoint, "quarantine/")
    for n in range(10, 14):
        store.put(_record(n), BUNDLE)
        store.quarantine(_record(n).trace_id, "agent-a", keep=2)
    held = store.quarantined("agent-a")
    assert len(held) == 2 and set(held) <= {_record(n).trace_id for n in range(10, 14)}
    assert store.ids() == [] and store.quarantined("agent-b") == []
    assert store.read(held[0]) == BUNDLE
    store.put(_record(20), BUNDLE)
    store.purge(_record(20).trace_id)
    assert store.read(_record(20).trace_id) == {}


def test_config_json_names_the_object_store_and_the_home_uses_it(endpoint: str, tmp_path: Path) -> None:
    backends = {"traces": {"kind": "s3", "bucket": BUCKET, "prefix": "home/", "endpoint_url": endpoint,
                           "region": "us-east-1"}}
    (tmp_path / "config.json").write_text(json.dumps({"durable": False, "backends": backends}))
    home = open_home(tmp_path)
    assert isinstance(home.traces, ObjectTraceStore)
    home.traces.put(_record(30), BUNDLE)
    assert _store(endpoint, "home/").read(_record(30).trace_id) == BUNDLE
    assert not (tmp_path / "traces").exists()


def test_the_embedded_default_is_the_local_folder(tmp_path: Path) -> None:
    home = open_home(tmp_path)
    assert home.settings.backends.traces.kind == "local" and home.settings.backends.commons.kind == "sqlite"
    home.traces.put(_record(40), BUNDLE)
    assert (tmp_path / "traces" / _record(40).trace_id / "manifest.json").read_bytes() == b"{}\n"
