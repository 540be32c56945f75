"""The type converter of convert-sm90-to-ptx and the emitter every pattern writes code with.

Types. `index`/i32 live in one b32 register, i64 in b64, f32 in f32, i1 in a predicate, a
shared-memory reference in the b32 register of its address, a tensor map in the b64 register of
its generic address. A fragment is a list of registers in the wgmma accumulator layout
(hopper-ptx.md §5): per 64-row m-block, C/2 f32 registers (C/4 packed b32 for bf16/f16, which
is exactly the register-A layout of the next wgmma), or 2 registers (rows r0 and r0+8) for a
row vector; in the band layout the same per 16-row block of a warp's quarter of the columns
(sm90.FragmentType). An mbarrier is the b32 register of its shared address; a group of mbarriers has no
register: `sm90.mbarrier_at` reads its base and offset off the `sm90.mbarrier_group` (sync.py).

A converted value is an `unrealized_conversion_cast` from its registers to its sm90 type: the
pattern of the op that defines it writes the cast, the patterns of its users read the
registers back through it, and the pass erases the casts once nothing uses them. Constants
stay `arith.constant` until then: a user takes one as an immediate where PTX has one, and
otherwise gets a `mov` right where it needs it (ptxas drops the unused ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tkc import dtypes
from tkc.dialects import ptx, sm90
from tkc.dialects.ptx_builder import PtxBuilder
from tkc.dialects.tile import element_bytes
from tkc.diagnostics import error_at

Value = SSAValue | list[SSAValue]
"""What an sm90/arith value lowers to: one register, or a fragment's registers."""


def scalar_kind(t: Attribute) -> str:
    """The PTX type a scalar of MLIR type `t` computes with (unsigned by default)."""
    if isinstance(t, IndexType):
        return "u32"
    if isinstance(t, IntegerType):
        return {1: "pred", 32: "u32", 64: "u64"}[t.width.data]
    if isinstance(t, Float32Type):
        return "f32"
    raise ValueError(f"no PTX register for {t}")


def signed(ty: str) -> str:
    return "s" + ty[1:] if ty[0] == "u" else ty


def bits_type(ty: str) -> str:
    return "b" + ty[1:] if ty[0] in "us" else ty


def log2(n: int) -> int:
    assert n > 0 and n & (n - 1) == 0, f"{n} is not a power of two"
    return n.bit_length() - 1


def dtype_name(element_type: Attribute) -> str:
    """How PTX spells an element type (`bf16`, `e4m3`: tkc.dtypes)."""
    dtype = dtypes.of_type(element_type)
    assert dtype is not None, f"{element_type} is not an element type"
    return dtype.ptx


def fragment_register(t: sm90.FragmentType) -> str:
    """The PTX type of one register of a fragment: f32, a packed pair of bf16/f16 (b32) or of
    fp8 (b16, as cvt's e4m3x2/e5m2x2 forms give and take it); a row vector holds one value per
    register, so a bf16/f16/fp8 one a b16 each (fp8 in its low byte)."""
    size = element_bytes(t.element_type)
    if t.is_row_vector:
        return "f32" if size == 4 else "b16"
    return {4: "f32", 2: "b32", 1: "b16"}[size]


def memory_type(t: sm90.FragmentType) -> str:
    """The ld/st type that moves one register of a fragment: a row vector's one value (f32, b16,
    b8), else the register (a pair of narrow values)."""
    if t.is_row_vector:
        return {4: "f32", 2: "b16", 1: "b8"}[element_bytes(t.element_type)]
    return fragment_register(t)


def constant(v: SSAValue) -> int | float | None:
    """The number a constant holds (integers as their unsigned bits), or None."""
    op = v.owner
    if not isinstance(op, arith.ConstantOp):
        return None
    value = op.value
    if isinstance(value, IntegerAttr):
        kind = scalar_kind(v.type)
        bits = int(kind[1:]) if kind != "pred" else 1
        if bits == 32 and not -(1 << 31) <= value.value.data < 1 << 32:
            # its low bits would silently be another number (a loop from 2^63 - 1 runs from -1)
            raise error_at(op, f"the index {value.value.data} does not fit in 32 bits: the GPU's index arithmetic "
                               "is 32-bit")
        return value.value.data & ((1 << bits) - 1)
    if isinstance(value, FloatAttr):
        return float(value.value.data)
    raise error_at(op, "only scalar constants lower to PTX")


def converted(v: SSAValue) -> Value:
    """The registers of a converted value (see the module docstring)."""
    cast_op = v.owner
    assert isinstance(cast_op, UnrealizedConversionCastOp), f"{v} is used before its definition was converted"
    regs = list(cast_op.inputs)
    return regs if isinstance(v.type, sm90.FragmentType) else regs[0]


