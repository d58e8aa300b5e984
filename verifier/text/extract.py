"""Derive the normalized text of a retained source, which is what excerpts are checked against.

This module's one job is the function (bytes, media type) -> normalized text. It is pure and
deterministic: the same bytes, media type and EXTRACTOR_VERSION always give the same text, so an
excerpt accepted once stays verifiable later. Everything that could make the output depend on the
machine (optional parser back ends, charset guessing, the network) is kept out on purpose.
"""

from __future__ import annotations

import codecs
import io
import re
import unicodedata
from collections.abc import Iterator
from typing import Final

import bs4
import pypdf
from bs4 import BeautifulSoup, ParserRejectedMarkup
from bs4.builder._htmlparser import BeautifulSoupHTMLParser, HTMLParserTreeBuilder
from bs4.element import (
    NavigableString,
    PageElement,
    PreformattedString,
    Script,
    Stylesheet,
    Tag,
    TemplateString,
)

from verifier.constants import MAX_PDF_BYTES, MAX_PDF_PAGES
from verifier.text.normalize import normalize

# The derived text depends on the exact versions of the libraries that produce it and on the
# Unicode database behind NFC (it moves with the Python release), so all of them are in the
# version string: any bump changes EXTRACTOR_VERSION, which is recorded per source.
EXTRACTOR_VERSION: Final[str] = (
    f"rw-text/1 pypdf={pypdf.__version__} bs4={bs4.__version__} "
    f"unicode={unicodedata.unidata_version}"
)

SUPPORTED_MEDIA_TYPES: Final = ("text/plain", "text/html", "application/pdf")

# The HTML standard's encoding prescan looks at the first 1024 bytes for a meta charset; using
# the same window means a page decodes here the way a browser would decode it.
_HTML_PRESCAN_BYTES: Final[int] = 1024
_META_CHARSET: Final = re.compile(
    rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE
)

# Labels whose meaning on the web differs from Python's codec of the same name (WHATWG Encoding
# Standard). Pages labelled ISO-8859-1 are really windows-1252, for example: decoding them as
# Python's latin-1 would turn typographic quotes into C1 control characters.
_WEB_LABEL_TO_CODEC: Final[dict[str, str]] = {
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "iso_8859-1": "cp1252",
    "latin1": "cp1252",
    "l1": "cp1252",
    "cp819": "cp1252",
    "ibm819": "cp1252",
    "iso-8859-9": "cp1254",
    "iso8859-9": "cp1254",
    "latin5": "cp1254",
    "tis-620": "cp874",
    "iso-8859-11": "cp874",
    "windows-874": "cp874",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "big5": "big5hkscs",
    "shift_jis": "cp932",
    "sjis": "cp932",
    "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "euc-kr": "cp949",
    "windows-949": "cp949",
    "ks_c_5601-1987": "cp949",
    "x-mac-roman": "mac-roman",
    "iso-8859-8-i": "iso8859-8",
    # A meta charset can only be read because the bytes are ASCII-compatible, so a page that
    # claims UTF-16 there is treated as UTF-8, as the HTML standard says.
    "utf-16": "utf-8",
    "utf-16le": "utf-8",
    "utf-16be": "utf-8",
}

# Only real text encodings may be named by a page. Python's codec registry also resolves names
# such as "unicode_escape", "utf-7" or "idna", which would let markup choose a transform rather
# than a character set.
_ALLOWED_CODECS: Final = frozenset(
    {
        "utf-8",
        "utf-16-le",
        "utf-16-be",
        *(f"cp{n}" for n in range(1250, 1259)),
        "cp874",
        "cp866",
        *(f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)),
        "koi8-r",
        "koi8-u",
        "mac-roman",
        "gb18030",
        "big5hkscs",
        "euc_jp",
        "iso2022_jp",
        "cp932",
        "cp949",
    }
)

_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Elements whose content is never text a reader sees on the page.
_DROPPED_TAGS: Final = frozenset({"script", "style", "noscript", "template"})

# Strings that are not character data: comments, doctypes, CDATA sections and processing
# instructions (all PreformattedString), plus the string types bs4 gives script, style and
# template content, in case one turns up outside a dropped element.
_NOT_TEXT: Final = (PreformattedString, Script, Stylesheet, TemplateString)

# Elements that start a new block when rendered. A separator is put around each so that words in
# adjacent blocks ("<li>alpha</li><li>beta</li>") do not glue into one word; inline elements get
# none, so "<b>verif</b>ier" stays one word, as a reader sees it.
_BLOCK_TAGS: Final = frozenset({
    "address", "article", "aside", "blockquote", "body", "br", "caption", "dd", "details",
    "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hgroup", "hr", "html", "legend",
    "li", "main", "menu", "nav", "ol", "optgroup", "option", "p", "pre", "section", "select",
    "summary", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul",
})  # fmt: skip


class TextExtractionError(ValueError):
    """The source bytes cannot be turned into text; the message says what is wrong."""


def extract_text(data: bytes, media_type: str) -> str:
    """Return the normalized text of a source's retained bytes.

    media_type is a MIME type such as "text/html"; parameters after ";" are ignored because the
    text must follow from the retained bytes alone (for HTML the charset comes from the document).
    Raises TextExtractionError when the media type is unsupported or the bytes cannot be read.
    """
    base_type = media_type.split(";", 1)[0].strip().lower()
    if base_type == "text/plain":
        return normalize(_decode_strict(data, "utf-8"))
    if base_type == "text/html":
        return normalize(_html_to_text(_decode_html(data)))
    if base_type == "application/pdf":
        return _pdf_to_text(data)
    raise TextExtractionError(
        f"unsupported media type {media_type!r}; supported: {', '.join(SUPPORTED_MEDIA_TYPES)}"
    )


