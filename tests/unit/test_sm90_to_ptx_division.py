"""convert-sm90-to-ptx turns x / c (c a constant) into x * r only where that is x / c for every
x: exactly for c = ±0 (r = ±inf), ±inf (r = ±0) and powers of two; never where 1/c is no
normal f32 (then it emits a real div)."""

from __future__ import annotations

import math

import numpy as np
import pytest

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
