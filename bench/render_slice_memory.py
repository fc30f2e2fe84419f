"""Peak memory of one cloud Render invocation on the largest PDF the limits allow.

Makes (once, cached in `bench/out/`) a PDF just under the upload limit (`max_file_bytes`,
500 MiB): pages of a large incompressible image each (a noise JPEG, embedded as it is) and
a line of text. Then, in a fresh process told it is a Lambda function of Render's memory
(`AWS_LAMBDA_FUNCTION_MEMORY_SIZE=2048`), it runs the Render stage itself
(`drac.aws.stages.conversion`): CountPages, then one slice of about 50 pages, with the S3
client answering from the file (a botocore `StreamingBody`, as boto3's `GetObject` returns)
and STS with fixed credentials. It reports the peak resident memory (`VmHWM`) of the
function's process and of each pdfium worker (read from /proc while it runs: a worker stays
alive in the pool, so `getrusage(RUSAGE_CHILDREN)` would not count it), and the limit the
worker ran under. It also counts what pdfium reads of the file for the slice (the reads a
ranged-GET file access would make instead of one download).

    .venv/bin/python bench/render_slice_memory.py [--mib 495] [--label now] [--write]

Each label's rows are kept in `bench/out/render-slice-memory.json` and all are shown, so the
code before a change is measured from another checkout of it:
`PYTHONPATH=OTHER/src .venv/bin/python bench/render_slice_memory.py --label before`.
"""

from __future__ import annotations

import argparse
import ctypes
import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"
RESULTS = OUT / "render-slice-memory.json"
"""Each label's last measures (the table shows every label, e.g. before and after)."""
FUNCTION_MB = 2048
SLICE_PAGES = 50
"""The slice measured: batches 0 to 9 of 5 pages."""
"""Render's memory (infra/stages.py)."""
IMAGE_PX = (1240, 1754)
"""A page's image: A4 at 150 dpi, about 2 MiB as a noise JPEG."""
IMAGES = 8
"""Distinct images, used in turn (each page embeds its own copy)."""


def make_pdf(path: Path, mib: int) -> int:
    """Write a PDF of about `mib` MiB of incompressible images, one a page; its page count."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c
    from PIL import Image

    images = []
    for seed in range(IMAGES):
        buffer = io.BytesIO()
        Image.effect_noise(IMAGE_PX, 40 + seed).save(buffer, "JPEG", quality=95)
        images.append(buffer.getvalue())
    pages = mib * 1024 * 1024 // (sum(map(len, images)) // IMAGES + 2048)
    document = pdfium.PdfDocument.new()
    font = pdfium_c.FPDFText_LoadStandardFont(document.raw, b"Helvetica")
    for number in range(pages):
        page = document.new_page(595, 842)
        image = pdfium.PdfImage.new(document)
        image.load_jpeg(io.BytesIO(images[number % IMAGES]), inline=True)
        image.set_matrix(pdfium.PdfMatrix().scale(595, 842))
        page.insert_obj(image)
        text = pdfium_c.FPDFPageObj_CreateTextObj(document.raw, font, 12.0)
        encoded = (f"Page {number + 1} of the largest PDF\0").encode("utf-16-le")
        buffer = ctypes.create_string_buffer(encoded, len(encoded))
        pdfium_c.FPDFText_SetText(text, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)))
        pdfium_c.FPDFPageObj_Transform(text, 1, 0, 0, 1, 40, 800)
        pdfium_c.FPDFPage_InsertObject(page.raw, text)
        pdfium_c.FPDFPage_GenerateContent(page.raw)
        page.close()
    partial = path.with_suffix(".partial")
    document.save(partial)
    document.close()
    partial.replace(path)
    return pages


def _page_count(pdf: Path) -> int:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        return len(document)
    finally:
        document.close()


class _Peaks:
    """The largest VmHWM seen of this process's children, polled from /proc."""

    def __init__(self) -> None:
        self.children: dict[int, int] = {}
        self.together = 0
        """The largest resident memory of this process and its children at one moment (KiB)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(0.02):
            now = _status_kib("self", "VmRSS:")
            for pid in _children():
                peak = _status_kib(pid, "VmHWM:")
                if peak:
                    self.children[pid] = max(self.children.get(pid, 0), peak)
                now += _status_kib(pid, "VmRSS:")
            self.together = max(self.together, now)

    def stop(self) -> dict[int, int]:
        """Stop polling; each child's peak resident memory (KiB)."""
        self._stop.set()
        self._thread.join()
        return self.children


