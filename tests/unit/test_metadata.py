"""Per-document metadata (drac.metadata): the Bedrock sidecar format and `key=value`, and every
limit an untrusted source is held to, each refusal naming the origin and the key."""

from __future__ import annotations

import json

import pytest

from drac.errors import MetadataError
from drac.metadata import (
    MAX_KEYS,
    MAX_LIST_ITEMS,
    MAX_SIDECAR_BYTES,
    MAX_VALUE_CHARS,
    RESERVED_KEYS,
    as_date,
    is_sidecar,
    merged,
    parse_assignment,
    parse_assignments,
    parse_sidecar,
    scalar,
    sidecar_name,
)

ORIGIN = "docs/report.pdf.metadata.json"


def sidecar(attributes: object) -> bytes:
    return json.dumps({"metadataAttributes": attributes}).encode()


def test_a_bedrock_sidecar_gives_each_type() -> None:
    data = sidecar(
        {
            "department": "legal",
            "year": 2024,
            "score": 4.5,
            "public": False,
            "tags": ["contract", "eu"],
        }
    )
    assert parse_sidecar(data, ORIGIN) == {
        "department": "legal",
        "year": 2024,
        "score": 4.5,
        "public": False,
        "tags": ["contract", "eu"],
    }


def test_bedrock_typed_values_are_read_as_plain_ones() -> None:
    data = sidecar(
        {
            "genre": {
                "value": {"type": "STRING", "stringValue": "novel"},
                "includeForEmbedding": True,
            },
            "year": {"value": {"type": "NUMBER", "numberValue": 1925}},
            "signed": {"value": {"type": "BOOLEAN", "booleanValue": True}},
            "cast": {"value": {"type": "STRING_LIST", "stringListValue": ["a", "b"]}},
        }
    )
    assert parse_sidecar(data, ORIGIN) == {
        "genre": "novel",
        "year": 1925,
        "signed": True,
        "cast": ["a", "b"],
    }
    with pytest.raises(MetadataError, match='key "year": type must be one of'):
        parse_sidecar(sidecar({"year": {"value": {"type": "DATE", "dateValue": 1}}}), ORIGIN)


@pytest.mark.parametrize("key", [*sorted(RESERVED_KEYS), "Tenant", "TENANT", "_hidden"])
def test_reserved_keys_are_refused_naming_file_and_key(key: str) -> None:
    with pytest.raises(MetadataError) as caught:
        parse_sidecar(sidecar({key: "x"}), ORIGIN)
    message = str(caught.value)
    if key[0].isalpha():
        assert message.startswith(ORIGIN) and json.dumps(key) in message and "reserved" in message


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\xff\xfe{}", "not valid UTF-8 JSON"),
        (b"{not json", "not valid UTF-8 JSON"),
        (b'{"metadataAttributes": {"n": NaN}}', "not valid UTF-8 JSON"),
        (b'{"metadataAttributes": {"n": Infinity}}', "not valid UTF-8 JSON"),
        (b'{"metadataAttributes": {"n": 1e999}}', "must be finite"),
        (b'{"metadataAttributes": {"n": 9007199254740993}}', "too large"),
        (b"[]", "expected an object"),
        (b'{"other": {}}', "expected an object"),
        (b'{"metadataAttributes": []}', "must be an object"),
        (b'{"metadataAttributes": {"a": null}}', 'key "a": null is not a metadata value'),
        (b'{"metadataAttributes": {"a": {"b": 1}}}', "typed form"),
        (b'{"metadataAttributes": {"a": ""}}', "must not be empty"),
        (b'{"metadataAttributes": {"a": [1, 2]}}', "only strings"),
        (b'{"metadataAttributes": {"a": []}}', "1 to 10 strings"),
        (b'{"metadataAttributes": {"a": "x\\u0000y"}}', "NUL"),
        (b'{"metadataAttributes": {"a": 1, "a": 2}}', "given twice"),
        (b'{"metadataAttributes": {"a b": 1}}', "may hold only letters"),
        (b'{"metadataAttributes": {"a\\u001b[2J": 1}}', "may hold only letters"),
        (b'{"metadataAttributes": {"\\u202eevil": 1}}', "may hold only letters"),
        (b'{"metadataAttributes": {"9lives": 1}}', "starting with a letter"),
        (b'{"metadataAttributes": {"": 1}}', "non-empty string"),
        (b"[" * 5000 + b"]" * 5000, "not valid UTF-8 JSON"),
    ],
)
def test_hostile_sidecars_are_refused_with_a_reason(data: bytes, expected: str) -> None:
    with pytest.raises(MetadataError, match=expected) as caught:
        parse_sidecar(data, ORIGIN)
    assert str(caught.value).startswith(ORIGIN)
    assert "\x1b" not in str(caught.value)  # a key's escape never reaches the message raw


