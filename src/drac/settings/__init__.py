"""drac's one settings model, in groups: `models`, `embedder`, `conversion`, `cloud`,
`deploy` and `local` (docs/configuration.md, "The settings model").

The same model, with the same defaults, is read three ways:
- the CLI: environment variables (`DRAC_<FIELD>`, plus the historic names in `ENV_ALIASES`)
  over an optional `drac.toml` (flat `[model]` and `[settings]` tables, or one table a group)
  that the user names (`--config`, `DRAC_CONFIG`) or keeps in their config folder, see
  `Settings.load`; a `drac.toml` in the current folder is never read: it may have come with
  the documents;
- the CDK app: context values in camelCase (`cdk.json` or `-c batchSize=4`), see
  `Settings.from_context`;
- the Lambda functions: the JSON the stack puts in `DRAC_SETTINGS`, see `Settings.from_json`.
The `embedder` and `local` groups are read from the environment only
(`drac.settings.environment`) and never go to the cloud.
A bad value is rejected when loaded, with the field named.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from drac.settings.environment import EMBEDDER_VARIABLES, EmbedderSettings, LocalSettings
from drac.settings.errors import SettingsError
from drac.settings.groups import (
    BEDROCK_CONVERSION_MODEL,
    FLAT_NAMES,
    GROUP_OF,
    GROUPS,
    TITAN_V2,
    CloudSettings,
    ConversionSettings,
    DeploySettings,
    ModelSettings,
    StructuredMode,
    check_collection_name,
)

__all__ = [
    "BEDROCK_CONVERSION_MODEL",
    "CONFIG_NAME",
    "EMBEDDER_VARIABLES",
    "ENV_ALIASES",
    "GROUPS",
    "GROUP_OF",
    "SETTINGS_VARIABLE",
    "TITAN_V2",
    "CloudSettings",
    "ConversionSettings",
    "DeploySettings",
    "EmbedderSettings",
    "LocalSettings",
    "ModelSettings",
    "Settings",
    "SettingsError",
    "StructuredMode",
    "check_collection_name",
    "named_config_file",
    "user_config_file",
]

SETTINGS_VARIABLE = "DRAC_SETTINGS"
"""The environment variable through which the stack hands its settings to every function."""

ENV_ALIASES: dict[str, str] = {
    "DRAC_MODEL": "backend",
    "DRAC_VISION_MODEL_ID": "conversion_model_id",
    "DRAC_PLANNER_MODEL_ID": "planning_model_id",
    "AWS_REGION": "region",
    "DRAC_BEDROCK_REGION": "region",  # after AWS_REGION: wins over it
}
"""Environment variable names kept from before the settings had one model."""
_TOML_ALIASES = {"vision_model_id": "conversion_model_id", "planner_model_id": "planning_model_id"}
_CDK_KEYS = re.compile(r"^(@|aws:|cdk|stackName$|acknowledged-issue-numbers$)")


class Settings(BaseModel):
    """Every knob of drac in five groups (`models`, `embedder`, `conversion`, `cloud`,
    `deploy`), with one set of production-sensible defaults. Flat input (the field names or
    their camelCase, as a flat `drac.toml`, CDK context or keyword arguments give them) is
    placed into its group; a field's environment variable is `DRAC_<FIELD>` whatever its group."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    _config_file: Path | None = PrivateAttr(default=None)

    models: ModelSettings = Field(default_factory=ModelSettings)
    embedder: EmbedderSettings = Field(
        default_factory=EmbedderSettings,
        exclude=True,  # the local embedder's: never handed to the cloud's functions
        description="the local embedder (DRAC_EMBEDDER, DRAC_EMBED_*: EmbedderSettings)",
    )
    conversion: ConversionSettings = Field(default_factory=ConversionSettings)
    cloud: CloudSettings = Field(default_factory=CloudSettings)
    deploy: DeploySettings = Field(default_factory=DeploySettings)
    local: LocalSettings = Field(
        default_factory=LocalSettings,
        exclude=True,  # this machine's: never handed to the cloud's functions
        description="the CLI process's own switches (DRAC_TRACEBACK)",
    )

    @model_validator(mode="before")
    @classmethod
    def _into_groups(cls, data: Any) -> Any:
        """Flat keys (field names or camelCase) go into their group; grouped input stays."""
        return _grouped(data) if isinstance(data, Mapping) else data

    # -- loading --------------------------------------------------------------------------
    @classmethod
    def from_context(cls, context: Mapping[str, Any]) -> Settings:
        """Settings from CDK context (camelCase keys, values possibly strings from `-c`)."""
        values: dict[str, Any] = {}
        for key, raw in context.items():
            if _CDK_KEYS.match(key):
                continue
            if key not in FLAT_NAMES and key not in GROUPS:
                known = ", ".join(name for name in FLAT_NAMES if name not in GROUP_OF)
                raise SettingsError(f"unknown context key {key!r} (known: {known})")
            values[key] = _from_cli_string(raw)
        return _validated(values, source="context")

    @classmethod
    def load(
        cls, env: Mapping[str, str] | None = None, config_file: str | Path | None = None
    ) -> Settings:
        """Settings for the CLI: a `drac.toml` the user chose (the file given, else
        $DRAC_CONFIG, else `user_config_file()` when present; never one in the current
        folder) overridden by environment variables."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        named = config_file or named_config_file(env)
        path = Path(named) if named else user_config_file(env)
        read = path.is_file()
        if read:
            values.update(_read_toml(path))
        elif named:
            raise SettingsError(f"settings file {path} does not exist")
        for variable, name in ENV_ALIASES.items():
            if env.get(variable, "").strip():
                values[name] = env[variable].strip()
        for name in GROUP_OF:
            variable = f"DRAC_{name.upper()}"
            if env.get(variable, "").strip():
                values[name] = _from_cli_string(env[variable].strip())
        values = _grouped(values)
        values["embedder"] = EmbedderSettings.from_env(env)
        values["local"] = LocalSettings.from_env(env)
        settings = _validated(values, source=str(path) if read else "environment")
        settings._config_file = path if read else None
        return settings

    def changed(self, **changes: Any) -> Settings:
        """A copy with these fields (flat names, whatever their group) changed; unvalidated,
        as `model_copy`; KeyError for a name that is no field."""
        groups: dict[str, dict[str, Any]] = {}
        for name, value in changes.items():
            groups.setdefault(GROUP_OF[name], {})[name] = value
        return self.model_copy(
            update={
                group: getattr(self, group).model_copy(update=update)
                for group, update in groups.items()
            }
        )

    @property
    def config_file(self) -> Path | None:
        """The settings file these settings were read from (None: defaults and environment)."""
        return self._config_file

    def network_notice(self) -> str | None:
        """One line naming the settings file and the endpoint documents are sent to, when
        settings read from a file choose a model backend on the network (None otherwise)."""
        models = self.models
        if self._config_file is None or models.backend == "offline":
            return None
        if models.backend == "openai":
            endpoint = models.openai_base_url
        else:
            endpoint = f"Amazon Bedrock ({models.region or 'the AWS default region'})"
        return (
            f"drac: settings from {self._config_file} send documents to {endpoint} "
            f"(model backend {models.backend})"
        )

    @classmethod
    def from_json(cls, text: str) -> Settings:
        """Settings from the JSON `to_json` wrote (how Lambda functions receive them)."""
        return _validated(json.loads(text), source=SETTINGS_VARIABLE)

    def to_json(self) -> str:
        """Compact JSON of every group (field names), for `DRAC_SETTINGS`; no API key."""
        return self.model_dump_json(exclude={"models": {"openai_api_key"}})


CONFIG_NAME = "drac.toml"


def named_config_file(env: Mapping[str, str] | None = None) -> str:
    """The settings file `DRAC_CONFIG` names ("" when it names none)."""
    env = os.environ if env is None else env
    return env.get("DRAC_CONFIG", "").strip()


def user_config_file(env: Mapping[str, str] | None = None) -> Path:
    """The user's own settings file: `$XDG_CONFIG_HOME/drac/drac.toml`, else
    `~/.config/drac/drac.toml` (read when present)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME", "").strip()
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "drac" / CONFIG_NAME


