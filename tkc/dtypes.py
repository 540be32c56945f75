"""The element types tkc knows, one row each with every spelling and size of it that the compiler
and the runtime use; every other module reads them here rather than keeping a table of its own.

  name            as `.tk`, the diagnostics, the report and the launch ABI spell it (`bf16`, `fp8e4m3`)
  ir              the xDSL builtin type of tile and sm90 IR values of the dtype
  bytes           bytes per element
  ptx             the PTX type of one element (`cvt.rn.bf16x2.f32`, `wgmma.mma_async ... .e4m3.e4m3`)
  numpy           the numpy dtype's name (ml_dtypes registers bfloat16, float8_e4m3fn and float8_e5m2)
  torch           the attribute of `torch` that is the dtype (`torch.bfloat16`)
  tensor_map      the CUtensorMapDataType of a TMA tensor map over it (fp8 has none: its bytes go as UINT8)
  dlpack          DLPack's (type code, bits, lanes): kDLFloat = 2, kDLBfloat = 4, kDLFloat8_e4m3fn = 10,
                  kDLFloat8_e5m2 = 12
  array_interface the `__cuda_array_interface__` typestr, None where the protocol has none
  saturates_at    the magnitude a conversion to it clips to (fp8: `cvt.rn.satfinite` gives the
                  largest finite value for anything larger, infinities included); None where a
                  conversion overflows to inf
  packed_math     whether PTX adds, subtracts, multiplies and takes the min or max of pairs of it in
                  one b32 (`mul.rn.bf16x2`, `add.rn.f16x2`, `max.bf16x2`) with the result f32 math
                  rounded once gives: f32 carries more than twice its significand bits plus two, so
                  rounding to f32 first never changes the second rounding (bf16, f16)
  store_add       whether `store_add` takes a tensor of it: TMA's reduce-add (cp.reduce.async.bulk.tensor
                  .add) of f32 and bf16, the sums the language promises (f16 and the integers TMA
                  also adds are not offered yet)

This module is at the bottom of the dependency order (docs/internals.md): the dialects, the passes
and the runtime all import it, and it imports nothing of tkc.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    IntegerType,
)
from xdsl.ir import Attribute

if TYPE_CHECKING:
    import numpy as np

ElementType = BFloat16Type | Float16Type | Float32Type | Float8E4M3FNType | Float8E5M2Type
"""The xDSL types a tile or fragment can hold: the `ir` column of the tile dtypes as an IRDL
constraint."""
TensorElementType = ElementType | IntegerType
"""The xDSL types a global tensor can hold: the tile dtypes and i32 (read one element at a time)."""


@dataclass(frozen=True)
class DType:
    name: str
    ir: type[ElementType] | type[IntegerType]
    bytes: int
    ptx: str
    numpy: str
    torch: str
    tensor_map: int
    dlpack: tuple[int, int, int]
    array_interface: str | None
    saturates_at: float | None = None
    store_add: bool = False
    packed_math: bool = False

    @property
    def in_tiles(self) -> bool:
        """Whether tiles hold it (i32 is only read one element at a time, as an index)."""
        return not issubclass(self.ir, IntegerType)

    def ir_type(self) -> ElementType | IntegerType:
        return IntegerType(8 * self.bytes) if issubclass(self.ir, IntegerType) else self.ir()

    def numpy_dtype(self) -> np.dtype:
        # Imported here: compiling needs no numpy (tests/unit/test_compile_startup.py), and
        # ml_dtypes registers bfloat16 and the fp8 types with numpy.
        import ml_dtypes  # noqa: F401
        import numpy as np

        return np.dtype(self.numpy)


DTYPES = (
    DType("bf16", BFloat16Type, 2, "bf16", "bfloat16", "bfloat16", 9, (4, 16, 1), None, store_add=True,
          packed_math=True),
    DType("f16", Float16Type, 2, "f16", "float16", "float16", 6, (2, 16, 1), "<f2", packed_math=True),
    DType("f32", Float32Type, 4, "f32", "float32", "float32", 7, (2, 32, 1), "<f4", store_add=True),
    DType("fp8e4m3", Float8E4M3FNType, 1, "e4m3", "float8_e4m3fn", "float8_e4m3fn", 0, (10, 8, 1), None, 448.0),
    DType("fp8e5m2", Float8E5M2Type, 1, "e5m2", "float8_e5m2", "float8_e5m2", 0, (12, 8, 1), None, 57344.0),
    DType("i32", IntegerType, 4, "s32", "int32", "int32", 3, (0, 32, 1), "<i4"),
)

BY_NAME = {d.name: d for d in DTYPES}
"""The dtypes by their tkc name."""

SCALAR_LOADS = frozenset({"i32", "f32"})
"""The dtypes a scalar load reads one element of (`load T[i] : i32` as an index, `: f32` a scalar)."""


@cache  # types are immutable and few; the lowerings ask for each value's
def of_type(element_type: Attribute) -> DType | None:
    """The dtype of an IR element type; None for a type that is none of tkc's."""
    return next((d for d in DTYPES if isinstance(element_type, d.ir) and element_type == d.ir_type()), None)
