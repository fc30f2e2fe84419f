"""The pipeline's Lambda functions, each with exactly the permissions its stage uses.

Every grant here is exercised by the end-to-end tests, which run each handler with only the
statements its role has in the synthesised template (tests/e2e).
"""

from __future__ import annotations

from aws_cdk import ArnFormat, Duration, Size, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from drac.aws.document_access import READ_ACTIONS, WRITE_ACTIONS
from drac.aws.stages.escalation import escalation_model_id
from drac.settings import SETTINGS_VARIABLE, Settings
from infra.config import model_arns
from infra.functions import FunctionFactory, Placement
from infra.network import ConverterNetwork
from infra.search import Search
from infra.storage import Storage

INCOMING = "incoming/*"
"""Where uploads are (a tenant's under incoming/<tenant>/)."""

MACHINE_NAMES = ("ingest", "convert", "plan", "replan")
MIB = 1024 * 1024
EPHEMERAL_MIB = (512, 10_240)
"""Lambda's /tmp: 512 MB unless set, any whole number from 512 to 10,240 MB (Lambda API
Reference, "EphemeralStorage")."""


def pdf_storage(settings: Settings) -> Size:
    """The /tmp of the functions that stream a document's PDF to a file (Render, ReadScans:
    `drac.aws.pdf_files`): twice the largest upload (`maxFileBytes`; room for a file that an
    invocation stopped by its timeout left behind) and 64 MiB, within Lambda's range."""
    wanted = -(-2 * settings.conversion.max_file_bytes // MIB) + 64
    return Size.mebibytes(min(max(wanted, EPHEMERAL_MIB[0]), EPHEMERAL_MIB[1]))


def machine_name(stack: Stack, name: str) -> str:
    """The physical name of one of the stack's state machines."""
    return f"{stack.stack_name}-{name}"


def machine_arn(stack: Stack, name: str) -> str:
    """The ARN of one of the stack's state machines, built from its name (functions that
    need it exist before the machine that invokes them)."""
    return stack.format_arn(
        service="states",
        resource="stateMachine",
        resource_name=machine_name(stack, name),
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )


def executions_arn(stack: Stack, name: str) -> str:
    """The ARN pattern of every execution of one of the stack's state machines."""
    return stack.format_arn(
        service="states",
        resource="execution",
        resource_name=f"{machine_name(stack, name)}:*",
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )


class Stages(Construct):
    """One Lambda function per pipeline stage (plus the starter and delete consumers)."""

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
        """Create the functions and grant each what its stage reads and writes (the
        converters in `network`'s isolated subnets, and with `privateCollection` the
        functions that index or search in its search subnets)."""
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.settings = settings
        self.search = search
        s = storage
        factory.environment.update(
            {
                "DOCUMENTS_BUCKET": s.documents.bucket_name,
                "ARTIFACTS_BUCKET": s.artifacts.bucket_name,
                "DOCUMENTS_TABLE": s.documents_table.table_name,
                "SOURCES_TABLE": s.sources_table.table_name,
                "ELEMENTS_TABLE": s.elements_table.table_name,
                "PLANS_TABLE": s.plans_table.table_name,
                "LEDGER_TABLE": s.ledger_table.table_name,
                "COLLECTION_ENDPOINT": search.endpoint,
                "INGEST_STATE_MACHINE_ARN": machine_arn(stack, "ingest"),
                "REPLAN_STATE_MACHINE_ARN": machine_arn(stack, "replan"),
                SETTINGS_VARIABLE: settings.to_json(),
            }
        )
        mk = factory.make
        minutes = Duration.minutes
        # The functions that run untrusted-input parsers where no route leaves (default), and
        # with privateCollection those that index or search where only its endpoints are.
        self.network = network
        converters: Placement | None = network.converters if network else None
        self.access_roles: dict[str, iam.Role] = {}
        """Each converter's per-document access role, by the function's construct id."""
        searchers: Placement | None = network.search if network else None

        # -- intake: one upload event at a time -------------------------------------------
        self.starter = mk("Starter", "starter", timeout=minutes(5))
        # streams the upload to hash it; reads a key's metadata when it changes later (its
        # s3:GetObject* covers GetObjectTagging and GetObjectVersionTagging: the drac- tags)
        s.documents.grant_read(self.starter)
        s.sources_table.grant_read_write_data(self.starter)
        # uploads start ingests; metadata that changes later starts a re-plan of its document
        self.starter.add_to_role_policy(
            iam.PolicyStatement(
                actions=["states:ListExecutions", "states:StartExecution"],
                resources=[machine_arn(stack, "ingest"), machine_arn(stack, "replan")],
            )
        )
        # late metadata (drac.aws.stages.late_metadata): store it on the record, compare it
        # with what the active version was indexed with, re-plan with that version's strategy
        s.documents_table.grant_read_write_data(self.starter)
        s.plans_table.grant_read_data(self.starter)
        s.artifacts.grant_read(self.starter, "runs/*")  # a version's indexed metadata
        s.artifacts.grant_read(self.starter, "plans/*")  # a version's strategy
        self.delete = mk("Delete", "delete", timeout=minutes(5), network=searchers)
        s.documents.grant_read(self.delete)  # HeadObject: does a current version remain?
        s.sources_table.grant_read_write_data(self.delete)
        s.documents_table.grant_read_write_data(self.delete)
        search.grant_index_access(self.delete.role)

        # -- ingest: register, normalise, render, convert, parse -------------------------
        self.register = mk("Register", "register", memory=2048, timeout=minutes(5))
        s.documents.grant_read(self.register)  # GetObject* covers the version's tags too
        s.artifacts.grant_put(self.register)  # a Markdown/text upload is its own Markdown
        s.documents_table.grant_read_write_data(self.register)
        self.register.add_to_role_policy(
            iam.PolicyStatement(
                actions=["states:DescribeExecution"],
                resources=[executions_arn(stack, "ingest")],
            )
        )
        self.normalise = factory.make_image(
            "Normalise",
            "normalise",
            memory=3008,
            timeout=minutes(10),
            ephemeral_storage=Size.gibibytes(4),  # the upload, its PDF and LibreOffice's files
            network=converters,
        )
        # The converters hold no grant on a bucket or table: each assumes its own access role
        # per invocation with a session policy naming exactly its document's objects
        # (drac.aws.document_access); the role bounds it to the converter's kind of object.
        self._document_access(
            self.normalise,
            reads=[(s.documents, INCOMING)],
            writes=[(s.artifacts, "documents/*/source.pdf")],  # the PDF only
        )
        self.read_spreadsheet = factory.make_image(
            "ReadSpreadsheet",
            "read_spreadsheet",
            image="normalise",
            memory=3008,
            timeout=minutes(15),
            ephemeral_storage=Size.gibibytes(4),
            network=converters,
        )
        # its sheets and warnings travel to Parse, which records them
        self._document_access(
            self.read_spreadsheet,
            reads=[(s.documents, INCOMING)],
            writes=[(s.artifacts, "documents/*/document.md")],  # its Markdown
        )
        # pdfium reads the PDF from /tmp as it renders a slice's pages (measured: RELIABILITY.md,
        # "Memory of a slice"), so memory does not grow with the PDF; /tmp holds the largest
        self.render = mk(
            "Render",
            "render",
            memory=2048,
            timeout=minutes(15),
            network=converters,
            ephemeral_storage=pdf_storage(settings),
        )
        self._document_access(
            self.render,
            # a PDF upload is rendered where it is, a normalised PDF from the artifacts
            reads=[(s.documents, INCOMING), (s.artifacts, "documents/*/source.pdf")],
            writes=[(s.artifacts, "pages/*")],  # page images, text layers, sizes
        )
        # OCR of scanned pages (no text layer), so their conversion is checked too: RapidOCR
        # and onnxruntime need an image (350 MiB, over a zip's 250 MB). A group of 20 to 100
        # pages (fanout.scan_group_pages) at the measured 3.7 CPU-seconds each takes 1 to 6
        # minutes; 3,008 MB (about 1.7 vCPUs) holds one page's OCR worker (800 MiB resident at
        # its peak) beside a page's pdfium worker; the PDF is in /tmp, as Render's.
        self.read_scans = factory.make_image(
            "ReadScans",
            "read_scans",
            memory=3008,
            timeout=minutes(15),
            network=converters,
            ephemeral_storage=pdf_storage(settings),
        )
        self._document_access(
            self.read_scans,
            reads=[(s.documents, INCOMING), (s.artifacts, "documents/*/source.pdf")],
            writes=[(s.artifacts, "pages/*")],  # each page's words and boxes
        )
        # a 5-page batch may generate 8,192 tokens: the model's read timeout plus headroom
        self.convert = mk("Convert", "convert", memory=1024, timeout=minutes(15))
        s.artifacts.grant_read_write(self.convert)
        s.ledger_table.grant_write_data(self.convert)
        self._grant_models(self.convert, [settings.models.conversion_model])
        # escalateTo: the second model converts the doubtful pages again (EscalatePages);
        # this function alone may call it, and only it (no escalation: no function, no grant)
        self.escalate: lambda_.Function | None = None
        second = escalation_model_id(settings)
        if second is not None:
            self.escalate = mk("Escalate", "escalate", memory=1024, timeout=minutes(15))
            s.artifacts.grant_read_write(self.escalate)  # the batch's pages, then the batch
            s.ledger_table.grant_write_data(self.escalate)
            self._grant_models(self.escalate, [second])
        self.batch_failed = mk("BatchFailed", "batch_failed")
        s.artifacts.grant_put(self.batch_failed)
        self.parse = mk("Parse", "parse", memory=2048, timeout=minutes(15))
        s.artifacts.grant_read_write(self.parse)
        s.elements_table.grant_read_write_data(self.parse)
        s.documents_table.grant_read_write_data(self.parse)

        # -- planning and commit (shared by ingest and re-plan) --------------------------
        self.section = mk("Section", "section", memory=2048, timeout=minutes(15))
        s.artifacts.grant_put(self.section)
        s.elements_table.grant_read_data(self.section)
        self.plan_section = mk("PlanSection", "plan_section", timeout=minutes(5))
        s.artifacts.grant_read_write(self.plan_section)
        s.plans_table.grant_read_write_data(self.plan_section)  # the plan cache
        s.ledger_table.grant_write_data(self.plan_section)
        self._grant_models(self.plan_section, [settings.models.planning_model])
        self.prepare = mk("PreparePlan", "prepare_plan", memory=2048, timeout=minutes(15))
        s.artifacts.grant_read_write(self.prepare)
        s.elements_table.grant_read_data(self.prepare)
        s.plans_table.grant_read_write_data(self.prepare)
        s.documents_table.grant_read_data(self.prepare)
        self.index_chunks = mk(
            "IndexChunks", "index_chunks", memory=1024, timeout=minutes(15), network=searchers
        )
        s.artifacts.grant_read(self.index_chunks)
        s.ledger_table.grant_write_data(self.index_chunks)
        self._grant_models(self.index_chunks, [settings.models.embedding_model_id])
        search.grant_index_access(self.index_chunks.role)
        self.activate = mk("ActivatePlan", "activate_plan", timeout=minutes(5), network=searchers)
        s.documents_table.grant_read_write_data(self.activate)
        search.grant_index_access(self.activate.role)
        self.abandon = mk("AbandonPlan", "abandon_plan", timeout=minutes(5), network=searchers)
        s.documents_table.grant_read_data(self.abandon)  # never delete the active version
        search.grant_index_access(self.abandon.role)

        # -- end of an ingest, and the re-plan manifest -----------------------------------
        self.finalise = mk("Finalise", "finalise", timeout=minutes(5), network=searchers)
        s.documents_table.grant_read_write_data(self.finalise)
        s.sources_table.grant_read_data(self.finalise)
        search.grant_index_access(self.finalise.role)
        self.manifest = mk("Manifest", "replan_manifest", timeout=minutes(5))
        s.documents_table.grant_read_data(self.manifest)
        s.artifacts.grant_put(self.manifest)

        # -- the retrieval API: an IAM-authenticated function URL ----------------------------
        # Reserved concurrency: a burst of ingests cannot take the API's capacity away.
        self.retrieve = mk(
            "Retrieve",
            "retrieve",
            memory=1024,
            timeout=Duration.seconds(30),
            reserved_concurrency=settings.deploy.retrieve_concurrency or None,
            network=searchers,
        )
        s.documents_table.grant_read_data(self.retrieve)  # active versions of the hits
        self._grant_models(self.retrieve, [settings.models.embedding_model_id])
        search.grant_index_read(self.retrieve.role)
        self.retrieve_url = self.retrieve.add_function_url(
            auth_type=lambda_.FunctionUrlAuthType.AWS_IAM
        )
        # Function URLs created since October 2025 need lambda:InvokeFunctionUrl AND
        # lambda:InvokeFunction (InvokedViaFunctionUrl); grant_invoke_url adds both.
        callers = sorted({*settings.cloud.tenant_principals, *settings.cloud.admin_principals})
        for arn in callers:
            self.retrieve_url.grant_invoke_url(iam.ArnPrincipal(arn))

    def all(self) -> list[lambda_.IFunction]:
        """Every function of the pipeline."""
        return [
            self.starter,
            self.delete,
            self.register,
            self.normalise,
            self.read_spreadsheet,
            self.render,
            self.read_scans,
            self.convert,
            self.batch_failed,
            self.parse,
            self.section,
            self.plan_section,
            self.prepare,
            self.index_chunks,
            self.activate,
            self.abandon,
            self.finalise,
            self.manifest,
            self.retrieve,
            *([self.escalate] if self.escalate else []),
        ]

    def _document_access(
        self,
        fn: lambda_.Function,
        *,
        reads: list[tuple[s3.IBucket, str]],
        writes: list[tuple[s3.IBucket, str]],
    ) -> iam.Role:
        """The converter's access role: it may read objects of `reads` and put objects of
        `writes` (bucket, key pattern), and only the converter's role may assume it; the
        converter's role may do nothing else with storage. Its ARN is the function's
        CONVERTER_ACCESS_ROLE_ARN."""
        role = iam.Role(
            self,
            f"{fn.node.id}Access",
            assumed_by=iam.ArnPrincipal(fn.role.role_arn),  # type: ignore[union-attr]
            description=f"drac {fn.node.id}: one document's objects, through a session policy",
            max_session_duration=Duration.hours(1),
        )
        for actions, grants in ((READ_ACTIONS, reads), (WRITE_ACTIONS, writes)):
            role.add_to_policy(
                iam.PolicyStatement(
                    actions=list(actions),
                    resources=[bucket.arn_for_objects(pattern) for bucket, pattern in grants],
                )
            )
        fn.add_to_role_policy(
            iam.PolicyStatement(actions=["sts:AssumeRole"], resources=[role.role_arn])
        )
        fn.add_environment("CONVERTER_ACCESS_ROLE_ARN", role.role_arn)
        self.access_roles[fn.node.id] = role
        if self.network:  # the STS endpoint of the converters' subnets assumes only these
            self.network.sts_endpoint.add_to_policy(
                iam.PolicyStatement(
                    principals=[iam.AnyPrincipal()],
                    actions=["sts:AssumeRole"],
                    resources=[role.role_arn],
                )
            )
        return role

    def _grant_models(self, fn: lambda_.IFunction, model_ids: list[str]) -> None:
        """Allow bedrock:InvokeModel on exactly the configured models (Converse uses it too)."""
        stack = Stack.of(self)
        resources = [
            arn
            for model_id in model_ids
            for arn in model_arns(model_id, stack.region, stack.account, stack.partition)
        ]
        fn.add_to_role_policy(
            iam.PolicyStatement(actions=["bedrock:InvokeModel"], resources=resources)
        )
