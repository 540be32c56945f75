"""The .tk language frontend: `parse_tk` turns source text into a verified tile-dialect module.

`parser.py` owns the grammar (`tk.lark`) and syntax errors; `builder.py` owns the meaning
(names, types, folding, control flow) and emits the tile dialect. Every mistake in the input
is a `tkc.diagnostics.TkError`; anything else escaping is a bug in the frontend.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from tkc.diagnostics import TkError, decode_utf8, lone_cr_as_lf

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

__all__ = ["parse_define", "parse_space_item", "parse_tk", "read_source"]


def float_problem(text: str, value: float) -> str | None:
    """Why the decimal number `text` (read as `value`) is no number to compute with: too large
    for a double (inf, where it does not say inf), or too small (0, where its digits are not)."""
    if math.isinf(value) and "inf" not in text.lower():
        return "is too large"
    if value == 0 and any(c in "123456789" for c in re.split("[eE]", text)[0]):
        return "is too small: it rounds to 0"
    return None


def parse_define(text: str) -> tuple[str, int | bool | float]:
    """`NAME=VALUE` of `-D`: VALUE is true or false, an integer (`64`, `0x40`) or a number
    (`1e-6`, `inf`); `parse_tk` then checks it against the parameter's type. `@NAME=VALUE` pins
    a kernel annotation (`@stages=8`), which `parse_tk` checks as the annotation's argument."""
    name, sep, value = text.partition("=")
    if not sep or not name.removeprefix("@").isidentifier():
        raise TkError(f"expected NAME=VALUE or @ANNOTATION=VALUE, got {text!r}")
    if value.lower() in ("true", "false"):
        return name, value.lower() == "true"
    if not value.isascii():  # int() and float() read other scripts' digits (６４) too
        raise TkError(f"the value of {name} must be true, false or a number in ASCII digits, got {value!r}")
    try:
        return name, int(value, 0)
    except ValueError:
        pass
    try:
        number = float(value)
    except ValueError:
        raise TkError(f"the value of {name} must be true, false or a number, got {value!r}") from None
    if (problem := float_problem(value, number)) is not None:
        raise TkError(f"the value of {name}, {value}, {problem}")
    return name, number


def parse_space_item(text: str) -> tuple[str, list[int | bool | float | None]]:
    """`NAME=V1,V2,...` of a tuning space (`--space`): a parameter and the values to try, each as
    `-D` takes it; `@ANNOTATION=plan,8`: an annotation, `plan` (None) leaving it to the plan."""
    name, sep, values = text.partition("=")
    return name, [None if name.startswith("@") and value == "plan" else parse_define(f"{name}={value}")[1]
                  for value in values.split(",") if sep and value]


def parse_tk(
    source: str,
    filename: str = "<input>",
    params: Mapping[str, int | bool | float] | None = None,
    kernel: str | None = None,
) -> ModuleOp:
    """The verified tile-dialect module of `source`.

    `params` overrides compile-time parameters (`-D NAME=VALUE`); `kernel` keeps only that
    kernel (None keeps all). Unknown kernels, unknown or ill-typed overrides and every error in
    the program raise `TkError` with the file, line and column.
    """
    # lark and xDSL load here, not at import: `parse_define` serves the CLI before either is needed
    from tkc.frontend.builder import build_module
    from tkc.frontend.parser import parse_tree

    source = lone_cr_as_lf(source)
    tree = parse_tree(source, filename)
    return build_module(tree, source, filename, params, kernel)


def source_params(source: str, filename: str = "<input>", kernel: str | None = None) -> list[str]:
    """The compile-time parameters `source`'s kernels declare (`kernel`'s alone where named), read
    from the parse tree: no IR is built, so no default has to compile."""
    from lark import Token, Tree

    from tkc.frontend.builder import declared_params
    from tkc.frontend.parser import parse_tree

    tree = parse_tree(lone_cr_as_lf(source), filename)
    kernels = [k for k in tree.children if isinstance(k, Tree) and k.data == "kernel"]
    named = [k for k in kernels if kernel is None or str(next(c for c in k.children if isinstance(c, Token))) == kernel]
    return declared_params(named)


def read_source(path: str | Path) -> str:
    """The UTF-8 text of a `.tk` file; invalid UTF-8 is a TkError at the offending byte."""
    data = Path(path).read_bytes()  # OSError is the caller's to report (the CLI names the file)
    return decode_utf8(data, str(path))
