"""`-c privateCollection=true` deployed: the collection admits only its OpenSearch Serverless
VPC endpoint, and every AWS call of the functions that index or search (Delete, IndexChunks,
ActivatePlan, AbandonPlan, Finalise, Retrieve, IndexSetup), recorded while a PDF is ingested,
searched and deleted, leaves their subnets only through an endpoint that allows it, as the
converters' calls do."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import ACME_ROLE, DEPLOY_CONTEXT, upload
from tests.e2e.network import placement
from tests.e2e.synth import synthesise_stack
from tests.e2e.template import StackTemplate
from tests.e2e.test_network import CONVERTERS, network_problems

SEARCHERS = ("delete", "index_chunks", "activate_plan", "finalise", "retrieve", "index_setup")


@pytest.fixture(scope="module")
def private_template() -> StackTemplate:
    """The app synthesised as `cdk deploy -c privateCollection=true` does."""
    return synthesise_stack({**DEPLOY_CONTEXT, "privateCollection": True})


@pytest.fixture
def stack(private_template: StackTemplate) -> StackTemplate:
    """This module deploys the private collection."""
    return private_template


def test_indexing_and_search_reach_the_private_collection_only_through_its_endpoint(
    cloud: Any,
) -> None:
    deployed, _bedrock, opensearch, pdf = cloud
    model = deployed.model
    for handler_dir in (*SEARCHERS, "abandon_plan"):
        assert placement(model, model.function_for(handler_dir).logical_id), handler_dir
    converters = {
        placement(model, model.function_for(h).logical_id).subnets  # type: ignore[union-attr]
        for h in CONVERTERS
    }
    searchers = {
        placement(model, model.function_for(h).logical_id).subnets  # type: ignore[union-attr]
        for h in SEARCHERS
    }
    assert len(converters) == len(searchers) == 1 and not converters & searchers

    upload(deployed, pdf, "incoming/acme/stores.pdf")
    deployed.settle()
    document_id = document_id_for(pdf, "acme")
    assert deployed.runtime.registry.get(document_id).status is DocumentStatus.INDEXED
    answer = deployed.invoke_url(
        model.function_for("retrieve"), deployed.caller(ACME_ROLE), {"query": "store opening hours"}
    )
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["chunks"]
    boto3.client("s3", region_name=deployed.region).delete_object(
        Bucket=deployed.documents_bucket, Key="incoming/acme/stores.pdf"
    )
    deployed.settle()
    assert opensearch.chunks(document_id) == []

    services = network_problems(deployed, ("render", *SEARCHERS))
    assert {"aoss", "bedrock-runtime", "dynamodb", "s3"} <= set().union(*services.values())
    assert "aoss" in services["retrieve"] and "bedrock-runtime" in services["index_chunks"]
