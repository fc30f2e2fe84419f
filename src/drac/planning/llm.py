"""The LLM planner: shows a model element IDs and short previews, reads back ID arrays.

The model never writes document text that is kept: its answer is parsed for IDs only.
"""

from __future__ import annotations

import re
import time

from drac.clock import utc_now
from drac.errors import ModelCallError, ModelUnreachable, PlanningError
from drac.models import Element, ElementKind, LedgerEntry, Strategy, TokenUsage
from drac.planning.answer import expand_ranges
from drac.planning.base import Planner, Proposal, SectionView
from drac.planning.errors import ModelServerUnreachable, PlanningFailed
from drac.planning.plan_format import (
    SHAPE,
    answer_token_cap,
    plan_grammar,
    plan_schema,
    read_plan,
)
from drac.ports import Exchange, Ledger, ModelReply, TextModel

SYSTEM_PROMPT = (
    "Split document elements into retrieval chunks. Lines: ID, kind, size, preview. Reply "
    'JSON only: {{"b":[IDs]}}, the IDs where a new chunk starts, in order (the first ID '
    "always starts one). A chunk is one topic: 3-8 blocks, about {target} chars, at most "
    "{limit}; keep a table's rows (same t) together; avoid tiny chunks."
)
REPAIR_PROMPT = (
    "That answer cannot be used: {complaint}. Reply with the JSON only, {shape}: the IDs "
    "of the list above where a new chunk starts, in order, and nothing else."
)
"""The repair turn's prompt: it follows the model's own answer, as a new user message."""
REPAIR_ANSWER_CHARS = 4000
"""How much of a failed answer the repair turn shows the model again."""
FAILED_ANSWER_CHARS = 500
"""How much of the last unusable answer a section plan keeps (for `drac show`)."""
_KIND_CODE = {
    ElementKind.PARAGRAPH: "P",
    ElementKind.LIST: "L",
    ElementKind.CODE: "C",
    ElementKind.QUOTE: "Q",
    ElementKind.TABLE_ROW: "R",
    ElementKind.HTML: "X",
}


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"https?://\S+")
# `>` is markup only as a quote marker at a line's start; inside text it is text ("a > b")
_MARKUP = re.compile(r"^[ \t]*(?:>[ \t>]*|(?:[-+*]|\d{1,3}[.)])[ \t]+)|[*_`#|]+", re.MULTILINE)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]{0,30}(?:\s[^<>]{0,300})?/?>")


def preview(element: Element, limit: int) -> str:
    """One-line preview of an element for the planner: Markdown syntax, HTML tags and URLs
    removed (they carry no topic), then cut to at most `limit` characters."""
    text = _URL.sub("", _LINK.sub(r"\1", _TAG.sub(" ", element.text)))
    return one_line(_MARKUP.sub(" ", text), limit)


