import io
import struct
import zipfile

import pytest
from pdfs import make_pdf
from PIL import Image

from drac.documents.intake.detect import DocumentFormat, detect_format, extension_format
from drac.errors import DocumentError


def _zip(*names: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        for name in names:
            archive.writestr(name, "<xml/>")
    return buffer.getvalue()


def _image(fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (20, 10), "white").save(buffer, format=fmt)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        (make_pdf([(200, 200)]), "a.pdf", DocumentFormat.PDF),
        (_zip("word/document.xml"), "a.docx", DocumentFormat.DOCX),
        (_zip("ppt/presentation.xml", "ppt/slides/slide1.xml"), "a.pptx", DocumentFormat.PPTX),
        (_zip("xl/workbook.xml"), "a.xlsx", DocumentFormat.XLSX),
        (b"<!DOCTYPE html><html><body><p>x</p></body></html>", "a.html", DocumentFormat.HTML),
        (b'<h1 id="t">Title</h1>\n<p>Body</p>\n', "a.html", DocumentFormat.HTML),
        (b"# Title\n\nSome *text*.\n", "a.md", DocumentFormat.MARKDOWN),
        (b"\xef\xbb\xbf# Title with BOM\n", "a.md", DocumentFormat.MARKDOWN),
        (b"Just a plain note.\nNothing else.\n", "notes.txt", DocumentFormat.TEXT),
        (_image("PNG"), "scan.png", DocumentFormat.PNG),
        (_image("JPEG"), "scan.jpg", DocumentFormat.JPEG),
        (_image("TIFF"), "scan.tif", DocumentFormat.TIFF),
    ],
)
def test_every_format_is_detected_from_its_bytes(data: bytes, name: str, expected: DocumentFormat):
    detection = detect_format(data, name)
    assert detection.format is expected
    assert detection.warning is None


def test_a_markdown_file_starting_with_a_page_marker_is_not_html():
    data = b"<!-- Page 1 -->\n\n# Title\n\nText.\n"
    assert detect_format(data, "x.md").format is DocumentFormat.MARKDOWN


def test_pdf_header_after_junk_bytes_is_still_a_pdf():
    assert detect_format(b"\x00\x01\xff" + make_pdf([(100, 100)]), "x.pdf").format == "pdf"


def test_a_mismatched_name_is_reported_not_trusted():
    detection = detect_format(make_pdf([(200, 200)]), "report.docx")
    assert detection.format is DocumentFormat.PDF
    assert detection.extension_format is DocumentFormat.DOCX
    assert detection.warning and "docx" in detection.warning and "pdf" in detection.warning


def test_a_pptx_named_docx_is_a_pptx_with_a_warning():
    detection = detect_format(_zip("ppt/presentation.xml"), "deck.docx")
    assert detection.format is DocumentFormat.PPTX
    assert detection.warning is not None


def test_markdown_named_txt_is_not_a_mismatch():
    assert detect_format(b"# Heading\n\n- item\n", "a.txt").warning is None


def test_unknown_extension_gives_no_warning():
    assert extension_format("file.weird") is None
    assert detect_format(b"hello world\n", "file.weird").warning is None


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"   \n\t\n", "empty"),
        (_zip("data/thing.csv"), "not a DOCX"),
        (b"PK\x03\x04this is not really a zip", "corrupt ZIP"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100, "OLE"),
        (b"GIF89a" + b"\x00" * 20, "GIF"),
        (b"\xff\xfeH\x00i\x00", "UTF-16"),
        (b"\x80\x81\x82 not text at all \xfe", "not valid UTF-8 text"),
        (b"abc\x00\x01\x02\x03def", "binary"),
        (_zip("mimetype", "content.xml"), "OpenDocument"),
    ],
)
def test_junk_and_unsupported_content_is_a_document_error(data: bytes, reason: str):
    with pytest.raises(DocumentError, match=reason):
        detect_format(data, "upload.docx")


