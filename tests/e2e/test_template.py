"""The harness's reading of the template: physical names, intrinsics, roles and their policies."""

from __future__ import annotations

import pytest

from tests.e2e.iam import Request, evaluate
from tests.e2e.template import (
    NAME_RULES,
    Resolver,
    StackModel,
    StackTemplate,
    UnsupportedTemplate,
    generated_name,
)

ACCOUNT, REGION = "123456789012", "us-east-1"
EVENTS = f"arn:aws:events:{REGION}:{ACCOUNT}"


def tiny(resources: dict) -> StackTemplate:
    return StackTemplate("Drac", {"Resources": resources}, {}, REGION, ACCOUNT)


TINY = tiny({
    "DocsBucket1A2B": {"Type": "AWS::S3::Bucket", "Properties": {}},
    "NamedTable": {"Type": "AWS::DynamoDB::Table", "Properties": {"TableName": "explicit"}},
    "Queue9": {"Type": "AWS::SQS::Queue", "Properties": {}},
    "Bus": {"Type": "AWS::Events::EventBus", "Properties": {"Name": "Drac-bus"}},
    "OnBus": {"Type": "AWS::Events::Rule", "Properties": {"EventBusName": {"Ref": "Bus"}}},
    "OnDefault": {"Type": "AWS::Events::Rule", "Properties": {}},
    "Machine": {"Type": "AWS::StepFunctions::StateMachine",
                "Properties": {"StateMachineName": "Drac-plan"}},
    "Collection": {"Type": "AWS::OpenSearchServerless::Collection",
                   "Properties": {"Name": "drac"}},
    "Fn": {"Type": "AWS::Lambda::Function", "Properties": {}},
})