def one_line(text: str, limit: int) -> str:
    """Text with whitespace runs folded to single spaces, cut to `limit` characters with '…'."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def section_prompt(view: SectionView, strategy: Strategy) -> str:
    """The user prompt for one section: heading context once, then one line per element."""
    lines: list[str] = []
    if view.section.heading_chain:
        chain = " > ".join(view.by_id[h].title for h in view.section.heading_chain)
        lines.append(f"In: {chain}")
    after_heading = False
    for element in view.elements:
        if element.is_heading:
            lines.append(f"{element.id} {'#' * (element.level or 1)} {element.title}")
            after_heading = True
            continue
        kind = _KIND_CODE.get(element.kind, "P")
        table = f" {element.table_id}" if element.table_id else ""
        # the heading just above already names the topic: half the preview is enough
        limit = strategy.preview_chars // 2 if after_heading else strategy.preview_chars
        after_heading = False
        text = preview(element, limit)
        lines.append(f"{element.id} {kind}{table} {len(element.text)} {text}")
    return "\n".join(lines)


class LlmPlanner(Planner):
    """Plans a section with a text model; an unusable answer gets one repair turn (the model
    sees its own answer and what is wrong with it), then the caller falls back to rules."""

    name = "llm"

    def __init__(
        self, model: TextModel, ledger: Ledger, max_answer_tokens: int | None = None
    ) -> None:
        """`max_answer_tokens` is the ceiling of an answer (default: the model's own)."""
        self.model = model
        self.ledger = ledger
        self.max_answer_tokens = max_answer_tokens or model.max_answer_tokens

    @classmethod
    def build(cls, text_model: TextModel | None, ledger: Ledger) -> LlmPlanner:
        """The planner over `text_model` (raises ValueError when no model is configured)."""
        if text_model is None:
            raise ValueError("strategy uses the llm planner but no planner model is configured")
        return cls(text_model, ledger)

    def _record(
        self,
        document_id: str,
        reply: ModelReply | None,
        outcome: str,
        *,
        sent_chars: int = 0,
        started: float | None = None,
    ) -> None:
        """Record one call; a call without a reply (an error, a timeout) is recorded with
        the input tokens its prompt would have cost (estimated at 4 characters a token) and
        the time it took."""
        waited = (time.perf_counter() - started) * 1000 if started is not None else 0.0
        if reply is None and sent_chars:
            outcome = f"{outcome} (input tokens estimated)"
        self.ledger.record(
            LedgerEntry(
                document_id=document_id,
                stage="planning",
                model=reply.model if reply else self.model.name,
                input_tokens=reply.usage.input_tokens if reply else -(-sent_chars // 4),
                output_tokens=reply.usage.output_tokens if reply else 0,
                latency_ms=(reply.latency_ms or waited) if reply else waited,
                outcome=outcome[:500],
                at=utc_now(),
            )
        )

    def propose(self, view: SectionView, strategy: Strategy, document_id: str) -> Proposal:
        """Ask the model for ID groups; raise PlanningError (with usage so far) when unusable."""
        system = SYSTEM_PROMPT.format(target=strategy.target_chars, limit=strategy.hard_limit_chars)
        prompt = section_prompt(view, strategy)
        usage = TokenUsage()
        notes: list[str] = []
        content_order = [element.id for element in view.content]
        schema = plan_schema(content_order)
        grammar = plan_grammar(content_order)
        cap = answer_token_cap(content_order, self.max_answer_tokens)
        earlier: list[Exchange] = []
        asked = prompt
        failed_answer: str | None = None
        for turn in range(2):  # the answer, then at most one repair turn
            started = time.perf_counter()
            sent = len(system) + len(asked) + sum(len(a) + len(b) for a, b in earlier)
            try:
                reply = self.model.complete(
                    system, asked, max_tokens=cap, schema=schema, grammar=grammar, earlier=earlier
                )
            except ModelUnreachable as exc:
                self._record(document_id, None, f"error: {exc}", sent_chars=sent, started=started)
                raise ModelServerUnreachable(str(exc)) from exc
            except ModelCallError as exc:
                self._record(document_id, None, f"error: {exc}", sent_chars=sent, started=started)
                raise PlanningFailed(
                    f"model call failed: {exc}", usage, notes, failed_answer
                ) from exc
            usage = usage + reply.usage
            try:
                groups, flat = read_plan(reply.text, content_order)
            except PlanningError as exc:
                complaint = (
                    f"it stopped at the token cap ({cap} tokens) before it ended"
                    if reply.cut_off
                    else str(exc)
                )
                self._record(document_id, reply, "cut off" if reply.cut_off else "unparseable")
                notes.append(f"answer {quote(reply.text)} unusable: {complaint}")
                failed_answer = reply.text[:FAILED_ANSWER_CHARS]
                earlier = [(prompt, reply.text[:REPAIR_ANSWER_CHARS])]
                asked = REPAIR_PROMPT.format(complaint=complaint, shape=SHAPE)
                continue
            self._record(document_id, reply, "ok" if turn == 0 else "repaired")
            return Proposal(
                groups=[expand_ranges(group, content_order) for group in groups],
                planner=self.name,
                model=reply.model,
                usage=usage,
                notes=notes,
                flat=flat,
                repaired=turn > 0,
                failed_answer=failed_answer,
            )
        raise PlanningFailed("; ".join(notes), usage, notes, failed_answer)


def quote(answer: str, limit: int = 60) -> str:
    """The start of an answer, on one line and quoted, for a warning."""
    return repr(one_line(answer, limit)) if answer.strip() else "(empty)"
