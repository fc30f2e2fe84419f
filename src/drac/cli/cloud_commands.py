"""`drac cloud-audit`: does the account hold the trust a stack's identity checks rest on?"""

from __future__ import annotations

import json

import click

from drac.cli import cli
from drac.cli.terminal import printable


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
