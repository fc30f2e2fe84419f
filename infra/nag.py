"""cdk-nag (v3, CDK Validations) acknowledgements, each with the reason it is acceptable.

cdk-nag v3 acknowledges each finding individually (`Rule[finding]`), so the wildcard findings
are listed per resource they concern, derived from the constructs rather than hard-coded ids.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnResource, Stack, Validations

from infra.stages import executions_arn

PACK = "AwsSolutions::"
BASIC_ROLE = "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
VPC_ROLE = (
    "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole"
)
S3_GRANT_ACTIONS = ("s3:List*", "s3:GetObject*", "s3:GetBucket*", "s3:Abort*", "s3:DeleteObject*")


def nag_form(stack: Stack, value: Any) -> str:
    """A (possibly tokenised) string as cdk-nag prints it in a finding: intrinsics become
    `<LogicalId.Attr>`, `<LogicalId>` or `<AWS::Region>`, concrete values stay as they are (a
    stack pinned to an account and region by `cdk deploy` has concrete ones)."""
    return _flatten(stack.resolve(value))


def _flatten(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(_flatten(part) for part in parts)
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return "<{}.{}>".format(*value["Fn::GetAtt"])
    if isinstance(value, dict) and "Ref" in value:
        return f"<{value['Ref']}>"
    raise TypeError(f"cannot render {value!r} as cdk-nag does")


def _ref(stack: Stack, construct) -> str:
    """`<LogicalId.Arn>` as cdk-nag prints a resource's ARN attribute."""
    child = construct.node.default_child
    if not isinstance(child, CfnResource):
        raise TypeError(f"{construct.node.path} has no CloudFormation resource")
    return f"<{stack.resolve(stack.get_logical_id(child))}.Arn>"


