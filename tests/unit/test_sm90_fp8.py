"""fp8 register tiles without a GPU, on the one-warpgroup simulator of test_sm90_to_ptx: a
fragment packs two fp8 values per b16 register, so f32 -> fp8 (satfinite) -> shared and shared ->
fp8 -> f32 must land every element where the swizzled tile has it, rounded as the interpreter
rounds (tkc.interpreter.round_to)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from test_sm90_to_ptx import F32, run_tile_program
from xdsl.dialects.builtin import Float8E4M3FNType, Float8E5M2Type
from xdsl.ir import Attribute, Operation, SSAValue

from tkc.dialects import sm90
from tkc.interpreter import round_to

FP8 = {"e4m3": Float8E4M3FNType(), "e5m2": Float8E5M2Type()}


def _convert_to(element: Attribute) -> Callable[[Callable[[Operation], SSAValue], SSAValue], SSAValue]:
    def program(emit: Callable[[Operation], SSAValue], frag: SSAValue) -> SSAValue:
        shape = frag.type.get_shape()  # type: ignore[attr-defined]
        return emit(sm90.ConvertOp(frag, sm90.FragmentType(list(shape), element)))

    return program


def _values(rows: int, cols: int) -> np.ndarray:
    """Distinct values across the fp8 range, and some past it (satfinite clips them)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols)) * 64
    x[0, :4] = [1e6, -1e6, np.inf, -np.inf]
    return x.astype(np.float32).astype(np.float64)


@pytest.mark.parametrize("swizzle", [128, 64, 0])
@pytest.mark.parametrize("fp8", sorted(FP8))
def test_f32_to_fp8_lands_rounded_in_the_swizzled_tile(fp8: str, swizzle: int) -> None:
    element = FP8[fp8]
    src = sm90.SharedRefType([64, 128], F32, 128)
    dst = sm90.SharedRefType([64, 128], element, swizzle)
    x = _values(64, 128)
    out = run_tile_program(src, dst, 64, 0, x, _convert_to(element))
    np.testing.assert_array_equal(out, round_to(x, element))


@pytest.mark.parametrize("fp8", sorted(FP8))
def test_fp8_tile_widens_exactly_to_f32(fp8: str) -> None:
    element = FP8[fp8]
    src = sm90.SharedRefType([128, 128], element, 128)
    dst = sm90.SharedRefType([128, 128], F32, 128)
    x = round_to(_values(128, 128), element).astype(np.float64)
    out = run_tile_program(src, dst, 64, 64, x, _convert_to(F32))
    np.testing.assert_array_equal(out[64:], x[64:])
    assert np.isnan(out[:64]).all()
