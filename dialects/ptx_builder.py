"""PtxBuilder: the API the lowering (and hand-written test kernels) write PTX instructions with.

A builder inserts at one point (the end of a block, or before an op: a conversion pattern
writes the code of an sm90 op just before it) and moves into the regions of the structured ops
it opens (`if_`, `loop`). Types, modifiers and the other typed properties are spelled as PTX
spells them ("u32", "approx.ftz", "lt") and become the dialect's typed attributes here; a source
may be a number wherever PTX takes an immediate (elsewhere the builder `mov`s it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TypeGuard

from xdsl.dialects.builtin import IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from tkc.dialects.ptx import (
    REG,
    SPECIAL_REGS,
    AbsOp,
    AddOp,
    AndOp,
    AssignOp,
    BarArriveOp,
    BarSyncOp,
    BraOp,
    BulkCommitOp,
    BulkWaitOp,
    ClusterBarrierOp,
    ClusterStepAttr,
    ComparisonAttr,
    CvtaOp,
    CvtOp,
    DivOp,
    ElectOp,
    EntryOp,
    Ex2Op,
    FenceOp,
    FmaOp,
    IfOp,
    LabelOp,
    LdmatrixOp,
    LdOp,
    LdParamOp,
    Lg2Op,
    LoopOp,
    MadOp,
    MapaOp,
    MaxOp,
    MemoryOrderAttr,
    MbarArriveExpectTxOp,
    MbarArriveOp,
    MbarExpectTxOp,
    MbarInitOp,
    MbarInvalOp,
    MbarTryWaitOp,
    MinOp,
    ModifiersAttr,
    ModuleOp,
    MovOp,
    MulOp,
    NegOp,
    NotOp,
    OrOp,
    PackOp,
    ParamAddrOp,
    ParamAttr,
    PopcOp,
    PrefetchTensormapOp,
    PtxInst,
    PtxTypeAttr,
    RcpOp,
    RedOp,
    ReductionAttr,
    RegisterActionAttr,
    RegOp,
    RemOp,
    RepeatIfOp,
    RetOp,
    RsqrtOp,
    SelpOp,
    SetmaxnregOp,
    SetpOp,
    ShflOp,
    ShuffleModeAttr,
    ShlOp,
    ShrOp,
    SmemBaseOp,
    SpaceAttr,
    SqrtOp,
    SregOp,
    StmatrixOp,
    StOp,
    SubOp,
    TanhOp,
    TrapOp,
    GriddepcontrolWaitOp,
    GriddepcontrolLaunchDependentsOp,
    SinOp,
    CosOp,
    TmaLoadOp,
    TmaStoreOp,
    UnpackOp,
    WgmmaCommitOp,
    WgmmaFenceOp,
    WgmmaOp,
    WgmmaWaitOp,
    XorOp,
    YieldOp,
    f32_bits,
    kind_of_type,
    reg_bits,
    reg_kind,
    type_bits,
)

Src = SSAValue | int | float
"""A source operand: a register, or a number the builder turns into an immediate (or a `mov`)."""

_STR: dict[str, StringAttr] = {}
_INT: dict[int, IntegerAttr] = {}
_TYPED: dict[tuple[type[Attribute], str], Attribute] = {}


def _s(text: str) -> StringAttr:
    attr = _STR.get(text)
    if attr is None:
        attr = _STR[text] = StringAttr(text)
    return attr


def _typed(kind: type[Attribute], text: str) -> Attribute:
    """The typed property `kind` (an enum attribute, or ModifiersAttr) spelled `text`."""
    attr = _TYPED.get((kind, text))
    if attr is None:
        if kind is ModifiersAttr:
            attr = ModifiersAttr(text)
        else:
            assert issubclass(kind, EnumAttribute)
            attr = kind(kind.enum_type(text))
        _TYPED[(kind, text)] = attr
    return attr


def _ty(text: str) -> Attribute:
    return _typed(PtxTypeAttr, text)


def _mods(text: str) -> Attribute:
    return _typed(ModifiersAttr, text)


def _i(value: int) -> IntegerAttr:
    attr = _INT.get(value)
    if attr is None:
        attr = _INT[value] = IntegerAttr(value, i64)
    return attr


_UNIT = UnitAttr()


def _is_power_of_two(value: Src) -> TypeGuard[int]:
    return isinstance(value, int) and value > 0 and value & (value - 1) == 0


def unsigned_magic(divisor: int) -> tuple[int, int]:
    """(m, shift) with x // divisor == (t + ((x - t) >> 1)) >> shift, t = (m * x) >> 32, for
    every 32-bit x and a divisor of at least 3 that is no power of two (Granlund and Montgomery,
    "Division by invariant integers using multiplication", 1994, fig. 4.1)."""
    assert divisor > 2 and not _is_power_of_two(divisor)
    log = (divisor - 1).bit_length()  # ceil(log2(divisor)), so 2^(log-1) < divisor < 2^log
    return (((1 << 32) * ((1 << log) - divisor)) // divisor + 1, log - 1)


def _bits_type_of(ty: str) -> str:
    """The b-type of an integer type: `and`, `or`, `xor` take only those."""
    return "b" + ty[1:]


def _imm_bits(ty: str, value: int | float) -> int:
    """What `imm` stores: f32 values as their bits, integers as they are."""
    return f32_bits(float(value)) if ty == "f32" else int(value)


class PtxBuilder:
    """Inserts PTX instructions at its insertion point; every method returns the new
    register(s). Types are PTX type strings ("u32", "s32", "b32", "f32", "u64", "bf16", ...);
    a source may be a number wherever PTX takes an immediate (elsewhere the builder `mov`s it).

    Module and registers
      PtxBuilder.kernel(name, params=[("A", "tensormap"), ("out", "u64"), ("n", "u32")],
                        maxntid=384, minnctapersm=1, maxnreg=None, reqnctapercluster=None)
                                -> builder; `.module`, `.entry`
      reg(kind) / regs(kind, n) undeclared register(s) of class pred|b16|b32|b64|f32
      mov(ty, src)  mov_imm(ty, value)  assign(dst, src)   (assign writes an existing register)
      pack(lo, hi) -> reg twice the size    unpack(v) -> (lo, hi)
      tmap_addr(param) -> generic b64 (mov.b64 + cvta.param)   global_ptr(param) -> b64 global
      ld_param(ty, param)  smem_base() -> b32   sreg("tid.x"|"ctaid.x"|"laneid"|...)
    Arithmetic (b may be a number)
      add sub mul div rem and_ or_ xor min max shl shr  (ty, a, b, mods=None)
      mul (integers default to .lo)   mul_wide / mul_hi (ty, a, b)   mad(ty, a, b, c, mods="lo")
      fma(ty, a, b, c, mods="rn")     neg abs not_ popc (ty, a)
      rcp sqrt rsqrt ex2 lg2 (ty, a, mods="approx.ftz")    tanh(ty, a, mods="approx")
      setp(cmp, ty, a, b) -> pred     selp(ty, a, b, p)
      cvt(dst_ty, src_ty, a, mods=None)    cvt_pack(dst_ty, lo, hi, mods="rn") -> b32/b16
    Memory
      ld(space, ty, addr, offset=0, vec=1, mods=None, sem=None, scope=None) -> reg or [regs]
                                 (sem: "acquire"|"release"|"relaxed", at scope "cta" (default) or "gpu")
      st(space, ty, addr, value_or_values, offset=0, mods=None)
      shfl(mode, a, b, clamp=None, mask=0xFFFFFFFF)    stmatrix(addr, regs, trans=False)
      ldmatrix(addr, count=4, trans=False) -> [b32]
    Synchronisation
      bar_sync(id=0, count=None)  bar_arrive(id, count)    id: 0..15 or a b32 register
      fence(kind="proxy.async.shared::cta")
      mbar_init(addr, count)  mbar_arrive(addr, count=None)  mbar_arrive_expect_tx(addr, bytes)
      mbar_expect_tx(addr, bytes)  mbar_try_wait(addr, parity) -> pred  mbar_inval(addr)
      mbar_wait(addr, parity)   the try_wait spin loop (a ptx.loop)
      griddepcontrol_wait()  griddepcontrol_launch_dependents()
    TMA
      tma_load(dst, tmap, coords, mbar)   tma_store(tmap, coords, src, reduce=None)
      bulk_commit()  bulk_wait(n=0, read=False)  prefetch_tensormap(tmap)
    wgmma
      wgmma_fence()  wgmma_commit()  wgmma_wait(n=0)
      wgmma(acc, a, b, dtype="bf16", scale_d=1, scale_a=1, scale_b=1, trans_a=0, trans_b=0)
        acc: N/2 f32 registers written in place; a: b64 descriptor or 4 b32 registers;
        b: b64 descriptor; scale_d: 0/1 or a pred register (false: D = A*B)
    Control
      setmaxnreg("inc"|"dec", n)  elect() -> pred  ret()
      label(name)  bra(name, pred=None, negate=False)  fresh_label(prefix) -> unique name
      with if_(pred, negate=False): ...   a ptx.if: the body runs only where pred (or !pred) holds
      with loop(label): ...; repeat_if(p, negate=False)   a ptx.loop: runs again while p (!p) holds
      parallel_copy(dsts, srcs)   dsts[i] = srcs[i] for all i at once (a source that is also a
                                  destination is saved first)
    """

    def __init__(self, insertion: InsertPoint):
        self.insertion = insertion
        self._label_counts: dict[str, int] = {}

    @classmethod
    def before(cls, op: Operation) -> PtxBuilder:
        return cls(InsertPoint.before(op))

    @classmethod
    def at_end(cls, block: Block) -> PtxBuilder:
        return cls(InsertPoint.at_end(block))

    @classmethod
    def kernel(cls, name: str, params: Sequence[tuple[str, str]] = (), *, maxntid: int | Sequence[int] | None = None,
               minnctapersm: int | None = None, maxnreg: int | None = None,
               reqnctapercluster: Sequence[int] | None = None, version: str = "8.0") -> PtxBuilder:
        """A new `ptx.module` holding one entry, and a builder at its start."""
        ntid = [maxntid] if isinstance(maxntid, int) else maxntid
        entry = EntryOp(name, [ParamAttr(n, k) for n, k in params], maxntid=ntid, minnctapersm=minnctapersm,
                        maxnreg=maxnreg, reqnctapercluster=reqnctapercluster)
        builder = cls.at_end(entry.body.block)
        builder.entry = entry
        builder.module = ModuleOp([entry], version=version)
        return builder

    module: ModuleOp
    entry: EntryOp
    """Set by `kernel`: what it built."""

    # ----------------------------------------------------------------- plumbing

    def _op(self, cls: type[PtxInst], args: Sequence[SSAValue], outs: Sequence[str] = (),
            props: Mapping[str, Attribute] | None = None) -> PtxInst:
        op = cls.create(operands=args, result_types=[REG[k] for k in outs], properties=dict(props or {}))
        self.insert(op)
        return op

    def insert(self, op: Operation) -> None:
        point = self.insertion
        if point.insert_before is None:
            point.block.add_op(op)
        else:
            point.block.insert_op_before(op, point.insert_before)

    def _val(self, cls: type[PtxInst], args: Sequence[SSAValue], out: str,
             props: Mapping[str, Attribute] | None = None) -> SSAValue:
        return self._op(cls, args, (out,), props).results[0]

    def _reg(self, ty: str, src: Src) -> SSAValue:
        """A register holding src (`mov`s a number)."""
        return src if isinstance(src, SSAValue) else self.mov(ty, src)

    def _arith(self, cls: type[PtxInst], ty: str, srcs: Sequence[Src], mods: str | None = None,
               out: str | None = None) -> SSAValue:
        props: dict[str, Attribute] = {"ty": _ty(ty)}
        if mods:
            props["mods"] = _mods(mods)
        *first, last = srcs
        args = [self._reg(ty, s) for s in first]
        if isinstance(last, SSAValue):
            args.append(last)
        else:
            props["imm"] = _i(_imm_bits(ty, last))
        return self._val(cls, args, out or kind_of_type(ty), props)

    # ----------------------------------------------------------------- registers and moves

    def reg(self, kind: str) -> SSAValue:
        return self._val(RegOp, (), kind)

    def regs(self, kind: str, n: int) -> list[SSAValue]:
        return [self.reg(kind) for _ in range(n)]

    def mov(self, ty: str, src: Src) -> SSAValue:
        if isinstance(src, SSAValue):
            return self._val(MovOp, (src,), kind_of_type(ty), {"ty": _ty(ty)})
        return self._val(MovOp, (), kind_of_type(ty), {"ty": _ty(ty), "imm": _i(_imm_bits(ty, src))})

    def mov_imm(self, ty: str, value: int | float) -> SSAValue:
        return self.mov(ty, value)

    def assign(self, dst: SSAValue, src: Src) -> None:
        if isinstance(src, SSAValue):
            self._op(AssignOp, (dst, src))
        else:
            self._op(AssignOp, (dst,), props={"imm": _i(_imm_bits(reg_kind(dst), src))})

    def pack(self, lo: SSAValue, hi: SSAValue) -> SSAValue:
        return self._val(PackOp, (lo, hi), {16: "b32", 32: "b64"}[reg_bits(lo)])

    def unpack(self, value: SSAValue) -> tuple[SSAValue, SSAValue]:
        half = {32: "b16", 64: "b32"}[reg_bits(value)]
        lo, hi = self._op(UnpackOp, (value,), (half, half)).results
        return lo, hi

    def tmap_addr(self, param: str) -> SSAValue:
        raw = self._val(ParamAddrOp, (), "b64", {"param": _s(param)})
        return self._val(CvtaOp, (raw,), "b64", {"space": _typed(SpaceAttr, "param")})

    def global_ptr(self, param: str) -> SSAValue:
        raw = self.ld_param("u64", param)
        return self._val(CvtaOp, (raw,), "b64", {"space": _typed(SpaceAttr, "global"), "to": _UNIT})

    def ld_param(self, ty: str, param: str) -> SSAValue:
        return self._val(LdParamOp, (), kind_of_type(ty), {"param": _s(param), "ty": _ty(ty)})

    def smem_base(self) -> SSAValue:
        return self._val(SmemBaseOp, (), "b32")

    def sreg(self, name: str) -> SSAValue:
        return self._val(SregOp, (), SPECIAL_REGS[name], {"reg": _s(name)})

    # ----------------------------------------------------------------- arithmetic

    def add(self, ty: str, a: Src, b: Src, mods: str | None = None) -> SSAValue:
        return self._arith(AddOp, ty, (a, b), mods)

    def sub(self, ty: str, a: Src, b: Src, mods: str | None = None) -> SSAValue:
        return self._arith(SubOp, ty, (a, b), mods)

    def mul(self, ty: str, a: Src, b: Src, mods: str | None = None) -> SSAValue:
        return self._arith(MulOp, ty, (a, b), mods or (None if ty.startswith("f") else "lo"))

    def mul_wide(self, ty: str, a: Src, b: Src) -> SSAValue:
        return self._arith(MulOp, ty, (a, b), "wide", {32: "b64", 16: "b32"}[type_bits(ty)])

    def mul_hi(self, ty: str, a: Src, b: Src) -> SSAValue:
        return self._arith(MulOp, ty, (a, b), "hi")

    def mad(self, ty: str, a: Src, b: Src, c: Src, mods: str = "lo") -> SSAValue:
        if mods == "wide":
            return self._arith(MadOp, ty, (a, b, c), mods, "b64")
        return self._arith(MadOp, ty, (a, b, c), mods)

    def fma(self, ty: str, a: Src, b: Src, c: Src, mods: str = "rn") -> SSAValue:
        return self._arith(FmaOp, ty, (a, b, c), mods)

    def div(self, ty: str, a: Src, b: Src, mods: str | None = None) -> SSAValue:
        # ptxas expands an unsigned div/rem by an immediate into the generic reciprocal sequence
        # (I2F + MUFU.RCP + F2I, about 20 instructions) for every divisor, powers of two included;
        # in a K loop that sat between the mbarrier wait and the wgmma issue of every iteration
        # (a 6-stage ring's stage index: GEMMs at 0.58x cuBLAS where 4 or 8 stages ran at 0.79-0.93x
        # on the H200). So the builder divides by an immediate itself, as LLVM does before PTX: a
        # shift for a power of two, a multiply-high for the others (unsigned_magic).
        if ty[0] == "u" and _is_power_of_two(b):
            return self._reg(ty, a) if b == 1 else self.shr(ty, a, b.bit_length() - 1)
        if ty == "u32" and isinstance(b, int) and b > 2:
            magic, shift = unsigned_magic(b)
            x = self._reg(ty, a)
            high = self.mul_hi(ty, x, magic)
            return self.shr(ty, self.add(ty, high, self.shr(ty, self.sub(ty, x, high), 1)), shift)
        return self._arith(DivOp, ty, (a, b), mods or ("rn" if ty == "f32" else None))

    def rem(self, ty: str, a: Src, b: Src) -> SSAValue:
        if ty[0] == "u" and _is_power_of_two(b):
            return self.and_(_bits_type_of(ty), a, b - 1)
        if ty == "u32" and isinstance(b, int) and b > 2:  # a - (a / b) * b, the division as in div
            x = self._reg(ty, a)
            return self.sub(ty, x, self.mul(ty, self.div(ty, x, b), b))
        return self._arith(RemOp, ty, (a, b))

    def and_(self, ty: str, a: Src, b: Src) -> SSAValue:
        return self._arith(AndOp, ty, (a, b))

    def or_(self, ty: str, a: Src, b: Src) -> SSAValue:
        return self._arith(OrOp, ty, (a, b))

    def xor(self, ty: str, a: Src, b: Src) -> SSAValue:
        return self._arith(XorOp, ty, (a, b))

    def min(self, ty: str, a: Src, b: Src, mods: str | None = None) -> SSAValue:
        return self._arith(MinOp, ty, (a, b), mods)

    def max(self, ty: str, a: Src, b: Src, mods: str | None = None) -> SSAValue:
        return self._arith(MaxOp, ty, (a, b), mods)

    def shl(self, ty: str, a: Src, b: Src) -> SSAValue:
        return self._arith(ShlOp, ty, (a, b))

    def shr(self, ty: str, a: Src, b: Src) -> SSAValue:
        return self._arith(ShrOp, ty, (a, b))

    def neg(self, ty: str, a: SSAValue) -> SSAValue:
        return self._arith(NegOp, ty, (a,))

    def abs(self, ty: str, a: SSAValue) -> SSAValue:
        return self._arith(AbsOp, ty, (a,))

    def not_(self, ty: str, a: SSAValue) -> SSAValue:
        return self._arith(NotOp, ty, (a,))

    def popc(self, ty: str, a: SSAValue) -> SSAValue:
        return self._arith(PopcOp, ty, (a,), out="b32")

    def rcp(self, ty: str, a: SSAValue, mods: str = "approx.ftz") -> SSAValue:
        return self._arith(RcpOp, ty, (a,), mods)

    def sqrt(self, ty: str, a: SSAValue, mods: str = "approx.ftz") -> SSAValue:
        return self._arith(SqrtOp, ty, (a,), mods)

    def rsqrt(self, ty: str, a: SSAValue, mods: str = "approx.ftz") -> SSAValue:
        return self._arith(RsqrtOp, ty, (a,), mods)

    def ex2(self, ty: str, a: SSAValue, mods: str = "approx.ftz") -> SSAValue:
        return self._arith(Ex2Op, ty, (a,), mods)

    def lg2(self, ty: str, a: SSAValue, mods: str = "approx") -> SSAValue:  # subnormal inputs kept (ftz: -inf)
        return self._arith(Lg2Op, ty, (a,), mods)

    def tanh(self, ty: str, a: SSAValue, mods: str = "approx") -> SSAValue:
        return self._arith(TanhOp, ty, (a,), mods)

    def sin(self, ty: str, a: SSAValue, mods: str = "approx") -> SSAValue:
        return self._arith(SinOp, ty, (a,), mods)

    def cos(self, ty: str, a: SSAValue, mods: str = "approx") -> SSAValue:
        return self._arith(CosOp, ty, (a,), mods)

    def setp(self, cmp: str, ty: str, a: Src, b: Src) -> SSAValue:
        props: dict[str, Attribute] = {"cmp": _typed(ComparisonAttr, cmp), "ty": _ty(ty)}
        args = [self._reg(ty, a)]
        if isinstance(b, SSAValue):
            args.append(b)
        else:
            props["imm"] = _i(_imm_bits(ty, b))
        return self._val(SetpOp, args, "pred", props)

    def selp(self, ty: str, a: Src, b: Src, p: SSAValue) -> SSAValue:
        return self._val(SelpOp, (self._reg(ty, a), self._reg(ty, b), p), kind_of_type(ty), {"ty": _ty(ty)})

    def cvt(self, dst_ty: str, src_ty: str, a: SSAValue, mods: str | None = None) -> SSAValue:
        props = {"dst": _ty(dst_ty), "src": _ty(src_ty)}
        if mods:
            props["mods"] = _mods(mods)
        return self._val(CvtOp, (a,), kind_of_type(dst_ty), props)

    def cvt_pack(self, dst_ty: str, lo: SSAValue, hi: SSAValue, mods: str = "rn") -> SSAValue:
        """Two f32 into one bf16x2/f16x2 (b32) or e4m3x2/e5m2x2 (b16, needs mods="rn.satfinite");
        `lo` lands in the low half (PTX takes the high source first)."""
        props = {"dst": _ty(dst_ty), "src": _ty("f32"), "mods": _mods(mods)}
        return self._val(CvtOp, (hi, lo), kind_of_type(dst_ty), props)

    # ----------------------------------------------------------------- memory

    def ld(self, space: str, ty: str, addr: SSAValue, offset: int = 0, vec: int = 1,
           mods: str | None = None, sem: str | None = None, scope: str | None = None) -> SSAValue | list[SSAValue]:
        props = {"space": _typed(SpaceAttr, space), "ty": _ty(ty), "offset": _i(offset)}
        if mods:
            props["mods"] = _mods(mods)
        if sem:
            props["sem"] = _typed(MemoryOrderAttr, sem)
        if scope:
            props["scope"] = _s(scope)
        outs = self._op(LdOp, (addr,), [kind_of_type(ty)] * vec, props).results
        return outs[0] if vec == 1 else list(outs)

    def st(self, space: str, ty: str, addr: SSAValue, values: SSAValue | Sequence[SSAValue], offset: int = 0,
           mods: str | None = None) -> None:
        vals = [values] if isinstance(values, SSAValue) else list(values)
        props = {"space": _typed(SpaceAttr, space), "ty": _ty(ty), "offset": _i(offset)}
        if mods:
            props["mods"] = _mods(mods)
        self._op(StOp, (addr, *vals), props=props)

    def red(self, space: str, op: str, ty: str, addr: SSAValue, value: SSAValue | int, sem: str | None = None,
            offset: int = 0, scope: str | None = None) -> None:
        props = {"space": _typed(SpaceAttr, space), "op": _typed(ReductionAttr, op), "ty": _ty(ty), "offset": _i(offset)}
        if sem:
            props["sem"] = _typed(MemoryOrderAttr, sem)
        if scope:
            props["scope"] = _s(scope)
        if isinstance(value, SSAValue):
            self._op(RedOp, (addr, value), props=props)
        else:
            self._op(RedOp, (addr,), props={**props, "imm": _i(value)})

    def shfl(self, mode: str, a: SSAValue, b: SSAValue | int, clamp: int | None = None,
             mask: int = 0xFFFFFFFF) -> SSAValue:
        props = {"mode": _typed(ShuffleModeAttr, mode), "clamp": _i(clamp if clamp is not None else (0 if mode == "up" else 0x1F)),
                 "membermask": _i(mask)}
        args = [a]
        if isinstance(b, SSAValue):
            args.append(b)
        else:
            props["imm"] = _i(b)
        return self._val(ShflOp, args, reg_kind(a), props)

    def stmatrix(self, addr: SSAValue, regs: Sequence[SSAValue], trans: bool = False) -> None:
        self._op(StmatrixOp, (addr, *regs), props={"trans": _UNIT} if trans else {})

    def ldmatrix(self, addr: SSAValue, count: int = 4, trans: bool = False) -> list[SSAValue]:
        return list(self._op(LdmatrixOp, (addr,), ["b32"] * count, {"trans": _UNIT} if trans else {}).results)

    # ----------------------------------------------------------------- synchronisation

    def _barrier(self, cls: type[PtxInst], id: SSAValue | int, count: int | None) -> None:
        props = {"count": _i(count)} if count is not None else {}
        if isinstance(id, SSAValue):
            self._op(cls, (id,), props=props)
        else:
            self._op(cls, (), props={**props, "imm": _i(id)})

    def bar_sync(self, id: SSAValue | int = 0, count: int | None = None) -> None:
        self._barrier(BarSyncOp, id, count)

    def bar_arrive(self, id: SSAValue | int, count: int) -> None:
        self._barrier(BarArriveOp, id, count)

    def fence(self, kind: str = "proxy.async.shared::cta") -> None:
        self._op(FenceOp, (), props={"kind": _s(kind)})

    def mbar_init(self, addr: SSAValue, count: int) -> None:
        self._op(MbarInitOp, (addr,), props={"count": _i(count)})

    def mbar_arrive(self, addr: SSAValue, count: int | None = None, cluster: bool = False) -> None:
        props: dict[str, Attribute] = {"count": _i(count)} if count is not None else {}
        if cluster:
            props["cluster"] = UnitAttr()
        self._op(MbarArriveOp, (addr,), props=props)

    def mapa(self, addr: SSAValue, rank: Src) -> SSAValue:
        return self._val(MapaOp, (addr, self._reg("u32", rank)), "b32")

    def cluster_sync(self) -> None:
        self._op(ClusterBarrierOp, (), props={"step": _typed(ClusterStepAttr, "arrive")})
        self._op(ClusterBarrierOp, (), props={"step": _typed(ClusterStepAttr, "wait")})

    def mbar_arrive_expect_tx(self, addr: SSAValue, nbytes: int) -> None:
        self._op(MbarArriveExpectTxOp, (addr,), props={"bytes": _i(nbytes)})

    def mbar_expect_tx(self, addr: SSAValue, nbytes: int) -> None:
        self._op(MbarExpectTxOp, (addr,), props={"bytes": _i(nbytes)})

    def mbar_try_wait(self, addr: SSAValue, parity: SSAValue | int) -> SSAValue:
        if isinstance(parity, SSAValue):
            return self._val(MbarTryWaitOp, (addr, parity), "pred")
        return self._val(MbarTryWaitOp, (addr,), "pred", {"imm": _i(parity)})

    def mbar_wait(self, addr: SSAValue, parity: SSAValue | int) -> None:
        """Spin until the phase with `parity` has completed (try_wait can time out, so loop)."""
        with self.loop("WAIT"):
            self.repeat_if(self.mbar_try_wait(addr, parity), negate=True)

    def mbar_inval(self, addr: SSAValue) -> None:
        self._op(MbarInvalOp, (addr,))

    # ----------------------------------------------------------------- TMA

    def tma_load(self, dst: SSAValue, tmap: SSAValue, coords: Sequence[SSAValue], mbar: SSAValue,
                 multicast: int | None = None) -> None:
        mask = [self.mov("b16", multicast)] if multicast is not None else []
        self.insert(TmaLoadOp.build(operands=[dst, tmap, mbar, coords, mask]))

    def tma_store(self, tmap: SSAValue, coords: Sequence[SSAValue], src: SSAValue, reduce: str | None = None) -> None:
        self._op(TmaStoreOp, (tmap, src, *coords), props={"reduce": _typed(ReductionAttr, reduce)} if reduce else {})

    def bulk_commit(self) -> None:
        self._op(BulkCommitOp, ())

    def bulk_wait(self, n: int = 0, read: bool = False) -> None:
        self._op(BulkWaitOp, (), props={"n": _i(n), "read": _UNIT} if read else {"n": _i(n)})

    def prefetch_tensormap(self, tmap: SSAValue) -> None:
        self._op(PrefetchTensormapOp, (tmap,))

    # ----------------------------------------------------------------- wgmma

    def wgmma_fence(self) -> None:
        self._op(WgmmaFenceOp, ())

    def wgmma_commit(self) -> None:
        self._op(WgmmaCommitOp, ())

    def wgmma_wait(self, n: int = 0) -> None:
        self._op(WgmmaWaitOp, (), props={"n": _i(n)})

    def wgmma(self, acc: Sequence[SSAValue], a: SSAValue | Sequence[SSAValue], b: SSAValue, dtype: str = "bf16",
              scale_d: SSAValue | int = 1, scale_a: int = 1, scale_b: int = 1, trans_a: int = 0,
              trans_b: int = 0) -> None:
        props: dict[str, Attribute] = {"n": _i(2 * len(acc)), "dtype": _ty(dtype), "scale_a": _i(scale_a),
                                       "scale_b": _i(scale_b), "trans_a": _i(trans_a), "trans_b": _i(trans_b)}
        if not isinstance(scale_d, SSAValue):
            props["scale_d"] = _i(scale_d)
        scale_reg = [scale_d] if isinstance(scale_d, SSAValue) else []
        a_regs = [a] if isinstance(a, SSAValue) else list(a)
        self.insert(WgmmaOp.build(operands=[acc, a_regs, b, scale_reg], properties=props))

    # ----------------------------------------------------------------- control

    def setmaxnreg(self, action: str, n: int) -> None:
        self._op(SetmaxnregOp, (), props={"action": _typed(RegisterActionAttr, action), "n": _i(n)})

    def elect(self) -> SSAValue:
        return self._val(ElectOp, (), "pred")

    def ret(self) -> None:
        self._op(RetOp, ())

    def trap(self) -> None:
        self._op(TrapOp, ())

    def griddepcontrol_wait(self) -> None:
        self._op(GriddepcontrolWaitOp, ())

    def griddepcontrol_launch_dependents(self) -> None:
        self._op(GriddepcontrolLaunchDependentsOp, ())

    def label(self, name: str) -> None:
        self._op(LabelOp, (), props={"label": _s(name)})

    def bra(self, name: str, pred: SSAValue | None = None, negate: bool = False) -> None:
        props: dict[str, Attribute] = {"target": _s(name)}
        if negate:
            props["negate"] = _UNIT
        self._op(BraOp, (pred,) if pred is not None else (), props=props)

    def fresh_label(self, prefix: str = "L") -> str:
        """A label name not handed out before by this builder: `PREFIX_3`."""
        n = self._label_counts.get(prefix, 0)
        self._label_counts[prefix] = n + 1
        return f"{prefix}_{n}"

    @contextmanager
    def if_(self, pred: SSAValue, negate: bool = False) -> Iterator[IfOp]:
        """A ptx.if whose body (the `with` block) runs where `pred` (or `!pred` with negate) holds."""
        op = IfOp(pred, negate=negate)
        self.insert(op)
        with self.inside(op.then_region.block):
            yield op
            self.insert(YieldOp())

    @contextmanager
    def loop(self, label: str) -> Iterator[LoopOp]:
        """A ptx.loop; the `with` block is its body and must end with `repeat_if`."""
        op = LoopOp(label)
        self.insert(op)
        with self.inside(op.body.block):
            yield op

    def repeat_if(self, pred: SSAValue, negate: bool = False) -> None:
        self.insert(RepeatIfOp(pred, negate))

    @contextmanager
    def inside(self, block: Block) -> Iterator[None]:
        """Insert at the end of `block` for the `with` block, then where the builder was."""
        outer, self.insertion = self.insertion, InsertPoint.at_end(block)
        try:
            yield
        finally:
            self.insertion = outer

    def parallel_copy(self, dsts: Sequence[SSAValue], srcs: Sequence[SSAValue]) -> None:
        """dsts[i] = srcs[i] for every i at once: a source that is also a destination is saved first."""
        pairs = [(d, s) for d, s in zip(dsts, srcs, strict=True) if d is not s]
        targets = {d for d, _ in pairs}
        saved = [(d, self.mov(reg_kind(s), s) if s in targets else s) for d, s in pairs]
        for d, s in saved:
            self.assign(d, s)
