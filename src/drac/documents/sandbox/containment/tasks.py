"""The functions a contained worker may run, each registered under its name.

A module marks such a function with `@contained_task`; callers hand the function itself to
`contained_call` or `contained_stream` (so rename tools and dead-code checks see each use),
which send the worker its registered name ("package.module:function"); the worker imports
that module and runs only a function registered there.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

Task = TypeVar("Task", bound=Callable[..., Any])

TASKS: dict[str, Callable[..., Any]] = {}
"""Every registered task by name (filled as the modules defining them are imported)."""


def task_name(function: Callable[..., Any]) -> str:
    """The name a worker finds `function` by: "package.module:function"."""
    return f"{function.__module__}:{function.__qualname__}"


def contained_task(function: Task) -> Task:
    """Register a module-level function as one a contained worker may run."""
    if "<" in function.__qualname__ or "." in function.__qualname__:
        raise TypeError(f"{task_name(function)} is not a module-level function")
    TASKS[task_name(function)] = function
    return function


def registered_name(function: Callable[..., Any]) -> str:
    """The registered name of `function` (TypeError when it is not a registered task)."""
    name = task_name(function)
    if TASKS.get(name) is not function:
        raise TypeError(f"{name} is not registered as a contained task (@contained_task)")
    return name


def resolve(name: str) -> Callable[..., Any]:
    """The task registered as `name`, importing its module first (TypeError when none is)."""
    module, _, _ = name.partition(":")
    importlib.import_module(module)
    try:
        return TASKS[name]
    except KeyError:
        raise TypeError(f"{name} is not registered as a contained task") from None
