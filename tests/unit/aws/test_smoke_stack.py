"""`drac cloud-smoke` finds what it checks in a deployed stack: its outputs (moto's
CloudFormation), and judges its alarms' states (moto's CloudWatch). moto's CloudFormation
creates no AWS::CloudWatch::Alarm, so listing them among the stack's resources is not
exercised here: the alarms are put into CloudWatch directly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drac.aws.smoke import check_alarms, read_stack
from drac.errors import DracError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "documents"
OUTPUTS = {
    "DocumentsBucket": "drac-documents",
    "DocumentsTable": "Drac-documents",
    "EventBusName": "Drac-bus",
    "ReplanTenantSourcePrefix": "drac.tenant.",
    "RetrieveUrl": "https://abc.lambda-url.us-east-1.on.aws/",
}


def _alarm(aws: Any, name: str) -> None:
    aws.client("cloudwatch").put_metric_alarm(
        AlarmName=name,
        MetricName="Errors",
        Namespace="AWS/Lambda",
        Statistic="Sum",
        Period=60,
        EvaluationPeriods=1,
        Threshold=1,
        ComparisonOperator="GreaterThanOrEqualToThreshold",
    )


def _deploy(aws: Any, name: str, outputs: dict[str, str]) -> None:
    template = {
        "Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {}}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    aws.client("cloudformation").create_stack(StackName=name, TemplateBody=json.dumps(template))


def test_the_stack_s_names_are_read_and_only_its_alarms_judged(aws: Any) -> None:
    _deploy(aws, "Drac", OUTPUTS)
    _deploy(aws, "Other", OUTPUTS)
    view = read_stack(aws, "Drac")
    assert (view.documents_bucket, view.event_bus, view.retrieve_url) == (
        "drac-documents",
        "Drac-bus",
        OUTPUTS["RetrieveUrl"],
    )
    for name in ("Drac-first", "Drac-second", "Other-first"):
        _alarm(aws, name)
    names = ("Drac-first", "Drac-second")
    assert check_alarms(aws, names).ok
    aws.client("cloudwatch").set_alarm_state(
        AlarmName="Drac-second", StateValue="ALARM", StateReason="test"
    )
    aws.client("cloudwatch").set_alarm_state(
        AlarmName="Other-first", StateValue="ALARM", StateReason="another stack's"
    )
    check = check_alarms(aws, names)
    assert not check.ok and "IN ALARM: Drac-second" in check.detail
    assert "Other" not in check.detail
    # an alarm the stack names but CloudWatch does not know fails too
    assert "not found: gone" in check_alarms(aws, ("gone",)).detail
    assert not check_alarms(aws, ()).ok


def test_a_missing_output_or_stack_is_named(aws: Any) -> None:
    _deploy(aws, "Drac", {k: v for k, v in OUTPUTS.items() if k != "RetrieveUrl"})
    with pytest.raises(DracError, match="no RetrieveUrl output"):
        read_stack(aws, "Drac")
    with pytest.raises(DracError, match="cannot read stack 'Nope'"):
        read_stack(aws, "Nope")


def test_the_command_exits_1_naming_the_checks_that_failed(
    aws: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a stack whose pipeline never indexes (nothing runs on moto here) the command
    uploads as the tenant's profile, reports the wait's timeout and every alarm check, and
    exits 1 naming both."""
    from click.testing import CliRunner

    from drac.cli import cli

    config = tmp_path / "config"
    config.write_text(
        "".join(
            f"[profile {name}]\nregion = us-east-1\naws_access_key_id = testing\n"
            "aws_secret_access_key = testing\n"
            for name in ("acme-app", "beta-app")
        )
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    aws.client("s3").create_bucket(Bucket="drac-documents")
    aws.client("dynamodb").create_table(
        TableName="Drac-documents",
        AttributeDefinitions=[{"AttributeName": "document_id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "document_id", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    _deploy(aws, "Drac", OUTPUTS)
    args = [
        "cloud-smoke",
        "--stack",
        "Drac",
        "--tenant",
        "acme",
        "--tenant-profile",
        "acme-app",
        "--other-profile",
        "beta-app",
        "--timeout",
        "0",
        "--pdf",
        str(EXAMPLES / "baggage_allowance.pdf"),
        "--docx",
        str(EXAMPLES / "environmental_policy.docx"),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert "OK   upload: 3 objects under incoming/acme/smoke/" in result.output
    assert "not run: not INDEXED after 0 s" in result.output
    assert "smoke test failed: remaining checks, alarms" in result.output
    listed = aws.client("s3").list_objects_v2(Bucket="drac-documents", Prefix="incoming/acme/")
    assert len(listed["Contents"]) == 3
