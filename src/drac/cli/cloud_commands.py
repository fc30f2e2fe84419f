"""`drac cloud-audit`: does the account hold the trust a stack's identity checks rest on?
`drac cloud-smoke`: does a deployed stack ingest, answer, refuse, re-plan and delete?"""

from __future__ import annotations

import json
from pathlib import Path

import click

from drac.cli import cli
from drac.terminal import printable


@cli.command("cloud-audit")
@click.option("--stack", required=True, help="The deployed stack's CloudFormation name.")
@click.option(
    "--policy",
    is_flag=True,
    help="Print the service control policy that denies the direct calls, and check nothing.",
)
def cloud_audit(stack: str, policy: bool) -> None:
    """List the principals that may call a deployed stack's retrieval function or re-plan
    machine directly.

    IAM's policy simulator is asked, for every role and user of the account, whether it may
    invoke the retrieval function other than through its URL, or start the re-plan machine
    without being one of the stack's own roles: both bypass the identity checks. Exits 1 when
    one may."""
    import boto3

    from drac.aws.access_audit import direct_callers, guard_policy, stack_target

    session = boto3.session.Session()
    if session.region_name is None:
        raise click.UsageError("set AWS_REGION (or a profile's region)")
    target = stack_target(session, stack)
    if policy:
        click.echo(json.dumps(guard_policy(target), indent=2))
        return
    click.echo(f"checked: {target.retrieve_function} (lambda:InvokeFunction not via its URL)")
    click.echo(
        f"checked: {target.replan_machine} (states:StartExecution by anyone but "
        f"{len(target.replan_starters)} roles of the stack)"
    )
    found = direct_callers(session.client("iam"), target)
    for caller in found:
        click.echo(printable(f"DIRECT CALLER: {caller}"))
    if found:
        raise click.ClickException(
            f"{len(found)} direct call(s) allowed: attach the policy of "
            f"`drac cloud-audit --stack {stack} --policy` as a service control policy, or "
            'remove those grants (docs/aws.md, "Tenants")'
        )
    click.echo("no principal reaches them directly")


@cli.command("cloud-smoke")
@click.option("--stack", required=True, help="The deployed stack's CloudFormation name.")
@click.option("--tenant", required=True, help="The tenant the smoke documents belong to.")
@click.option("--tenant-profile", required=True, help="AWS profile of a role of that tenant.")
@click.option("--other-profile", required=True, help="AWS profile of another tenant's role.")
@click.option(
    "--profile",
    default=None,
    help="AWS profile that reads the stack, the documents table and the alarms (default: the "
    "environment's credentials).",
)
@click.option(
    "--pdf",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=Path("examples/documents/baggage_allowance.pdf"),
    show_default=True,
)
@click.option(
    "--docx",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=Path("examples/documents/environmental_policy.docx"),
    show_default=True,
)
@click.option("--timeout", default=900.0, show_default=True, help="Seconds to wait per step.")
def cloud_smoke(
    stack: str,
    tenant: str,
    tenant_profile: str,
    other_profile: str,
    profile: str | None,
    pdf: Path,
    docx: Path,
    timeout: float,
) -> None:
    """Check a deployed stack end to end: upload, index, query, refuse, re-plan, delete, alarms.

    Prints one line per check and exits 1 naming the checks that failed."""
    import boto3
    import httpx

    from drac.aws.smoke import Caller, SmokePlan, read_stack, run_smoke, smoke_documents

    operator = boto3.session.Session(profile_name=profile)
    region = operator.region_name
    if region is None:
        raise click.UsageError("set AWS_REGION (or a profile's region)")
    view = read_stack(operator, stack)
    with httpx.Client(timeout=60.0) as http:
        callers = [
            Caller(boto3.session.Session(profile_name=name, region_name=region), http)
            for name in (tenant_profile, other_profile)
        ]
        plan = SmokePlan(
            tenant,
            smoke_documents(pdf, docx),
            timeout_s=timeout,
            progress=lambda line: click.echo(printable(line)),
        )
        checks = run_smoke(
            view, plan, operator=operator, tenant=callers[0], other=callers[1], region=region
        )
    failed = [check.name for check in checks if not check.ok]
    if failed:
        raise click.ClickException(f"smoke test failed: {', '.join(failed)}")
    click.echo(f"all {len(checks)} checks passed on {stack}")
