"""Event models: EventBridge S3 events (tenant prefixes) and Replan Requested validation."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from drac.aws.events import IngestInput, ReplanRequest, S3EventBridgeEvent, S3ObjectDetail


def s3_event(key: str, detail_type: str = "Object Created", **obj: str) -> dict:
    return {
        "version": "0",
        "id": "e1",
        "detail-type": detail_type,
        "source": "aws.s3",
        "account": "123456789012",
        "region": "us-east-1",
        "resources": [],
        "detail": {
            "version": "0",
            "bucket": {"name": "docs"},
            "object": {"key": key, "size": 10, "etag": "x", "sequencer": "1", **obj},
            "request-id": "r",
            "requester": "123456789012",
        },
    }


@pytest.mark.parametrize(
    ("key", "tenant", "filename"),
    [
        ("incoming/report.pdf", None, "report.pdf"),
        ("incoming/acme/report.pdf", "acme", "report.pdf"),
        ("incoming/acme/2026/q3/report.pdf", "acme", "report.pdf"),
        ("incoming//report.pdf", None, "report.pdf"),
    ],
)
def test_tenant_comes_from_the_first_folder_under_incoming(key, tenant, filename) -> None:
    event = S3EventBridgeEvent.model_validate(s3_event(key, **{"version-id": "v1"}))
    assert event.detail_type == "Object Created" and event.source == "aws.s3"
    assert event.detail.bucket == "docs" and event.detail.key == key
    assert event.detail.version_id == "v1"
    assert event.detail.tenant == tenant and event.detail.filename == filename


@pytest.mark.parametrize(("sent", "key"), [
    # S3 form-URL-encodes the key in its events (S3 User Guide, event message structure)
    ("incoming/acme/red+flower.pdf", "incoming/acme/red flower.pdf"),
    ("incoming/acme/a%2Bb.pdf", "incoming/acme/a+b.pdf"),
    ("incoming/acme/100%25+sure.md", "incoming/acme/100% sure.md"),
    ("incoming/acme/Caf%C3%A9+%E2%80%93+%E6%9D%B1%E4%BA%AC.md", "incoming/acme/Café – 東京.md"),
    ("incoming/acme/year%3D2026/a.pdf", "incoming/acme/year=2026/a.pdf"),
    ("incoming/acme/plain-name_1.pdf", "incoming/acme/plain-name_1.pdf"),
])
def test_keys_are_decoded_as_s3_encodes_them(sent: str, key: str) -> None:
    event = S3EventBridgeEvent.model_validate(s3_event(sent))
    assert event.detail.key == key
    assert event.detail.filename == key.rsplit("/", 1)[1]


def test_an_encoded_tenant_folder_is_decoded() -> None:
    event = S3EventBridgeEvent.model_validate(s3_event("incoming/big+corp/report+1.pdf"))
    assert (event.detail.tenant, event.detail.filename) == ("big corp", "report 1.pdf")


def test_delete_events_are_decoded_too() -> None:
    event = S3EventBridgeEvent.model_validate(s3_event(
        "incoming/acme/red+flower.pdf", "Object Deleted",
        **{"version-id": "m1", "deletion-type": "Delete Marker Created"}))
    assert event.detail.key == "incoming/acme/red flower.pdf"


def test_a_key_given_directly_is_taken_as_is() -> None:
    """Only the event form is encoded; a model built from a stored key is not decoded again."""
    assert S3ObjectDetail(bucket="docs", key="incoming/a+b.pdf").key == "incoming/a+b.pdf"


def test_delete_marker_event_parses() -> None:
    """AWS sends this when an object of a versioned bucket is deleted without a version id."""
    event = S3EventBridgeEvent.model_validate(
        s3_event(
            "incoming/acme/a.pdf",
            "Object Deleted",
            **{"version-id": "marker1", "deletion-type": "Delete Marker Created"},
        )
    )
    assert event.detail_type == "Object Deleted"
    assert (event.detail.key, event.detail.tenant) == ("incoming/acme/a.pdf", "acme")


def test_event_without_detail_is_refused() -> None:
    with pytest.raises(ValidationError):
        S3EventBridgeEvent.model_validate({"detail-type": "Object Created", "source": "aws.s3"})


def test_replan_request_forms() -> None:
    assert ReplanRequest.model_validate({"all": True}).all is True
    request = ReplanRequest.model_validate(
        {"document_ids": ["d1", "d2"], "tenant": "acme", "strategy": {"name": "fine"}}
    )
    assert request.document_ids == ["d1", "d2"] and request.strategy == {"name": "fine"}
    assert ReplanRequest.model_validate({"all": True, "strategy": "coarse"}).strategy == "coarse"


@pytest.mark.parametrize(
    ("detail", "message"),
    [
        ({}, 'name a tenant, or set "all": true'),
        ({"strategy": "fine"}, "name a tenant"),
        ({"document_ids": ["d1"]}, "name a tenant"),  # no tenant: it would cross tenants
        ({"tenant": " ", "all": True}, "tenant must not be empty"),
        ({"documents": ["d1"]}, "documents"),  # a misspelt field is refused, not ignored
        ({"document_ids": "d1"}, "document_ids"),
    ],
)
def test_replan_request_errors_are_clear(detail: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ReplanRequest.model_validate(detail)


def test_ingest_input_requires_keys_and_strategy() -> None:
    with pytest.raises(ValidationError, match="strategy"):
        IngestInput.model_validate({"document_id": "d", "bucket": "b", "key": "k"})


def test_keys_arrive_url_encoded_and_are_decoded_as_powertools_does() -> None:
    """S3 sends keys URL-encoded: 'red flower+1%.pdf' arrives as 'red+flower%2B1%25.pdf'."""
    event = S3EventBridgeEvent.model_validate(
        s3_event("incoming/acme/red+flower%2B1%25+%C3%A9t%C3%A9.pdf")
    )
    assert event.detail.key == "incoming/acme/red flower+1% été.pdf"
    assert event.detail.tenant == "acme" and event.detail.filename == "red flower+1% été.pdf"


def test_sequencers_compare_after_right_padding() -> None:
    from drac.aws.events import event_order

    assert event_order("0055AED6DCD90281E5") > event_order("0055AED6DCD90281E4")
    assert event_order("0A") > event_order("09FFFF")  # right-padded: 0A000... > 09FFF...
    assert event_order(None, "2026-11-30T00:00:01Z") > event_order(None, "2026-11-30T00:00:00Z")


def test_a_key_keeps_its_decoded_and_delivered_forms() -> None:
    """A raw key "C++ guide 100%.md" decodes to "C   guide 100%.md": both forms are kept, the
    decoded first; a key without escapes has one form."""
    from drac.aws.events import S3ObjectDetail

    raw = S3ObjectDetail.model_validate(
        {"bucket": {"name": "b"}, "object": {"key": "incoming/acme/C++ guide 100%.md"}})
    assert raw.key_forms == ("incoming/acme/C   guide 100%.md", "incoming/acme/C++ guide 100%.md")
    assert raw.with_key(raw.key_forms[1]).tenant == "acme"
    plain = S3ObjectDetail.model_validate(
        {"bucket": {"name": "b"}, "object": {"key": "incoming/acme/a.md"}})
    assert plain.key_forms == ("incoming/acme/a.md",)
