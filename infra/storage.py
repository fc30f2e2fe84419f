"""Storage: the documents and artifacts buckets and the four DynamoDB tables."""

from __future__ import annotations

from aws_cdk import CfnResource, Duration, Stack, Token
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_s3 as s3
from constructs import Construct

from drac.aws.dynamo import EXPIRES_AT
from drac.settings import Settings
from infra.config import removal_policy
from infra.tenancy import tenant_write_statements

INCOMING_PREFIX = "incoming/"
PAGES_PREFIX = "pages/"


class Storage(Construct):
    """Buckets for uploads and artifacts, tables for documents, elements, plans and tokens."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings) -> None:
        """Create the buckets (TLS-only, encrypted, versioned) and tables (PITR on)."""
        super().__init__(scope, construct_id)
        removal = removal_policy(settings)
        self._removal = removal
        self._auto_delete = settings.deploy.removal_policy == "destroy"
        self.access_logs = self._bucket(
            "AccessLogs",
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
            lifecycle_rules=[s3.LifecycleRule(id="expire-logs", expiration=Duration.days(365))],
        )
        self.documents = self._bucket(
            "Documents",
            versioned=True,
            event_bridge_enabled=True,
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="documents/",
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-old-versions",
                    noncurrent_version_expiration=Duration.days(30),
                )
            ],
        )
        # Who may write under each tenant's prefix (infra/tenancy.py, docs/aws.md "Tenants").
        for statement in tenant_write_statements(
            self.documents.bucket_arn,
            settings.cloud.tenant_principals,
            settings.cloud.admin_principals,
            exempt=self._auto_delete_role(),
        ):
            self.documents.add_to_resource_policy(statement)
        self.artifacts = self._bucket(
            "Artifacts",
            versioned=True,
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="artifacts/",
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-page-images",
                    prefix=PAGES_PREFIX,
                    expiration=Duration.days(settings.deploy.page_image_expiration_days),
                    noncurrent_version_expiration=Duration.days(1),
                ),
                s3.LifecycleRule(
                    id="expire-run-scratch",
                    prefix="runs/",
                    expiration=Duration.days(14),
                    noncurrent_version_expiration=Duration.days(1),
                ),
                s3.LifecycleRule(
                    id="expire-old-versions",
                    noncurrent_version_expiration=Duration.days(30),
                ),
            ],
        )
        self.documents_table = self._table(
            "DocumentsTable",
            "document_id",
            None,
            removal,
        )
        string = dynamodb.AttributeType.STRING
        # Sparse: only live documents carry `live_tenant`; the re-plan manifest pages it.
        self.documents_table.add_global_secondary_index(
            index_name="live-documents",
            partition_key=dynamodb.Attribute(name="live_tenant", type=string),
            sort_key=dynamodb.Attribute(name="document_id", type=string),
            projection_type=dynamodb.ProjectionType.KEYS_ONLY,
        )
        # Which document each object key holds now; a document with no key is retired.
        self.sources_table = self._table("SourcesTable", "source", None, removal)
        self.sources_table.add_global_secondary_index(
            index_name="by-document",
            partition_key=dynamodb.Attribute(name="document_id", type=string),
            projection_type=dynamodb.ProjectionType.KEYS_ONLY,
        )
        self.elements_table = self._table("ElementsTable", "document_id", "seq", removal)
        # cached section plans and ledger entries expire (plan versions carry no expiry)
        self.plans_table = self._table(
            "PlansTable", "document_id", "version", removal, ttl=EXPIRES_AT
        )
        self.ledger_table = self._table(
            "LedgerTable", "document_id", "entry", removal, ttl=EXPIRES_AT
        )

    def _bucket(self, construct_id: str, **props: object) -> s3.Bucket:
        """A private, encrypted, TLS-only bucket with the stack's removal policy."""
        return s3.Bucket(
            self,
            construct_id,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            removal_policy=self._removal,
            auto_delete_objects=self._auto_delete,
            **props,  # type: ignore[arg-type]
        )

    def _auto_delete_role(self) -> list[str]:
        """The role of CDK's bucket-emptying custom resource (removalPolicy=destroy), which
        deletes every object when the stack is destroyed; none otherwise."""
        provider = Stack.of(self).node.try_find_child(
            "Custom::S3AutoDeleteObjectsCustomResourceProvider"
        )
        role = provider.node.try_find_child("Role") if provider else None
        if not isinstance(role, CfnResource):
            return []
        return [Token.as_string(role.get_att("Arn"))]

    def _table(
        self, construct_id: str, pk: str, sk: str | None, removal, ttl: str | None = None
    ) -> dynamodb.Table:
        """Return an on-demand, encrypted table with point-in-time recovery (and a TTL
        attribute, when given)."""
        number, string = dynamodb.AttributeType.NUMBER, dynamodb.AttributeType.STRING
        sort_type = string if sk == "entry" else number
        return dynamodb.Table(
            self,
            construct_id,
            partition_key=dynamodb.Attribute(name=pk, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=sk, type=sort_type) if sk else None,
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            removal_policy=removal,
            time_to_live_attribute=ttl,
        )