def _decode_strict(data: bytes, codec: str) -> str:
    """Decode with no replacement characters, after dropping a byte-order mark of that codec.

    Offsets in the error message count from the start of the original bytes, BOM included, so
    they can be checked with any hex viewer.
    """
    skip = 0
    for bom, bom_codec in _BOMS:
        if bom_codec == codec and data.startswith(bom):
            skip = len(bom)
            break
    try:
        return data[skip:].decode(codec)
    except UnicodeDecodeError as exc:
        label = "UTF-8" if codec == "utf-8" else codec
        raise TextExtractionError(
            f"source bytes are not valid {label} at byte {skip + exc.start}"
        ) from None


def _decode_html(data: bytes) -> str:
    """Decode an HTML document: a BOM wins, then a meta charset in the prescan window, else UTF-8.

    Decoding here, rather than handing bytes to BeautifulSoup, keeps bs4's charset guessing (and
    the optional detector libraries it would consult) out of the result.
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return _decode_strict(data, codec)
    match = _META_CHARSET.search(data[:_HTML_PRESCAN_BYTES])
    if match is None:
        return _decode_strict(data, "utf-8")
    label = match.group(1).decode("ascii").lower()
    codec = _WEB_LABEL_TO_CODEC.get(label, label)
    try:
        codec = codecs.lookup(codec).name
    except LookupError:
        raise TextExtractionError(f"HTML declares an unknown charset {label!r}") from None
    if codec not in _ALLOWED_CODECS:
        raise TextExtractionError(f"HTML declares an unsupported charset {label!r}")
    return _decode_strict(data, codec)


class _HTMLParser(BeautifulSoupHTMLParser):
    """bs4's stdlib html.parser adapter, minus its "looks like XML" warning.

    bs4 warns when a document opens with an XML declaration and its root is not <html>. The media
    type here comes from the source record, so the warning tells the verifier nothing. Silencing
    it at the source, rather than with warnings.catch_warnings (not thread-safe), keeps service
    logs and `-W error` test runs clean. Never recording the declaration means the check that
    would warn never fires; nothing else reads it.
    """

    def _document_might_be_xml(self, processing_instruction: str) -> None:
        return None


class _HTMLTreeBuilder(HTMLParserTreeBuilder):
    """The stdlib html.parser tree builder, parsing with _HTMLParser."""

    def feed(
        self, markup: str | bytes, _parser_class: type[BeautifulSoupHTMLParser] = _HTMLParser
    ) -> None:
        super().feed(markup, _parser_class=_parser_class)


def _html_to_text(markup: str) -> str:
    # bs4 warns when short markup without "<" or a newline looks like a URL or file name. A
    # trailing newline avoids that warning and cannot change the text: normalize strips it.
    try:
        soup = BeautifulSoup(markup + "\n", builder=_HTMLTreeBuilder())
    except ParserRejectedMarkup as exc:
        # html.parser gives up on a few malformed constructs (bs4 re-raises them as this).
        raise TextExtractionError(f"HTML could not be parsed: {exc}") from None
    # One iterative pass over the tree, without modifying it: inserting separator nodes costs a
    # linear search of the parent per insert (quadratic on long pages) and recursion would
    # overflow on deeply nested markup. The stack holds child iterators and pending separators.
    parts: list[str] = []
    stack: list[Iterator[PageElement] | str] = [iter(soup.contents)]
    while stack:
        top = stack[-1]
        if isinstance(top, str):
            parts.append(top)
            stack.pop()
            continue
        node = next(top, None)
        if node is None:
            stack.pop()
        elif isinstance(node, Tag):
            if node.name in _DROPPED_TAGS:
                continue
            if node.name in _BLOCK_TAGS:
                parts.append("\n")
                stack.append("\n")  # emitted once the element's children are done
            stack.append(iter(node.contents))
        elif isinstance(node, NavigableString) and not isinstance(node, _NOT_TEXT):
            parts.append(str(node))
    return "".join(parts)


def _pdf_to_text(data: bytes) -> str:
    if len(data) > MAX_PDF_BYTES:
        raise TextExtractionError(
            f"PDF is {len(data)} bytes; sources over {MAX_PDF_BYTES} bytes are refused"
        )
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and reader.decrypt("") == pypdf.PasswordType.NOT_DECRYPTED:
            # An empty user password is common (it only sets permissions); anything else would
            # need a secret the verifier does not have.
            raise TextExtractionError("PDF is encrypted and needs a password to open")
        page_count = len(reader.pages)
        if page_count > MAX_PDF_PAGES:
            raise TextExtractionError(
                f"PDF has {page_count} pages; sources over {MAX_PDF_PAGES} pages are refused"
            )
        pages = [page.extract_text() for page in reader.pages]
    except TextExtractionError:
        raise
    except Exception as exc:
        # Malformed PDFs surface from pypdf as many exception types (PdfReadError, KeyError,
        # ValueError, RecursionError...). Each of them means the same thing here: the bytes are
        # not a PDF this extractor can read, which is a property of the source, not a crash.
        raise TextExtractionError(
            f"PDF could not be read by pypdf {pypdf.__version__}: {type(exc).__name__}: {exc}"
        ) from exc
    text = normalize("\n".join(pages))
    if not text:
        raise TextExtractionError(
            f"PDF has no text layer: pypdf extracted no text from its {page_count} page(s)"
        )
    return text