def _odf(mimetype: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", mimetype)
        archive.writestr("content.xml", "<office:document-content/>")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        (b"Region,Units\nNorth,5\nSouth,7\n", "sales.csv", DocumentFormat.CSV),
        (b'Name;Note\nAna;"two\nlines"\nBen;ok\n', "people.csv", DocumentFormat.CSV),
        (b"Name\nAna\nBen\n", "names.csv", DocumentFormat.CSV),
        (b"Part\tPrice\nP-1\t1,20\nP-2\t0,40\n", "parts.tsv", DocumentFormat.TSV),
        (b"Part\tPrice\nP-1\t1,20\nP-2\t0,40\n", "export.txt", DocumentFormat.TSV),
        (b"Part\tPrice\nP-1\t1,20\nP-2\t0,40\n", "export", DocumentFormat.TSV),
        (b"Region,Units\nNorth,5\nSouth,7\n", "notes.txt", DocumentFormat.TEXT),
        (b"\tindented\tprose\n\tmore\tprose\n\tand\tmore\n", "notes.txt", DocumentFormat.TEXT),
        (_odf("application/vnd.oasis.opendocument.spreadsheet"), "a.ods", DocumentFormat.ODS),
    ],
)
def test_spreadsheets_are_detected_by_content_and_name(
    data: bytes, name: str, expected: DocumentFormat
) -> None:
    detection = detect_format(data, name)
    assert detection.format is expected
    assert detection.warning is None
    assert expected.is_spreadsheet is (expected not in (DocumentFormat.TEXT,))


def test_a_csv_name_on_prose_is_text_with_a_warning() -> None:
    prose = b"Dear team,\nthanks for the notes, the slides, and the plan.\nSee you Monday.\n"
    detection = detect_format(prose, "letter.csv")
    assert detection.format is DocumentFormat.TEXT
    assert detection.warning and "csv" in detection.warning


@pytest.mark.parametrize(
    ("mimetype", "reason"),
    [
        ("application/vnd.oasis.opendocument.text", "OpenDocument text \\(ODT\\)"),
        ("application/vnd.oasis.opendocument.presentation", "OpenDocument presentation"),
        ("application/vnd.oasis.opendocument.graphics", "OpenDocument file"),
    ],
)
def test_opendocument_other_than_spreadsheets_is_refused_by_kind(mimetype: str, reason: str):
    with pytest.raises(DocumentError, match=reason):
        detect_format(_odf(mimetype), "upload.odt")


def test_every_spreadsheet_format_is_flagged_and_the_rest_are_not() -> None:
    sheets = {f for f in DocumentFormat if f.is_spreadsheet}
    assert {f.value for f in sheets} == {"xlsx", "xls", "ods", "csv", "tsv"}
    assert not any(f.is_text for f in sheets)


def _ole(*names: str) -> bytes:
    """A minimal OLE compound file (512-byte sectors) whose root holds the named streams."""
    end, free = 0xFFFFFFFE, 0xFFFFFFFF
    header = bytearray(512)
    header[:8] = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
    struct.pack_into("<HHHHH", header, 0x18, 0x3E, 3, 0xFFFE, 9, 6)
    struct.pack_into("<IIIIIIII", header, 0x2C, 1, 1, 0, 4096, end, 0, end, 0)
    struct.pack_into("<109I", header, 0x4C, 0, *([free] * 108))
    fat = struct.pack("<128I", 0xFFFFFFFD, end, *([free] * 126))
    entries = []
    for index, (name, kind) in enumerate([("Root Entry", 5), *((n, 2) for n in names)]):
        entry = bytearray(128)
        encoded = name.encode("utf-16-le") + b"\x00\x00"
        entry[: len(encoded)] = encoded
        struct.pack_into("<HBB", entry, 0x40, len(encoded), kind, 1)
        right = index + 1 if 0 < index < len(names) else free
        child = 1 if index == 0 and names else free
        struct.pack_into("<III", entry, 0x44, free, right, child)
        entries.append(bytes(entry))
    directory = b"".join(entries).ljust(512, b"\x00")
    return bytes(header) + fat + directory


def test_an_ole_file_with_a_workbook_stream_is_an_xls() -> None:
    data = _ole("\x05SummaryInformation", "Workbook")
    assert detect_format(data, "old.xls").format is DocumentFormat.XLS
    assert detect_format(_ole("Book"), "older.xls").format is DocumentFormat.XLS


@pytest.mark.parametrize(
    ("names", "reason"),
    [
        (("WordDocument", "1Table"), "legacy .doc/.ppt"),
        (("EncryptedInfo", "EncryptedPackage"), "password-protected"),
        ((), "OLE compound file"),
    ],
)
def test_other_ole_files_are_refused(names: tuple[str, ...], reason: str) -> None:
    with pytest.raises(DocumentError, match=reason):
        detect_format(_ole(*names), "old.xls")
