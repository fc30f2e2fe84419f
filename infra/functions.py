"""One place that builds the project's Lambda functions the same way."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Duration, Size
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from drac.settings import Settings
from infra.config import removal_policy
from infra.layers import CORE, DEPS, core_layer_dir, definition, deps_layer_dir

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = lambda_.Runtime.PYTHON_3_12
ASSET_EXCLUDES = ["__pycache__", "*.pyc", "*.egg-info", ".pytest_cache"]


class FunctionFactory:
    """Builds Python 3.12 Lambdas with the core and dependency layers, tracing and logs."""

    def __init__(self, scope: Construct, settings: Settings) -> None:
        """Create the two shared layers under scope."""
        self.scope = scope
        self.settings = settings
        self.environment: dict[str, str] = {
            "POWERTOOLS_SERVICE_NAME": "drac",
            "POWERTOOLS_METRICS_NAMESPACE": "Drac",
            "POWERTOOLS_LOG_LEVEL": settings.cloud.log_level,
        }
        self.core_layer = lambda_.LayerVersion(
            scope,
            "CoreLayer",
            code=lambda_.Code.from_asset(str(core_layer_dir()), exclude=[".complete"]),
            compatible_runtimes=[RUNTIME],
            description=definition(CORE)["description"],
        )
        deps_dir = deps_layer_dir()
        self.deps_layer = lambda_.LayerVersion(
            scope,
            "DepsLayer",
            code=lambda_.Code.from_asset(str(deps_dir), exclude=[".complete"]),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[lambda_.Architecture.X86_64],
            description=definition(DEPS)["description"],
        )
        self.functions: dict[str, lambda_.Function] = {}
        self.handler_dirs: dict[str, str] = {}
        """Construct id -> the `functions/<dir>` folder holding the function's handler."""

    def _log_group(self, construct_id: str) -> logs.LogGroup:
        """Return a log group with a retention for one function."""
        return logs.LogGroup(
            self.scope,
            f"{construct_id}Logs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=removal_policy(self.settings),  # logs outlive a destroyed stack
        )

    def make(
        self,
        construct_id: str,
        handler_dir: str,
        *,
        memory: int = 512,
        timeout: Duration | None = None,
        environment: dict[str, str] | None = None,
        reserved_concurrency: int | None = None,
        network: Placement | None = None,
        ephemeral_storage: Size | None = None,
    ) -> lambda_.Function:
        """Return a zip-packaged function whose code is `functions/<handler_dir>/` (in the
        VPC subnets of `network` when given; /tmp of `ephemeral_storage`, 512 MB if not)."""
        fn = lambda_.Function(
            self.scope,
            construct_id,
            runtime=RUNTIME,
            architecture=lambda_.Architecture.X86_64,
            handler="handler.handler",
            code=lambda_.Code.from_asset(
                str(ROOT / "functions" / handler_dir), exclude=ASSET_EXCLUDES
            ),
            layers=[self.core_layer, self.deps_layer],
            memory_size=memory,
            ephemeral_storage_size=ephemeral_storage,
            timeout=timeout or Duration.minutes(1),
            tracing=lambda_.Tracing.ACTIVE,
            environment={**self.environment, **(environment or {})},
            log_group=self._log_group(construct_id),
            reserved_concurrent_executions=reserved_concurrency,
            **_placement(network),
        )
        self.functions[construct_id] = fn
        self.handler_dirs[construct_id] = handler_dir
        return fn

    def make_image(
        self,
        construct_id: str,
        handler_dir: str,
        *,
        memory: int = 2048,
        timeout: Duration | None = None,
        environment: dict[str, str] | None = None,
        ephemeral_storage: Size | None = None,
        image: str | None = None,
        network: Placement | None = None,
    ) -> lambda_.DockerImageFunction:
        """Return a container-image function whose handler is `functions/<handler_dir>`, built
        from `functions/<image>/Dockerfile` (`image` defaults to `handler_dir`; functions that
        share one image differ only in the handler file the build copies in).

        The build context is the repository root (the image needs the core package); only the
        core package and the function folder are sent. Synth copies the context into cdk.out
        and writes the asset manifest; Docker is needed only when `cdk deploy` publishes it.
        """
        fn = lambda_.DockerImageFunction(
            self.scope,
            construct_id,
            code=lambda_.DockerImageCode.from_image_asset(
                str(ROOT),
                file=f"functions/{image or handler_dir}/Dockerfile",
                build_args={"FUNCTION": handler_dir},
                exclude=[
                    "*",
                    "!pyproject.toml",
                    "!README.md",
                    "!src",
                    "!src/drac",
                    "!src/drac/**",
                    "**/*.egg-info",
                    f"!functions/{handler_dir}",
                    f"!functions/{handler_dir}/**",
                    f"!functions/{image or handler_dir}",
                    f"!functions/{image or handler_dir}/**",
                    "**/__pycache__",
                ],
                ignore_mode=None,
                platform=ecr_assets.Platform.LINUX_AMD64,
            ),
            architecture=lambda_.Architecture.X86_64,
            memory_size=memory,
            ephemeral_storage_size=ephemeral_storage,
            timeout=timeout or Duration.minutes(5),
            tracing=lambda_.Tracing.ACTIVE,
            environment={**self.environment, **(environment or {})},
            log_group=self._log_group(construct_id),
            **_placement(network),
        )
        self.functions[construct_id] = fn
        self.handler_dirs[construct_id] = handler_dir
        return fn


Placement = tuple[ec2.IVpc, ec2.SubnetSelection, ec2.ISecurityGroup]
"""A VPC, the subnets in it and the security group a function runs with."""


def _placement(network: Placement | None) -> dict:
    """The Function properties placing it in `network` (none: Lambda's own network)."""
    if network is None:
        return {}
    vpc, subnets, group = network
    return {"vpc": vpc, "vpc_subnets": subnets, "security_groups": [group]}
