"""The converters hold no grant on the documents table: what they find (page counts,
Normalise's warnings) travels in the machine's payload to Parse, which records it."""

from __future__ import annotations

import pytest

from tests.e2e.authorization import Permission
from tests.e2e.guard import Authorizer
from tests.e2e.template import StackModel, StackTemplate
from tests.infrastructure.conftest import Synth

TABLE_ACTIONS = ("dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:Query")


@pytest.mark.parametrize("handler", ["render", "normalise"])
def test_a_converter_may_not_touch_the_documents_table(pinned: Synth, handler: str) -> None:
    synth = pinned
    factory = synth.stack.factory
    handler_dirs = {
        synth.logical_id(fn): factory.handler_dirs[construct_id]
        for construct_id, fn in factory.functions.items()
    }
    model = StackModel(
        StackTemplate(
            synth.stack.stack_name,
            synth.template.to_json(),
            handler_dirs,
            synth.stack.region,
            synth.stack.account,
        )
    )
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
