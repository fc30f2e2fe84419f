"""The settings model in groups: flat names (environment, drac.toml, CDK context, keyword
arguments) still reach their group, grouped tables load too, and the JSON handed to the
cloud's functions carries the groups but not the local-only ones nor the API key."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from drac.settings import GROUP_OF, GROUPS, LocalSettings, Settings, SettingsError

_SRC = Path(__file__).resolve().parents[2] / "src" / "drac"
_NO_FILE = {"XDG_CONFIG_HOME": "/nonexistent-drac-config"}


def test_a_flat_drac_toml_loads_into_the_groups(tmp_path: Path) -> None:
    config = tmp_path / "drac.toml"
    config.write_text(
        '[model]\nbackend = "openai"\nopenai_model = "m"\nvision_model_id = "v"\n'
        '[settings]\nbatch_size = 3\nindex_name = "mine"\nremoval_policy = "destroy"\n'
        "document_cpu_s = 30\n"
    )

    settings = Settings.load(_NO_FILE, config_file=config)

    assert settings.models.backend == "openai"
    assert settings.models.conversion_model == "v"
    assert settings.conversion.batch_size == 3
    assert settings.conversion.document_cpu_s == 30
    assert settings.cloud.index_name == "mine"
    assert settings.deploy.removal_policy == "destroy"


def test_grouped_tables_load_and_the_environment_wins_over_them(tmp_path: Path) -> None:
    config = tmp_path / "drac.toml"
    config.write_text(
        '[models]\nbackend = "openai"\nopenai_model = "m"\n'
        "[conversion]\nbatchSize = 4\nmax_pages = 10\n"
    )

    settings = Settings.load({**_NO_FILE, "DRAC_BATCH_SIZE": "7"}, config_file=config)

    assert settings.models.openai_model == "m"
    assert settings.conversion.batch_size == 7
    assert settings.conversion.max_pages == 10


def test_a_field_set_in_two_tables_is_refused_naming_both(tmp_path: Path) -> None:
    config = tmp_path / "drac.toml"
    config.write_text("[settings]\nmax_pages = 12\n[conversion]\nmaxPages = 10\n")

    with pytest.raises(SettingsError, match=r"max_pages is set in \[settings\] and \[conversion\]"):
        Settings.load(_NO_FILE, config_file=config)


@pytest.mark.parametrize(
    ("variable", "value", "group", "field", "expected"),
    [
        ("DRAC_MODEL", "bedrock", "models", "backend", "bedrock"),
        ("DRAC_TEMPERATURE", "0.5", "models", "temperature", 0.5),
        ("DRAC_ESCALATE_TO", "bedrock:x", "models", "escalate_to", "bedrock:x"),
        ("DRAC_BATCH_SIZE", "2", "conversion", "batch_size", 2),
        ("DRAC_STRATEGY", "fine", "conversion", "strategy", "fine"),
        ("DRAC_INDEX_NAME", "other", "cloud", "index_name", "other"),
        ("DRAC_PLAN_CACHE_DAYS", "0", "cloud", "plan_cache_days", 0),
        ("DRAC_ALARM_EMAIL", "a@b.co", "deploy", "alarm_email", "a@b.co"),
    ],
)
def test_each_variable_keeps_its_name_and_reaches_its_group(
    variable: str, value: str, group: str, field: str, expected: object
) -> None:
    settings = Settings.load({**_NO_FILE, variable: value})

    got = getattr(getattr(settings, group), field)
    assert (got.name if field == "strategy" else got) == expected


def test_every_field_has_one_group_and_its_own_variable_name() -> None:
    names = [name for model in GROUPS.values() for name in model.model_fields]

    assert len(names) == len(set(names)) == len(GROUP_OF)
    for name, group in GROUP_OF.items():
        # a value most fields refuse: either refused naming the field, or read as given
        try:
            settings = Settings.load({**_NO_FILE, f"DRAC_{name.upper()}": "not valid @"})
        except SettingsError as exc:
            assert f"{group}.{name}" in str(exc) or name in str(exc)
        else:
            assert getattr(getattr(settings, group), name) == "not valid @", name


def test_flat_and_grouped_context_give_the_same_settings() -> None:
    flat = Settings.from_context({"batchSize": "4", "indexName": "x", "removalPolicy": "destroy"})
    grouped = Settings.from_context(
        {"conversion": {"batchSize": 4}, "cloud": {"indexName": "x"}, "removalPolicy": "destroy"}
    )

    assert flat == grouped
    assert flat.conversion.batch_size == 4
    with pytest.raises(SettingsError, match="unknown context key 'batch'"):
        Settings.from_context({"batch": 4})


def test_a_group_given_whole_and_field_by_field_is_refused() -> None:
    from drac.settings import ModelSettings

    with pytest.raises(ValueError, match="models"):
        Settings(models=ModelSettings(), backend="bedrock")


def test_the_cloud_json_has_the_groups_but_no_key_and_no_local_groups() -> None:
    settings = Settings(openai_api_key="sk-secret", batch_size=2, tenant_principals={})
    text = settings.to_json()

    assert "sk-secret" not in text
    assert set(json.loads(text)) == set(GROUPS)
    assert Settings.from_json(text).conversion.batch_size == 2


def test_changed_updates_fields_in_their_groups_and_keeps_the_rest() -> None:
    base = Settings(batch_size=2, backend="bedrock")
    changed = base.changed(batch_size=9, tenant_principals={"a": "b"})

    assert (changed.conversion.batch_size, changed.models.backend) == (9, "bedrock")
    assert changed.cloud.tenant_principals == {"a": "b"}
    assert base.conversion.batch_size == 2
    with pytest.raises(KeyError):
        base.changed(no_such_field=1)


@pytest.mark.parametrize(("value", "on"), [("1", True), ("yes", True), ("0", False), ("", False)])
def test_drac_traceback_is_read_by_the_local_group(value: str, on: bool) -> None:
    assert LocalSettings.from_env({"DRAC_TRACEBACK": value}).traceback is on


_READ_OUTSIDE = {
    # the documents layer sits below the settings; LibreOffice is started in contained
    # worker processes that get no settings object (docs/configuration.md)
    "DRAC_SOFFICE": "documents/intake/normalise.py",
}


def _string_args_of_environment_reads(tree: ast.AST) -> list[str]:
    """The string keys of os.environ[...], os.environ.get(...), os.getenv(...), env.get(...)."""
    keys: list[str] = []
    for node in ast.walk(tree):
        key: ast.expr | None = None
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and ast.unparse(node.value).endswith("environ")
        ):
            key = node.slice
        elif isinstance(node, ast.Call) and node.args:
            callee = ast.unparse(node.func)
            if callee.endswith(("environ.get", "getenv", "env.get", "environ.setdefault")):
                key = node.args[0]
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            keys.append(key.value)
    return keys


def test_drac_variables_are_read_only_by_the_settings_package() -> None:
    outside: list[str] = []
    for path in sorted(_SRC.rglob("*.py")):
        relative = path.relative_to(_SRC).as_posix()
        if relative.startswith("settings/"):
            continue
        for key in _string_args_of_environment_reads(ast.parse(path.read_text("utf-8"))):
            if key.startswith("DRAC_") and _READ_OUTSIDE.get(key) != relative:
                outside.append(f"{relative}: {key}")

    assert not outside, f"read these through drac.settings: {outside}"
