"""Fakes at the client boundary for what cannot run here: OpenSearch Serverless and Bedrock.

Both record every request so tests assert exactly what was sent. The OpenSearch fake behaves
like a vector collection where it matters: no custom `_id`, no `_delete_by_query`, search by
term/terms/bool filters (with must_not), BM25-like `match`, and k-NN with a filter.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import threading
import time
from collections import Counter
from typing import Any

from botocore.exceptions import ClientError

_WORD = re.compile(r"\w+")


class FakeIndices:
    """The `indices` namespace of the fake OpenSearch client."""

    def __init__(self) -> None:
        self.bodies: dict[str, dict[str, Any]] = {}

    def exists(self, index: str) -> bool:
        return index in self.bodies

    def create(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies[index] = body
        return {"acknowledged": True}

    def get_mapping(self, index: str) -> dict[str, Any]:
        return {index: {"mappings": self.bodies[index].get("mappings", {})}}

    def put_mapping(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        """Add fields to an index's mapping; changing a field's mapping is refused."""
        properties = self.bodies[index].setdefault("mappings", {}).setdefault("properties", {})
        for name, mapping in body["properties"].items():
            assert properties.get(name, mapping) == mapping, f"mapping of {name} changed"
            properties[name] = mapping
        return {"acknowledged": True}


class FakeOpenSearch:
    """An in-memory vector collection. `fail_bulk_after` makes the n-th index action of a
    bulk request (counting all requests) fail, to inject partial bulk failures;
    `search_lag` makes a written document searchable only after that many more searches (a
    collection whose refresh has not yet run), as OpenSearch search is near-real-time."""

    def __init__(self) -> None:
        self.docs: list[dict[str, Any]] = []
        self.next_id = 0
        self.indices = FakeIndices()
        self.lock = threading.Lock()
        self.requests: list[tuple[str, Any]] = []
        self.fail_bulk_after: int | None = None
        self.index_actions = 0
        self.search_lag = 0
        self.searches = 0
        self.visible_at: dict[str, int] = {}

    # -- writes -------------------------------------------------------------------------
    def bulk(self, body: list[dict[str, Any]]) -> dict[str, Any]:
        """Index actions (service-assigned ids) and delete actions by `_id`."""
        items: list[dict[str, Any]] = []
        errors = False
        with self.lock:
            self.requests.append(("bulk", body))
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
                self.index_actions += 1
                if self.fail_bulk_after is not None and self.index_actions > self.fail_bulk_after:
                    errors = True
                    items.append({"index": {"status": 429, "error": {"type": "rejected"}}})
                    continue
                self.next_id += 1
                doc_id = f"auto-{self.next_id}"
                self.docs.append({**doc, "_id": doc_id})
                self.visible_at[doc_id] = self.searches + self.search_lag + 1
                items.append({"index": {"_id": doc_id, "status": 201, "result": "created"}})
        return {"errors": errors, "items": items}

    def delete_by_query(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("vector collections do not support _delete_by_query")

    # -- reads --------------------------------------------------------------------------
    def search(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        """Filter queries (sorted by chunk_id, with search_after paging; `_source` a list of
        fields returns those), `match` on text scored by term overlap, or `knn` by cosine,
        each with optional filters."""
        with self.lock:
            self.requests.append(("search", body))
            self.searches += 1
            docs = [d for d in self.docs if self.visible_at.get(d["_id"], 0) <= self.searches]
        query = body["query"]
        size = body.get("size", 10)
        if "knn" in query:
            ((_, spec),) = query["knn"].items()
            filters = spec.get("filter", {"bool": {"filter": []}})
            scored = [(self._cosine(d["embedding"], spec["vector"]), d) for d in docs
                      if "embedding" in d and self._matches(d, filters)]
            return self._hits(sorted(scored, key=lambda pair: -pair[0])[: spec["k"]][:size])
        if "bool" in query and query["bool"].get("must"):
            (match,) = query["bool"]["must"]
            words = _WORD.findall(match["match"]["text"].lower())
            rest = {"bool": {k: v for k, v in query["bool"].items() if k != "must"}}
            scored = [(self._overlap(d["text"], words), d) for d in docs
                      if self._matches(d, rest)]
            scored = [pair for pair in scored if pair[0] > 0]
            return self._hits(sorted(scored, key=lambda pair: -pair[0])[:size])
        matched = sorted((d for d in docs if self._matches(d, query)),
                         key=lambda d: (d["chunk_id"], d["plan_version"]))
        after = body.get("search_after")
        if after:
            matched = [d for d in matched if [d["chunk_id"], d["plan_version"]] > after]
        fields = body.get("_source", False)
        return {"hits": {"hits": [{"_id": d["_id"], "_score": 1.0,
                                   "sort": [d["chunk_id"], d["plan_version"]],
                                   **({"_source": {k: d[k] for k in fields if k in d}}
                                      if isinstance(fields, list) else {})}
                                  for d in matched[:size]]}}

    @staticmethod
    def _hits(scored: list[tuple[float, dict[str, Any]]]) -> dict[str, Any]:
        return {"hits": {"hits": [
            {"_id": d["_id"], "_score": score,
             "_source": {k: v for k, v in d.items() if k not in ("_id", "embedding")}}
            for score, d in scored]}}

    @staticmethod
    def _overlap(text: str, words: list[str]) -> float:
        counts = Counter(_WORD.findall(text.lower()))
        return float(sum(math.log1p(counts[word]) for word in words))

    @staticmethod
    def _cosine(a: list[float], b: list[float]) -> float:
        dot = sum(x * y for x, y in zip(a, b, strict=True))
        norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        return dot / norm if norm else 0.0

    @staticmethod
    def _matches(doc: dict[str, Any], query: dict[str, Any]) -> bool:
        """Query DSL as OpenSearch evaluates it on one document: term/terms (an array field
        matches when any element does), range (numbers, or dates on `*.date` fields), nested
        (any one object of the path matches the whole inner query), and bool with filter,
        must, must_not and should (`minimum_should_match`, default 1 only when the bool has
        no filter or must)."""
        if "terms" in query:
            ((field, values),) = query["terms"].items()
            return any(value in values for value in _field_values(doc, field))
        if "term" in query:
            ((field, value),) = query["term"].items()
            return value in _field_values(doc, field)
        if "range" in query:
            ((field, bounds),) = query["range"].items()
            return any(_in_bounds(field, value, bounds) for value in _field_values(doc, field))
        if "nested" in query:
            path, inner = query["nested"]["path"], query["nested"]["query"]
            objects = doc.get(path) or []
            return any(
                FakeOpenSearch._matches({f"{path}.{k}": v for k, v in obj.items()}, inner)
                for obj in (objects if isinstance(objects, list) else [objects])
            )
        if "bool" in query:
            clause = query["bool"]
            unknown = set(clause) - {"filter", "must", "must_not", "should",
                                     "minimum_should_match"}
            assert not unknown, f"unsupported bool clauses {unknown}"
            required = [*clause.get("filter", []), *clause.get("must", [])]
            should = clause.get("should", [])
            least = clause.get("minimum_should_match", 0 if required else 1) if should else 0
            return (
                all(FakeOpenSearch._matches(doc, q) for q in required)
                and not any(FakeOpenSearch._matches(doc, q) for q in clause.get("must_not", []))
                and sum(FakeOpenSearch._matches(doc, q) for q in should) >= least
            )
        raise AssertionError(f"unsupported query {query}")

    def chunks(self, document_id: str) -> list[dict[str, Any]]:
        """The stored chunk documents of one document."""
        return [d for d in self.docs if d["document_id"] == document_id]


def _field_values(doc: dict[str, Any], field: str) -> list[Any]:
    """A field's values in a document (an array's elements; none when absent)."""
    value = doc.get(field)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _in_bounds(field: str, value: Any, bounds: dict[str, Any]) -> bool:
    """Whether a numeric or date (`*.date`) field value lies within gt/gte/lt/lte bounds."""
    from datetime import datetime

    def key(item: Any) -> Any:
        return datetime.fromisoformat(item) if field.endswith(".date") else float(item)

    if isinstance(value, bool) or (isinstance(value, str) and not field.endswith(".date")):
        return False
    checks = {"gt": lambda a, b: a > b, "gte": lambda a, b: a >= b,
              "lt": lambda a, b: a < b, "lte": lambda a, b: a <= b}
    assert set(bounds) <= set(checks), f"unsupported range {bounds}"
    return all(checks[name](key(value), key(bound)) for name, bound in bounds.items())


def client_error(code: str, status: int, operation: str = "Converse") -> ClientError:
    """A botocore ClientError as a service answers it."""
    return ClientError(
        {"Error": {"Code": code, "Message": f"{code} (injected)"},
         "ResponseMetadata": {"HTTPStatusCode": status}}, operation)


class FakeBedrockRuntime:
    """Converse like a vision model and InvokeModel like Titan embeddings.

    A page image of a PDF given to `add_pdf` is answered with that page's text (the offline
    converter's Markdown); any other page image with a short text naming its page. Records
    every request. Failures are injected three ways: `failures`, exceptions raised one per
    call before calls succeed again; `throttle_next`, that many ThrottlingExceptions; and
    `fail_pages`, a validation error for good on every call covering one of those pages;
    `throttle_pages`, a ThrottlingException for good on every such call. A second
    conversion model (escalation) is one named in `model_texts`, whose page images are
    answered from there first (then as the conversion model answers them).
    """

    def __init__(self, pdf: bytes | None, conversion_model: str,
                 embedding_model: str = "amazon.titan-embed-text-v2:0",
                 planning_model: str = "google.gemma-3-12b-it") -> None:
        self.page_texts: dict[str, str] = {}
        self.model_texts: dict[str, dict[str, str]] = {}
        """Per model id other than the conversion model: page image digest -> its answer."""
        if pdf is not None:
            self.add_pdf(pdf)
        self.conversion_model = conversion_model
        self.embedding_model = embedding_model
        self.planning_model = planning_model
        self.plan_requests: list[dict[str, Any]] = []
        """The planner's Converse requests (forced tool), in the order they came."""
        self.plan_answers: list[list[str]] = []
        """The break IDs answered to each of them."""
        self.converse_requests: list[dict[str, Any]] = []
        self.embed_requests: list[dict[str, Any]] = []
        self.failures: list[Exception] = []
        self.throttle_next = 0
        self.throttled = 0
        self.fail_pages: set[int] = set()
        self.throttle_pages: set[int] = set()
        self.slow_s = 0.0
        """Seconds every Converse call takes (to let a later upload overtake an earlier)."""
        self.lock = threading.Lock()

    def add_pdf(self, pdf: bytes) -> None:
        """Know the pages of a PDF: each rendered page image maps to the page's text."""
        from drac.documents.offline.pages import offline_markdown
        from drac.documents.pdf.render import RenderOptions, render_pages

        texts = {page.number: page.markdown for page in offline_markdown(pdf)}
        for page in render_pages(pdf, RenderOptions()):
            self.page_texts[_digest(page.png)] = texts.get(page.number, "").strip()

    def _page_text(self, number: int, image: bytes, model: str = "") -> str:
        digest = _digest(image)
        known = self.model_texts.get(model, {}).get(digest, self.page_texts.get(digest))
        if known is not None:
            return known
        return f"Page {number} of a document the fake has not seen ({_digest(image)[:8]})."

    def _injected(self, operation: str) -> None:
        if self.failures:
            raise self.failures.pop(0)
        if self.throttle_next > 0:
            self.throttle_next -= 1
            self.throttled += 1
            raise client_error("ThrottlingException", 429, operation)

    def converse(self, **request: Any) -> dict[str, Any]:
        """Page markers and each page's text as Markdown, after checking the request; a
        planning request (the forced `answer` tool) gets a plan (`plan_answer`)."""
        if "toolConfig" in request:
            return self.plan_answer(request)
        assert request["modelId"] in (self.conversion_model, *self.model_texts)
        assert request["inferenceConfig"]["temperature"] == 0.1
        assert request["inferenceConfig"]["maxTokens"] == 8192
        content = request["messages"][0]["content"]
        images = [block["image"] for block in content if "image" in block]
        assert images and all(img["format"] == "png" for img in images)
        assert all(img["source"]["bytes"][:8] == b"\x89PNG\r\n\x1a\n" for img in images)
        pages = [int(n) for n in re.findall(r"image \d+ is page (\d+)", content[-1]["text"])]
        assert len(pages) == len(images)
        with self.lock:
            self.converse_requests.append(request)
            self._injected("Converse")
            if self.throttle_pages & set(pages):
                self.throttled += 1
                raise client_error("ThrottlingException", 429)
            if self.fail_pages & set(pages):
                raise client_error("ValidationException", 400)
        if self.slow_s:
            time.sleep(self.slow_s)
        text = "\n\n".join(
            f"<!-- Page {n} -->\n\n{self._page_text(n, img['source']['bytes'], request['modelId'])}"
            for n, img in zip(pages, images, strict=True))
        return {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                "usage": {"inputTokens": 1000 * len(pages), "outputTokens": len(text) // 4}}

    def plan_answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The LLM planner's request answered as a model would through the forced tool: a
        break at every heading ID of the prompt and at every 4th other candidate ID (so
        sections without headings still split), only IDs the tool's schema admits."""
        assert request["modelId"] == self.planning_model
        config = request["toolConfig"]
        (tool,) = config["tools"]
        name = tool["toolSpec"]["name"]
        assert config["toolChoice"] == {"tool": {"name": name}}
        schema = tool["toolSpec"]["inputSchema"]["json"]
        candidates = schema["properties"]["b"]["items"].get("enum", [])
        (text,) = [b["text"] for b in request["messages"][-1]["content"] if "text" in b]
        headings = set(re.findall(r"^(\S+) #+ ", text, re.MULTILINE))
        breaks = [c for i, c in enumerate(candidates) if c in headings or i % 4 == 3]
        with self.lock:
            self.plan_requests.append(request)
            self.plan_answers.append(breaks)
            self._injected("Converse")
        use = {"toolUseId": f"tooluse_{len(self.plan_requests)}", "name": name,
               "input": {"b": breaks}}
        return {"output": {"message": {"role": "assistant", "content": [{"toolUse": use}]}},
                "stopReason": "tool_use",
                "usage": {"inputTokens": len(text) // 4, "outputTokens": 4 * len(breaks) + 4}}

    def invoke_model(self, **request: Any) -> dict[str, Any]:
        """Titan V2: a deterministic vector of the requested dimension."""
        assert request["modelId"] == self.embedding_model
        body = json.loads(request["body"])
        assert body["normalize"] is True
        with self.lock:
            self.embed_requests.append(body)
            self._injected("InvokeModel")
        digest = hashlib.sha256(body["inputText"].encode()).digest()
        vector = [((digest[i % 32] / 255.0) - 0.5) for i in range(body["dimensions"])]
        payload = {"embedding": vector, "inputTextTokenCount": len(body["inputText"]) // 4}
        return {"body": io.BytesIO(json.dumps(payload).encode())}


def _digest(data: bytes) -> str:
    return hashlib.sha256(bytes(data)).hexdigest()