def flat(values: Sequence[Value]) -> list[SSAValue]:
    return [r for v in values for r in (v if isinstance(v, list) else [v])]


class Emitter:
    """Writes the PTX of one op just before it and reads its operands' registers."""

    def __init__(self, op: Operation):
        self.op = op
        self.b = PtxBuilder.before(op)

    def value(self, v: SSAValue) -> Value:
        """v's register(s); a constant gets a `mov` right here, where it is needed."""
        number = constant(v)
        if number is None:
            return converted(v)
        ty = scalar_kind(v.type)
        if ty == "pred":
            return self.b.setp("ne", "u32", self.b.mov("u32", number), 0)
        return self.b.mov(ty, number)

    def reg(self, v: SSAValue) -> SSAValue:
        r = self.value(v)
        assert isinstance(r, SSAValue), f"{v} is a fragment, not a scalar"
        return r

    def frag(self, v: SSAValue) -> list[SSAValue]:
        r = converted(v)
        assert isinstance(r, list), f"{v} is a scalar, not a fragment"
        return r

    def src(self, v: SSAValue, ty: str) -> SSAValue | int | float:
        """An operand that may be an immediate: the constant's value, else the register."""
        number = constant(v)
        if number is None or ty == "pred":
            return self.reg(v)
        if ty[0] == "s" and isinstance(number, int) and number >> (int(ty[1:]) - 1):
            return number - (1 << int(ty[1:]))
        return number

    def int_src(self, v: SSAValue, ty: str) -> SSAValue | int:
        return cast(SSAValue | int, self.src(v, ty))

    def offset(self, base: SSAValue, index: SSAValue, scale: int = 1) -> SSAValue:
        """base + index * scale (u32), folding a constant index."""
        step = self.src(index, "u32")
        if isinstance(step, int):
            return self.b.add("u32", base, step * scale) if step else base
        return self.b.add("u32", base, self.b.mul("u32", step, scale) if scale != 1 else step)

    def fresh(self, v: SSAValue) -> Value:
        """Undefined registers shaped like v (carried values, if results)."""
        t = v.type
        if isinstance(t, sm90.FragmentType):
            return self.b.regs(fragment_register(t), t.registers_per_thread())
        return self.b.reg(ptx.kind_of_type(scalar_kind(t)))

    def assign(self, dsts: Sequence[Value], srcs: Sequence[Value]) -> None:
        self.b.parallel_copy(flat(dsts), flat(srcs))

    def as_value(self, v: SSAValue, regs: Value) -> SSAValue:
        """`v` as the sm90/arith value of `regs` (the cast its users read them through)."""
        cast_op = UnrealizedConversionCastOp.get(regs if isinstance(regs, list) else [regs], [v.type])
        self.b.insert(cast_op)
        return cast_op.results[0]

    def replace(self, rewriter: PatternRewriter, *results: Value) -> None:
        """The op is done: its results are `results`' registers (none for an op without results)."""
        rewriter.replace(self.op, [], [self.as_value(v, r) for v, r in zip(self.op.results, results, strict=True)])

    def move_into(self, source: Block, block: Block) -> None:
        """Move the ops of `source` to the end of `block`, where the walk converts them later."""
        for o in list(source.ops):
            o.detach()
            block.add_op(o)

    def thread_row(self) -> tuple[SSAValue, SSAValue]:
        """(this thread's first row inside a 64-row m-block, 16*warp + lane/4; lane % 4)."""
        b = self.b
        t = b.and_("b32", b.sreg("tid.x"), 127)
        row = b.add("u32", b.shl("b32", b.shr("u32", t, 5), 4), b.shr("u32", b.and_("b32", t, 31), 2))
        return row, b.and_("b32", t, 3)

    def thread_origin(self, t: sm90.FragmentType) -> tuple[SSAValue, SSAValue]:
        """(this thread's first row inside a block of the fragment, its first column): in the
        wgmma layout (16*warp + lane/4, 2*quad), in the band layout (lane/4, 8*warp + 2*quad)."""
        b = self.b
        if not t.is_band:
            row, quad = self.thread_row()
            return row, b.shl("b32", quad, 1)
        t_id = b.and_("b32", b.sreg("tid.x"), 127)
        lane = b.and_("b32", t_id, 31)
        column = b.add("u32", b.shl("b32", b.shr("u32", t_id, 5), 3), b.shl("b32", b.and_("b32", lane, 3), 1))
        return b.shr("u32", lane, 2), column

    def f32_frag(self, v: SSAValue) -> list[SSAValue]:
        t = cast(sm90.FragmentType, v.type)
        if not isinstance(t.element_type, Float32Type):
            raise error_at(self.op, f"{self.op.name} computes on f32 fragments; convert {t} first")
        return self.frag(v)
