"""The pass registry: every pass tkc knows, by its kebab-case name, as a lazy factory.

A factory imports its module only when called, so `import tkc.passes` stays cheap.
`is_available(name)` says whether a pass's module exists without importing it; the driver
refuses a pipeline with a missing one (StageUnavailable) rather than leave it out.

A tkc pass lives in `passes/<name with underscores>.py` and is the `ModulePass` subclass there
whose `name` equals the registered name, so the registry does not depend on class names.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable

from xdsl.passes import ModulePass

from tkc.pipeline import PIPELINE


def module_name(pass_name: str) -> str:
    return f"{__name__}.{pass_name.replace('-', '_')}"


def _tkc_pass(pass_name: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        module = importlib.import_module(module_name(pass_name))
        for value in vars(module).values():
            # the name first: issubclass of the ModulePass ABC on each class the module imports
            # (dialect ops among them) walks ModulePass's subclasses, ~30 ms a pipeline
            if isinstance(value, type) and getattr(value, "name", None) == pass_name and issubclass(value, ModulePass):
                return value
        raise ImportError(f"{module.__name__} defines no ModulePass named {pass_name!r}")

    return load


def _canonicalize() -> type[ModulePass]:
    from xdsl.transforms.canonicalize import CanonicalizePass

    return CanonicalizePass


def _cse() -> type[ModulePass]:
    from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

    return CommonSubexpressionElimination


XDSL_PASSES: dict[str, Callable[[], type[ModulePass]]] = {"canonicalize": _canonicalize, "cse": _cse}
"""xDSL passes the tkc pipeline uses (tkc-opt and xdsl-opt have all of xDSL's anyway)."""

TKC_PASS_NAMES = tuple(name for name in PIPELINE if name not in XDSL_PASSES)
"""The pipeline's passes implemented in this package, one module each (tkc.pipeline orders them)."""

ALL_PASSES: dict[str, Callable[[], type[ModulePass]]] = XDSL_PASSES | {
    name: _tkc_pass(name) for name in TKC_PASS_NAMES
}


def is_available(pass_name: str) -> bool:
    """Whether the pass can be loaded: xDSL's always, tkc's once its module exists."""
    if pass_name in XDSL_PASSES:
        return True
    return pass_name in ALL_PASSES and importlib.util.find_spec(module_name(pass_name)) is not None
