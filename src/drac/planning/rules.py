"""The offline rules planner: size- and heading-aware grouping, no model involved."""

from __future__ import annotations

from drac.models import Strategy
from drac.planning.base import Planner, Proposal, SectionView
from drac.planning.packing import pack
from drac.ports import Ledger, TextModel


class RulesPlanner(Planner):
    """Groups 3-8 related blocks per chunk within a section, by size and heading boundaries."""

    name = "rules"

    @classmethod
    def build(cls, text_model: TextModel | None, ledger: Ledger) -> RulesPlanner:
        """The rules planner: it needs neither model nor ledger."""
        return cls()

    def propose(self, view: SectionView, strategy: Strategy, document_id: str) -> Proposal:
        """Return the packed groups of the section's content, in document order."""
        groups = pack(view.content, view.by_id, strategy, view.breadcrumbs)
        return Proposal(
            groups=[[element.id for element in group] for group in groups], planner=self.name
        )
