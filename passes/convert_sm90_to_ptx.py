"""convert-sm90-to-ptx: expand each `sm90.kernel` into one `ptx.entry` of PTX instructions.

What this pass decides, and why:
  - Registers. `index`/i32 live in b32 registers, i64 in b64, f32 in f32, i1 in predicates.
    A fragment is a list of registers in the wgmma accumulator layout (hopper-ptx.md §5): per
    64-row m-block, C/2 f32 registers (C/4 packed b32 for bf16/f16, which is exactly the
    register-A layout of the next wgmma), or 2 registers (rows r0 and r0+8) for a row vector.
  - Constants are materialised with a `mov` where they are defined (ptxas drops the unused
    ones) and used as immediates wherever PTX takes one.
  - Control flow. `scf.for` becomes a guarded do-while loop (labels and branches) whose
    carried values are registers written with `ptx.assign` at the back edge; `scf.if` branches
    around its regions. `sm90.roles` is one if/else on the warpgroup index, so each role's
    `setmaxnreg` is uniform per warpgroup and ptxas honours it; `sm90.single_thread` branches
    around its body (tid 0, or warp 0 of the warpgroup + `elect.sync`). Every thread meets
    again after a region.
  - wgmma. One `wgmma.fence`, K/16 (K/32 for fp8) `mma_async` per 64-row m-block, one
    `commit_group`. Shared operands get 64-bit descriptors from their `!sm90.smem` layout:
    K-major tiles step 32 bytes per k-step inside a swizzle panel and jump panels of
    `rows * span` bytes; MN-major tiles step 16 rows per k-step with LBO = the distance
    between MN panels and SBO = 8 rows. The accumulator registers are written in place (a copy
    first when the `acc` value has other uses) and nothing touches them until
    `sm90.wgmma_wait` (ptxas C7517/C7519 otherwise).
  - Shared-memory fragment stores/loads apply the TMA swizzle XOR (hopper-ptx.md §7) per
    thread once: inside a 1024-aligned panel the XOR depends only on the row mod 8, which is
    the same for all of a thread's registers, so each register costs one st/ld with an
    immediate offset (plus one add per 16-byte column chunk).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from math import copysign, inf, isfinite
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, math, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from tkc.abi import KernelABI
from tkc.dialects import ptx, sm90
from tkc.dialects.ptx import PtxBuilder
from tkc.dialects.tile import BinaryFn, ReduceFn, UnaryFn, element_bytes
from tkc.diagnostics import error_at
from tkc.passes.plan import WARPGROUP_THREADS
from tkc.passes.wgmma_layout import DESCRIPTOR_LAYOUT, Descriptor, descriptor

Value = SSAValue | list[SSAValue]
"""What an sm90/arith value lowers to: one register, or a fragment's registers."""

_F32_NORMAL = (2.0**-126, (2 - 2.0**-23) * 2.0**127)
"""The smallest and the largest normal f32 magnitudes."""


def _reciprocal(divisor: float) -> float | None:
    """r such that x * r is x / divisor (to rounding) for every x, or None: then emit a div.

    IEEE gives x / ±0 = x * ±inf and x / ±inf = x * ±0 for every x, signed zeros, infinities
    and NaN included. Otherwise 1/divisor must be a normal f32: for a subnormal divisor it
    overflows to inf (x * inf is not x / divisor), beyond 2**126 it is subnormal and has lost
    precision. The test is on the divisor as the f32 immediate of a div would hold it.
    """
    divisor = struct.unpack("<f", struct.pack("<I", ptx.f32_bits(divisor)))[0]
    if divisor == 0:
        return copysign(inf, divisor)
    reciprocal = 1.0 / divisor
    if not isfinite(divisor) or _F32_NORMAL[0] <= abs(reciprocal) <= _F32_NORMAL[1]:
        return reciprocal
    return None

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
_PARAM_KIND = {"tensormap": "tensormap", "pointer": "u64", "dim": "u32"}
_SWIZZLE_MASK = {128: 7, 64: 3, 32: 1, 0: 0}
_CMPI = {"eq": ("eq", False), "ne": ("ne", False), "slt": ("lt", True), "sle": ("le", True),
         "sgt": ("gt", True), "sge": ("ge", True), "ult": ("lt", False), "ule": ("le", False),
         "ugt": ("gt", False), "uge": ("ge", False)}
_CMPF = dict(
    zip(arith.CMPF_COMPARISON_OPERATIONS,
        [None, "eq", "gt", "ge", "lt", "le", "ne", "num", "equ", "gtu", "geu", "ltu", "leu", "neu", "nan", None])
)
_INT_BINARY: dict[type[Operation], tuple[str, bool]] = {
    arith.AddiOp: ("add", False), arith.SubiOp: ("sub", False), arith.MuliOp: ("mul", False),
    arith.DivUIOp: ("div", False), arith.DivSIOp: ("div", True), arith.RemUIOp: ("rem", False),
    arith.RemSIOp: ("rem", True), arith.MinUIOp: ("min", False), arith.MaxUIOp: ("max", False),
    arith.MinSIOp: ("min", True), arith.MaxSIOp: ("max", True), arith.AndIOp: ("and_", False),
    arith.OrIOp: ("or_", False), arith.XOrIOp: ("xor", False), arith.ShLIOp: ("shl", False),
    arith.ShRUIOp: ("shr", False), arith.ShRSIOp: ("shr", True),
}
_FLOAT_BINARY: dict[type[Operation], str] = {
    arith.AddfOp: "add", arith.SubfOp: "sub", arith.MulfOp: "mul", arith.DivfOp: "div",
    arith.MaximumfOp: "max", arith.MinimumfOp: "min", arith.MaxnumfOp: "max", arith.MinnumfOp: "min",
}
_FN_METHOD = {BinaryFn.ADD: "add", BinaryFn.SUB: "sub", BinaryFn.MUL: "mul", BinaryFn.DIV: "div",
              BinaryFn.MAX: "max", BinaryFn.MIN: "min"}
_REDUCE_METHOD = {ReduceFn.MAX: "max", ReduceFn.MIN: "min", ReduceFn.SUM: "add"}