def _from_cli_string(raw: Any) -> Any:
    """Context and environment values may arrive as strings: JSON arrays and objects are
    decoded (pydantic turns "4" or "true" into a number or a flag where a field wants one,
    and leaves strings, such as an all-digit API key, as they are)."""
    if isinstance(raw, str) and raw.strip()[:1] in "[{":
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _validated(values: Mapping[str, Any], *, source: str) -> Settings:
    try:
        return Settings.model_validate(dict(values))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'settings'}: {error['msg']}"
            for error in exc.errors()
        )
        raise SettingsError(f"invalid settings ({source}): {problems}") from exc
    except ValueError as exc:  # a strategy that does not resolve
        raise SettingsError(f"invalid settings ({source}): strategy: {exc}") from exc


def _grouped(values: Mapping[str, Any]) -> dict[str, Any]:
    """Flat values (field names or camelCase) nested into their groups, merged with groups
    given as tables; ValueError when one group comes both ways and cannot be merged."""
    grouped: dict[str, Any] = {}
    for key, value in values.items():
        name = FLAT_NAMES.get(str(key), "")
        group = GROUP_OF.get(name)
        if group is None and not (key in GROUPS and isinstance(value, Mapping)):
            if key in grouped:
                raise ValueError(f"{key}: given both as a group and field by field")
            grouped[key] = value
            continue
        target = grouped.setdefault(group or key, {})
        if not isinstance(target, dict):
            raise ValueError(f"{group or key}: given both as a group and field by field")
        if group is None:
            target.update({FLAT_NAMES.get(str(k), str(k)): item for k, item in value.items()})
        else:
            target[name] = value
    return grouped


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from exc
    values: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for table in ("model", "settings", *GROUPS):
        part = data.get(table, {})
        if not isinstance(part, dict):
            raise SettingsError(f"{path}: [{table}] must be a table")
        for key, value in part.items():
            name = _TOML_ALIASES.get(str(key), str(key))
            field = FLAT_NAMES.get(name, name)
            if field in seen:
                raise SettingsError(f"{path}: {field} is set in [{seen[field]}] and [{table}]")
            seen[field] = table
            if table in GROUPS:
                values.setdefault(table, {})[name] = value
            else:
                values[name] = value
    try:
        return _grouped(values)
    except ValueError as exc:
        raise SettingsError(f"{path}: {exc}") from exc
