"""The converters hold no grant on the documents table: what they find (page counts,
Normalise's warnings) travels in the machine's payload to Parse, which records it."""

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


@pytest.mark.parametrize("handler", ["render", "normalise"])
def test_a_converter_may_not_touch_the_documents_table(pinned: Synth, handler: str) -> None:
    model = _model(pinned)
    (table_id,) = [
        t
        for t in model.stack.of_type("AWS::DynamoDB::Table")
        if t.startswith("StorageDocumentsTable")
    ]
    table = model.resolver.resolve({"Fn::GetAtt": [table_id, "Arn"]})
    authorizer = Authorizer(model)
    role = model.function_for(handler).role
    for action in TABLE_ACTIONS:
        for resource in (table, f"{table}/index/*"):
            permission = Permission(action, resource)
            assert not authorizer.evaluate(role.arn, role.statements, permission).allowed, (
                f"{handler} may {action} on {resource}"
            )
    # the check is not vacuous: Parse, which records what they found, may
    parse = model.function_for("parse").role
    assert authorizer.evaluate(
        parse.arn, parse.statements, Permission("dynamodb:UpdateItem", table)
    ).allowed


DOC = "0123456789abcdef"
OWN = {  # what each converter writes in the artifacts bucket, and what it reads there
    "normalise": ([f"documents/{DOC}/source.pdf"], []),
    "read_spreadsheet": ([f"documents/{DOC}/document.md"], []),
    "render": (
        [f"pages/{DOC}/00001.png", f"pages/{DOC}/batches/00000.json"],
        [f"documents/{DOC}/source.pdf"],
    ),
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
    model = _model(pinned)
    (bucket_id,) = [
        b for b in model.stack.of_type("AWS::S3::Bucket") if b.startswith("StorageArtifacts")
    ]
    bucket = model.resolver.name(bucket_id)
    authorizer = Authorizer(model)
    role = model.function_for(handler).role

    def may(action: str, key: str) -> bool:
        permission = Permission(action, f"arn:aws:s3:::{bucket}/{key}")
        return authorizer.evaluate(role.arn, role.statements, permission).allowed

    writes, reads = OWN[handler]
    assert all(may("s3:PutObject", key) for key in writes)
    assert all(may("s3:GetObject", key) for key in reads)
    others = [
        key for key in [*OTHERS, *(k for ks in OWN.values() for k in ks[0])] if key not in writes
    ]
    for key in others:
        assert not may("s3:PutObject", key), f"{handler} may put {key}"
        assert not may("s3:DeleteObject", key), f"{handler} may delete {key}"
    for key in [*OTHERS, f"pages/{DOC}/00001.png"]:
        assert not may("s3:GetObject", key) or key in reads, f"{handler} may read {key}"