def _scalar_kind(t: Attribute) -> str:
    """The PTX type a scalar of MLIR type `t` computes with (unsigned by default)."""
    if isinstance(t, IndexType):
        return "u32"
    if isinstance(t, IntegerType):
        return {1: "pred", 32: "u32", 64: "u64"}[t.width.data]
    if isinstance(t, Float32Type):
        return "f32"
    raise ValueError(f"no PTX register for {t}")


def _signed(ty: str) -> str:
    return "s" + ty[1:] if ty[0] == "u" else ty


def _bits_type(ty: str) -> str:
    return "b" + ty[1:] if ty[0] in "us" else ty


def _log2(n: int) -> int:
    assert n > 0 and n & (n - 1) == 0, f"{n} is not a power of two"
    return n.bit_length() - 1


def _half_bits(value: float, element_type: Attribute) -> int:
    """The 16-bit pattern of `value` in bf16 (round to nearest even) or f16."""
    if isinstance(element_type, Float16Type):
        return struct.unpack("<H", struct.pack("<e", value))[0]
    bits = ptx.f32_bits(value)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def _dtype_name(element_type: Attribute) -> str:
    if isinstance(element_type, BFloat16Type):
        return "bf16"
    if isinstance(element_type, Float16Type):
        return "f16"
    if isinstance(element_type, Float8E4M3FNType):
        return "e4m3"
    return "f32"


