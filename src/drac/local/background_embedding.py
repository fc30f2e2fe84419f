"""Embedding while an ingest converts: one consumer thread embeds the chunks of each document
as soon as it is committed, while the documents after it are still converted.

The thread reads chunk texts from the workspace and writes vectors through its vector cache
(the workspace's one SQLite connection is shared under its lock), a batch at a time, each
batch holding tokens of the ingest's `ThreadBudget`. An embedder that fails stops the
consumer, never a document: `finish` raises the error, and the texts left without a vector
are embedded by the next ingest or search (`embed_active_chunks` embeds what is missing).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence

from drac.embedders.cache import CachingEmbedder
from drac.local.cores import ThreadBudget, join
from drac.local.search import EmbedReport, Progress, load_model
from drac.local.workspace import Workspace
from drac.ports import Embedder

PER_THREAD = 32
"""Chunk texts embedded per call and granted thread: each thread gets a few forward batches
of texts of similar length, and the progress bar still moves every few seconds."""

_DONE = object()


def use_threads(embedder: Embedder, count: int) -> None:
    """Ask the embedder to run its next calls on `count` threads (embedders with no thread
    setting of their own ignore it)."""
    setter = getattr(embedder, "use_threads", None)
    if callable(setter):
        setter(count)


class BackgroundEmbedding:
    """A consumer thread embedding the active chunks of the documents it is `add`ed."""

    def __init__(
        self,
        ws: Workspace,
        embedder: Embedder,
        budget: ThreadBudget,
        *,
        threads: int,
        progress: Progress | None = None,
        per_thread: int = PER_THREAD,
    ) -> None:
        self.ws = ws
        self.embedder = embedder
        self.cached = CachingEmbedder(embedder, ws.vectors)
        self.budget = budget
        self.threads = max(1, threads)
        self.progress = progress
        self.per_thread = max(1, per_thread)
        self.error: BaseException | None = None
        self.embedded = 0
        self._total = 0
        self._seen: set[str] = set()
        self._queue: queue.Queue[object] = queue.Queue()
        self._stop = threading.Event()
        self._started = time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="drac-embed", daemon=True)

    def start(self) -> BackgroundEmbedding:
        """Start the consumer thread."""
        self._thread.start()
        return self

    def add(self, document_id: str) -> None:
        """Embed this committed document's active chunks (from any thread)."""
        self._queue.put(document_id)

    def finish(self) -> EmbedReport:
        """Wait for the batch in progress, then embed every active chunk text still missing
        with the whole budget; raise what the embedder raised."""
        self._queue.put(_DONE)
        join(self._thread)
        if self.error is not None:
            raise self.error
        texts = [chunk.text for chunk in self.ws.active_chunks()]
        pending = self.cached.missing(texts)
        self._discover(pending)
        while pending:
            pending = self._embed_some(pending)
        return EmbedReport(
            embedder=self.embedder.name,
            chunks=len(texts),
            embedded=self.embedded,
            seconds=time.perf_counter() - self._started,
        )

    def abandon(self) -> None:
        """Stop after the batch in progress (Ctrl-C), without waiting for it (it may wait for
        a token a document still converting holds): each batch's vectors are stored in one
        transaction, and what is missing is embedded next time."""
        self._stop.set()
        self._queue.put(_DONE)

    def _run(self) -> None:
        try:
            self._consume()
        except Exception as exc:  # never a document's failure: `finish` raises it
            self.error = exc

    def _consume(self) -> None:
        """Embed the texts of the documents committed so far, a call at a time, taking in
        the documents committed meanwhile before each call (the texts left when the run
        ends are embedded by `finish`)."""
        pending: list[str] = []
        while not self._stop.is_set():
            items = [] if pending else [self._queue.get()]
            items += self._ready()
            if _DONE in items:
                return
            for document_id in items:
                texts = [chunk.text for chunk in self.ws.active_chunks(str(document_id))]
                fresh = self._discover(self.cached.missing(texts))
                pending.extend(fresh)
            if pending:
                pending = self._embed_some(pending)

    def _ready(self) -> list[object]:
        items: list[object] = []
        while True:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                return items

    def _discover(self, texts: Sequence[str]) -> list[str]:
        """The texts not seen before, counted in the progress total."""
        fresh = [text for text in dict.fromkeys(texts) if text not in self._seen]
        self._seen.update(fresh)
        self._total += len(fresh)
        if fresh:
            self._tell()
        return fresh

    def _embed_some(self, pending: list[str]) -> list[str]:
        """Embed one call's worth of the pending texts on the threads granted; the rest."""
        load_model(self.embedder)
        with self.budget.threads(self.threads) as granted:
            use_threads(self.embedder, granted)
            count = self.per_thread * granted
            self.cached.embed(pending[:count])
        self.embedded += len(pending[:count])
        self._tell()
        return pending[count:]

    def _tell(self) -> None:
        if self.progress is not None:
            self.progress(self.embedded, self._total)
