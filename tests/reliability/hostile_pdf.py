"""PDFs written as text: thousands of pages in milliseconds (PDFium's own writer takes a minute)."""

from __future__ import annotations

import zlib


def many_pages_pdf(count: int, text: str = "tiny page", side_pt: int = 72) -> bytes:
    """A PDF of `count` pages of `side_pt` points square, all showing `text` in Helvetica."""
    safe = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    content = f"BT /F1 6 Tf 4 {side_pt // 2} Td ({safe}) Tj ET".encode()
    first_page = 5
    kids = " ".join(f"{first_page + index} 0 R" for index in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
    ]
    page = (
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {side_pt} {side_pt}] "
        "/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
    ).encode()
    objects.extend(page for _ in range(count))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def pdf_document(objects: list[bytes], root: int = 1, trailer_extra: bytes = b"") -> bytes:
    """A PDF of the given object bodies (object N is objects[N-1]) with a correct xref."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        root,
        trailer_extra,
        xref,
    )
    return bytes(out)


def flate_stream(data: bytes, extra: bytes = b"", chunks: int = 1) -> bytes:
    """A stream object body holding `data` repeated `chunks` times, Flate-compressed."""
    packer = zlib.compressobj(9)
    packed = b"".join(packer.compress(data) for _ in range(chunks)) + packer.flush()
    return b"<< /Length %d /Filter /FlateDecode %s>>\nstream\n%s\nendstream" % (
        len(packed),
        extra,
        packed,
    )


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _pages_pdf(page_count: int, content: int, resources: bytes, extra: list[bytes]) -> bytes:
    """Catalog, page tree, font, `page_count` pages sharing content object `content`."""
    first_page = 4 + len(extra)
    kids = b" ".join(b"%d 0 R" % (first_page + index) for index in range(page_count))
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources %s /Contents %d 0 R >>"
        % (resources, content)
    )
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, page_count),
        _FONT,
        *extra,
        *([page] * page_count),
    ]
    return pdf_document(objects)


def text_bomb_pdf(shows: int = 100_000, run: int = 1000) -> bytes:
    """One page whose Flate content stream shows `shows` runs of `run` letters B (the issue's
    213 KB PDF: 100,000 x 1,000; its 43 KB variant: 20,000 x 1,000)."""
    line = b"(" + b"B" * run + b") Tj\n"
    content = flate_stream(line, chunks=shows)
    body = b"BT /F1 1 Tf 0 10 Td\n"  # the stream is one text object; BT/ET outside the repeats
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [6 0 R] /Count 1 >>",
        _FONT,
        flate_stream(body),
        content,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents [4 0 R 5 0 R] >>",
    ]
    return pdf_document(objects)


def shared_form_pdf(pages: int = 2000, chars: int = 5000) -> bytes:
    """`pages` pages each drawing one shared Form XObject of `chars` characters."""
    words = (b"word " * (chars // 5 + 1))[:chars]
    lines = b"".join(
        b"0 -8 Td (%s) Tj\n" % words[start : start + 100] for start in range(0, chars, 100)
    )
    form = flate_stream(
        b"BT /F1 6 Tf 20 780 Td\n" + lines + b"ET",
        b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> ",
    )
    content = flate_stream(b"/X1 Do")
    resources = b"<< /XObject << /X1 4 0 R >> >>"
    return _pages_pdf(pages, 5, resources, [form, content])


def nested_q_pdf(depth: int = 10_000_000) -> bytes:
    """One page whose content is `depth` nested `q` operators (the issue's 40 KB PDF)."""
    return _pages_pdf(1, 4, b"<< >>", [flate_stream(b"q\n" * 1000, chunks=depth // 1000)])


def full_page_fills_pdf(fills: int = 40_000) -> bytes:
    """One page filling itself `fills` times with a self-crossing path (5 KB at 40,000, fewer
    objects than a page may hold, little memory): rendering it takes pdfium many seconds."""
    fill = flate_stream(b"0 0 m 612 792 l 0 792 l 612 0 l h f\n", chunks=fills)
    return _pages_pdf(1, 4, b"<< >>", [fill])


def big_image_pdf(side: int = 40_000, pages: int = 1) -> bytes:
    """`pages` pages drawing one shared `side` x `side` gray image of zeros (the issue's 1.5 MB
    PDF at 40,000: 1.6 billion pixels)."""
    row = bytes(side)
    image = flate_stream(
        row,
        b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8 " % (side, side),
        chunks=side,
    )
    content = flate_stream(b"q 612 0 0 792 0 0 cm /Im1 Do Q")
    return _pages_pdf(pages, 5, b"<< /XObject << /Im1 4 0 R >> >>", [image, content])


def page_tree_loop_pdf() -> bytes:
    """A page tree whose only kid is the tree itself."""
    return pdf_document(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
            b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>",
        ]
    )


_PASSWORD_PAD = bytes.fromhex("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A")


def _rc4(key: bytes, data: bytes) -> bytes:
    box = list(range(256))
    j = 0
    for i in range(256):
        j = (j + box[i] + key[i % len(key)]) % 256
        box[i], box[j] = box[j], box[i]
    out = bytearray()
    i = j = 0
    for byte in data:
        i = (i + 1) % 256
        j = (j + box[i]) % 256
        box[i], box[j] = box[j], box[i]
        out.append(byte ^ box[(box[i] + box[j]) % 256])
    return bytes(out)


def empty_password_pdf(text: str = "Readable by anyone") -> bytes:
    """A one-page PDF encrypted (RC4, 40-bit, revision 2) with an empty user password and an
    owner password, as many "protected" PDFs are: it opens without a password."""
    import hashlib

    document_id = hashlib.md5(b"drac").digest()
    permissions = -44  # printing allowed, copying and changing not
    owner_key = hashlib.md5((b"owner" + _PASSWORD_PAD)[:32]).digest()[:5]
    owner = _rc4(owner_key, _PASSWORD_PAD)
    key = hashlib.md5(
        _PASSWORD_PAD + owner + permissions.to_bytes(4, "little", signed=True) + document_id
    ).digest()[:5]
    user = _rc4(key, _PASSWORD_PAD)
    content = f"BT /F1 24 Tf 72 700 Td ({text}) Tj ET".encode()
    object_key = hashlib.md5(key + (4).to_bytes(3, "little") + (0).to_bytes(2, "little")).digest()
    sealed = _rc4(object_key[:10], content)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [6 0 R] /Count 1 >>",
        _FONT,
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(sealed), sealed),
        b"<< /Filter /Standard /V 1 /R 2 /O <%s> /U <%s> /P %d >>"
        % (owner.hex().encode(), user.hex().encode(), permissions),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>",
    ]
    hex_id = document_id.hex().encode()
    return pdf_document(
        objects, trailer_extra=b"/Encrypt 5 0 R /ID [<%s> <%s>] " % (hex_id, hex_id)
    )
