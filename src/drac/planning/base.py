"""The Planner port: proposes chunks for one section as arrays of element IDs."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from drac.models import Element, Section, Strategy, TokenUsage


@dataclass(frozen=True)
class SectionView:
    """A section with fast access to its elements, as planners and the validator need it."""

    section: Section
    by_id: Mapping[str, Element]
    order: Mapping[str, int]

    @property
    def elements(self) -> list[Element]:
        return [self.by_id[element_id] for element_id in self.section.element_ids]

    @property
    def content(self) -> list[Element]:
        return [element for element in self.elements if not element.is_heading]


@dataclass(frozen=True)
class Proposal:
    """A planner's raw proposal: ID groups (unvalidated) and what it cost."""

    groups: list[list[str]]
    planner: str
    model: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    notes: list[str] = field(default_factory=list)
    fell_back: bool = False


class Planner(ABC):
    """Proposes chunks for a section; validation happens in code afterwards, always."""

    name: str

    @abstractmethod
    def propose(self, view: SectionView, strategy: Strategy, document_id: str) -> Proposal:
        """Return ID groups for the section's content elements."""


def section_view(section: Section, elements: Sequence[Element]) -> SectionView:
    """Build a SectionView over a document's elements."""
    by_id = {element.id: element for element in elements}
    order = {element.id: index for index, element in enumerate(elements)}
    return SectionView(section=section, by_id=by_id, order=order)
