"""Tensor maps: the `cuTensorMapEncodeTiled` arguments for a TensorMapParam, and the encoding.

`spec_for` is pure (testable without a GPU): it turns the argument's shape and the param's box and
swizzle into the driver's arguments, innermost dimension first, and checks the encoder's rules
(hopper-ptx.md §3) so that a bad map is reported by tkc rather than as CUDA_ERROR_INVALID_VALUE.
`encode` calls the driver and returns the 128 bytes the kernel parameter receives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tkc.abi import TensorMapParam, row_major
from tkc.diagnostics import TkError
from tkc.dtypes import BY_NAME
from tkc.runtime.device import check, driver

# CUtensorMapSwizzle by span in bytes.
SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}
INTERLEAVE_NONE = 0
L2_PROMOTION_256B = 3
OOB_FILL_NONE = 0


@dataclass(frozen=True)
class TensorMapSpec:
    """The arguments of one cuTensorMapEncodeTiled call (enums as their integer values)."""

    data_type: int
    rank: int
    address: int | None
    """None until a host (numpy) argument has been copied to the device."""
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]
    """Bytes, dims 1..rank-1 (the innermost stride is the element size, implied)."""
    box: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: int
    swizzle: int
    l2_promotion: int
    oob_fill: int


def spec_for(
    param: TensorMapParam,
    dtype: str,
    shape: tuple[int, ...],
    address: int | None,
    strides: tuple[int, ...] | None = None,
) -> TensorMapSpec:
    """The encoder arguments for `param` over a `dtype` tensor of `shape` with these byte strides
    (None: contiguous row-major), which the launch checked: the innermost dense, the others
    multiples of 16 where their dim has more than one element."""
    es = BY_NAME[dtype].bytes
    box = tuple(param.box)
    strides = strides if strides is not None else row_major(shape, es)
    if len(shape) == 1 and len(box) == 2:
        # a rank-1 tensor is mapped as one row of a 2-D tensor (tkc/abi.py)
        shape, strides = (1, *shape), (shape[0] * es, *strides)
    rank = len(shape)
    # The ABI is the compiler's promise: a box that breaks the encoder's rules is a tkc bug.
    if not 1 <= rank <= 5:
        raise ValueError(f"tensor map {param.name}: rank {rank} is outside 1..5")
    if len(box) != rank:
        raise ValueError(f"tensor map {param.name}: box {box} has not rank {rank}")
    if param.swizzle not in SWIZZLE:
        raise ValueError(f"tensor map {param.name}: swizzle {param.swizzle} is not 0/32/64/128")
    if any(not 1 <= b <= 256 for b in box):
        raise ValueError(f"tensor map {param.name}: box {box} has an extent outside 1..256")
    inner_bytes = box[0] * es
    if inner_bytes % 16:
        raise ValueError(f"tensor map {param.name}: inner box {inner_bytes} B is not 16-aligned")
    if param.swizzle and inner_bytes > param.swizzle:
        raise ValueError(
            f"tensor map {param.name}: inner box {inner_bytes} B exceeds the "
            f"{param.swizzle}B swizzle span"
        )
    dims = tuple(reversed(shape))
    # A dim of one element (a mapped vector's one row) is never stepped over, whatever its stride
    # says, but the encoder wants a multiple of 16: its contiguous stride rounded up.
    packed = row_major(shape, es)
    steps = tuple(-(-p // 16) * 16 if d == 1 else s for s, p, d in zip(strides, packed, shape))
    global_strides = tuple(reversed(steps))[1:]
    # Dims were checked to fit in 32 bits when they were bound; strides can still overflow.
    for s in global_strides:
        if s >= 1 << 40:
            raise TkError(f"argument {param.arg}: stride {s} B is too large for a TMA tensor map")
    return TensorMapSpec(
        data_type=BY_NAME[dtype].tensor_map,
        rank=rank,
        address=address,
        global_dims=dims,
        global_strides=global_strides,
        box=box,
        element_strides=(1,) * rank,
        interleave=INTERLEAVE_NONE,
        swizzle=SWIZZLE[param.swizzle],
        l2_promotion=L2_PROMOTION_256B,
        oob_fill=OOB_FILL_NONE,
    )


def encode(spec: TensorMapSpec) -> bytes:
    """The 128-byte CUtensorMap for `spec` (the value of the `.param .b8 [128]`)."""
    assert spec.address is not None
    cu = driver()
    u64, u32 = cu.cuuint64_t, cu.cuuint32_t  # the bindings refuse plain ints in these lists
    tmap = check(
        "cuTensorMapEncodeTiled",
        cu.cuTensorMapEncodeTiled(
            cu.CUtensorMapDataType(spec.data_type),
            spec.rank,
            spec.address,
            [u64(d) for d in spec.global_dims],
            [u64(s) for s in spec.global_strides],
            [u32(b) for b in spec.box],
            [u32(e) for e in spec.element_strides],
            cu.CUtensorMapInterleave(spec.interleave),
            cu.CUtensorMapSwizzle(spec.swizzle),
            cu.CUtensorMapL2promotion(spec.l2_promotion),
            cu.CUtensorMapFloatOOBfill(spec.oob_fill),
        ),
    )
    raw = np.array(tmap.opaque, dtype=np.uint64).tobytes()
    assert len(raw) == 128
    return raw
