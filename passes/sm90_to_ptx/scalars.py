"""convert-sm90-to-ptx patterns for scalars: arith and math on index, integers, i1 and f32.

Integer ops compute in u32/u64 (s32/s64 where the op is signed; b32/b64 for bit operations),
i1 in predicates; a constant right operand is an immediate. A cast of a constant folds to a
constant. exp and log go through ex2/lg2 with a scale (PTX has only base-2 units).
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tkc.dialects.tile import GELU_CUBIC, GELU_ERFC_COEFFICIENTS, GELU_SCALE, UnaryFn
from tkc.diagnostics import error_at
from tkc.passes.sm90_to_ptx.emitter import Emitter, bits_type, constant, log2, scalar_kind, signed

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
SQRT_HALF = 0.7071067811865476

_CMPI = {"eq": ("eq", False), "ne": ("ne", False), "slt": ("lt", True), "sle": ("le", True),
         "sgt": ("gt", True), "sge": ("ge", True), "ult": ("lt", False), "ule": ("le", False),
         "ugt": ("gt", False), "uge": ("ge", False)}
_CMPF = dict(
    zip(arith.CMPF_COMPARISON_OPERATIONS,
        [None, "eq", "gt", "ge", "lt", "le", "ne", "num", "equ", "gtu", "geu", "ltu", "leu", "neu", "nan", None])
)
IntBinaryOp = (arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.DivUIOp | arith.DivSIOp | arith.RemUIOp
               | arith.RemSIOp | arith.MinUIOp | arith.MaxUIOp | arith.MinSIOp | arith.MaxSIOp | arith.AndIOp
               | arith.OrIOp | arith.XOrIOp | arith.ShLIOp | arith.ShRUIOp | arith.ShRSIOp)
_INT_BINARY: dict[type[Operation], tuple[str, bool]] = {
    arith.AddiOp: ("add", False), arith.SubiOp: ("sub", False), arith.MuliOp: ("mul", False),
    arith.DivUIOp: ("div", False), arith.DivSIOp: ("div", True), arith.RemUIOp: ("rem", False),
    arith.RemSIOp: ("rem", True), arith.MinUIOp: ("min", False), arith.MaxUIOp: ("max", False),
    arith.MinSIOp: ("min", True), arith.MaxSIOp: ("max", True), arith.AndIOp: ("and_", False),
    arith.OrIOp: ("or_", False), arith.XOrIOp: ("xor", False), arith.ShLIOp: ("shl", False),
    arith.ShRUIOp: ("shr", False), arith.ShRSIOp: ("shr", True),
}
"""The builder method of each integer op, and whether it is signed."""
FloatBinaryOp = arith.AddfOp | arith.SubfOp | arith.MulfOp | arith.DivfOp | arith.MaxnumfOp | arith.MinnumfOp
_FLOAT_BINARY: dict[type[Operation], str] = {
    arith.AddfOp: "add", arith.SubfOp: "sub", arith.MulfOp: "mul", arith.DivfOp: "div",
    arith.MaxnumfOp: "max", arith.MinnumfOp: "min",  # max.f32 drops a NaN operand, as maxnumf does
}
CastOp = arith.IndexCastOp | arith.ExtSIOp | arith.ExtUIOp | arith.TruncIOp
_SIGNED_CASTS = (arith.IndexCastOp, arith.ExtSIOp)
MathOp = (math.AbsFOp | math.Exp2Op | math.ExpOp | math.Log2Op | math.LogOp | math.SqrtOp | math.RsqrtOp
          | math.TanhOp | math.SinOp | math.CosOp)
_MATH_FN: dict[type[Operation], UnaryFn] = {
    math.AbsFOp: UnaryFn.ABS, math.Exp2Op: UnaryFn.EXP2, math.ExpOp: UnaryFn.EXP, math.Log2Op: UnaryFn.LOG2,
    math.LogOp: UnaryFn.LOG, math.SqrtOp: UnaryFn.SQRT, math.RsqrtOp: UnaryFn.RSQRT, math.TanhOp: UnaryFn.TANH,
    math.SinOp: UnaryFn.SIN, math.CosOp: UnaryFn.COS,
}


EXP2_POLYNOMIAL = (1.0, 0.6951165, 0.22764611, 0.07706602)
"""2^f on [0, 1) as c0 + c1 f + c2 f^2 + c3 f^3, fitted to the least maximal relative error
(8.6e-5, under a bf16 rounding's 3.9e-3; ex2.approx's is about 2e-7)."""
EXP2_FLOOR_SHIFTER = 12582912.0
"""1.5 x 2^23: x + this, rounded down, is an f32 whose low mantissa bits hold floor(x) for
|x| < 2^22 (so no conversion, whose pipe is as narrow as the MUFU's)."""


def fma_exp2_f32(e: Emitter, x: SSAValue) -> SSAValue:
    """2^x on the FMA and integer pipes (the plan's fma_exp2), as FlashAttention-4 offloads some
    of softmax's exponentials from the MUFU unit: x clamped to [-127, 128) (NaN becomes -127),
    n = floor(x) by the shifter's rounded-down add, the polynomial of x - n, and n added to its
    exponent bits. Nine FMA/ALU instructions against one MUFU one; 2^-127 (a denormal) where
    ex2.approx.ftz gives 0, and 2^128 - ulp where it gives inf."""
    b = e.b
    clamped = b.min("f32", b.max("f32", x, -127.0), 127.99999)
    shifted = b.add("f32", clamped, EXP2_FLOOR_SHIFTER, "rm")
    whole = b.sub("f32", shifted, EXP2_FLOOR_SHIFTER, "rn")
    fraction = b.sub("f32", clamped, whole, "rn")
    c0, c1, c2, c3 = EXP2_POLYNOMIAL
    p = b.fma("f32", b.fma("f32", b.fma("f32", fraction, c3, c2), fraction, c1), fraction, c0)
    # the shifter's own bits shifted by 23 are zero, so this is floor(x) << 23
    exponent = b.shl("b32", b.mov("b32", shifted), 23)
    return b.mov("f32", b.add("s32", b.mov("b32", p), exponent))


def unary_f32(e: Emitter, fn: UnaryFn, x: SSAValue) -> SSAValue:
    """`fn` of one f32 register (shared with the fragment patterns)."""
    b = e.b
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
        case UnaryFn.TANH:
            return b.tanh("f32", x)
        case UnaryFn.SIGMOID:
            return _sigmoid(e, x)
        case UnaryFn.SILU:
            return b.mul("f32", x, _sigmoid(e, x))
        case UnaryFn.GELU_TANH:
            # x/2 (1 + tanh(GELU_SCALE x (1 + GELU_CUBIC x^2)))
            inner = b.mul("f32", b.mul("f32", x, GELU_SCALE), b.fma("f32", b.mul("f32", x, x), GELU_CUBIC, 1.0))
            half = b.mul("f32", x, 0.5)
            return b.fma("f32", b.tanh("f32", inner), half, half)
        case UnaryFn.SOFTPLUS:
            # max(x, 0) + log(1 + exp(-|x|)): no overflow for large |x|
            tail = b.add("f32", b.ex2("f32", b.mul("f32", b.abs("f32", x), -LOG2E)), 1.0)
            return b.fma("f32", b.lg2("f32", tail), LN2, b.max("f32", x, 0.0))
        case UnaryFn.GELU:
            return _gelu(e, x)
        case UnaryFn.SIN:
            return b.sin("f32", x)
        case UnaryFn.COS:
            return b.cos("f32", x)
        case UnaryFn.NOT:
            return b.selp("f32", 1.0, 0.0, b.setp("eq", "f32", x, 0.0))


def _gelu(e: Emitter, x: SSAValue) -> SSAValue:
    """x (1 - q/2) for x >= 0, x q/2 below, q = erfc(|x| / sqrt(2)) by GELU_ERFC_COEFFICIENTS' fit;
    x = +inf gives inf (q = 0), as the exact form does."""
    b = e.b
    z = b.mul("f32", b.abs("f32", x), SQRT_HALF)
    t = b.rcp("f32", b.fma("f32", z, 0.5, 1.0))
    *inner, last = GELU_ERFC_COEFFICIENTS
    poly: SSAValue | float = last
    for coefficient in reversed(inner):
        poly = b.fma("f32", t, poly, coefficient)
    exponent = b.fma("f32", b.neg("f32", z), z, poly)
    half_q = b.mul("f32", b.mul("f32", t, b.ex2("f32", b.mul("f32", exponent, LOG2E))), 0.5)
    factor = b.selp("f32", b.sub("f32", 1.0, half_q), half_q, b.setp("ge", "f32", x, 0.0))
    return b.mul("f32", x, factor)


def _sigmoid(e: Emitter, x: SSAValue) -> SSAValue:
    """1 / (1 + exp(-x)) as 1/2 + tanh(x/2)/2: one MUFU op, no overflow."""
    b = e.b
    return b.fma("f32", b.tanh("f32", b.mul("f32", x, 0.5)), 0.5, 0.5)


class CheckConstant(RewritePattern):
    """Constants stay until their users are converted (emitter docstring); only scalars can."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter) -> None:
        constant(op.result)


def floor_div(e: Emitter, a: SSAValue, d: int | float | SSAValue) -> SSAValue:
    """a / d rounded toward -inf on 32-bit signed values (the language's `/` on indices, which
    may be negative): an arithmetic shift for a power of two; for another positive constant,
    ~(~a / d) where a < 0 (which is floor(a / d), ~a = -a - 1 being >= 0) with the unsigned
    division by a constant the builder strength-reduces (ptxas would not), a sign mask selecting
    the complements; else the truncating div.s32 less one where the remainder and the divisor
    differ in sign."""
    b = e.b
    assert not isinstance(d, float), "an index divisor is an integer"
    if isinstance(d, int) and d > 0 and d & (d - 1) == 0:
        return a if d == 1 else b.shr("s32", a, log2(d))
    if isinstance(d, int) and d > 0:
        sign = b.shr("s32", a, 31)  # -1 where a < 0, else 0
        return b.xor("b32", b.div("u32", b.xor("b32", a, sign), d), sign)
    q = b.div("s32", a, d)
    r = b.sub("s32", a, b.mul("s32", q, d))
    wrong_side = b.and_("pred", b.setp("ne", "s32", r, 0), b.setp("lt", "s32", b.xor("b32", r, d), 0))
    return b.sub("s32", q, b.selp("s32", 1, 0, wrong_side))


class LowerFloorDiv(RewritePattern):
    """`arith.floordivsi`, the frontend's `/` on indices (and, through it, `%`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.FloorDivSIOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        if scalar_kind(op.result.type) != "u32":
            raise error_at(op, "floor division lowers for 32-bit integers (indices) only")
        e.replace(rewriter, floor_div(e, e.reg(op.lhs), e.src(op.rhs, "s32")))


class LowerIntBinary(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IntBinaryOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        method, is_signed = _INT_BINARY[type(op)]
        ty = scalar_kind(op.result.type)
        if method in ("and_", "or_", "xor", "shl"):
            ty = bits_type(ty) if ty != "pred" else ty
        elif is_signed:
            ty = signed(ty)
        e.replace(rewriter, getattr(e.b, method)(ty, e.reg(op.lhs), e.src(op.rhs, ty)))


class LowerCeilDiv(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CeilDivUIOp | arith.CeilDivSIOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        ty = ("s" if isinstance(op, arith.CeilDivSIOp) else "u") + scalar_kind(op.result.type)[1:]
        divisor = e.src(op.rhs, ty)
        if ty == "s32" and not (isinstance(divisor, int) and divisor > 0):
            # the language's ceildiv(a, d) = -floor(-a / d), a run-time divisor's sign unknown
            e.replace(rewriter, e.b.neg(ty, floor_div(e, e.b.neg(ty, e.reg(op.lhs)), divisor)))
            return
        bump = divisor - 1 if isinstance(divisor, int) else e.b.sub(ty, divisor, 1)
        total = e.b.add(ty, e.reg(op.lhs), bump)
        if ty == "s32":  # floor((a + d - 1) / d) for a positive d, negative a included
            e.replace(rewriter, floor_div(e, total, divisor))
            return
        e.replace(rewriter, e.b.div(ty, total, divisor))


class LowerCmpi(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        cmp, is_signed = _CMPI[arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]]
        ty = scalar_kind(op.lhs.type)
        if ty == "pred":
            if cmp not in ("eq", "ne"):
                raise error_at(op, "i1 values compare only for (in)equality")
            differ = e.b.xor("pred", e.reg(op.lhs), e.reg(op.rhs))
            e.replace(rewriter, differ if cmp == "ne" else e.b.not_("pred", differ))
            return
        ty = signed(ty) if is_signed else ty
        e.replace(rewriter, e.b.setp(cmp, ty, e.reg(op.lhs), e.src(op.rhs, ty)))


class LowerCmpf(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        cmp = _CMPF[arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]]
        if cmp is None:
            raise error_at(op, "constant float comparisons should have been folded")
        e.replace(rewriter, e.b.setp(cmp, "f32", e.reg(op.lhs), e.src(op.rhs, "f32")))


class LowerSelect(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        ty = scalar_kind(op.result.type)
        cond, a, b = e.reg(op.cond), e.reg(op.lhs), e.reg(op.rhs)
        if ty == "pred":
            picked_a = e.b.and_("pred", cond, a)
            picked_b = e.b.and_("pred", e.b.not_("pred", cond), b)
            e.replace(rewriter, e.b.or_("pred", picked_a, picked_b))
            return
        e.replace(rewriter, e.b.selp(ty, a, b, cond))


class LowerIntCast(RewritePattern):
    """Same width: the register itself; i1 <-> integer: selp/setp; otherwise a cvt (signed when
    sign-extending)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        is_signed = isinstance(op, _SIGNED_CASTS)
        source, result = op.input, op.result
        src_ty, dst_ty = scalar_kind(source.type), scalar_kind(result.type)
        number = constant(source)
        if number is not None and src_ty != "pred" and dst_ty != "pred":
            number = int(number)
            if is_signed and number >> (int(src_ty[1:]) - 1):
                number -= 1 << int(src_ty[1:])
            folded = arith.ConstantOp(IntegerAttr(number & ((1 << int(dst_ty[1:])) - 1), result.type))
            rewriter.replace(op, folded)
            return
        e = Emitter(op)
        value = e.reg(source)
        if src_ty[1:] == dst_ty[1:]:
            e.replace(rewriter, value)
        elif src_ty == "pred":
            e.replace(rewriter, e.b.selp(dst_ty, -1 if is_signed else 1, 0, value))
        elif dst_ty == "pred":
            e.replace(rewriter, e.b.setp("ne", bits_type(src_ty), value, 0))
        else:
            if is_signed and int(dst_ty[1:]) > int(src_ty[1:]):
                src_ty, dst_ty = signed(src_ty), signed(dst_ty)
            e.replace(rewriter, e.b.cvt(dst_ty, src_ty, value))


class LowerIntToFloat(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SIToFPOp | arith.UIToFPOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        ty = scalar_kind(op.input.type)
        e.replace(rewriter, e.b.cvt("f32", signed(ty) if isinstance(op, arith.SIToFPOp) else ty, e.reg(op.input), "rn"))


class LowerFloatToInt(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.FPToSIOp | arith.FPToUIOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        ty = scalar_kind(op.result.type)
        e.replace(rewriter, e.b.cvt(signed(ty) if isinstance(op, arith.FPToSIOp) else ty, "f32", e.reg(op.input), "rzi"))


class LowerFloatBinary(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FloatBinaryOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        method = _FLOAT_BINARY[type(op)]
        e.replace(rewriter, getattr(e.b, method)("f32", e.reg(op.lhs), e.src(op.rhs, "f32")))


class LowerNegf(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.replace(rewriter, e.b.neg("f32", e.reg(op.operand)))


class LowerMath(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MathOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.replace(rewriter, unary_f32(e, _MATH_FN[type(op)], e.reg(op.operand)))


PATTERNS: list[RewritePattern] = [
    CheckConstant(), LowerIntBinary(), LowerFloorDiv(), LowerCeilDiv(), LowerCmpi(), LowerCmpf(), LowerSelect(), LowerIntCast(),
    LowerIntToFloat(), LowerFloatToInt(), LowerFloatBinary(), LowerNegf(), LowerMath(),
]