def acknowledgements(stack) -> dict[str, str]:
    """Return {finding id: reason} for the stack's deliberate findings."""
    acks: dict[str, str] = {
        f"AwsSolutions-IAM4[{BASIC_ROLE}]": (
            "Functions (and CDK's custom-resource helpers) use AWSLambdaBasicExecutionRole "
            "only to write their own CloudWatch logs."
        ),
        f"AwsSolutions-IAM4[{VPC_ROLE}]": (
            "The functions in the VPC (the converters, and with privateCollection those that "
            "index or search) use AWSLambdaVPCAccessExecutionRole only so Lambda can manage "
            "their network interfaces in the isolated subnets."
        ),
        "AwsSolutions-L1": (
            "Functions pin Python 3.12 because the dependency layer is built from cp312 "
            "manylinux wheels; upgrade both together."
        ),
        "AwsSolutions-SQS3": (
            "ReplanTargetDlq is itself the dead-letter queue of the Replan Requested rule "
            "target; a dead-letter queue needs no dead-letter queue."
        ),
        "AwsSolutions-IAM5[Resource::*]": (
            "Only X-Ray tracing (xray:PutTraceSegments/PutTelemetryRecords) and Step Functions "
            "log delivery (logs:*LogDelivery*, which has no resource-level permissions) use "
            "Resource '*'; infrastructure tests assert no other action does."
        ),
    }
    for action in S3_GRANT_ACTIONS:
        acks[f"AwsSolutions-IAM5[Action::{action}]"] = (
            f"{action} comes from CDK's bucket grant helpers, always scoped to one project "
            "bucket and its objects."
        )
    storage, pipeline, search = stack.storage, stack.pipeline, stack.search
    for bucket in (storage.artifacts, storage.documents):
        acks[f"AwsSolutions-IAM5[Resource::{_ref(stack, bucket)}/*]"] = (
            "Object keys are per document and not known at deploy time; the grant is limited "
            "to this one bucket."
        )
    artifacts = _ref(stack, storage.artifacts)
    acks[f"AwsSolutions-IAM5[Resource::{artifacts}/runs/*]"] = (
        "The starter reads the metadata a document's active plan version was indexed with "
        "(runs/<document>/v<N>/metadata.json, per document): read only, runs/ only."
    )
    acks[f"AwsSolutions-IAM5[Resource::{artifacts}/plans/*]"] = (
        "The starter reads the active plan version's body (plans/<document>/v<N>.json, per "
        "document) for the strategy a metadata re-plan keeps: read only, plans/ only."
    )
    acks[f"AwsSolutions-IAM5[Resource::{artifacts}/documents/*/source.pdf]"] = (
        "Normalise writes, Render and ReadScans read the PDF a non-PDF upload was normalised "
        "to (documents/<document>/source.pdf, per document): that one object of each document."
    )
    acks[f"AwsSolutions-IAM5[Resource::{artifacts}/runs/replan/*]"] = (
        "The re-plan machine's Distributed Map reads the manifest its Manifest stage wrote "
        "(runs/replan/<run>/manifest.json, per run): read only, that prefix only."
    )
    acks[f"AwsSolutions-IAM5[Resource::{artifacts}/runs/replan-results/*]"] = (
        "The re-plan machine's Distributed Map writes its results there (ResultWriter, one "
        "folder per map run, named by Step Functions): that prefix only."
    )
    acks[f"AwsSolutions-IAM5[Resource::{artifacts}/pages/*]"] = (
        "Render stores each page's image, text layer and sizes, ReadScans the words OCR read "
        "of each scanned page beside it (pages/<document>/..., per document): put only, "
        "pages/ only."
    )
    acks[f"AwsSolutions-IAM5[Resource::{artifacts}/documents/*/document.md]"] = (
        "ReadSpreadsheet writes the spreadsheet's Markdown (documents/<document>/document.md, "
        "per document): put only, that one object of each document."
    )
    acks[f"AwsSolutions-IAM5[Resource::{_ref(stack, storage.documents)}/incoming/*]"] = (
        "A converter's access role may read uploads (incoming/<tenant>/<key>); each invocation "
        "assumes it with a session policy naming its one upload (drac.aws.document_access)."
    )
    for table in (storage.documents_table, storage.sources_table):
        acks[f"AwsSolutions-IAM5[Resource::{_ref(stack, table)}/index/*]"] = (
            "CDK table grants include the table's own indexes (live-documents on the "
            "documents table, by-document on the sources table)."
        )
    ingest_runs = nag_form(stack, executions_arn(stack, "ingest"))
    acks[f"AwsSolutions-IAM5[Resource::{ingest_runs}]"] = (
        "Register asks whether the ingest execution that owns a document is still running "
        "(DescribeExecution only); execution names are per upload, so the grant names the "
        "ingest state machine's executions."
    )
    for arn in pipeline.child_execution_arns:
        acks[f"AwsSolutions-IAM5[Resource::{nag_form(stack, arn)}]"] = (
            "A parent workflow (startExecution.sync:2, or a Distributed Map) must describe and "
            "stop the child executions it starts, whose names are generated; the grant names "
            "one state machine's executions."
        )
    from drac.aws.stages.escalation import escalation_model_id
    from infra.config import GEO_PREFIXES

    second = escalation_model_id(stack.settings)  # escalateTo: the Escalate function's model
    for model_id in (*stack.settings.models.bedrock_model_ids(), *([second] if second else [])):
        if model_id.startswith(GEO_PREFIXES):
            base = model_id.split(".", 1)[1]
            model = f"arn:<AWS::Partition>:bedrock:*::foundation-model/{base}"
            acks[f"AwsSolutions-IAM5[Resource::{model}]"] = (
                f"{model_id} is a cross-region inference profile: Bedrock routes the call to "
                "the foundation model in any region of the profile's geography, so the model "
                "grant names every region (the model itself is fixed)."
            )
    kb = getattr(stack, "kb_transform", None)
    if kb is not None:
        settings = stack.settings
        objects = f"arn:<AWS::Partition>:s3:::{settings.deploy.kb_transform_bucket}/"
        acks[f"AwsSolutions-IAM5[Resource::{objects}{settings.deploy.kb_transform_prefix}*]"] = (
            "KbTransform reads the batches a knowledge base writes to its intermediate "
            "storage (keys chosen by the knowledge base) and writes its chunked files beside "
            "them: get and put only, the configured bucket and prefix only."
        )
    invoked = [*pipeline.factory_functions(), search.index_function]
    for fn in invoked:
        acks[f"AwsSolutions-IAM5[Resource::{_ref(stack, fn)}:*]"] = (
            "lambda:InvokeFunction on the function's versions/aliases (CDK grantInvoke); the "
            "function itself is named."
        )
    return acks


def apply_suppressions(stack) -> None:
    """Acknowledge the deliberate findings on the stack, each with its reason."""
    for finding, reason in acknowledgements(stack).items():
        Validations.of(stack).acknowledge(Acknowledgment(id=PACK + finding, reason=reason))
