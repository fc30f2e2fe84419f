"""Fakes at the client boundary: Bedrock runtime (Converse, InvokeModel) and OpenSearch."""

from __future__ import annotations

import hashlib
import io
import json
import re
import threading
from typing import Any

from botocore.exceptions import ClientError

from drac.documents.offline import offline_markdown
from drac.documents.render import RenderOptions, render_pages

PAGE_LINE = re.compile(r"image \d+ is page (\d+)")


def _digest(data: bytes) -> str:
    return hashlib.sha256(bytes(data)).hexdigest()


class FakeBedrockRuntime:
    """Answers Converse like a vision model and InvokeModel like Titan embeddings.

    A page image of a PDF given to `add_pdf` is answered with that page's text (the offline
    converter's Markdown); any other page image with a short text naming its page. Records
    every request; `throttle_next` raises ThrottlingException that many times; `fail_pages`
    makes every call covering one of those pages fail for good.
    """

    def __init__(self, pdf: bytes | None, conversion_model: str, embedding_model: str) -> None:
        self.page_texts: dict[str, str] = {}
        if pdf is not None:
            self.add_pdf(pdf)
        self.conversion_model = conversion_model
        self.embedding_model = embedding_model
        self.converse_requests: list[dict[str, Any]] = []
        self.embed_requests: list[dict[str, Any]] = []
        self.throttle_next = 0
        self.throttled = 0
        self.fail_pages: set[int] = set()
        self.lock = threading.Lock()

    def add_pdf(self, pdf: bytes) -> None:
        """Know the pages of a PDF: each rendered page image maps to the page's text."""
        texts = {page.number: page.markdown for page in offline_markdown(pdf)}
        for page in render_pages(pdf, RenderOptions()):
            self.page_texts[_digest(page.png)] = texts.get(page.number, "").strip()

    def _page_text(self, number: int, image: bytes) -> str:
        known = self.page_texts.get(_digest(image))
        if known is not None:
            return known
        return f"Page {number} of a document the fake has not seen ({_digest(image)[:8]})."

    def converse(self, **request: Any) -> dict[str, Any]:
        """Return page markers + the page's text as Markdown, after checking the request."""
        assert request["modelId"] == self.conversion_model
        assert request["inferenceConfig"]["temperature"] == 0.1
        assert request["inferenceConfig"]["maxTokens"] == 8192
        content = request["messages"][0]["content"]
        images = [block["image"] for block in content if "image" in block]
        assert images and all(img["format"] == "png" for img in images)
        assert all(img["source"]["bytes"][:8] == b"\x89PNG\r\n\x1a\n" for img in images)
        prompt = content[-1]["text"]
        pages = [int(n) for n in PAGE_LINE.findall(prompt)]
        assert len(pages) == len(images)
        with self.lock:
            self.converse_requests.append(request)
            if self.throttle_next > 0:
                self.throttle_next -= 1
                self.throttled += 1
                raise ClientError(
                    {"Error": {"Code": "ThrottlingException", "Message": "Too many requests"},
                     "ResponseMetadata": {"HTTPStatusCode": 429}}, "Converse")
            if self.fail_pages & set(pages):
                raise ClientError(
                    {"Error": {"Code": "ValidationException", "Message": "bad image"},
                     "ResponseMetadata": {"HTTPStatusCode": 400}}, "Converse")
        text = "\n\n".join(
            f"<!-- Page {n} -->\n\n{self._page_text(n, img['source']['bytes'])}"
            for n, img in zip(pages, images, strict=True))
        return {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                "usage": {"inputTokens": 1000 * len(pages), "outputTokens": len(text) // 4}}

    def invoke_model(self, **request: Any) -> dict[str, Any]:
        """Titan V2: a deterministic unit-ish vector of the requested dimension."""
        assert request["modelId"] == self.embedding_model
        body = json.loads(request["body"])
        assert body["dimensions"] == 1024 and body["normalize"] is True
        with self.lock:
            self.embed_requests.append(body)
        digest = hashlib.sha256(body["inputText"].encode()).digest()
        vector = [((digest[i % 32] / 255.0) - 0.5) for i in range(body["dimensions"])]
        payload = {"embedding": vector, "inputTextTokenCount": len(body["inputText"]) // 4}
        return {"body": io.BytesIO(json.dumps(payload).encode())}


class FakeIndices:
    """The `indices` namespace of the fake OpenSearch client."""

    def __init__(self) -> None:
        self.bodies: dict[str, dict[str, Any]] = {}

    def exists(self, index: str) -> bool:
        return index in self.bodies

    def create(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies[index] = body
        return {"acknowledged": True}


class FakeOpenSearch:
    """In-memory stand-in for a vector collection: rejects custom _id like AOSS does."""

    def __init__(self) -> None:
        self.docs: list[dict[str, Any]] = []
        self.next_id = 0
        self.indices = FakeIndices()
        self.lock = threading.Lock()

    def bulk(self, body: list[dict[str, Any]]) -> dict[str, Any]:
        """Index actions (service-assigned ids) and delete actions by `_id`."""
        items: list[dict[str, Any]] = []
        with self.lock:
            rest = list(body)
            while rest:
                action = rest.pop(0)
                if "delete" in action:
                    doc_id = action["delete"]["_id"]
                    keep = [d for d in self.docs if d["_id"] != doc_id]
                    found = len(keep) < len(self.docs)
                    self.docs = keep
                    items.append({"delete": {"_id": doc_id, "status": 200 if found else 404,
                                             "result": "deleted" if found else "not_found"}})
                    continue
                assert "_id" not in action["index"], "vector collections reject custom _id"
                doc = rest.pop(0)
                assert len(doc["embedding"]) == 1024
                self.next_id += 1
                self.docs.append({**doc, "_id": f"auto-{self.next_id}"})
                items.append({"index": {"status": 201}})
        return {"errors": False, "items": items}

    def search(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        """Filter queries sorted by chunk_id with search_after paging (what deletes use)."""
        with self.lock:
            matched = sorted((d for d in self.docs if self._matches(d, body["query"])),
                             key=lambda d: (d["chunk_id"], d["plan_version"]))
        after = body.get("search_after")
        if after:
            matched = [d for d in matched if [d["chunk_id"], d["plan_version"]] > after]
        page = matched[: body.get("size", 10)]
        return {"hits": {"hits": [{"_id": d["_id"], "_score": 1.0,
                                   "sort": [d["chunk_id"], d["plan_version"]]} for d in page]}}

    @staticmethod
    def _matches(doc: dict[str, Any], query: dict[str, Any]) -> bool:
        if "terms" in query:
            (field, values), = query["terms"].items()
            return doc.get(field) in values
        if "term" in query:
            (field, value), = query["term"].items()
            return doc.get(field) == value
        if "bool" in query:
            return all(FakeOpenSearch._matches(doc, q) for q in query["bool"].get("filter", []))
        raise AssertionError(f"unsupported query {query}")

    def delete_by_query(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("vector collections do not support _delete_by_query")

    def chunks(self, document_id: str) -> list[dict[str, Any]]:
        return [d for d in self.docs if d["document_id"] == document_id]
