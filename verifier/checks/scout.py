"""The scout check (design §5.2): 1-5 staged sources with their retained bytes; bytes hash to the
record; inside the source policy; not a duplicate source_id; the URL resolves (as fetched by the
pipeline and handed in); and the bytes yield text, so extract leaves can quote them."""

from __future__ import annotations

from collections import defaultdict

from verifier.checks.context import CheckContext, CheckResult
from verifier.checks.policy import record_problems, url_problem
from verifier.constants import MAX_SOURCES, MIN_SOURCES
from verifier.errors import FormatError, Rejection
from verifier.formats.fetch import FetchStatus
from verifier.formats.ids import UrlError, canonical_url, sha256_hex, source_id_for
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE, SourceRecord, parse_source
from verifier.formats.wording import count
from verifier.state.layout import classify, queue_path, source_bytes_path, source_record_path


def check_source_files(  # noqa: C901, PLR0912, PLR0915 - each staged source's checks read top to bottom, one rejection each
    ctx: CheckContext, source_id: str, record_bytes: bytes, retained: dict[str, bytes], notes: list[str],
    hold: set[str] | None = None,
) -> list[Rejection]:
    """The rules every new source obeys. A scout's is staged and names its leaf; a person's source
    (no leaf) may be staged or already included."""
    record_at = source_record_path(source_id)
    try:
        record: SourceRecord = parse_source(record_bytes, record_at)
    except FormatError as exc:
        return [Rejection("bad_format", exc.message, exc.where)]
    problems: list[Rejection] = []

    def reject(code: str, message: str, where: str = record_at) -> None:
        problems.append(Rejection(code, message, where))

    try:
        canonical = canonical_url(record.url)
    except UrlError as exc:
        return [Rejection("bad_url", str(exc), record_at)]
    if record.url != canonical:
        reject("bad_url", f"url must be written in canonical form: {canonical}")
    if record.source_id != source_id_for(canonical) or record.source_id != source_id:
        reject("bad_id", f"source_id must be {source_id_for(canonical)} (derived from the canonical URL)")
    leaf_id = ctx.leaf.leaf_id if ctx.leaf is not None else None
    allowed_status = ("staged",) if leaf_id is not None else ("staged", "included")
    if record.status not in allowed_status:
        reject("bad_status", f"a new source has status {' or '.join(allowed_status)}, not {record.status}")
    if record.fetched_by != ctx.actor:
        reject("actor_mismatch", f"fetched_by is {record.fetched_by}, but the caller is {ctx.actor}")
    if record.leaf_id != leaf_id:
        reject("wrong_leaf", f"leaf_id is {record.leaf_id}; expected {leaf_id}")
    extension = EXTENSION_BY_MEDIA_TYPE[record.media_type]
    bytes_at = source_bytes_path(source_id, extension)
    if set(retained) != {bytes_at}:
        found = ", ".join(sorted(retained)) or "none"
        reject("missing_bytes", f"expected the retained bytes at {bytes_at}; found {found}")
        return problems
    data = retained[bytes_at]
    if sha256_hex(data) != record.sha256 or len(data) != record.size:
        reject("hash_mismatch", f"retained bytes have sha256 {sha256_hex(data)} and size {len(data)}; "
               f"the record says {record.sha256} and {record.size}")
    if (why := url_problem(record.url, ctx.project.source_policy)) is not None:
        reject("source_policy", why)
    for why in record_problems(ctx.project.source_policy, language=record.language,
                               rights=record.rights, published=record.date):
        reject("source_policy", why)
    if ctx.tree.read(queue_path("sources", record_at)) is not None:
        reject("duplicate_id", f"source {source_id} already exists (held in queue/sources)")
    # Imported here: the PDF and HTML parsers cost more start-up than every other check together,
    # and only a scout leaf's check needs them (`rw check` on other kinds starts without them).
    from verifier.text.extract import TextExtractionError, extract_text  # noqa: PLC0415

    try:
        extract_text(data, record.media_type)
    except TextExtractionError as exc:
        reject("no_text", f"no quotable text can be derived: {exc}", bytes_at)
    outcome = ctx.fetches.get(record.url)
    # Retained bytes nobody could compare with the live page wait for a person: otherwise any
    # text could be retained under a real URL and then quoted as "exact".
    unverified = None
    if outcome is None or outcome.status is FetchStatus.NOT_CHECKED:
        unverified = f"URL not checked ({outcome.reason if outcome else 'no fetcher'})"
    elif not outcome.resolved:
        reject("url_unresolved", f"{record.url} does not resolve: {outcome.reason}")
    elif outcome.sha256 != record.sha256:
        unverified = (f"the URL served other bytes to the verifier (sha256 {outcome.sha256}); "
                      "a dynamic page, or bytes that were not fetched from it")
    if unverified is not None:
        notes.append(f"{source_id}: {unverified}; held for a person" if hold is not None else
                     f"{source_id}: {unverified}")
        if hold is not None:
            hold.update({record_at, bytes_at})
    return problems


def check_scout(ctx: CheckContext) -> CheckResult:
    rejections: list[Rejection] = []
    notes: list[str] = []
    records: dict[str, bytes] = {}
    retained: dict[str, dict[str, bytes]] = defaultdict(dict)
    for path, data in sorted(ctx.writes.items()):
        kind = classify(path)
        if data is None or kind is None or kind.type not in ("source", "source-bytes"):
            rejections.append(Rejection("unexpected_file", "a scout leaf only adds sources and their bytes", path))
        elif kind.type == "source":
            records[kind.object_id] = data
        else:
            retained[kind.object_id][path] = data
    for orphan in sorted(set(retained) - set(records)):
        rejections.append(Rejection("missing_record", f"retained bytes for {orphan} have no record",
                                    next(iter(retained[orphan]))))
    hold: set[str] = set()
    for source_id, record_bytes in sorted(records.items()):
        rejections += check_source_files(ctx, source_id, record_bytes, retained.get(source_id, {}), notes, hold)
    if not MIN_SOURCES <= len(records) <= MAX_SOURCES:
        rejections.insert(0, Rejection(
            "source_count", f"a scout leaf adds {MIN_SOURCES}-{MAX_SOURCES} sources; this patch adds {len(records)}"
        ))
    return CheckResult(rejections, f"{count(len(records), 'source')} staged", notes, frozenset(hold))
