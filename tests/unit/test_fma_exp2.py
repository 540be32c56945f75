"""@fma_exp2(k): every k-th register of a register tile's exp2 is computed on the FMA pipe
(sm90_to_ptx.scalars.fma_exp2_f32). Its instruction sequence, emulated here in f32 with each
instruction's rounding, stays within 1e-4 of 2^x, and the plan refuses the pin where it has no
exp2 of a register tile to apply to."""

from pathlib import Path

import numpy as np
import pytest

from tkc.diagnostics import TkError
from tkc.dialects.tile import KernelOp
from tkc.driver import compile_module, load_module, make_context
from tkc.passes.plan import KernelPlan
from tkc.passes.sm90_to_ptx.scalars import EXP2_FLOOR_SHIFTER, EXP2_POLYNOMIAL

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
F32 = np.float32


def _rounded_down(exact: np.ndarray) -> np.ndarray:
    """f32 of float64 values, rounded toward -inf (PTX's .rm)."""
    nearest = exact.astype(F32)
    return np.where(nearest.astype(np.float64) > exact, np.nextafter(nearest, F32(-np.inf)), nearest)


def _fma(a: np.ndarray, b: np.ndarray | float, c: float) -> np.ndarray:
    """fma.rn.f32 (the product is exact in float64; the sum rounds twice at worst, an ulp)."""
    return (a.astype(np.float64) * np.asarray(b, dtype=F32).astype(np.float64) + float(F32(c))).astype(F32)


def emulate(x: np.ndarray) -> np.ndarray:
    """fma_exp2_f32's instructions in order: max, min, add.rm, sub, sub, three fma, shl, add.s32."""
    clamped = np.minimum(np.fmax(x, F32(-127.0)), F32(127.99999))  # PTX max returns the operand that is no NaN
    shifted = _rounded_down(clamped.astype(np.float64) + EXP2_FLOOR_SHIFTER)
    whole = (shifted - F32(EXP2_FLOOR_SHIFTER)).astype(F32)
    fraction = (clamped - whole).astype(F32)
    c0, c1, c2, c3 = EXP2_POLYNOMIAL
    p = _fma(_fma(_fma(fraction, c3, c2), fraction, c1), fraction, c0)
    exponent = shifted.view(np.uint32) << np.uint32(23)
    return (p.view(np.uint32) + exponent).view(F32)


def test_the_polynomial_path_is_within_1e_4_of_exp2() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-126, 127.9, 200_000), np.arange(-126, 128), -np.arange(0, 126) - 0.5]).astype(F32)
    got, want = emulate(x).astype(np.float64), np.exp2(x.astype(np.float64))
    assert np.max(np.abs(got - want) / want) < 1e-4
    assert np.all(np.diff(emulate(np.linspace(-10, 10, 100_001).astype(F32))) >= 0), "not monotone"


def test_its_edges_are_clamped_and_finite() -> None:
    edges = emulate(np.array([-np.inf, -1000.0, np.nan, 0.0, 1000.0, np.inf], dtype=F32))
    assert np.all(np.isfinite(edges))
    assert edges[0] == edges[1] == edges[2] and 0 <= edges[0] < 2.0**-126  # masked scores give ~0
    assert edges[3] == 1.0 and edges[4] == edges[5] and edges[4] > 2.0**127



def test_the_pin_marks_the_register_tiles_exp2_and_the_plan_says_so() -> None:
    module = load_module(EXAMPLES / "attention_softcap.tk", None, {"@fma_exp2": 2}, make_context())
    compile_module(module, "tile")
    kernel = next(op for op in module.walk() if isinstance(op, KernelOp))
    plan = KernelPlan.of(kernel)
    assert plan.fma_exp2 == 2 and "one element in 2" in plan.reasons["fma_exp2"]
    compile_module(module, "sm90")
    text = str(module)
    assert "sm90.unary exp2" in text and "fma_every 2" in text
    assert "fma_every" not in str(compile_module(load_module(EXAMPLES / "attention_softcap.tk", None, {}, make_context()), "sm90"))


@pytest.mark.parametrize(("example", "value", "message"), [
    ("gemm.tk", 2, "@fma_exp2\\(2\\) finds no exp2 of a register tile"),
    ("attention.tk", 9, "@fma_exp2 takes 0 \\(off\\) or k in 1..8"),
])
def test_the_pin_is_refused_where_it_cannot_apply(example: str, value: int, message: str) -> None:
    with pytest.raises(TkError, match=message):
        compile_module(load_module(EXAMPLES / example, None, {"@fma_exp2": value}, make_context()), "tile")