def test_size_and_count_limits() -> None:
    too_big = sidecar({"a": "x" * MAX_SIDECAR_BYTES})
    with pytest.raises(MetadataError, match="more than the 10 KiB limit"):
        parse_sidecar(too_big, ORIGIN)
    with pytest.raises(MetadataError, match=f"more than {MAX_KEYS} metadata keys"):
        parse_sidecar(sidecar({f"k{i}": i for i in range(MAX_KEYS + 1)}), ORIGIN)
    assert len(parse_sidecar(sidecar({f"k{i}": i for i in range(MAX_KEYS)}), ORIGIN)) == MAX_KEYS
    with pytest.raises(MetadataError, match="longer than 2048"):
        parse_assignment("a=" + "x" * (MAX_VALUE_CHARS + 1), "--meta")
    with pytest.raises(MetadataError, match="1 to 10 strings"):
        parse_sidecar(sidecar({"a": ["x"] * (MAX_LIST_ITEMS + 1)}), ORIGIN)
    with pytest.raises(MetadataError, match="longer than 64"):
        parse_assignment("k" * 65 + "=1", "--meta")


def test_assignments_read_values_as_written() -> None:
    assert parse_assignments(
        [
            "dept=legal",
            "year=2024",
            "ratio=0.5",
            "draft=true",
            "code=007",
            'code2:="007"',
            'tags:=["a","b"]',
            "note=a=b",
            "when=2024-05-01",
        ],
        "--meta",
    ) == {
        "dept": "legal",
        "year": 2024,
        "ratio": 0.5,
        "draft": True,
        "code": "007",
        "code2": "007",
        "tags": ["a", "b"],
        "note": "a=b",
        "when": "2024-05-01",
    }
    assert scalar("-3") == -3 and scalar("1e3") == 1000.0 and scalar("1.") == "1."
    with pytest.raises(MetadataError, match="is not key=value"):
        parse_assignment("novalue", "--meta")
    with pytest.raises(MetadataError, match="not JSON"):
        parse_assignment("a:=[", "--meta")
    with pytest.raises(MetadataError, match="reserved"):
        parse_assignment("tenant=beta", "--meta")
    with pytest.raises(MetadataError, match="only strings"):
        parse_assignment('a:=[{"x": 1}]', "--meta")


def test_later_layers_win_and_the_limit_holds_on_the_merge() -> None:
    assert merged({"a": 1, "b": "x"}, {"b": "y"}) == {"a": 1, "b": "y"}
    half = {f"a{i}": i for i in range(MAX_KEYS)}
    with pytest.raises(MetadataError, match="more than 50"):
        merged(half, {"extra": 1})


def test_sidecar_names_and_dates() -> None:
    assert sidecar_name("a.pdf") == "a.pdf.metadata.json"
    assert is_sidecar("x/A.PDF.METADATA.JSON") and not is_sidecar("metadata.json.pdf")
    assert as_date("2024-05-01") is not None
    assert as_date("2024-05-01T12:00:00Z") == as_date("2024-05-01T14:00:00+02:00")
    for text in ("2024", "20240501", "yesterday", "2024-13-01", "2024-05-01x"):
        assert as_date(text) is None, text
