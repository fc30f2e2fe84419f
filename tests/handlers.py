"""Load the Lambda handlers of `functions/` as Lambda does, and a Lambda context for them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS = sorted(path.parent.name for path in (ROOT / "functions").glob("*/handler.py"))


def load_handler(name: str) -> ModuleType:
    """Import functions/<name>/handler.py as its own module (once per test session)."""
    module_name = f"drac_fn_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    path = ROOT / "functions" / name / "handler.py"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


class LambdaContext:
    """Enough of a Lambda context for Powertools."""

    function_name = "drac-test"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:drac-test"
    memory_limit_in_mb = 512
    aws_request_id = "req-1"
    log_group_name = "/aws/lambda/drac-test"
    log_stream_name = "stream"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000
