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
from drac.local.cores import ThreadBudget
from drac.local.search import EmbedReport, Progress, load_model
from drac.local.workspace import Workspace
from drac.ports import Embedder

BATCH = 32
"""Chunk texts embedded per call: several forward batches, so every granted thread has work,
and the progress bar still moves every few seconds."""

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
        batch: int = BATCH,
    ) -> None:
        self.ws = ws
        self.embedder = embedder
        self.cached = CachingEmbedder(embedder, ws.vectors)
        self.budget = budget
        self.threads = max(1, threads)
        self.progress = progress
        self.batch = max(1, batch)
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
        """Wait for the documents added, then embed every active chunk text still missing
        with the whole budget; raise what the embedder raised."""
        self._queue.put(_DONE)
        self._thread.join()
        if self.error is not None:
            raise self.error
        texts = [chunk.text for chunk in self.ws.active_chunks()]
        self._embed(self.cached.missing(texts))
        return EmbedReport(
            embedder=self.embedder.name,
            chunks=len(texts),
            embedded=self.embedded,
            seconds=time.perf_counter() - self._started,
        )

    def abandon(self) -> None:
        """Stop after the batch in progress (Ctrl-C): what is embedded stays cached, the rest
        is embedded next time."""
        self._stop.set()
        self._queue.put(_DONE)
        self._thread.join()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _DONE or self._stop.is_set():
                return
            try:
                texts = [chunk.text for chunk in self.ws.active_chunks(str(item))]
                self._embed(self.cached.missing(texts))
            except Exception as exc:  # never a document's failure: reported by finish
                self.error = exc
                return

    def _embed(self, texts: Sequence[str]) -> None:
        fresh = [text for text in texts if text not in self._seen]
        if not fresh:
            return
        if not self.embedded and not self._total:
            load_model(self.embedder)
        self._seen.update(fresh)
        self._total += len(fresh)
        self._tell()
        for start in range(0, len(fresh), self.batch):
            if self._stop.is_set():
                return
            with self.budget.threads(self.threads) as granted:
                use_threads(self.embedder, granted)
                self.cached.embed(fresh[start : start + self.batch])
            self.embedded += len(fresh[start : start + self.batch])
            self._tell()

    def _tell(self) -> None:
        if self.progress is not None:
            self.progress(self.embedded, self._total)
