"""Tests for verifier.text: normalization and deterministic text extraction per media type."""

from __future__ import annotations

import importlib.util
import io
import time
from pathlib import Path
from types import ModuleType

import bs4
import pypdf
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.constants import MAX_PDF_BYTES
from verifier.text import extract as extract_module
from verifier.text.extract import EXTRACTOR_VERSION, SUPPORTED_MEDIA_TYPES, TextExtractionError, extract_text
from verifier.text.normalize import NORMALIZATION, normalize

SOURCES = Path(__file__).resolve().parents[2] / "fixtures" / "sources-raw"
TXT = SOURCES / "analyst-note-2026-03-12.txt"
HTML = SOURCES / "conditioning-layers-buyers-guide.html"
PDF = SOURCES / "verification-layer-eval-2026.pdf"


def _make_pdf_module() -> ModuleType:
    # The generator lives next to the fixtures (a directory name with a hyphen is no package).
    spec = importlib.util.spec_from_file_location("make_pdf", SOURCES / "make_pdf.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _blank_pdf(pages: int = 1, password: str | None = None) -> bytes:
    writer = pypdf.PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=612, height=792)
    if password is not None:
        writer.encrypt(user_password=password, owner_password="owner", algorithm="AES-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


# --- normalize ---------------------------------------------------------------------------------


def test_normalization_rule_is_published() -> None:
    assert NORMALIZATION == (
        "NFC; byte-order marks (U+FEFF) removed; CRLF and CR to LF; every run of Unicode whitespace to one "
        "space; strip ends"
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  a\r\nb\rc\n\nd  ", "a b c d"),
        (
            "tab\tand\u00a0nbsp\u2009thin\u3000ideographic\u2028line",
            "tab and nbsp thin ideographic line",
        ),
        ("cafe\u0301", "caf\u00e9"),  # NFD -> NFC
        ("\u2000en quad", "en quad"),  # canonically decomposes, still whitespace
        ("", ""),
        (" \t\r\n ", ""),
    ],
)
def test_normalize_examples(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


def test_normalize_does_nothing_else() -> None:
    # No quote folding, no dehyphenation, no case change, no compatibility folding, and
    # zero-width characters (not whitespace) stay.
    text = "\u201cworld-\nmodel\u201d \ufb01le X\u00b2 a\u200bb"
    assert normalize(text) == "\u201cworld- model\u201d \ufb01le X\u00b2 a\u200bb"


@given(st.text())
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once


@given(st.text())
def test_normalize_leaves_no_whitespace_but_single_spaces(text: str) -> None:
    result = normalize(text)
    assert result == result.strip()
    assert "  " not in result
    assert all(ch == " " or not ch.isspace() for ch in result)


# --- dispatch and version ----------------------------------------------------------------------


def test_extractor_version_names_the_real_library_versions() -> None:
    assert EXTRACTOR_VERSION.startswith("rw-text/1 ")
    assert f"pypdf={pypdf.__version__}" in EXTRACTOR_VERSION
    assert f"bs4={bs4.__version__}" in EXTRACTOR_VERSION
    assert SUPPORTED_MEDIA_TYPES == ("text/plain", "text/html", "application/pdf")


@pytest.mark.parametrize("media_type", ["image/png", "application/octet-stream", "", "text"])
def test_unknown_media_type_is_refused(media_type: str) -> None:
    with pytest.raises(TextExtractionError, match="unsupported media type"):
        extract_text(b"hello", media_type)


def test_media_type_is_case_insensitive_and_parameters_are_ignored() -> None:
    assert extract_text(b"<p>caf\xc3\xa9</p>", "Text/HTML; charset=iso-8859-1") == "caf\u00e9"


def test_text_extraction_error_is_a_value_error() -> None:
    assert issubclass(TextExtractionError, ValueError)


# --- text/plain --------------------------------------------------------------------------------


def test_plain_fixture_is_normalized_utf8() -> None:
    data = TXT.read_bytes()
    text = extract_text(data, "text/plain")
    assert text == normalize(data.decode("utf-8"))
    assert "Kestrel Verifikation AG (Z\u00fcrich)" in text
    # A sentence hard-wrapped across two lines in the file reads as one line of text.
    assert (
        "Tessellate says RolloutGuard rejected 18.4% of the 2.1 million eight-second clips" in text
    )


def test_plain_drops_a_utf8_bom() -> None:
    assert extract_text(b"\xef\xbb\xbfhello  world\r\n", "text/plain") == "hello world"


def test_plain_bad_utf8_names_the_byte_offset() -> None:
    with pytest.raises(TextExtractionError, match=r"not valid UTF-8 at byte 5\b"):
        extract_text(b"hello\xffworld", "text/plain")


def test_plain_bad_utf8_offset_counts_the_bom() -> None:
    with pytest.raises(TextExtractionError, match=r"at byte 4\b"):
        extract_text(b"\xef\xbb\xbfa\xc3", "text/plain")


def test_plain_refuses_other_encodings() -> None:
    with pytest.raises(TextExtractionError, match="not valid UTF-8"):
        extract_text("caf\u00e9".encode("latin-1"), "text/plain")


@given(st.text())
def test_plain_is_normalize_of_decoded(text: str) -> None:
    data = text.encode("utf-8")
    assert extract_text(data, "text/plain") == normalize(data.decode("utf-8-sig"))


# --- text/html ---------------------------------------------------------------------------------


def test_html_fixture_text() -> None:
    text = extract_text(HTML.read_bytes(), "text/html")
    # Title and headings are text; script, style, noscript and template content is not.
    assert text.startswith("Conditioning layers: a buyer\u2019s guide (April 2026) \u2013 Lumen")
    for absent in ("lumenAnalytics", "font-family", "Enable JavaScript", "Template text", "<"):
        assert absent not in text
    # Entities are decoded; &nbsp; is whitespace and becomes a plain space.
    assert "Halden & Rowe Robotics (Steer)" in text
    assert "2 April 2026" in text
    assert "\u00a0" not in text
    # Blocks (nav items, headings, list items, table cells) do not glue together.
    assert "Home Archive About Conditioning layers" in text
    assert "read Why this guide exists Six months ago" in text
    assert "classifier. Drift under long horizons" in text
    assert "Quillmark Dynamics (Anchor) 87% 3.1 cm 6 days" in text
    # Inline markup inside a paragraph does not split words or add spaces.
    assert "almost nobody bought a conditioning layer as a separate product" in text
    assert "Today we count nine vendors selling one" in text
    assert text == normalize(text)


def test_html_inline_elements_do_not_split_words_and_blocks_do() -> None:
    markup = b"<div>verif<b>ier</b></div><div>next</div><p>a<br>b</p><ul><li>x</li><li>y</li></ul>"
    assert extract_text(markup, "text/html") == "verifier next a b x y"


def test_html_drops_comments_doctype_and_cdata() -> None:
    markup = b"<!DOCTYPE html><p>kept<!-- hidden --></p><![CDATA[bogus]]><?pi x?>"
    assert extract_text(markup, "text/html") == "kept"


def test_html_meta_charset_is_honoured() -> None:
    markup = '<meta charset="windows-1252"><p>\u201cna\u00efve\u201d</p>'.encode("cp1252")
    assert extract_text(markup, "text/html") == "\u201cna\u00efve\u201d"


def test_html_iso_8859_1_label_means_windows_1252() -> None:
    markup = b'<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
    markup += b"<p>\x93quoted\x94 caf\xe9</p>"
    assert extract_text(markup, "text/html") == "\u201cquoted\u201d caf\u00e9"


def test_html_defaults_to_utf8_and_names_the_bad_byte() -> None:
    with pytest.raises(TextExtractionError, match=r"not valid UTF-8 at byte 6\b"):
        extract_text(b"<p>caf\xe9</p>", "text/html")


def test_html_bom_wins_over_meta() -> None:
    markup = b"\xef\xbb\xbf<meta charset=windows-1252><p>caf\xc3\xa9</p>"
    assert extract_text(markup, "text/html") == "caf\u00e9"
    utf16 = "\ufeff<p>caf\u00e9</p>".encode("utf-16-le")
    assert extract_text(utf16, "text/html") == "caf\u00e9"


@pytest.mark.parametrize(
    ("label", "message"),
    [("bogus-charset", "unknown charset"), ("utf-7", "unsupported charset"),
     ("unicode_escape", "unsupported charset")],
)  # fmt: skip
def test_html_odd_charset_labels_are_refused(label: str, message: str) -> None:
    with pytest.raises(TextExtractionError, match=message):
        extract_text(f"<meta charset={label}><p>x</p>".encode(), "text/html")


def test_html_that_looks_like_xml_or_a_locator_parses_without_warnings() -> None:
    # pytest runs with warnings as errors, so any bs4 warning would fail these.
    assert extract_text(b'<?xml version="1.0"?><rss><p>item</p></rss>', "text/html") == "item"
    assert extract_text(b"https://example.com/page", "text/html") == "https://example.com/page"
    assert extract_text(b"index.html", "text/html") == "index.html"


def test_html_deep_nesting_and_long_pages_are_handled() -> None:
    # Deep nesting must not hit the recursion limit; many siblings must not go quadratic.
    deep = b"<div>" * 5_000 + b"<span>deep</span>" + b"</div>" * 5_000
    assert extract_text(deep, "text/html") == "deep"
    long_page = b"<ul>" + b"<li>item <b>x</b></li>" * 5_000 + b"</ul>"
    began = time.perf_counter()
    text = extract_text(long_page, "text/html")
    assert text == " ".join(["item x"] * 5_000)
    assert time.perf_counter() - began < 3.0  # about 0.2 s; quadratic would be far slower


def test_html_empty_document_is_empty_text() -> None:
    assert extract_text(b"<html><head></head><body></body></html>", "text/html") == ""


# --- application/pdf ---------------------------------------------------------------------------


def test_pdf_fixture_is_reproducible_from_its_script() -> None:
    assert PDF.read_bytes() == _make_pdf_module().build_pdf()


def test_pdf_fixture_text_is_the_prose_it_was_made_from() -> None:
    make_pdf = _make_pdf_module()
    reader = pypdf.PdfReader(io.BytesIO(PDF.read_bytes()), strict=True)
    assert len(reader.pages) == 2
    prose = normalize(" ".join(text for page in make_pdf.PAGES for _, text in page))
    text = extract_text(PDF.read_bytes(), "application/pdf")
    assert text == prose
    assert "Filtering raised the mean real-world success rate from 58.3% to 66.1%" in text
    assert "4. Cost At list price the verification layer cost USD 0.004" in text


@pytest.mark.parametrize(
    "data",
    [b"", b"not a pdf at all", b"%PDF-1.4\n1 0 obj\n<<\n", PDF.read_bytes()[:700]],
    ids=["empty", "not-pdf", "header-only", "truncated"],
)
def test_broken_pdf_is_a_text_extraction_error(data: bytes) -> None:
    with pytest.raises(TextExtractionError, match=r"PDF could not be read by pypdf|no text layer"):
        extract_text(data, "application/pdf")


def test_pdf_without_text_layer_is_refused() -> None:
    with pytest.raises(TextExtractionError, match=r"no text layer.*1 page"):
        extract_text(_blank_pdf(), "application/pdf")


def test_pdf_over_the_size_limit_is_refused_before_parsing() -> None:
    data = b"%PDF-1.4\n" + b"\0" * MAX_PDF_BYTES
    with pytest.raises(TextExtractionError, match=f"over {MAX_PDF_BYTES} bytes"):
        extract_text(data, "application/pdf")


def test_pdf_over_the_page_limit_is_refused() -> None:
    with pytest.raises(TextExtractionError, match="501 pages; sources over 500 pages"):
        extract_text(_blank_pdf(pages=501), "application/pdf")


def test_pdf_page_limit_applies_to_text_pdfs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract_module, "MAX_PDF_PAGES", 1)
    with pytest.raises(TextExtractionError, match="2 pages; sources over 1 pages"):
        extract_text(PDF.read_bytes(), "application/pdf")


def test_pdf_with_a_real_password_is_refused() -> None:
    with pytest.raises(TextExtractionError, match="needs a password"):
        extract_text(_blank_pdf(password="secret"), "application/pdf")


def test_pdf_with_an_empty_user_password_is_read() -> None:
    reader = pypdf.PdfReader(io.BytesIO(PDF.read_bytes()))
    writer = pypdf.PdfWriter(clone_from=reader)
    writer.encrypt(user_password="", owner_password="owner", algorithm="AES-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    assert extract_text(buffer.getvalue(), "application/pdf") == extract_text(
        PDF.read_bytes(), "application/pdf"
    )
