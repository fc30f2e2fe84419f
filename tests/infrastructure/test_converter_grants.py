"""The converters hold no grant on a bucket or table of their own: each may only assume its
access role, which reaches its kind of object (and which each invocation narrows to one
document with a session policy: tests/e2e/test_document_access.py). What they find (page
counts, Normalise's and the spreadsheet reader's warnings) travels in the machine's payload to
Parse, which records it."""

from __future__ import annotations

import pytest

from tests.e2e.authorization import Permission
from tests.e2e.guard import Authorizer
from tests.e2e.template import StackModel, StackTemplate
from tests.infrastructure.conftest import Synth


def _model(synth: Synth) -> StackModel:
    """The synthesised stack as the e2e harness resolves it (functions by handler folder)."""
    factory = synth.stack.factory
    handler_dirs = {
        synth.logical_id(fn): factory.handler_dirs[construct_id]
        for construct_id, fn in factory.functions.items()
    }
    template = StackTemplate(
        synth.stack.stack_name,
        synth.template.to_json(),
        handler_dirs,
        synth.stack.region,
        synth.stack.account,
    )
    return StackModel(template)


TABLE_ACTIONS = ("dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:Query")
CONVERTERS = {  # handler folder -> construct id
    "normalise": "Normalise",
    "read_spreadsheet": "ReadSpreadsheet",
    "render": "Render",
    "read_scans": "ReadScans",
}
OBJECT_ACTIONS = ("s3:GetObject", "s3:GetObjectVersion", "s3:PutObject", "s3:DeleteObject")


@pytest.mark.parametrize("handler", sorted(CONVERTERS))
def test_a_converter_role_holds_no_storage_grant_only_its_access_role(
    pinned: Synth, handler: str
) -> None:
    model = _model(pinned)
    authorizer = Authorizer(model)
    role = model.function_for(handler).role

    def may(action: str, resource: str) -> bool:
        return authorizer.evaluate(role.arn, role.statements, Permission(action, resource)).allowed

    tables = [
        model.resolver.resolve({"Fn::GetAtt": [t, "Arn"]})
        for t in model.stack.of_type("AWS::DynamoDB::Table")
    ]
    for table in tables:
        for action in TABLE_ACTIONS:
            for resource in (table, f"{table}/index/*"):
                assert not may(action, resource), f"{handler} may {action} on {resource}"
    for bucket_id in model.stack.of_type("AWS::S3::Bucket"):
        bucket = f"arn:aws:s3:::{model.resolver.name(bucket_id)}"
        assert not may("s3:ListBucket", bucket), f"{handler} may list {bucket}"
        for key in ("incoming/acme/a.pdf", f"documents/{DOC}/source.pdf", f"pages/{DOC}/x"):
            for action in OBJECT_ACTIONS:
                assert not may(action, f"{bucket}/{key}"), f"{handler} may {action} {key}"
    stages = pinned.stack.pipeline.stages
    access = {
        name: model.resolver.get_att(pinned.logical_id(role_), "Arn")
        for name, role_ in stages.access_roles.items()
    }
    own = CONVERTERS[handler]
    assert may("sts:AssumeRole", access[own])
    for name, arn in access.items():
        if name != own:
            assert not may("sts:AssumeRole", arn), f"{handler} may assume {name}'s access role"
    # the role the converter assumes trusts it, and only it
    (trust,) = model.stack.of_type("AWS::IAM::Role")[pinned.logical_id(stages.access_roles[own])][
        "Properties"
    ]["AssumeRolePolicyDocument"]["Statement"]
    assert model.resolver.resolve(trust["Principal"]) == {"AWS": role.arn}
    assert model.function_for(handler).environment["CONVERTER_ACCESS_ROLE_ARN"] == access[own]


def test_parse_records_what_the_converters_found(pinned: Synth) -> None:
    model = _model(pinned)
    (table_id,) = [
        t
        for t in model.stack.of_type("AWS::DynamoDB::Table")
        if t.startswith("StorageDocumentsTable")
    ]
    table = model.resolver.resolve({"Fn::GetAtt": [table_id, "Arn"]})
    parse = model.function_for("parse").role
    assert (
        Authorizer(model)
        .evaluate(parse.arn, parse.statements, Permission("dynamodb:UpdateItem", table))
        .allowed
    )


DOC = "0123456789abcdef"
OWN = {  # what each converter's access role writes in the artifacts bucket, and reads there
    "normalise": ([f"documents/{DOC}/source.pdf"], []),
    "read_spreadsheet": ([f"documents/{DOC}/document.md"], []),
    "render": (
        [f"pages/{DOC}/00001.png", f"pages/{DOC}/batches/00000.json"],
        [f"documents/{DOC}/source.pdf"],
    ),
    "read_scans": ([f"pages/{DOC}/00001.ocr.txt"], [f"documents/{DOC}/source.pdf"]),
}
OTHERS = [  # the keys of later stages: chunk ranges, sections, plans, batches' Markdown
    f"runs/{DOC}/v00001/chunks/00000.jsonl",
    f"runs/{DOC}/run/sections/00000.json",
    f"plans/{DOC}/v00001.json",
    f"documents/{DOC}/batches/00000.json",
    f"documents/{DOC}/earlier.json",
]


@pytest.mark.parametrize("handler", sorted(OWN))
def test_a_converter_writes_only_its_own_kind_of_artefact(pinned: Synth, handler: str) -> None:
    """Its access role (what any session policy can only narrow)."""
    model = _model(pinned)
    (bucket_id,) = [
        b for b in model.stack.of_type("AWS::S3::Bucket") if b.startswith("StorageArtifacts")
    ]
    bucket = model.resolver.name(bucket_id)
    authorizer = Authorizer(model)
    access = pinned.stack.pipeline.stages.access_roles[CONVERTERS[handler]]
    role = model.roles[pinned.logical_id(access)]

    def may(action: str, key: str) -> bool:
        permission = Permission(action, f"arn:aws:s3:::{bucket}/{key}")
        return authorizer.evaluate(role.arn, role.statements, permission).allowed

    writes, reads = OWN[handler]
    kinds = {k for ks in OWN.values() for k in ks[0]}
    assert all(may("s3:PutObject", key) for key in writes)
    assert all(may("s3:GetObject", key) for key in reads)
    others = [
        key
        for key in [*OTHERS, *kinds]
        if key not in writes
        # Render and ReadScans both write under a document's pages/
        and not (key.startswith("pages/") and writes[0].startswith("pages/"))
    ]
    for key in others:
        assert not may("s3:PutObject", key), f"{handler} may put {key}"
        assert not may("s3:DeleteObject", key), f"{handler} may delete {key}"
    for key in [*OTHERS, f"pages/{DOC}/00001.png"]:
        assert not may("s3:GetObject", key) or key in reads, f"{handler} may read {key}"
