"""convert-sm90-to-ptx divides by constants without a division instruction. Floats: x / c
becomes x * r only where that is x / c for every x: exactly for c = ±0 (r = ±inf), ±inf (r = ±0)
and powers of two; never where 1/c is no normal f32 (then it emits a real div). Integers: an
unsigned or floor division by a constant becomes a multiply-high and shifts (ptxas would expand
div.u32 by an immediate into its generic reciprocal sequence)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tkc.dialects.ptx_builder import unsigned_magic
from tkc.passes.sm90_to_ptx.fragments import reciprocal as _reciprocal

SPECIAL_X = np.array(
    [0.0, -0.0, 1.0, -1.0, 3.0, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 1e-38, 3e38, -3e38], np.float32
)


@pytest.mark.parametrize("divisor", [0.0, -0.0, math.inf, -math.inf, math.nan, 4.0, -0.25, 2.0**-127, 2.0**126])
def test_reciprocal_is_exact_division(divisor: float) -> None:
    reciprocal = _reciprocal(divisor)
    assert reciprocal is not None
    with np.errstate(all="ignore"):
        quotient = SPECIAL_X / np.float32(divisor)
        product = SPECIAL_X * np.float32(reciprocal)
    assert np.array_equal(quotient, product, equal_nan=True)
    assert (np.signbit(quotient) == np.signbit(product))[~np.isnan(quotient)].all()


@pytest.mark.parametrize("divisor", [1e-40, -1e-40, 2.0**-128, 3e38, -2.0**127])
def test_no_reciprocal_where_it_is_not_a_normal_f32(divisor: float) -> None:
    assert _reciprocal(divisor) is None


def test_reciprocal_of_other_constants_is_the_rounded_one() -> None:
    assert _reciprocal(3.0) == 1.0 / 3.0


@pytest.mark.parametrize("divisor", [3, 5, 6, 7, 12, 96, 641, 6700417, 2**31 + 1, 2**32 - 1])
def test_unsigned_magic_divides_every_32_bit_value(divisor: int) -> None:
    """The builder's u32 division by an immediate (ptxas would expand it into its reciprocal
    sequence): exact at the ends of the range and at the multiples around them."""
    magic, shift = unsigned_magic(divisor)
    assert 0 < magic < 2**32
    top = 2**32 - 1
    rng = np.random.default_rng(divisor)
    xs = [0, 1, divisor - 1, divisor, divisor + 1, top, top - 1, 2**31, 2**31 - 1, top // divisor * divisor,
          top // divisor * divisor - 1, *rng.integers(0, 2**32, 2000, dtype=np.uint64).tolist()]
    for x in xs:
        high = (magic * x) >> 32
        assert (high + ((x - high) >> 1)) >> shift == x // divisor, x


@pytest.mark.parametrize("divisor", [3, 6, 96])
def test_floor_division_by_a_constant_is_the_complement_of_the_unsigned_one(divisor: int) -> None:
    """floor(a / d) == ~(~a // d) for a < 0: what floor_div emits around the unsigned division."""
    for a in [-(2**31), -(2**31) + 1, -divisor - 1, -divisor, -divisor + 1, -1, 0, 1, divisor, 2**31 - 1]:
        sign = -1 if a < 0 else 0
        x = (a ^ sign) & (2**32 - 1)
        assert (x // divisor) ^ sign == a // divisor, a
