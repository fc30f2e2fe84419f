"""Who may read and re-plan which tenant: from the caller's IAM identity, never the body."""

from __future__ import annotations

import pytest

from drac.aws.errors import Forbidden
from drac.aws.events import ReplanRequest
from drac.aws.identity import (
    caller_scope,
    function_url_caller,
    principal_key,
    replan_scope,
    scoped_replan,
)
from drac.aws.stages.retrieve import RetrieveRequest, scoped_request
from drac.settings import Settings, SettingsError

ACME = "arn:aws:iam::111122223333:role/apps/acme-search"
ADMIN = "arn:aws:iam::111122223333:user/ops"
SETTINGS = Settings(tenant_principals={ACME: "acme"}, admin_principals=(ADMIN,))


def test_a_role_session_is_matched_by_account_and_role_name() -> None:
    session = "arn:aws:sts::111122223333:assumed-role/acme-search/i-0abc"
    assert (
        principal_key(session)
        == principal_key(ACME)
        == ("aws", "111122223333", "role", "acme-search")
    )
    assert caller_scope(SETTINGS, session).tenant == "acme"
    assert caller_scope(SETTINGS, ADMIN).admin
    for stranger in (
        "arn:aws:sts::999999999999:assumed-role/acme-search/s",  # other account
        "arn:aws:sts::111122223333:assumed-role/acme-search-2/s",
        "arn:aws:iam::111122223333:user/acme-search",  # a user, not the role
        "",
        None,
        "acme",
    ):
        with pytest.raises(Forbidden):
            caller_scope(SETTINGS, stranger)


def test_the_caller_comes_from_the_function_url_authorizer() -> None:
    event = {
        "requestContext": {"authorizer": {"iam": {"userArn": ADMIN}}},
        "body": '{"tenant": "acme"}',
    }
    assert function_url_caller(event) == ADMIN
    assert function_url_caller({"requestContext": {}}) is None


def test_a_tenant_request_is_held_to_the_callers_tenant() -> None:
    acme = caller_scope(SETTINGS, "arn:aws:sts::111122223333:assumed-role/acme-search/s")
    assert scoped_request(acme, RetrieveRequest(query="q")).tenant == "acme"
    assert scoped_request(acme, RetrieveRequest(query="q", tenant="acme")).tenant == "acme"
    for request in (
        RetrieveRequest(query="q", tenant="beta"),
        RetrieveRequest(query="q", tenant=None),
        RetrieveRequest(query="q", all_tenants=True),
    ):
        with pytest.raises(Forbidden):
            scoped_request(acme, request)
    admin = caller_scope(SETTINGS, ADMIN)
    everything = RetrieveRequest(query="q", all_tenants=True)
    assert scoped_request(admin, everything) == everything


def test_a_replan_source_stands_for_its_scope() -> None:
    acme = replan_scope(SETTINGS, "drac.tenant.acme")
    own = ReplanRequest(tenant="acme")
    assert scoped_replan(acme, own) == own
    for request in (
        ReplanRequest(tenant="beta"),
        ReplanRequest(all=True),
        ReplanRequest(all=True, tenant="acme"),
    ):
        with pytest.raises(Forbidden):
            scoped_replan(acme, request)
    assert scoped_replan(replan_scope(SETTINGS, "drac.admin"), ReplanRequest(all=True)).all
    for source in ("drac.tenant.beta", "drac.api", "drac.tenant."):
        with pytest.raises(Forbidden):
            replan_scope(SETTINGS, source)


def test_principal_settings_are_validated() -> None:
    with pytest.raises(SettingsError, match=r"tenantPrincipals|tenant_principals"):
        Settings.from_context({"tenantPrincipals": {"acme": "acme"}})
    with pytest.raises(SettingsError, match="tenant"):
        Settings.from_context({"tenantPrincipals": {ACME: "a/b"}})
    with pytest.raises(SettingsError, match="admin"):
        Settings.from_context({"adminPrincipals": ["*"]})
