"""The one dtype table (tkc/dtypes.py): its columns agree with the libraries they name, and no
other module of the compiler keeps a dtype table of its own."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import numpy as np
import pytest

from tkc import dtypes
from tkc.dialects import tile
from tkc.runtime.arrays import adapt

REPO = Path(__file__).resolve().parents[2]

PTX_ISA_TABLES = {"dialects/ptx.py"}
"""The ptx dialect's tables are of PTX instruction types (u32, b64, f16x2, e4m3 and which
register class and wgmma K each has): facts of the ISA, which a dtype reaches through `.ptx`."""

SPELLINGS = {spelling for d in dtypes.DTYPES for spelling in (d.name, d.ptx, d.numpy, d.torch, d.ir.__name__)}
"""How a module would spell a dtype in a table: a name string, or the xDSL type class."""


def spelled(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and node.value in SPELLINGS:
        return str(node.value)
    if isinstance(node, ast.Name) and node.id in SPELLINGS:
        return node.id
    if isinstance(node, ast.Attribute) and node.attr in SPELLINGS:
        return node.attr
    return None


@pytest.mark.parametrize("dtype", dtypes.DTYPES, ids=lambda d: d.name)
def test_columns_agree_with_numpy_and_the_ir(dtype: dtypes.DType) -> None:
    assert dtype.numpy_dtype().itemsize == dtype.bytes
    assert dtypes.of_type(dtype.ir_type()) is dtype
    assert tile.element_name(dtype.ir_type()) == dtype.name
    assert tile.element_bytes(dtype.ir_type()) == dtype.bytes
    info = adapt(np.zeros(4, dtype.numpy_dtype()))
    assert info is not None and info.dtype == dtype.name


def test_the_ir_constraint_is_the_table() -> None:
    assert set(typing.get_args(dtypes.ElementType)) == {d.ir for d in dtypes.DTYPES if d.in_tiles}
    assert set(typing.get_args(dtypes.TensorElementType)) == {d.ir for d in dtypes.DTYPES}
    assert dtypes.BY_NAME == {d.name: d for d in dtypes.DTYPES}


def literal_tables(path: Path) -> list[int]:
    """Lines of dict, set, list or tuple literals that spell two or more dtypes."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            items = [*node.keys, *node.values]
        elif isinstance(node, ast.Set | ast.List | ast.Tuple):
            items = list(node.elts)
        else:
            continue
        named = {spelled(item) for item in items} - {None}
        if len(named) >= 2:
            lines.append(node.lineno)
    return lines


def test_no_other_module_keeps_a_dtype_table() -> None:
    sources = [p for top in ("tkc", "dialects", "passes", "backends") for p in (REPO / top).rglob("*.py")]
    tables = {
        str(p.relative_to(REPO)): lines
        for p in sources
        if p.relative_to(REPO).as_posix() not in PTX_ISA_TABLES | {"tkc/dtypes.py"}
        and (lines := literal_tables(p))
    }
    assert tables == {}, "spell dtypes through tkc.dtypes, not in a table of your own"