@pytest.mark.parametrize(("value", "expected"), [
    ({"Ref": "DocsBucket1A2B"}, "drac-docsbucket1a2b"),  # buckets are lower-case
    ({"Fn::GetAtt": ["DocsBucket1A2B", "Arn"]}, "arn:aws:s3:::drac-docsbucket1a2b"),
    ({"Ref": "NamedTable"}, "explicit"),  # a name property wins
    ({"Fn::GetAtt": "NamedTable.Arn"}, f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/explicit"),
    ({"Ref": "Queue9"}, f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/Drac-Queue9"),
    ({"Fn::GetAtt": ["Queue9", "Arn"]}, f"arn:aws:sqs:{REGION}:{ACCOUNT}:Drac-Queue9"),
    ({"Fn::GetAtt": ["Queue9", "QueueName"]}, "Drac-Queue9"),
    ({"Ref": "Bus"}, "Drac-bus"),
    ({"Ref": "OnBus"}, "Drac-bus|Drac-OnBus"),
    ({"Fn::GetAtt": ["OnBus", "Arn"]}, f"{EVENTS}:rule/Drac-bus/Drac-OnBus"),
    ({"Fn::GetAtt": ["OnDefault", "Arn"]}, f"{EVENTS}:rule/Drac-OnDefault"),
    ({"Ref": "Machine"}, f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:Drac-plan"),
    ({"Fn::GetAtt": ["Machine", "Name"]}, "Drac-plan"),
    ({"Fn::GetAtt": ["Fn", "Arn"]}, f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:Drac-Fn"),
    ({"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":x:", {"Ref": "AWS::Region"}]]},
     f"arn:aws:x:{REGION}"),
    ({"Fn::Sub": "${AWS::AccountId}.dkr.ecr.${AWS::Region}.${AWS::URLSuffix}/r:${!Literal}"},
     f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/r:${{Literal}}"),
    ({"Fn::Sub": ["${Q}/${Fn.Arn}", {"Q": {"Ref": "Queue9"}}]},
     f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/Drac-Queue9/"
     f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:Drac-Fn"),
    ({"Fn::Select": [1, {"Fn::Split": ["|", {"Ref": "OnBus"}]}]}, "Drac-OnBus"),
    ({"a": [{"Ref": "AWS::StackName"}, 3, None]}, {"a": ["Drac", 3, None]}),
])
def test_intrinsics_resolve_to_the_harness_names(value: object, expected: object) -> None:
    assert Resolver(TINY).resolve(value) == expected


def test_collection_endpoint_and_arn_share_a_generated_id() -> None:
    resolver = Resolver(TINY)
    collection_id = resolver.ref("Collection")
    assert len(collection_id) == 20 and collection_id.islower()
    assert resolver.get_att("Collection", "Arn") == (
        f"arn:aws:aoss:{REGION}:{ACCOUNT}:collection/{collection_id}")
    assert resolver.get_att("Collection", "CollectionEndpoint") == (
        f"https://{collection_id}.{REGION}.aoss.amazonaws.com")


@pytest.mark.parametrize("value", [
    {"Fn::If": ["C", 1, 2]},
    {"Fn::ImportValue": "x"},
    {"Fn::GetAtt": ["DocsBucket1A2B", "WebsiteURL"]},
    {"Ref": "NoSuchThing"},
])
def test_what_the_resolver_does_not_model_fails(value: object) -> None:
    with pytest.raises((UnsupportedTemplate, KeyError)):
        Resolver(TINY).resolve(value)


@pytest.mark.parametrize("kind", sorted(NAME_RULES))
def test_generated_names_fit_every_service_even_for_long_logical_ids(kind: str) -> None:
    rule = NAME_RULES[kind]
    long_id = "BucketNotificationsHandler050a0587b7544547bf325f094a3db8347ECC3691Extra"
    for logical_id in ("Short1", long_id):
        name = generated_name("Drac", logical_id, rule)
        assert rule.valid(name), (kind, name)
    # shortened names stay distinct (a digest of the whole logical id ends them)
    assert generated_name("Drac", long_id + "A", rule) != generated_name("Drac", long_id + "B",
                                                                          rule)


def test_an_invalid_explicit_name_is_refused() -> None:
    stack = tiny({"B": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "Not_Valid"}}})
    with pytest.raises(UnsupportedTemplate, match="not a valid"):
        Resolver(stack).name("B")


def test_every_resource_of_the_real_stack_gets_a_valid_unique_name(
        stack_template: StackTemplate) -> None:
    resolver = Resolver(stack_template)
    seen: dict[tuple[str, str], str] = {}
    for logical_id, resource in stack_template.resources.items():
        kind = resource["Type"]
        if kind not in NAME_RULES:
            continue
        name = resolver.name(logical_id)
        assert NAME_RULES[kind].valid(name), (logical_id, name)
        assert (kind, name) not in seen, (logical_id, seen.get((kind, name)))
        seen[(kind, name)] = logical_id


def test_roles_carry_their_attached_and_managed_policies(stack_template: StackTemplate) -> None:
    model = StackModel(stack_template)
    register = model.function_for("register")
    assert register.handler_dir == "register" and register.role.name.startswith("Drac-")
    sources = {s.source.split("[")[0] for s in register.role.statements}
    assert any(s.startswith("RegisterServiceRoleDefaultPolicy") for s in sources)
    assert "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole" in sources

    def allowed(action: str, resource: str) -> bool:
        return evaluate(Request(action=action, resource=resource),
                        register.role.statements).allowed

    documents = model.resolver.get_att(
        model.logical_id_of("AWS::S3::Bucket", register.environment["DOCUMENTS_BUCKET"]), "Arn")
    assert allowed("s3:GetObject", f"{documents}/incoming/a.pdf")
    assert not allowed("s3:PutObject", f"{documents}/incoming/a.pdf")
    assert allowed("logs:PutLogEvents", "arn:aws:logs:us-east-1:1:log-group:x")


def test_functions_get_their_resolved_environment(stack_template: StackTemplate) -> None:
    model = StackModel(stack_template)
    starter = model.function_for("starter")
    env = starter.environment
    assert env["INGEST_STATE_MACHINE_ARN"] == (
        f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:Drac-ingest")
    assert env["DOCUMENTS_BUCKET"].startswith("drac-storagedocuments")
    (collection,) = model.collections.values()
    assert env["COLLECTION_ENDPOINT"] == collection.endpoint
    from handlers import FUNCTIONS

    # KbTransform is deployed only with -c kbTransformBucket (tests/e2e/test_kb_transform.py),
    # Escalate only with -c escalateTo (tests/e2e/test_escalation.py)
    optional = {"kb_transform", "escalate"}
    assert {f.handler_dir for f in model.functions.values()} == set(FUNCTIONS) - optional


def test_the_data_access_policy_names_the_indexing_roles(stack_template: StackTemplate) -> None:
    model = StackModel(stack_template)
    (collection,) = model.collections.values()
    principals = {p for principals, _ in collection.data_rules for p in principals}
    roles = {model.function_for(d).role.arn for d in (
        "index_chunks", "activate_plan", "abandon_plan", "finalise", "delete", "index_setup",
        "retrieve")}
    assert principals == roles


def test_revoke_removes_one_action_from_one_role_only(stack_template: StackTemplate) -> None:
    model = StackModel(stack_template)
    register, starter = model.function_for("register"), model.function_for("starter")
    revoked = StackModel(stack_template.revoke(register.role.logical_id, "s3:GetObject*"))
    actions = {a for s in revoked.function_for("register").role.statements for a in s.actions}
    assert "s3:GetObject*" not in actions and "s3:List*" in actions
    assert revoked.function_for("starter").role.statements == starter.role.statements
    with pytest.raises(KeyError):
        stack_template.revoke(register.role.logical_id, "s3:NoSuchAction")