class _Lowering:
    """Lowers one sm90.kernel into a PtxBuilder's entry."""

    def __init__(self, kernel: sm90.KernelOp):
        abi = KernelABI.from_json(kernel.abi.data)
        params = [(p.name, _PARAM_KIND[p.kind]) for p in abi.params]
        self.b = PtxBuilder.kernel(
            kernel.sym_name.data,
            params,
            maxntid=kernel.threads.value.data,
            minnctapersm=kernel.min_ctas_per_sm.value.data,
            reqnctapercluster=[kernel.cluster.value.data, 1, 1] if kernel.cluster is not None else None,
        )
        self.b.module.attributes["tkc.abi"] = StringAttr(kernel.abi.data)
        self.values: dict[SSAValue, Value] = {}
        self.consts: dict[SSAValue, int | float] = {}
        self.kernel = kernel

    # ----------------------------------------------------------------- values

    def value(self, v: SSAValue) -> Value:
        """v's register(s); a constant gets a `mov` right here, where it is needed."""
        if v not in self.consts:
            return self.values[v]
        ty, number = _scalar_kind(v.type), self.consts[v]
        if ty == "pred":
            return self.b.setp("ne", "u32", self.b.mov("u32", number), 0)
        return self.b.mov(ty, number)

    def reg(self, v: SSAValue) -> SSAValue:
        r = self.value(v)
        assert isinstance(r, SSAValue), f"{v} is a fragment, not a scalar"
        return r

    def frag(self, v: SSAValue) -> list[SSAValue]:
        r = self.values[v]
        assert isinstance(r, list), f"{v} is a scalar, not a fragment"
        return r

    def src(self, v: SSAValue, ty: str) -> SSAValue | int | float:
        """An operand that may be an immediate: the constant's value, else the register."""
        if v not in self.consts or ty == "pred":
            return self.reg(v)
        number = self.consts[v]
        if ty[0] == "s" and isinstance(number, int) and number >> (int(ty[1:]) - 1):
            return number - (1 << int(ty[1:]))
        return number

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
            return self.b.regs("f32" if element_bytes(t.element_type) == 4 else "b32", t.registers_per_thread())
        return self.b.reg(ptx.kind_of_type(_scalar_kind(t)))

    def assign(self, dsts: Sequence[Value], srcs: Sequence[Value]) -> None:
        """Parallel copy: a source that is also a destination is saved first."""
        pairs = [
            (d, s)
            for dv, sv in zip(dsts, srcs)
            for d, s in (zip(dv, sv) if isinstance(dv, list) else [(dv, sv)])  # type: ignore[arg-type]
            if d is not s
        ]
        targets = {d for d, _ in pairs}
        saved = [(d, self.b.mov(cast(ptx.RegType, s.type).kind.data, s) if s in targets else s) for d, s in pairs]
        for d, s in saved:
            self.b.assign(d, s)

    # ----------------------------------------------------------------- walking

    def lower(self) -> ptx.ModuleOp:
        self.block(self.kernel.body.block)
        self.b.ret()
        return self.b.module

    def block(self, block: Block) -> None:
        for op in block.ops:
            if isinstance(op, scf.YieldOp):
                continue
            self.op(op)

    def op(self, op: Operation) -> None:
        handler = getattr(self, "op_" + op.name.replace(".", "_"), None)
        if handler is not None:
            handler(op)
            return
        if type(op) in _INT_BINARY:
            self.int_binary(op)
        elif type(op) in _FLOAT_BINARY:
            self.float_binary(op)
        else:
            raise error_at(op, f"convert-sm90-to-ptx cannot lower {op.name}")

    # ----------------------------------------------------------------- scalars

    def op_arith_constant(self, op: arith.ConstantOp) -> None:
        """Constants become immediates at their uses (or a `mov` there, see `value`)."""
        value = op.value
        if isinstance(value, IntegerAttr):
            bits = int(_scalar_kind(op.result.type)[1:]) if _scalar_kind(op.result.type) != "pred" else 1
            self.consts[op.result] = value.value.data & ((1 << bits) - 1)
        elif isinstance(value, FloatAttr):
            self.consts[op.result] = float(value.value.data)
        else:
            raise error_at(op, "only scalar constants lower to PTX")

    def int_binary(self, op: Operation) -> None:
        method, signed = _INT_BINARY[type(op)]
        ty = _scalar_kind(op.results[0].type)
        lhs, rhs = op.operands
        if method in ("and_", "or_", "xor", "shl"):
            ty = _bits_type(ty) if ty != "pred" else ty
        elif signed:
            ty = _signed(ty)
        self.values[op.results[0]] = getattr(self.b, method)(ty, self.reg(lhs), self.src(rhs, ty))

    def op_arith_ceildivui(self, op: arith.CeilDivUIOp) -> None:
        self.ceildiv(op, "u32")

    def op_arith_ceildivsi(self, op: arith.CeilDivSIOp) -> None:
        self.ceildiv(op, "s32")

    def ceildiv(self, op: arith.CeilDivUIOp | arith.CeilDivSIOp, ty: str) -> None:
        if ty[1:] != _scalar_kind(op.result.type)[1:]:
            ty = ty[0] + _scalar_kind(op.result.type)[1:]
        divisor = self.src(op.rhs, ty)
        bump = divisor - 1 if isinstance(divisor, int) else self.b.sub(ty, divisor, 1)
        total = self.b.add(ty, self.reg(op.lhs), bump)
        self.values[op.result] = self.b.div(ty, total, divisor)

    def op_arith_cmpi(self, op: arith.CmpiOp) -> None:
        cmp, signed = _CMPI[arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]]
        ty = _scalar_kind(op.lhs.type)
        if ty == "pred":
            if cmp not in ("eq", "ne"):
                raise error_at(op, "i1 values compare only for (in)equality")
            differ = self.b.xor("pred", self.reg(op.lhs), self.reg(op.rhs))
            self.values[op.result] = differ if cmp == "ne" else self.b.not_("pred", differ)
            return
        ty = _signed(ty) if signed else ty
        self.values[op.result] = self.b.setp(cmp, ty, self.reg(op.lhs), self.src(op.rhs, ty))

    def op_arith_cmpf(self, op: arith.CmpfOp) -> None:
        cmp = _CMPF[arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]]
        if cmp is None:
            raise error_at(op, "constant float comparisons should have been folded")
        self.values[op.result] = self.b.setp(cmp, "f32", self.reg(op.lhs), self.src(op.rhs, "f32"))

    def op_arith_select(self, op: arith.SelectOp) -> None:
        ty = _scalar_kind(op.result.type)
        cond, a, b = self.reg(op.cond), self.reg(op.lhs), self.reg(op.rhs)
        if ty == "pred":
            picked_a = self.b.and_("pred", cond, a)
            picked_b = self.b.and_("pred", self.b.not_("pred", cond), b)
            self.values[op.result] = self.b.or_("pred", picked_a, picked_b)
            return
        self.values[op.result] = self.b.selp(ty, a, b, cond)

    def cast(self, op: Operation, signed: bool) -> None:
        (source,), (result,) = op.operands, op.results
        src_ty, dst_ty = _scalar_kind(source.type), _scalar_kind(result.type)
        if source in self.consts and src_ty != "pred" and dst_ty != "pred":
            number = int(self.consts[source])
            if signed and number >> (int(src_ty[1:]) - 1):
                number -= 1 << int(src_ty[1:])
            self.consts[result] = number & ((1 << int(dst_ty[1:])) - 1)
            return
        value = self.reg(source)
        if src_ty[1:] == dst_ty[1:]:
            self.values[result] = value
            return
        if src_ty == "pred":
            self.values[result] = self.b.selp(dst_ty, -1 if signed else 1, 0, value)
            return
        if dst_ty == "pred":
            self.values[result] = self.b.setp("ne", _bits_type(src_ty), value, 0)
            return
        widening = int(dst_ty[1:]) > int(src_ty[1:])
        if signed and widening:
            src_ty, dst_ty = _signed(src_ty), _signed(dst_ty)
        self.values[result] = self.b.cvt(dst_ty, src_ty, value)

    def op_arith_index_cast(self, op: arith.IndexCastOp) -> None:
        self.cast(op, True)

    def op_arith_index_castui(self, op: arith.IndexCastUIOp) -> None:
        self.cast(op, False)

    def op_arith_extsi(self, op: arith.ExtSIOp) -> None:
        self.cast(op, True)

    def op_arith_extui(self, op: arith.ExtUIOp) -> None:
        self.cast(op, False)

    def op_arith_trunci(self, op: arith.TruncIOp) -> None:
        self.cast(op, False)

    def op_arith_sitofp(self, op: arith.SIToFPOp) -> None:
        self.values[op.result] = self.b.cvt("f32", _signed(_scalar_kind(op.input.type)), self.reg(op.input), "rn")

    def op_arith_uitofp(self, op: arith.UIToFPOp) -> None:
        self.values[op.result] = self.b.cvt("f32", _scalar_kind(op.input.type), self.reg(op.input), "rn")

    def op_arith_fptosi(self, op: arith.FPToSIOp) -> None:
        self.values[op.result] = self.b.cvt(_signed(_scalar_kind(op.result.type)), "f32", self.reg(op.input), "rzi")

    def op_arith_fptoui(self, op: arith.FPToUIOp) -> None:
        self.values[op.result] = self.b.cvt(_scalar_kind(op.result.type), "f32", self.reg(op.input), "rzi")

    def float_binary(self, op: Operation) -> None:
        method = _FLOAT_BINARY[type(op)]
        lhs, rhs = op.operands
        self.values[op.results[0]] = getattr(self.b, method)("f32", self.reg(lhs), self.src(rhs, "f32"))

    def op_arith_negf(self, op: arith.NegfOp) -> None:
        self.values[op.result] = self.b.neg("f32", self.reg(op.operand))

    def op_math_absf(self, op: math.AbsFOp) -> None:
        self.values[op.result] = self.b.abs("f32", self.reg(op.operand))

    def op_math_exp2(self, op: math.Exp2Op) -> None:
        self.values[op.result] = self.unary_f32(UnaryFn.EXP2, self.reg(op.operand))

    def op_math_exp(self, op: math.ExpOp) -> None:
        self.values[op.result] = self.unary_f32(UnaryFn.EXP, self.reg(op.operand))

    def op_math_log2(self, op: math.Log2Op) -> None:
        self.values[op.result] = self.unary_f32(UnaryFn.LOG2, self.reg(op.operand))

    def op_math_log(self, op: math.LogOp) -> None:
        self.values[op.result] = self.unary_f32(UnaryFn.LOG, self.reg(op.operand))

    def op_math_sqrt(self, op: math.SqrtOp) -> None:
        self.values[op.result] = self.unary_f32(UnaryFn.SQRT, self.reg(op.operand))

    def op_math_rsqrt(self, op: math.RsqrtOp) -> None:
        self.values[op.result] = self.unary_f32(UnaryFn.RSQRT, self.reg(op.operand))

    def unary_f32(self, fn: UnaryFn, x: SSAValue) -> SSAValue:
        b = self.b
        match fn:
            case UnaryFn.EXP2:
                return b.ex2("f32", x)
            case UnaryFn.EXP:
                return b.ex2("f32", b.mul("f32", x, LOG2E))
            case UnaryFn.LOG2:
                return b.lg2("f32", x)
            case UnaryFn.LOG:
                return b.mul("f32", b.lg2("f32", x), LN2)
            case UnaryFn.SQRT:
                return b.sqrt("f32", x, "approx")
            case UnaryFn.RSQRT:
                return b.rsqrt("f32", x, "approx")
            case UnaryFn.ABS:
                return b.abs("f32", x)
            case UnaryFn.NEG:
                return b.neg("f32", x)
            case UnaryFn.RELU:
                return b.max("f32", x, 0.0)

    # ----------------------------------------------------------------- control flow

    def op_scf_for(self, op: scf.ForOp) -> None:
        b = self.b
        body = op.body.block
        iv = b.reg("b32")
        b.assign(iv, self.src(op.lb, "u32"))
        carried = [self.fresh(arg) for arg in body.args[1:]]
        self.assign(carried, [self.value(v) for v in op.iter_args])
        self.values[body.args[0]] = iv
        for arg, value in zip(body.args[1:], carried):
            self.values[arg] = value
        top, end = b.fresh_label("LOOP"), b.fresh_label("ENDLOOP")
        ub = self.src(op.ub, "s32")
        b.bra(end, b.setp("lt", "s32", iv, ub), negate=True)
        b.label(top)
        self.block(body)
        yielded = cast(scf.YieldOp, body.last_op)
        self.assign(carried, [self.value(v) for v in yielded.operands])
        b.assign(iv, b.add("u32", iv, self.src(op.step, "u32")))
        b.bra(top, b.setp("lt", "s32", iv, ub))
        b.label(end)
        for result, value in zip(op.results, carried):
            self.values[result] = value

    def op_scf_if(self, op: scf.IfOp) -> None:
        b = self.b
        results = [self.fresh(r) for r in op.results]
        other, end = b.fresh_label("ELSE"), b.fresh_label("ENDIF")
        b.bra(other, self.reg(op.cond), negate=True)
        for region, label in ((op.true_region, end), (op.false_region, None)):
            if label is None:
                b.label(other)
            if region.blocks:
                self.block(region.block)
                yielded = region.block.last_op
                if isinstance(yielded, scf.YieldOp):
                    self.assign(results, [self.value(v) for v in yielded.operands])
            if label is not None:
                b.bra(end)
        b.label(end)
        for result, value in zip(op.results, results):
            self.values[result] = value

    def op_sm90_roles(self, op: sm90.RolesOp) -> None:
        b = self.b
        wg = b.shr("u32", b.sreg("tid.x"), 7)
        consumer, end = b.fresh_label("CONSUMER"), b.fresh_label("ENDROLES")
        b.bra(consumer, b.setp("ne", "u32", wg, 0))
        if op.producer_registers.value.data:
            b.setmaxnreg("dec", op.producer_registers.value.data)
        self.block(op.producer.block)
        b.bra(end)
        b.label(consumer)
        if op.consumer_registers.value.data:
            b.setmaxnreg("inc", op.consumer_registers.value.data)
        self.values[op.consumer.block.args[0]] = b.sub("u32", wg, 1)
        self.block(op.consumer.block)
        b.label(end)

    def op_sm90_single_thread(self, op: sm90.SingleThreadOp) -> None:
        b = self.b
        tid = b.sreg("tid.x")
        if op.scope.data == "block":
            with b.if_(b.setp("eq", "u32", tid, 0)):
                self.block(op.body.block)
            return
        if op.scope.data == "warp":
            with b.if_(b.elect()):
                self.block(op.body.block)
            return
        with b.if_(b.setp("lt", "u32", b.and_("b32", tid, 127), 32)):
            with b.if_(b.elect()):
                self.block(op.body.block)

    # ----------------------------------------------------------------- parameters and ids

    def op_sm90_tensormap(self, op: sm90.TensorMapParamOp) -> None:
        self.values[op.result] = self.b.tmap_addr(op.param.data)

    def op_sm90_dim(self, op: sm90.DimParamOp) -> None:
        self.values[op.result] = self.b.ld_param("u32", op.param.data)

    def op_sm90_pointer(self, op: sm90.PointerParamOp) -> None:
        self.values[op.result] = self.b.global_ptr(op.param.data)

    def op_sm90_block_id(self, op: sm90.BlockIdOp) -> None:
        self.values[op.result] = self.b.sreg("ctaid." + "xyz"[op.axis.value.data])

    def op_sm90_cluster_rank(self, op: sm90.ClusterRankOp) -> None:
        self.values[op.result] = self.b.sreg("cluster_ctarank")

    def op_sm90_cluster_sync(self, op: Operation) -> None:
        self.b.cluster_sync()

    def op_sm90_grid_dim(self, op: sm90.GridDimOp) -> None:
        self.values[op.result] = self.b.sreg("nctaid." + "xyz"[op.axis.value.data])

    def op_sm90_smem_base(self, op: sm90.SmemBaseOp) -> None:
        b = self.b
        self.values[op.result] = b.and_("b32", b.add("u32", b.smem_base(), 1023), 0xFFFFFC00)

    def op_sm90_smem_view(self, op: sm90.SmemViewOp) -> None:
        self.values[op.result] = self.reg(op.addr)

    # ----------------------------------------------------------------- barriers and TMA

    def op_sm90_sync_block(self, op: Operation) -> None:
        self.b.bar_sync(0)

    def op_sm90_named_barrier(self, op: sm90.NamedBarrierOp) -> None:
        self.b.bar_sync(cast(SSAValue | int, self.src(op.barrier_id, "u32")), op.threads.value.data)

    def op_sm90_fence_barrier_init(self, op: Operation) -> None:
        self.b.fence("mbarrier_init.release.cluster")
        self.b.fence("proxy.async.shared::cta")

    def op_sm90_fence_proxy_async(self, op: Operation) -> None:
        self.b.fence("proxy.async.shared::cta")

    def op_sm90_mbarrier_init(self, op: sm90.MbarrierInitOp) -> None:
        self.b.mbar_init(self.reg(op.barrier), op.count.value.data)

    def op_sm90_mbarrier_arrive(self, op: sm90.MbarrierArriveOp) -> None:
        if op.tx_bytes is not None:
            self.b.mbar_arrive_expect_tx(self.reg(op.barrier), op.tx_bytes.value.data)
        elif op.cta is not None:
            remote = self.b.mapa(self.reg(op.barrier), cast(SSAValue | int, self.src(op.cta, "u32")))
            self.b.mbar_arrive(remote, cluster=True)
        else:
            self.b.mbar_arrive(self.reg(op.barrier))

    def op_sm90_mbarrier_wait(self, op: sm90.MbarrierWaitOp) -> None:
        parity = self.src(op.parity, "u32")
        self.b.mbar_wait(self.reg(op.barrier), parity if isinstance(parity, SSAValue) else parity & 1)

    # the two u32 counters of a store-fence slot: the consumers' passes, then the producer's
    _CONSUMER_PASSES, _PRODUCER_PASSES = 0, 4

    def op_sm90_store_fence_init(self, op: sm90.StoreFenceInitOp) -> None:
        slot = self.reg(op.slot)
        self.b.st("shared", "u32", slot, self.b.mov("u32", 0), self._CONSUMER_PASSES)
        self.b.st("shared", "u32", slot, self.b.mov("u32", 0), self._PRODUCER_PASSES)

    def op_sm90_store_fence_signal(self, op: sm90.StoreFenceSignalOp) -> None:
        self.b.red("shared", "add", "u32", self.reg(op.slot), 1, sem="release.cta")

    def op_sm90_store_fence_wait(self, op: sm90.StoreFenceWaitOp) -> None:
        b = self.b
        slot = self.reg(op.slot)
        passes = b.add("u32", cast(SSAValue, b.ld("shared", "u32", slot, self._PRODUCER_PASSES)), 1)
        b.st("shared", "u32", slot, passes, self._PRODUCER_PASSES)
        top = b.fresh_label("STORES")
        b.label(top)
        done = cast(SSAValue, b.ld("shared", "u32", slot, self._CONSUMER_PASSES, sem="acquire.cta"))
        b.bra(top, b.setp("lt", "u32", done, passes))

    def op_sm90_fence_proxy_async_global(self, op: Operation) -> None:
        self.b.fence("proxy.async.global")

    def op_sm90_tma_load(self, op: sm90.TmaLoadOp) -> None:
        coords = [self.reg(c) for c in op.coords]
        multicast = op.multicast.value.data if op.multicast is not None else None
        self.b.tma_load(self.reg(op.dst), self.reg(op.tensor_map), coords, self.reg(op.barrier), multicast)

    def op_sm90_tma_store(self, op: sm90.TmaStoreOp) -> None:
        self.b.tma_store(self.reg(op.tensor_map), [self.reg(c) for c in op.coords], self.reg(op.src))

    def op_sm90_tma_store_commit(self, op: Operation) -> None:
        self.b.bulk_commit()

    def op_sm90_tma_store_wait(self, op: sm90.TmaStoreWaitOp) -> None:
        self.b.bulk_wait(op.pending.value.data, op.read is not None)

    # ----------------------------------------------------------------- wgmma

    def descriptor(self, addr: SSAValue, desc: Descriptor) -> SSAValue:
        """The 64-bit shared-memory matrix descriptor of the tile at shared address `addr`."""
        b = self.b
        field = b.and_("b32", b.shr("u32", addr, 4), 0x3FFF)
        return b.or_("b64", b.cvt("u64", "u32", field), desc.constant)

    def op_sm90_wgmma(self, op: sm90.WgmmaOp) -> None:
        b = self.b
        m, n, k = op.problem_shape()
        b_type = cast(sm90.SharedRefType, op.b.type)
        dtype = _dtype_name(b_type.element_type)
        k_step = 32 // element_bytes(b_type.element_type)
        fp8 = k_step == 32
        if fp8 and (op.transpose_a is not None or op.transpose_b is None or not isinstance(op.a.type, sm90.SharedRefType)):
            raise error_at(op, "fp8 wgmma takes both operands K-major from shared memory (mma_ABt)")
        steps, blocks = k // k_step, m // 64

        b_desc, b_offsets = self.operand_descriptor(op, b_type, self.reg(op.b), k_major=op.transpose_b is not None,
                                                    steps=steps, extent=n)
        a_type = op.a.type
        if isinstance(a_type, sm90.SharedRefType):
            assert op.a_offset is not None
            a_desc, a_offsets = self.a_descriptor(op, a_type, steps, blocks)
        else:
            a_regs = self.frag(op.a)
            per_block = len(a_regs) // blocks

        if op.acc is None:
            acc = b.regs("f32", blocks * n // 2)
        elif op.acc.has_more_than_one_use():  # acc is read elsewhere too: accumulate into a copy
            acc = [b.mov("f32", r) for r in self.frag(op.acc)]
        else:
            acc = self.frag(op.acc)
        b.wgmma_fence()
        for kk in range(steps):
            bk = b.add("u64", b_desc, b_offsets[kk] >> 4) if b_offsets[kk] else b_desc
            for mb in range(blocks):
                if isinstance(a_type, sm90.SharedRefType):
                    off = a_offsets[kk][mb]
                    a: SSAValue | list[SSAValue] = b.add("u64", a_desc, off >> 4) if off else a_desc
                else:
                    a = a_regs[mb * per_block + 4 * kk: mb * per_block + 4 * kk + 4]
                b.wgmma(
                    acc[mb * n // 2: (mb + 1) * n // 2], a, bk, dtype,
                    scale_d=0 if op.acc is None and kk == 0 else 1,
                    trans_a=int(op.transpose_a is not None),
                    trans_b=0 if fp8 else int(op.transpose_b is None),
                )
        b.wgmma_commit()
        self.values[op.result] = acc

    def operand_descriptor(self, op: Operation, t: sm90.SharedRefType, addr: SSAValue, *, k_major: bool, steps: int,
                           extent: int) -> tuple[SSAValue, list[int]]:
        """Descriptor of a whole shared operand and the byte offset of each k-step.

        K-major: the tile is [extent, K] in K panels of `span` bytes; MN-major: [K, extent] in
        MN panels of `span` bytes, each covering all K rows."""
        swizzle = t.swizzle.data
        if swizzle not in DESCRIPTOR_LAYOUT:
            raise error_at(op, "wgmma reads swizzled shared tiles only (32B, 64B or 128B)")
        span = t.panel_cols * element_bytes(t.element_type)
        desc = descriptor(t.get_shape()[0], span, "K" if k_major else "MN", element_bytes(t.element_type))
        if k_major:
            per_panel = span // desc.k_step
            offsets = [(kk // per_panel) * desc.panel_bytes + desc.k_step * (kk % per_panel) for kk in range(steps)]
            return self.descriptor(addr, desc), offsets
        return self.descriptor(addr, desc), [desc.k_step * kk for kk in range(steps)]

    def a_descriptor(self, op: sm90.WgmmaOp, t: sm90.SharedRefType, steps: int,
                     blocks: int) -> tuple[SSAValue, list[list[int]]]:
        """A from shared memory: the warpgroup's rows (K-major) or columns (transposed) start at
        `a_offset`; returns the descriptor and the byte offset of each (k-step, m-block)."""
        b = self.b
        assert op.a_offset is not None
        span = t.panel_cols * element_bytes(t.element_type)
        rows = t.get_shape()[0]
        offset = self.src(op.a_offset, "u32")
        if op.transpose_a is None:
            base = self.offset(self.reg(op.a), op.a_offset, span)
            desc, k_offsets = self.operand_descriptor(op, t, base, k_major=True, steps=steps, extent=64)
            return desc, [[ko + 64 * mb * span for mb in range(blocks)] for ko in k_offsets]
        panel_bytes = rows * span
        if t.panel_cols > 64 or 64 % t.panel_cols:
            raise error_at(op, "a transposed A operand needs MN panels of at most 64 columns")
        first = ((offset // t.panel_cols) * panel_bytes if isinstance(offset, int)
                 else b.mul("u32", b.shr("u32", offset, _log2(t.panel_cols)), panel_bytes))
        base = b.add("u32", self.reg(op.a), first)
        desc, k_offsets = self.operand_descriptor(op, t, base, k_major=False, steps=steps, extent=64)
        return desc, [[ko + (64 * mb // t.panel_cols) * panel_bytes for mb in range(blocks)] for ko in k_offsets]

    def op_sm90_wgmma_wait(self, op: sm90.WgmmaWaitOp) -> None:
        self.b.wgmma_wait(op.pending.value.data)
        self.values[op.result] = self.frag(op.acc)

    # ----------------------------------------------------------------- fragments

    def thread_row(self) -> tuple[SSAValue, SSAValue]:
        """(this thread's first row inside a 64-row m-block, 16*warp + lane/4; lane % 4)."""
        b = self.b
        t = b.and_("b32", b.sreg("tid.x"), 127)
        row = b.add("u32", b.shl("b32", b.shr("u32", t, 5), 4), b.shr("u32", b.and_("b32", t, 31), 2))
        return row, b.and_("b32", t, 3)

    def f32_frag(self, op: Operation, v: SSAValue) -> list[SSAValue]:
        t = cast(sm90.FragmentType, v.type)
        if not isinstance(t.element_type, Float32Type):
            raise error_at(op, f"{op.name} computes on f32 fragments; convert {t} first")
        return self.frag(v)

    def op_sm90_fill(self, op: sm90.FillOp) -> None:
        t = cast(sm90.FragmentType, op.result.type)
        value = float(op.value.value.data)
        if element_bytes(t.element_type) == 4:
            self.values[op.result] = [self.b.mov("f32", value) for _ in range(t.registers_per_thread())]
            return
        half = _half_bits(value, t.element_type)
        self.values[op.result] = [self.b.mov("b32", half << 16 | half) for _ in range(t.registers_per_thread())]

    def op_sm90_unary(self, op: sm90.UnaryOp) -> None:
        self.values[op.result] = [self.unary_f32(op.fn.data, x) for x in self.f32_frag(op, op.source)]

    def f32_binary(self, fn: BinaryFn, a: SSAValue | float, c: SSAValue | float) -> SSAValue:
        return getattr(self.b, _FN_METHOD[fn])("f32", a, c)

    def op_sm90_binary(self, op: sm90.BinaryOp) -> None:
        fn = op.fn.data
        if isinstance(op.lhs.type, Float32Type):
            scalar = self.src(op.lhs, "f32")
            self.values[op.result] = [self.f32_binary(fn, scalar, x) for x in self.f32_frag(op, op.rhs)]
        elif isinstance(op.rhs.type, Float32Type):
            scalar = self.src(op.rhs, "f32")
            if fn == BinaryFn.DIV and not isinstance(scalar, float):
                fn, scalar = BinaryFn.MUL, self.b.rcp("f32", scalar, "rn")
            elif fn == BinaryFn.DIV and (reciprocal := _reciprocal(scalar)) is not None:
                fn, scalar = BinaryFn.MUL, reciprocal
            self.values[op.result] = [self.f32_binary(fn, x, scalar) for x in self.f32_frag(op, op.lhs)]
        else:
            pairs = zip(self.f32_frag(op, op.lhs), self.f32_frag(op, op.rhs))
            self.values[op.result] = [self.f32_binary(fn, x, y) for x, y in pairs]

    def op_sm90_row_reduce(self, op: sm90.RowReduceOp) -> None:
        b = self.b
        method = getattr(b, _REDUCE_METHOD[op.fn.data])
        regs = self.f32_frag(op, op.source)
        rows, cols = cast(sm90.FragmentType, op.source.type).get_shape()
        per = cols // 2
        out: list[SSAValue] = []
        for mb in range(rows // 64):
            for half in (0, 1):
                vals = [regs[mb * per + i] for i in range(per) if (i >> 1) & 1 == half]
                while len(vals) > 1:
                    vals = [method("f32", x, y) for x, y in zip(vals[::2], vals[1::2])] + vals[len(vals) & ~1:]
                value = vals[0]
                for lane_mask in (1, 2):
                    value = method("f32", value, b.shfl("bfly", value, lane_mask))
                out.append(value)
        self.values[op.result] = out

    def op_sm90_row_broadcast(self, op: sm90.RowBroadcastOp) -> None:
        fn = op.fn.data
        regs, vector = self.f32_frag(op, op.source), self.f32_frag(op, op.vector)
        if fn == BinaryFn.DIV:
            fn, vector = BinaryFn.MUL, [self.b.rcp("f32", v, "rn") for v in vector]
        t = cast(sm90.FragmentType, op.source.type)
        if t.is_vector:
            self.values[op.result] = [self.f32_binary(fn, x, v) for x, v in zip(regs, vector)]
            return
        per = t.get_shape()[1] // 2
        self.values[op.result] = [
            self.f32_binary(fn, x, vector[2 * (n // per) + (((n % per) >> 1) & 1)]) for n, x in enumerate(regs)
        ]

    def op_sm90_col_reduce(self, op: sm90.ColReduceOp) -> None:
        """Column value j (column 8*(j>>1) + 2*quad + (j&1)) over the thread's registers of it,
        then over the 8 lanes sharing quad (bfly 4, 8, 16): every lane of a warp holds its warp's
        partials. All lanes write them (equal values, so equal writes) to their warp's scratch
        row; after the sync every thread reduces its columns over all rows of the scratch."""
        b = self.b
        method = getattr(b, _REDUCE_METHOD[op.fn.data])
        regs = self.f32_frag(op, op.source)
        rows, cols = cast(sm90.FragmentType, op.source.type).get_shape()
        per = cols // 2
        partials: list[SSAValue] = []
        for j in range(cols // 4):
            vals = [regs[mb * per + 4 * (j >> 1) + 2 * h + (j & 1)] for mb in range(rows // 64) for h in (0, 1)]
            while len(vals) > 1:
                vals = [method("f32", x, y) for x, y in zip(vals[::2], vals[1::2])] + vals[len(vals) & ~1:]
            value = vals[0]
            for lane_mask in (4, 8, 16):
                value = method("f32", value, b.shfl("bfly", value, lane_mask))
            partials.append(value)
        warpgroups = op.warpgroups.value.data
        barrier = cast(SSAValue | int, self.src(op.barrier_id, "u32"))
        _, quad = self.thread_row()
        warp = b.shr("u32", b.and_("b32", b.sreg("tid.x"), 127), 5)
        slot = b.add("u32", b.shl("b32", self.reg(op.warpgroup), 2), warp)
        columns = b.mad("u32", quad, 8, self.reg(op.scratch))
        own_row = b.mad("u32", slot, 4 * cols, columns)
        b.bar_sync(barrier, WARPGROUP_THREADS * warpgroups)  # the last reduction has read the scratch
        for k in range(cols // 8):
            b.st("shared", "f32", own_row, partials[2 * k: 2 * k + 2], 32 * k)
        b.bar_sync(barrier, WARPGROUP_THREADS * warpgroups)
        out: list[SSAValue] = []
        for row in range(4 * warpgroups):
            loaded = [x for k in range(cols // 8)
                      for x in cast(list[SSAValue], b.ld("shared", "f32", columns, 4 * (row * cols + 8 * k), vec=2))]
            out = [method("f32", x, y) for x, y in zip(out, loaded)] if out else loaded
        self.values[op.result] = out

    def op_sm90_col_broadcast(self, op: sm90.ColBroadcastOp) -> None:
        """Tile register i of an m-block covers column 8*(i>>2) + 2*quad + (i&1): the column
        fragment's value 2*(i>>2) + (i&1)."""
        fn = op.fn.data
        regs, vector = self.f32_frag(op, op.source), self.f32_frag(op, op.vector)
        if fn == BinaryFn.DIV:
            fn, vector = BinaryFn.MUL, [self.b.rcp("f32", v, "rn") for v in vector]
        per = cast(sm90.FragmentType, op.source.type).get_shape()[1] // 2
        self.values[op.result] = [
            self.f32_binary(fn, x, vector[2 * ((n % per) >> 2) + (n & 1)]) for n, x in enumerate(regs)
        ]

    def op_sm90_convert(self, op: sm90.ConvertOp) -> None:
        b = self.b
        src_t, dst_t = cast(sm90.FragmentType, op.source.type), cast(sm90.FragmentType, op.result.type)
        regs = self.frag(op.source)
        src_name, dst_name = _dtype_name(src_t.element_type), _dtype_name(dst_t.element_type)
        if src_name == dst_name:
            self.values[op.result] = regs
        elif src_name == "f32" and dst_name in ("bf16", "f16") and not src_t.is_row_vector:
            self.values[op.result] = [b.cvt_pack(dst_name + "x2", lo, hi) for lo, hi in zip(regs[::2], regs[1::2])]
        elif dst_name == "f32" and src_name in ("bf16", "f16") and not src_t.is_row_vector:
            halves = [half for r in regs for half in b.unpack(r)]
            self.values[op.result] = [b.cvt("f32", src_name, h) for h in halves]
        else:
            raise error_at(op, f"cannot convert {src_t} to {dst_t} in registers")

    def op_sm90_mask(self, op: sm90.MaskOp) -> None:
        """Causal: element (r, c) is masked when col0 + c > row0 + r. With r = row + dr and
        c = 2*quad + dc, that is dc - dr > row0 - col0 + row - 2*quad (one compare each)."""
        b = self.b
        regs = self.f32_frag(op, op.source)
        rows, cols = cast(sm90.FragmentType, op.source.type).get_shape()
        row, quad = self.thread_row()
        limit = b.sub("u32", b.add("u32", self.reg(op.row0), row), b.add("u32", b.shl("b32", quad, 1), self.reg(op.col0)))
        fill = b.mov("f32", float(op.fill.value.data))
        per = cols // 2
        out = []
        for n, x in enumerate(regs):
            mb, i = divmod(n, per)
            delta = 8 * (i >> 2) + (i & 1) - 64 * mb - 8 * ((i >> 1) & 1)
            out.append(b.selp("f32", fill, x, b.setp("lt", "s32", limit, delta)))
        self.values[op.result] = out

    def shared_slots(self, op: Operation, frag_type: sm90.FragmentType, ref: sm90.SharedRefType, base: SSAValue,
                     row_offset: SSAValue, col_start: int = 0) -> list[tuple[int, SSAValue, int]]:
        """(slot index, address register, immediate offset) of each column pair of the fragment
        (rank 2) that falls in the shared tile's columns (the fragment's from `col_start` on), or
        of each value (rank 1), under the tile's panels and swizzle."""
        b = self.b
        if _dtype_name(frag_type.element_type) != _dtype_name(ref.element_type):
            raise error_at(op, f"{frag_type} and {ref} differ in element type; convert the fragment first")
        eb = element_bytes(ref.element_type)
        row, quad = self.thread_row()
        r = self.offset(row, row_offset)
        if frag_type.is_vector:
            addr = b.mad("u32", r, eb, base)
            return [(2 * mb + half, addr, (64 * mb + 8 * half) * eb)
                    for mb in range(frag_type.rows // 64) for half in (0, 1)]
        rows, cols = frag_type.get_shape()
        span = ref.panel_cols * eb
        panel_bytes = ref.get_shape()[0] * span
        row_addr = b.mad("u32", r, span, base)
        col = b.shl("b32", quad, _log2(2 * eb))
        mask = _SWIZZLE_MASK[ref.swizzle.data]
        if mask:
            shift = 7 - _log2(span)
            x = b.shl("b32", b.and_("b32", b.shr("u32", r, shift) if shift > 0 else r, mask), 4)
            col = b.xor("b32", col, x)
        columns: dict[int, SSAValue] = {}
        slots = []
        window = ref.get_shape()[-1]
        for u in range(rows // 64 * cols // 4):
            mb, j = divmod(u, cols // 4)
            column = 8 * (j >> 1) - col_start
            if not 0 <= column < window:
                continue
            panel, within = divmod(column, ref.panel_cols)
            chunk = within * eb if mask else 0
            if chunk not in columns:
                columns[chunk] = b.add("u32", row_addr, b.xor("b32", col, chunk) if chunk else col)
            offset = panel * panel_bytes + (64 * mb + 8 * (j & 1)) * span + (0 if mask else within * eb)
            slots.append((u, columns[chunk], offset))
        return slots

    def op_sm90_store_fragment(self, op: sm90.StoreFragmentOp) -> None:
        t = cast(sm90.FragmentType, op.source.type)
        regs = self.frag(op.source)
        slots = self.shared_slots(op, t, cast(sm90.SharedRefType, op.dst.type), self.reg(op.dst), op.row_offset,
                                  op.col_start.value.data)
        wide = isinstance(t.element_type, Float32Type) and not t.is_vector
        for n, addr, offset in slots:
            if wide:
                self.b.st("shared", "f32", addr, regs[2 * n: 2 * n + 2], offset)
            else:
                self.b.st("shared", "f32" if t.is_vector else "b32", addr, regs[n], offset)

    def op_sm90_load_fragment(self, op: sm90.LoadFragmentOp) -> None:
        t = cast(sm90.FragmentType, op.result.type)
        if t.is_column:
            self.load_column(op, t)
            return
        slots = self.shared_slots(op, t, cast(sm90.SharedRefType, op.source.type), self.reg(op.source), op.row_offset)
        wide = isinstance(t.element_type, Float32Type) and not t.is_vector
        regs: list[SSAValue] = []
        for _, addr, offset in slots:
            if wide:
                regs += cast(list[SSAValue], self.b.ld("shared", "f32", addr, offset, vec=2))
            else:
                regs.append(cast(SSAValue, self.b.ld("shared", "f32" if t.is_vector else "b32", addr, offset)))
        self.values[op.result] = regs

    def load_column(self, op: sm90.LoadFragmentOp, t: sm90.FragmentType) -> None:
        """Every thread reads its columns 8k + 2*quad + {0, 1} of an unswizzled shared vector
        from element `row_offset` on: one packed b32 (bf16/f16) or one v2.f32 per k."""
        ref = cast(sm90.SharedRefType, op.source.type)
        if _dtype_name(t.element_type) != _dtype_name(ref.element_type) or ref.swizzle.data or len(ref.get_shape()) != 1:
            raise error_at(op, f"a column fragment {t} loads from an unswizzled vector of its dtype, not {ref}")
        b = self.b
        eb = element_bytes(ref.element_type)
        _, quad = self.thread_row()
        addr = b.mad("u32", quad, 2 * eb, self.offset(self.reg(op.source), op.row_offset, eb))
        regs: list[SSAValue] = []
        for k in range(t.rows // 8):
            if eb == 4:
                regs += cast(list[SSAValue], b.ld("shared", "f32", addr, 8 * k * eb, vec=2))
            else:
                regs.append(cast(SSAValue, b.ld("shared", "b32", addr, 8 * k * eb)))
        self.values[op.result] = regs

    def op_sm90_store_vector_global(self, op: sm90.StoreVectorGlobalOp) -> None:
        """A row vector: lane 0 of each quad writes its two rows (the quad holds the same values).
        A column vector (replicated over the warpgroup): the first quad of warp 0 writes it, each
        lane its column pairs 8*k + 2*(lane % 4)."""
        b = self.b
        regs = self.f32_frag(op, op.source)
        row, quad = self.thread_row()
        if cast(sm90.FragmentType, op.source.type).is_column:
            with b.if_(b.setp("eq", "u32", row, 0)):
                column = b.add("u32", self.reg(op.offset), b.shl("b32", quad, 1))
                addr = b.add("u64", self.reg(op.base), b.mul_wide("u32", column, 4))
                for k in range(len(regs) // 2):
                    b.st("global", "f32", addr, regs[2 * k: 2 * k + 2], 8 * k * 4)
            return
        with b.if_(b.setp("eq", "u32", quad, 0)):
            addr = b.add("u64", self.reg(op.base), b.mul_wide("u32", b.add("u32", self.reg(op.offset), row), 4))
            for n, value in enumerate(regs):
                mb, half = divmod(n, 2)
                b.st("global", "f32", addr, value, (64 * mb + 8 * half) * 4)


class ConvertSm90ToPtxPass(ModulePass):
    """Replace the module's contents with one ptx.module holding an entry per sm90.kernel."""

    name = "convert-sm90-to-ptx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = [k for k in op.body.block.ops if isinstance(k, sm90.KernelOp)]
        if len(kernels) != 1:
            raise error_at(op, f"convert-sm90-to-ptx expects one sm90.kernel at the top of the module, found {len(kernels)}")
        module = _Lowering(kernels[0]).lower()
        for old in list(op.body.block.ops):
            op.body.block.erase_op(old)
        op.body.block.add_op(module)
