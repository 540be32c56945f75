"""The .tk language frontend: `parse_tk` turns source text into a verified tile-dialect module.

`parser.py` owns the grammar (`tk.lark`) and syntax errors; `builder.py` owns the meaning
(names, types, folding, control flow) and emits the tile dialect. Every mistake in the input
is a `tkc.diagnostics.TkError`; anything else escaping is a bug in the frontend.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from tkc.frontend.builder import build_module
from tkc.frontend.parser import parse_tree, read_source

__all__ = ["parse_tk", "read_source"]


def parse_tk(
    source: str,
    filename: str = "<input>",
    params: dict[str, int | bool | float] | None = None,
    kernel: str | None = None,
) -> ModuleOp:
    """The verified tile-dialect module of `source`.

    `params` overrides compile-time parameters (`-D NAME=VALUE`); `kernel` keeps only that
    kernel (None keeps all). Unknown kernels, unknown or ill-typed overrides and every error in
    the program raise `TkError` with the file, line and column.
    """
    tree = parse_tree(source, filename)
    return build_module(tree, source, filename, params, kernel)
