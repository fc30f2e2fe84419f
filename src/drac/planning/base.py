"""The Planner port: proposes chunks for one section as arrays of element IDs."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from drac.models import Element, Section, Strategy, TokenUsage
from drac.planning.measure import Breadcrumbs
from drac.ports import Ledger, TextModel


@dataclass(frozen=True)
class SectionView:
    """A section with fast access to its elements, as planners and the validator need it.

    `by_id` and `order` cover the whole document (the section's heading chain lies outside
    it); the views of one document share them. The lists below are computed once: read them,
    do not change them.
    """

    section: Section
    by_id: Mapping[str, Element]
    order: Mapping[str, int]
    shared_breadcrumbs: Breadcrumbs | None = field(default=None, compare=False, repr=False)

    @cached_property
    def elements(self) -> list[Element]:
        """The section's elements in document order."""
        return [self.by_id[element_id] for element_id in self.section.element_ids]

    @cached_property
    def content(self) -> list[Element]:
        """The section's content (non-heading) elements in document order."""
        return [element for element in self.elements if not element.is_heading]

    @cached_property
    def content_ids(self) -> list[str]:
        """The IDs of the section's content elements in document order."""
        return [element.id for element in self.content]

    @cached_property
    def breadcrumbs(self) -> Breadcrumbs:
        """Breadcrumb lengths of heading chains, each computed once per document."""
        return self.shared_breadcrumbs or Breadcrumbs(self.by_id)


@dataclass(frozen=True)
class Proposal:
    """A planner's raw proposal: ID groups (unvalidated) and what it cost."""

    groups: list[list[str]]
    planner: str
    model: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    notes: list[str] = field(default_factory=list)
    fell_back: bool = False
    flat: bool = False  # one list of IDs without chunk boundaries (see validate)
    repaired: bool = False  # the answer came in a repair turn
    failed_answer: str | None = None  # the start of the last unusable answer, if any


class Planner(ABC):
    """Proposes chunks for a section; validation happens in code afterwards, always."""

    name: str

    @classmethod
    @abstractmethod
    def build(cls, text_model: TextModel | None, ledger: Ledger) -> Planner:
        """The planner made from what the caller has (raises ValueError when it needs a text
        model and `text_model` is None)."""

    @abstractmethod
    def propose(self, view: SectionView, strategy: Strategy, document_id: str) -> Proposal:
        """Return ID groups for the section's content elements."""


def section_view(section: Section, elements: Sequence[Element]) -> SectionView:
    """Build a SectionView over a document's elements."""
    return section_views([section], elements)[0]


def section_views(sections: Sequence[Section], elements: Sequence[Element]) -> list[SectionView]:
    """SectionViews of a document's sections, sharing one index of its elements."""
    by_id = {element.id: element for element in elements}
    order = _Positions(elements)
    crumbs = Breadcrumbs(by_id)
    return [SectionView(section, by_id, order, crumbs) for section in sections]


class _Positions(Mapping[str, int]):
    """Each element's position in the document, indexed on first use: only the repair of
    a planner's answer needs it, and a rules plan needs none."""

    def __init__(self, elements: Sequence[Element]) -> None:
        self._elements = elements
        self._index: dict[str, int] | None = None

    def _positions(self) -> dict[str, int]:
        if self._index is None:
            self._index = {element.id: index for index, element in enumerate(self._elements)}
        return self._index

    def __getitem__(self, element_id: str) -> int:
        return self._positions()[element_id]

    def __contains__(self, element_id: object) -> bool:
        return element_id in self._positions()

    def __iter__(self) -> Iterator[str]:
        return iter(self._positions())

    def __len__(self) -> int:
        return len(self._positions())
