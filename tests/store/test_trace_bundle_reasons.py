"""Trace ingest says what is wrong with an unreadable bundle: an unreadable archive or member (and
which), a link member, a duplicate member, an unknown member, an oversize member; and the ledger
records that reason, not "the bundle has no manifest.json"."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.world import SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.constants import MAX_BUNDLE_BYTES
from verifier.errors import Rejected
from verifier.pipeline.ledger import read_chain
from verifier.store.traces import load_bundle

assert COMMAND_MODULES  # the commands register on import
GOOD = {"manifest.json": b"{}", "events.jsonl": b"", "patch.diff": b"diff --git a/x b/x\n"}


def _tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w") as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return path


def _code(path: Path) -> tuple[str, str]:
    with pytest.raises(Rejected) as caught:
        load_bundle(path)
    return caught.value.headline.code, caught.value.headline.message


def test_a_readable_tar_is_read(tmp_path: Path) -> None:
    assert load_bundle(_tar(tmp_path / "t.tar", list(GOOD.items()))) == GOOD


def test_an_unreadable_archive_says_so(tmp_path: Path) -> None:
    (tmp_path / "t.tar").write_bytes(b"this is not a tar file at all" * 40)
    code, message = _code(tmp_path / "t.tar")
    assert code == "trace_unreadable" and "not a readable tar" in message


def test_an_unreadable_member_is_named(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in {**GOOD, "events.jsonl": b"x" * 100_000}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    packed = gzip.compress(buffer.getvalue())
    (tmp_path / "t.tar.gz").write_bytes(packed[: len(packed) // 2])  # cut mid-stream
    code, message = _code(tmp_path / "t.tar.gz")
    assert code == "trace_unreadable" and "cannot be read" in message


def test_a_link_member_is_refused(tmp_path: Path) -> None:
    link = tarfile.TarInfo("events.jsonl")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    code, message = _code(_tar(tmp_path / "t.tar", [("manifest.json", b"{}"), link]))
    assert code == "trace_link_member" and "events.jsonl" in message


def test_a_duplicate_member_is_refused(tmp_path: Path) -> None:
    code, message = _code(_tar(tmp_path / "t.tar", [("manifest.json", b"{}"), ("trace/manifest.json", b"{}")]))
    assert code == "trace_duplicate_member" and "twice" in message


def test_an_unknown_member_is_refused(tmp_path: Path) -> None:
    code, _ = _code(_tar(tmp_path / "t.tar", [("manifest.json", b"{}"), ("notes.txt", b"x")]))
    assert code == "trace_unknown_file"


def test_an_oversize_member_is_named(tmp_path: Path) -> None:
    big = tarfile.TarInfo("events.jsonl")
    big.size = MAX_BUNDLE_BYTES + 1
    with tarfile.open(tmp_path / "t.tar", "w") as archive:
        archive.addfile(big, io.BytesIO(b"\n" * big.size))
    code, message = _code(tmp_path / "t.tar")
    assert code == "trace_oversize" and "events.jsonl" in message


def test_the_ledger_records_the_real_reason(world: World, tmp_path: Path) -> None:
    world.leaf("extract-1")
    good = world.extract("extract-1")
    (tmp_path / "p.diff").write_bytes(good.patch)
    link = tarfile.TarInfo("patch.diff")
    link.type = tarfile.SYMTYPE
    link.linkname = "../../p.diff"
    _tar(tmp_path / "t.tar", [("manifest.json", good.bundle["manifest.json"]), link])
    env = {"RW_HOME": str(world.home.root), "RW_TOKEN": world.agent.token}
    result = CliRunner().invoke(cli, ["submit", SLUG, "--leaf", "extract-1", "--patch", str(tmp_path / "p.diff"),
                                      "--trace", str(tmp_path / "t.tar"), "--json"], env=env, catch_exceptions=False)
    verdict = json.loads(result.stdout)
    assert verdict["outcome"] == "rejected" and verdict["rejections"][0]["code"] == "trace_link_member"
    row = list(read_chain(world.repo.view(world.tip())))[-1][1]
    assert row.reason_code == "trace_link_member"