def _children() -> list[int]:
    pids: list[int] = []
    for task in Path("/proc/self/task").iterdir():
        try:
            pids += [int(pid) for pid in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return pids


def _status_kib(pid: int | str, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class _Body:
    """What the stub S3 client reads from: the PDF file."""

    def __init__(self, pdf: Path, key: str) -> None:
        self.pdf, self.key, self.stored = pdf, key, 0


class _S3:
    """GetObject of the PDF from the file (a StreamingBody over it, as boto3's), PutObject
    counted and dropped."""

    def __init__(self, source: _Body) -> None:
        import botocore.exceptions

        self.source = source
        self.exceptions = type(
            "Exceptions",
            (),
            {"NoSuchKey": KeyError, "ClientError": botocore.exceptions.ClientError},
        )

    def get_object(self, **request: Any) -> dict[str, Any]:
        from botocore.response import StreamingBody

        if request["Key"] != self.source.key:
            raise KeyError(request["Key"])
        size = self.source.pdf.stat().st_size
        raw = open(self.source.pdf, "rb")  # noqa: SIM115 - the body closes it
        return {"Body": StreamingBody(raw, size), "ContentLength": size}

    def put_object(self, **request: Any) -> dict[str, Any]:
        body = request["Body"]
        self.source.stored += len(body) if isinstance(body, (bytes, str)) else 0
        return {}


class _Sts:
    def assume_role(self, **_: Any) -> dict[str, Any]:
        return {
            "Credentials": {
                "AccessKeyId": "bench",
                "SecretAccessKey": "bench",
                "SessionToken": "bench",
            }
        }


class _Session:
    def __init__(self, source: _Body) -> None:
        self.s3, self.sts = _S3(source), _Sts()

    def client(self, service: str, **_: Any) -> Any:
        return {"s3": self.s3, "sts": self.sts}[service]


def run_stage(pdf: Path, step: str) -> dict[str, Any]:
    """Run one Render invocation (`count` or `slice`) in this process; its measures."""
    os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = str(FUNCTION_MB)
    from drac.aws.runtime import CloudResources, Runtime
    from drac.aws.stages.conversion import (
        RenderInput,
        SliceInput,
        render_document,
        render_slice,
    )
    from drac.aws.stages.fanout import ItemGroup
    from drac.documents.pdf import render
    from drac.settings import Settings

    source = _Body(pdf, "documents/d1/source.pdf")
    session = _Session(source)
    resources = CloudResources(
        artifacts_bucket="artifacts",
        documents_bucket="documents",
        converter_access_role_arn="arn:aws:iam::123456789012:role/access",
        region="us-east-1",
    )
    rt = Runtime(resources, Settings(), session, session_for=lambda _: session)
    limits: list[int] = []
    original = render.pdf_limits

    def recorded(*args: Any, **kwargs: Any) -> Any:
        fitted = original(*args, **kwargs)
        limits.append(fitted.memory_bytes)
        return fitted

    render.pdf_limits = recorded  # what the worker ran under (both versions call it)
    where = {"pdf_bucket": "artifacts", "pdf_key": source.key}
    baseline = _status_kib("self", "VmRSS:")
    peaks = _Peaks()
    started = time.perf_counter()
    try:
        if step == "count":
            counted = render_document(rt, RenderInput(document_id="d1", execution="x", **where))
            outcome = f"{counted.page_count} pages, {len(counted.slices)} slices"
        else:
            piece = SliceInput(
                document_id="d1",
                page_count=int(os.environ["BENCH_PAGES"]),
                slice=ItemGroup(first=0, last=9),  # batches 0..9: 50 pages of 5
                **where,
            )
            outcome = f"{render_slice(rt, piece).pages} pages rendered"
    except Exception as exc:  # reported with the memory it took
        outcome = f"failed: {exc}"
    seconds = time.perf_counter() - started
    workers = peaks.stop()
    return {
        "step": step,
        "outcome": outcome,
        "seconds": round(seconds, 1),
        "baseline_mib": baseline / 1024,
        "caller_peak_mib": _status_kib("self", "VmHWM:") / 1024,
        "worker_peak_mib": max(workers.values(), default=0) / 1024,
        "workers": len(workers),
        "together_mib": peaks.together / 1024,
        "worker_limit_mib": [value / 1024**2 for value in limits],
        "stored_mib": source.stored / 1024**2,
    }


class _CountingReader(io.RawIOBase):
    """The PDF file as pdfium's custom file access reads it (one `readinto` per block pdfium
    asks for): what ranged S3 reads would have to fetch."""

    BLOCK = 1024 * 1024

    def __init__(self, path: Path) -> None:
        self.file = open(path, "rb")  # noqa: SIM115 - closed with the reader
        self.calls, self.bytes, self.blocks = 0, 0, set()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.file.seek(offset, whence)

    def tell(self) -> int:
        return self.file.tell()

    def readinto(self, buffer: Any) -> int:
        start = self.file.tell()
        size = self.file.readinto(buffer)
        self.calls += 1
        self.bytes += size
        self.blocks.update(range(start // self.BLOCK, (start + max(size, 1) - 1) // self.BLOCK + 1))
        return size


def count_reads(pdf: Path, pages: int) -> dict[str, Any]:
    """What pdfium reads of the file to render a slice's pages and their text layers (in this
    process, without a worker): the reads a ranged-GET file access would make."""
    from drac.documents.pdf import layers, render

    reader = _CountingReader(pdf)
    original = render.CheckedDocument.__init__

    def opened(self: Any, _: Any, *args: Any, **kwargs: Any) -> None:
        original(self, reader, *args, autoclose=False, **kwargs)

    render.CheckedDocument.__init__ = opened  # type: ignore[method-assign]
    numbers = list(range(1, pages + 1))
    for _ in render.render_here(b"", render.RenderOptions(), numbers):
        pass
    for _ in layers.text_layers_here(b"", 5000, numbers):
        pass
    return {
        "reads": reader.calls,
        "read_mib": reader.bytes / 1024**2,
        "blocks": len(reader.blocks),
        "size_mib": pdf.stat().st_size / 1024**2,
    }


def _row(label: str, row: dict[str, Any]) -> str:
    if "caller_peak_mib" not in row:
        return f"| {label} | {row['step']} | {row['outcome']} | | | | | |"
    limit = ", ".join(f"{value:,.0f} MiB" for value in sorted(set(row["worker_limit_mib"])))
    return (
        f"| {label} | {row['step']} | {row['outcome']} | {row['seconds']} "
        f"| {row['caller_peak_mib']:,.0f} MiB (at start {row['baseline_mib']:,.0f}) "
        f"| {row['worker_peak_mib']:,.0f} MiB ({row['workers']} workers) "
        f"| {row['together_mib']:,.0f} MiB | {limit} |"
    )


def main() -> None:
    """Make the PDF, measure each step in a fresh process, print (and write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=495, help="the PDF's size (under 500)")
    parser.add_argument("--label", default="now", help="the code measured (a table row)")
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--pdf", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "reads":
        print(json.dumps(count_reads(Path(args.pdf), SLICE_PAGES)))
        return
    if args.child:
        print(json.dumps(run_stage(Path(args.pdf), args.child)))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    pdf = OUT / f"largest-{args.mib}mib.pdf"
    if not pdf.exists():
        print(f"making {pdf.name} ...", file=sys.stderr)
        make_pdf(pdf, args.mib)
    pages = _page_count(pdf)
    size_mib = pdf.stat().st_size / 1024**2
    rows = []
    for step in ("count", "slice"):
        answer = subprocess.run(
            [sys.executable, __file__, "--child", step, "--pdf", str(pdf)],
            capture_output=True,
            text=True,
            env={**os.environ, "BENCH_PAGES": str(pages)},
            check=False,
        )
        if answer.returncode:
            print(answer.stderr, file=sys.stderr)
            rows.append({"step": step, "outcome": answer.stderr.strip().splitlines()[-1]})
            continue
        rows.append(json.loads(answer.stdout.strip().splitlines()[-1]))
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results[args.label] = rows
    RESULTS.write_text(json.dumps(results, indent=1))
    table = [
        f"PDF: {size_mib:,.0f} MiB, {pages} pages; function memory {FUNCTION_MB} MB "
        f"({FUNCTION_MB * 1_000_000 / 1024**2:,.0f} MiB).",
        "",
        "| code | invocation | outcome | s | function peak (VmHWM) | worker peak (VmHWM) "
        "| both at once | worker limit |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, measured in results.items():
        table += [_row(label, row) for row in measured]
    reads = subprocess.run(
        [sys.executable, __file__, "--child", "reads", "--pdf", str(pdf)],
        capture_output=True,
        text=True,
        check=True,
    )
    counted = json.loads(reads.stdout.strip().splitlines()[-1])
    table += [
        "",
        f"What pdfium reads of the file for the slice (its {SLICE_PAGES} pages and their text "
        f"layers, counted through a custom file access): {counted['reads']:,} reads of "
        f"{counted['read_mib']:,.1f} MiB in all, touching {counted['blocks']:,} of the file's "
        f"{counted['size_mib']:,.0f} 1-MiB blocks.",
    ]
    print("\n".join(table))
    if args.write:
        sys.path.insert(0, str(Path(__file__).parent))
        from _common import machine, write_section

        body = (
            "## Render's memory on the largest PDF\n\n"
            "`.venv/bin/python bench/render_slice_memory.py --write`: the Render stage's "
            "CountPages and one 50-page slice of a generated PDF just under the 500 MiB upload "
            "limit, each in a fresh process told it is a 2,048 MB Lambda function; peak "
            "resident memory of the function's process and of its pdfium workers. *before*: "
            "the stage as it was when it read the PDF whole into memory (`--label before`, run "
            "from a checkout of that code); *after*: the PDF streamed to `/tmp` and opened by "
            "path.\n\n" + "\n".join(table) + f"\n\n{machine()}.\n"
        )
        write_section("render-slice-memory", body)


if __name__ == "__main__":
    main()
