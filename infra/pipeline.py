"""Pipeline: the Lambda stages, the state machines and the intake that feeds them."""

from __future__ import annotations

from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from drac.settings import Settings
from infra.functions import FunctionFactory
from infra.intake import Intake
from infra.network import ConverterNetwork
from infra.search import Search
from infra.stages import Stages
from infra.storage import Storage
from infra.workflows import Workflows


class Pipeline(Construct):
    """The event-driven pipeline from an upload to indexed chunks."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        storage: Storage,
        search: Search,
        factory: FunctionFactory,
        network: ConverterNetwork | None = None,
    ) -> None:
        """Create the stages, the workflows over them and the intake."""
        super().__init__(scope, construct_id)
        self.stages = Stages(
            self,
            "Stages",
            settings=settings,
            storage=storage,
            search=search,
            factory=factory,
            network=network,
        )
        self.workflows = Workflows(
            self, "Workflows", settings=settings, stages=self.stages, storage=storage
        )
        self.intake = Intake(
            self,
            "Intake",
            settings=settings,
            storage=storage,
            stages=self.stages,
            replan_machine=self.workflows.replan_machine,
        )
        self.ingest_machine = self.workflows.ingest_machine
        self.convert_machine = self.workflows.convert_machine
        self.plan_machine = self.workflows.plan_machine
        self.replan_machine = self.workflows.replan_machine
        self.bus = self.intake.bus
        self.dead_letter_queues = self.intake.dead_letter_queues
        self.child_execution_arns = self.workflows.child_execution_arns

    def factory_functions(self) -> list[lambda_.IFunction]:
        """Every function a state machine or event source invokes."""
        return self.stages.all()
