"""Parse tree → tile dialect, as docs/internals.md ("Language → tile IR") specifies.

Values during building are either compile-time Python numbers (`int`, `float`, `bool`: params,
literals, builtin constants and everything computed only from them, folded as we go) or SSA
values: `index` (block ids, loop counters, dims and arithmetic on them), `i1` (runtime
conditions), `f32` (runtime scalars), tiles/vectors, and the kernel's global tensors. A
compile-time number becomes an `arith.constant` only where a runtime value needs it.

`var`s are the only mutable names: a loop or a runtime `if` that assigns an outer `var`
carries it through `scf.for` iter_args or `scf.if` results. A branch whose condition is known at
compile time is built inline; the untaken branch is still built (into a scratch block that is
then dropped), so its mistakes are reported whatever the parameters are.

Every op gets the `FileLineColLoc` of the construct that made it, and every mistake in the
program becomes a `TkError` at the offending token.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeGuard, cast

from lark import Token, Tree
from xdsl.dialects import arith, scf
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FileLineColLoc,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from tkc import dtypes
from tkc.diagnostics import TkError, did_you_mean, error_at, location_of
from tkc.dialects import tile
from tkc.dialects.tile import MAX_PINNED_STAGES, Axis, BinaryFn, GlobalType, ReduceFn, UnaryFn
from tkc.dtypes import BY_NAME
from tkc.frontend import float_problem
from tkc.frontend.parser import MAX_DEPTH

Number = int | float | bool
Value = Number | SSAValue
Node = Tree | Token

CONSTANTS: dict[str, float] = {"log2e": math.log2(math.e), "ln2": math.log(2.0), "inf": math.inf}
FILLS = {"zero": 0.0, "one": 1.0, "neg_infty": -math.inf, "pos_infty": math.inf}

UNARY: dict[str, tuple[UnaryFn, Callable[[float], float], Callable[[SSAValue], Operation] | None]] = {
    "exp": (UnaryFn.EXP, math.exp, xmath.ExpOp),
    "exp2": (UnaryFn.EXP2, lambda x: 2.0**x, xmath.Exp2Op),
    "log": (UnaryFn.LOG, math.log, xmath.LogOp),
    "log2": (UnaryFn.LOG2, math.log2, xmath.Log2Op),
    "sqrt": (UnaryFn.SQRT, math.sqrt, xmath.SqrtOp),
    "rsqrt": (UnaryFn.RSQRT, lambda x: 1.0 / math.sqrt(x), xmath.RsqrtOp),
    "abs": (UnaryFn.ABS, abs, xmath.AbsFOp),
    "relu": (UnaryFn.RELU, lambda x: max(x, 0), None),
    "tanh": (UnaryFn.TANH, math.tanh, xmath.TanhOp),
    "sin": (UnaryFn.SIN, math.sin, xmath.SinOp),
    "cos": (UnaryFn.COS, math.cos, xmath.CosOp),
    "sigmoid": (UnaryFn.SIGMOID, lambda x: 0.5 + 0.5 * math.tanh(0.5 * x), None),
    "silu": (UnaryFn.SILU, lambda x: x * (0.5 + 0.5 * math.tanh(0.5 * x)), None),
    "gelu_tanh": (
        UnaryFn.GELU_TANH,
        lambda x: 0.5 * x * (1 + math.tanh(tile.GELU_SCALE * (x + tile.GELU_CUBIC * x**3))),
        None,
    ),
    "softplus": (UnaryFn.SOFTPLUS, lambda x: max(x, 0.0) + math.log1p(math.exp(-abs(x))), None),
    "gelu": (UnaryFn.GELU, lambda x: 0.5 * x * math.erfc(-x / math.sqrt(2.0)), None),
}
"""name -> (tile fn, its value on a number, the math op of an f32 scalar; None: only relu has a
scalar form then, the rest apply to tiles and vectors)."""
REDUCTIONS = {f"{axis}_{fn}": (ReduceFn(fn), Axis(axis)) for axis in ("row", "col") for fn in ("max", "min", "sum")}
ELEMENT_COORD = "elem"
"""`elem(x)` as a load or store coordinate: the tile starts at element x along that dim."""
BROADCASTS = {
    f"{fn}_{axis}": (BinaryFn(fn), Axis(axis)) for axis in ("row", "col") for fn in ("add", "sub", "mul", "div")
}
SCANS = {"row_cumsum": Axis.ROW, "col_cumsum": Axis.COL, "cumsum": None}
"""name -> the axis a tile is scanned along (None: a vector's only axis)."""
VECTOR_REDUCTIONS = {fn: ReduceFn(fn) for fn in ("max", "min", "sum")}
"""`sum(v)`, and `max(v)`, `min(v)` of one argument: a vector reduced to an f32 scalar."""
MMAS = {"mma_AB": (False, False), "mma_ABt": (False, True), "mma_AtB": (True, False), "mma_AtBt": (True, True)}
POSITIONS = {"row_index": Axis.ROW, "col_index": Axis.COL}
BUILTIN_FUNCTIONS = sorted(
    {*UNARY, *VECTOR_REDUCTIONS, "pow", "ceildiv", *REDUCTIONS, *SCANS, *BROADCASTS, *MMAS, "causal_mask", "bounds_mask",
     *POSITIONS, "where", ELEMENT_COORD}
)

TILE_FNS = {
    "+": BinaryFn.ADD,
    "-": BinaryFn.SUB,
    "*": BinaryFn.MUL,
    "/": BinaryFn.DIV,
    "max": BinaryFn.MAX,
    "min": BinaryFn.MIN,
    "<": BinaryFn.LT,
    "<=": BinaryFn.LE,
    ">": BinaryFn.GT,
    ">=": BinaryFn.GE,
    "==": BinaryFn.EQ,
    "!=": BinaryFn.NE,
    "and": BinaryFn.AND,
    "or": BinaryFn.OR,
}
"""Element-wise tile ops by operator: arithmetic, and conditions (1 where true, 0 where not)."""
INDEX_OPS: dict[str, Callable[[SSAValue, SSAValue], Operation]] = {
    # indices are integers and may be negative: `/` rounds toward -inf and `%` (a - (a / b) * b,
    # index_remainder) takes the divisor's sign, as in Python and the interpreter
    "+": arith.AddiOp,
    "-": arith.SubiOp,
    "*": arith.MuliOp,
    "/": arith.FloorDivSIOp,
    "max": arith.MaxSIOp,
    "min": arith.MinSIOp,
}
FLOAT_OPS: dict[str, Callable[[SSAValue, SSAValue], Operation]] = {
    "+": arith.AddfOp,
    "-": arith.SubfOp,
    "*": arith.MulfOp,
    "/": arith.DivfOp,
    "max": arith.MaxnumfOp,  # the GPU's max.f32: a NaN operand gives the other one
    "min": arith.MinnumfOp,
}
CMPI = {"==": "eq", "!=": "ne", "<": "slt", "<=": "sle", ">": "sgt", ">=": "sge"}
"""Index comparisons are signed: an index is an integer, and a difference (`S - L`) may be
negative (the GPU's index registers are 32-bit, the runtime's dims below 2^31)."""
CMPF = {"==": "oeq", "!=": "one", "<": "olt", "<=": "ole", ">": "ogt", ">=": "oge"}

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
F32_MAX = 3.4028234663852886e38
KERNEL_ANNOTATIONS = ("consumers", "registers", "persistent")


def _names_in(node: Node) -> list[str]:
    """The names an expression's parse tree reads."""
    if not isinstance(node, Tree):
        return []
    if node.data == "name":
        return [str(node.children[0])]
    return [name for child in node.children for name in _names_in(child)]


@dataclass
class Binding:
    """What a name means. `var`s are rebound as the program assigns them."""

    name: str
    kind: str  # builtin, param, arg, dim, grid, loop, let, var
    value: Value | None
    line: int | None = None
    dim: tuple[SSAValue, int] | None = None  # kind "dim": (tensor, axis), materialised lazily

    def runtime_value(self) -> SSAValue:
        """The value of a binding that holds one at run time (a `var`: a compile-time value is
        made a runtime one when the var is declared)."""
        assert isinstance(self.value, SSAValue), self
        return self.value


def position(node: Node) -> tuple[int | None, int | None]:
    if isinstance(node, Token):
        return node.line, node.column
    return getattr(node.meta, "line", None), getattr(node.meta, "column", None)


def is_tile(value: Value | None) -> TypeGuard[SSAValue[tile.AnyTile]]:
    return isinstance(value, SSAValue) and isinstance(value.type, tile.AnyTile)


class TruncatedQuotient(int):
    """A compile-time integer quotient that dropped its remainder (`1 / D` with D = 64 is 0),
    kept apart so that its use as a float is an error rather than a silent 0: integers divide
    rounding down, and `x * (1 / D)` almost always meant `1.0 / D`."""

    dividend: int
    divisor: int

    def __new__(cls, dividend: int, divisor: int) -> TruncatedQuotient:
        quotient = super().__new__(cls, dividend // divisor)
        quotient.dividend, quotient.divisor = dividend, divisor
        return quotient

    def __reduce__(self) -> tuple[type[int], tuple[int]]:
        return int, (int(self),)  # a copy (of an attribute holding it) is the plain integer

    def as_float_problem(self) -> str:
        return (f"the integer division {self.dividend} / {self.divisor} is {int(self)} (integers divide rounding "
                f"down), used here as a float: write the dividend as a float ({float(self.dividend)} / ...) for "
                f"{self.dividend / self.divisor:.6g}, or f32(...) around the division to keep {int(self)}")


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def has_type(value: Value, type_: type[Attribute] | Attribute) -> TypeGuard[SSAValue]:
    if not isinstance(value, SSAValue):
        return False
    return isinstance(value.type, type_) if isinstance(type_, type) else value.type == type_


def type_name(type_: Attribute) -> str:
    """A type as the .tk language spells it."""
    if isinstance(type_, tile.RegisterTileType | tile.SharedTileType | tile.RegisterVectorType | tile.SharedVectorType):
        kind = {tile.RegisterTileType: "rt", tile.SharedTileType: "st", tile.RegisterVectorType: "rv"}.get(
            type(type_), "sv"
        )
        dims = ", ".join(str(d) for d in type_.get_shape())
        return f"{kind}<{tile.element_name(type_.element_type)}>[{dims}]"
    if isinstance(type_, GlobalType):
        dims = ", ".join(str(d) for d in type_.get_dims())
        return f"gl<{tile.element_name(type_.element_type)}>[{dims}]"
    if isinstance(type_, IndexType):
        return "index"
    if type_ == IntegerType(1):
        return "bool"
    if isinstance(type_, Float32Type):
        return "f32"
    return str(type_)


def describe(value: Value) -> str:
    if isinstance(value, bool):
        return f"the bool {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if is_tile(value) or isinstance(value.type, GlobalType):
        return type_name(value.type)
    return f"a runtime {type_name(value.type)}"


ANNOTATION_PLACES = {
    "consumers": "kernel",
    "registers": "kernel",
    "persistent": "kernel",
    "cluster": "kernel",
    "heavy_first": "kernel",
    "group_m": "kernel",
    "stream_k": "kernel",
    "fma_exp2": "kernel",
    "schedule_wgmma": "kernel",
    "dependent_launch": "kernel",
    "band": "kernel",
    "ctas_per_sm": "kernel",
    "whole_staging": "kernel",
    "shared_staging": "kernel",
    "retain": "kernel",
    "whole_tiles": "kernel",
    "stages": "for or kernel",  # on a kernel: every ring's depth, and the ring of a kernel that streams its tiles
    "overlap": "for",
    "turns": "for",
    "reverse": "for",
    "split_ring": "for or kernel",  # on a kernel: every overlapped loop whose ring can split
    "swizzle": "let",
}
"""Where each annotation may stand."""
COMMAND_LINE_PINS = ("consumers", "persistent", "cluster", "heavy_first", "group_m", "stream_k", "split_ring",
                     "fma_exp2", "schedule_wgmma", "dependent_launch", "band", "ctas_per_sm", "whole_staging",
                     "shared_staging", "stages", "retain")
"""The kernel annotations `-D @NAME=VALUE` (and a tuning space) may set: those of one integer."""


def annotation_problem(name: str, value: int) -> str | None:
    """What is wrong with `value` as an argument of @name, or None."""
    if name == "persistent" and value not in (0, 1):
        return f"@persistent takes 0 (one CTA per tile) or 1, got {value}"
    if name == "registers" and not (24 <= value <= 256 and value % 8 == 0):
        return f"@registers takes per-thread register counts (setmaxnreg): multiples of 8 in 24..256, got {value}"
    if name == "consumers" and not 1 <= value <= 7:
        return f"@consumers takes 1 to 7 consumer warpgroups, got {value}"
    if name == "stages" and not 1 <= value <= MAX_PINNED_STAGES:
        return f"@stages takes 1 to {MAX_PINNED_STAGES} pipeline stages, got {value}"
    if name in ("overlap", "turns", "split_ring", "reverse", "retain") and value not in (0, 1):
        return f"@{name} takes 0 (off) or 1 (required), got {value}"
    if name == "heavy_first" and value not in (0, 1):
        return f"@heavy_first takes 0 (launch order) or 1 (the planner's choice), got {value}"
    if name == "schedule_wgmma" and value not in (0, 1):
        return f"@schedule_wgmma takes 0 (off) or 1 (issue wgmmas early, wait for them late), got {value}"
    if name == "dependent_launch" and value not in (0, 1):
        return f"@dependent_launch takes 0 (a plain launch) or 1 (a programmatic dependent launch), got {value}"
    if name == "band" and value not in (0, 1):
        return f"@band takes 0 (the wgmma layout) or 1 (the band layout, or an error that says why not), got {value}"
    if name == "group_m" and value < 0:
        return f"@group_m takes 0 (grid axis 0 whole, fastest) or the tile rows a persistent walk takes together, got {value}"
    if name == "ctas_per_sm" and not 1 <= value <= tile.MAX_CTAS_PER_SM:
        return f"@ctas_per_sm takes 1 to {tile.MAX_CTAS_PER_SM} blocks per SM, got {value}"
    if name == "stream_k" and value not in (0, 1):
        return f"@stream_k takes 0 (whole tiles per CTA) or 1 (split the K iterations over the CTAs), got {value}"
    if name == "fma_exp2" and not 0 <= value <= tile.FMA_EXP2_EVERY_MAX:
        return f"@fma_exp2 takes 0 (off) or k in 1..{tile.FMA_EXP2_EVERY_MAX} (every k-th element on the FMA pipe), got {value}"
    if name == "cluster" and value not in tile.CLUSTER_CTAS:
        return f"@cluster takes {', '.join(map(str, tile.CLUSTER_CTAS[:-1]))} or {tile.CLUSTER_CTAS[-1]} CTAs per cluster, got {value}"
    if name == "swizzle" and value not in tile.SWIZZLE_SPANS:
        return f"@swizzle takes 0, 32, 64 or 128 (bytes), got {value}"
    return None


def annotation_attr(name: str, values: list[int]) -> Attribute:
    """The attribute of @name(values), the values checked."""
    if name == "persistent" and values:
        return UnitAttr() if values[0] else IntegerAttr(0, 64)
    if name in tile.UNIT_PINS:
        return UnitAttr()
    if name == "registers":
        return ArrayAttr(IntegerAttr(v, 64) for v in values)
    return IntegerAttr(values[0], 64)


def command_line_pins(overrides: Mapping[str, Number], filename: str) -> dict[str, Attribute]:
    """The kernel annotations given as `-D @NAME=VALUE` (or by a tuning configuration), which
    replace the source's own: `-D @stages=8` compiles as if the kernel said `@stages(8)`."""
    pins: dict[str, Attribute] = {}
    for key, value in overrides.items():
        if not key.startswith("@") or value is None:  # None (from a tuning space): the plan decides
            continue
        name = key[1:]
        if name not in COMMAND_LINE_PINS:
            raise TkError(f"-D {key}: not an annotation -D sets (those are "
                          f"{', '.join('@' + p for p in COMMAND_LINE_PINS)})"
                          f"{did_you_mean(key, ['@' + p for p in COMMAND_LINE_PINS])}",
                          filename)
        if isinstance(value, bool) or not isinstance(value, int):
            got = str(value).lower() if isinstance(value, bool) else repr(value)
            raise TkError(f"-D {key}: @{name} takes an integer, got {got}", filename)
        if (problem := annotation_problem(name, value)) is not None:
            raise TkError(f"-D {key}={value}: {problem}", filename)
        pins[name] = annotation_attr(name, [value])
    return pins



def declared_params(kernels: list[Tree]) -> list[str]:
    """The compile-time parameters the kernels' parse trees declare, in order, once each."""
    params = (p for k in kernels for p in k.iter_subtrees_topdown() if p.data == "param")
    return list(dict.fromkeys(str(p.children[0]) for p in params))

class _Builder:
    def __init__(self, source: str, filename: str, overrides: dict[str, Number]):
        self.source = source
        self.filename = filename
        self.overrides = {name: value for name, value in overrides.items() if not name.startswith("@")}
        self.pins = command_line_pins(overrides, filename)
        self.scopes: list[dict[str, Binding]] = [
            {name: Binding(name, "builtin", value) for name, value in CONSTANTS.items()}
        ]
        self.block = Block()
        self.loc = FileLineColLoc(StringAttr(filename), IntAttr(1), IntAttr(1))
        self.blocks_deep = 0  # statement nesting below the kernel body (grid must be at 0)
        self.discarding = 0  # > 0 while building code that will be dropped
        self.functions: dict[str, Tree] = {}  # the file's functions by name
        self.inlining: list[str] = []  # the functions being inlined, outermost first

    # ------------------------------------------------------------------ infrastructure

    def error(self, node: Node | None, message: str) -> TkError:
        line, col = position(node) if node is not None else (None, None)
        return TkError(message, self.filename, line, col, self.source)

    @contextmanager
    def at(self, node: Node) -> Iterator[None]:
        """Ops created inside get the location of `node`."""
        saved = self.loc
        line, col = position(node)
        if line is not None and col is not None:
            self.loc = FileLineColLoc(StringAttr(self.filename), IntAttr(line), IntAttr(col))
        try:
            yield
        finally:
            self.loc = saved

    def insert(self, op: Operation) -> Operation:
        op.location = self.loc
        self.block.add_op(op)
        return op

    def emit(self, op: Operation) -> SSAValue:
        return self.insert(op).results[0]

    @contextmanager
    def scope(self) -> Iterator[None]:
        self.scopes.append({})
        try:
            yield
        finally:
            self.scopes.pop()

    @contextmanager
    def into(self, block: Block) -> Iterator[None]:
        saved = self.block
        self.block = block
        self.blocks_deep += 1
        try:
            yield
        finally:
            self.block = saved
            self.blocks_deep -= 1

    @contextmanager
    def discarded(self) -> Iterator[None]:
        """Build (and so check) code that will not run: a compile-time-false branch."""
        saved = [(b, b.value) for s in self.scopes for b in s.values() if b.kind == "var"]
        scratch = Block()
        self.discarding += 1
        with self.into(scratch), self.scope():
            try:
                yield
            finally:
                self.discarding -= 1
                for binding, value in saved:
                    binding.value = value
                for op in reversed(list(scratch.ops)):
                    op.detach()
                    op.erase(safe_erase=False)

    def lookup(self, name: str) -> Binding | None:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None

    def visible_names(self) -> list[str]:
        return [n for s in self.scopes for n in s]

    def declare(self, token: Node, kind: str, value: Value | None, dim: tuple[SSAValue, int] | None = None) -> Binding:
        name = str(token)
        if (old := self.lookup(name)) is not None:
            if old.kind == "builtin":
                raise self.error(token, f"'{name}' is a builtin constant and cannot be redefined")
            where = f" (line {old.line})" if old.line is not None else ""
            raise self.error(token, f"'{name}' is already defined{where}")
        # In an expression these words are a fill or a conversion, never a name: a binding
        # could not be read back.
        if name in FILLS:
            raise self.error(token, f"'{name}' is a builtin fill and cannot be redefined")
        if name in BY_NAME:
            raise self.error(token, f"'{name}' is a dtype and cannot be redefined")
        if name in self.functions:
            line = position(self.functions[name])[0]
            raise self.error(token, f"'{name}' is a function (line {line}) and cannot be redefined")
        binding = Binding(name, kind, value, position(token)[0], dim)
        self.scopes[-1][name] = binding
        if isinstance(value, SSAValue):
            self.hint(value, name)
        return binding

    @staticmethod
    def hint(value: Value, name: str) -> None:
        if isinstance(value, SSAValue) and value.name_hint is None:
            value.name_hint = name

    # ------------------------------------------------------------------ materialising values

    def index(self, value: Value, node: Node, what: str = "an index") -> SSAValue:
        if is_int(value):
            if not I64_MIN <= value <= I64_MAX:
                raise self.error(node, f"integer {value} does not fit in 64 bits")
            if not -(2**31) <= value < 2**31:
                raise self.error(node, f"the index {value} does not fit in 32 bits: a kernel's index arithmetic is "
                                       "32-bit signed on the GPU")
            with self.at(node):
                return self.emit(arith.ConstantOp(IntegerAttr(int(value), IndexType())))
        if has_type(value, IndexType):
            return value
        raise self.error(node, f"expected {what} (an integer), got {describe(value)}")

    def index_remainder(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """a % b on indices: a - floor(a / b) * b, with the divisor's sign (MLIR's remsi
        truncates, and an index may be negative)."""
        quotient = self.emit(arith.FloorDivSIOp(a, b))
        return self.emit(arith.SubiOp(a, self.emit(arith.MuliOp(quotient, b))))

    def boolean(self, value: Value, node: Node) -> SSAValue:
        if isinstance(value, bool):
            with self.at(node):
                return self.emit(arith.ConstantOp(IntegerAttr(int(value), IntegerType(1))))
        if has_type(value, IntegerType(1)):
            return value
        raise self.error(node, f"expected a bool, got {describe(value)}")

    def f32(self, value: Value, node: Node) -> SSAValue:
        if isinstance(value, TruncatedQuotient):
            raise self.error(node, value.as_float_problem())
        if is_number(value):
            with self.at(node):
                return self.emit(arith.ConstantOp(self.f32_attr(value, node)))
        if has_type(value, Float32Type):
            return value
        raise self.error(node, f"expected an f32 scalar, got {describe(value)}")

    def f32_attr(self, value: float, node: Node) -> FloatAttr:
        if math.isfinite(value) and abs(value) > F32_MAX:
            raise self.error(node, f"the number {value} does not fit in f32")
        if value != 0 and struct.unpack("<f", struct.pack("<f", value))[0] == 0:
            raise self.error(node, f"the number {value} does not fit in f32 (it would round to 0)")
        return FloatAttr(float(value), Float32Type())

    def runtime(self, value: Value, node: Node) -> SSAValue:
        """A compile-time number as the runtime value of its kind (for `var`s and selects)."""
        if isinstance(value, bool):
            return self.boolean(value, node)
        if isinstance(value, int):
            return self.index(value, node)
        if isinstance(value, float):
            return self.f32(value, node)
        return value

    def coerce(self, value: Value, type_: Attribute, node: Node, what: str) -> SSAValue:
        """`value` as a runtime value of `type_` (assignments to vars, branches of a select)."""
        if isinstance(type_, IndexType) and is_int(value):
            return self.index(value, node)
        if type_ == IntegerType(1) and isinstance(value, bool):
            return self.boolean(value, node)
        if isinstance(type_, Float32Type) and is_number(value):
            return self.f32(value, node)
        if isinstance(value, SSAValue):
            if value.type == type_:
                return value
            if isinstance(type_, tile.RegisterTileType | tile.RegisterVectorType) and is_tile(value):
                moved = self.reg(value)
                if moved.type == type_:
                    return moved
        raise self.error(node, f"{what} has type {type_name(type_)}, got {describe(value)}")

    def reg(self, value: SSAValue[tile.AnyTile]) -> SSAValue[tile.RegisterValue]:
        """A tile or vector in registers (element-wise ops compute there)."""
        registers = self.emit(tile.ToRegOp(value)) if isinstance(value.type, tile.SharedValue) else value
        assert isinstance(registers.type, tile.RegisterTileType | tile.RegisterVectorType)
        return cast(SSAValue[tile.RegisterValue], registers)

    def tile_arg(self, value: Value, node: Node, fn: str, what: str = "tile") -> SSAValue:
        """A register tile, vector (`what` = "vector") or either ("tile or vector") operand (shared
        ones are moved to registers)."""
        if not is_tile(value):
            raise self.error(node, f"{fn} takes a {what}, got {describe(value)}")
        value = self.reg(value)
        if what == "tile" and not isinstance(value.type, tile.RegisterTileType):
            raise self.error(node, f"{fn} takes a tile, got {describe(value)}")
        if what == "vector" and not isinstance(value.type, tile.RegisterVectorType):
            raise self.error(node, f"{fn} takes a vector, got {describe(value)}")
        return value

    # ------------------------------------------------------------------ compile-time values

    def const(self, node: Node, what: str) -> Number:
        """Evaluate a compile-time expression (no op it builds survives)."""
        with self.discarded():
            value = self.expr(node)
        if isinstance(value, SSAValue):
            raise self.error(node, f"{what} must be known at compile time, got {describe(value)}")
        return value

    def const_int(self, node: Node, what: str) -> int:
        value = self.const(node, what)
        if not is_int(value):
            raise self.error(node, f"{what} must be an integer, got {describe(value)}")
        return value

    def fold(self, op: str, a: Number, b: Number, node: Node) -> Number:
        if isinstance(a, bool) or isinstance(b, bool):
            raise self.error(node, f"'{op}' applies to numbers, not bools")
        if op in ("/", "%") and b == 0:
            raise self.error(node, "division by zero in a compile-time expression")
        for value, other in ((a, b), (b, a)):
            if isinstance(value, TruncatedQuotient) and isinstance(other, float):
                raise self.error(node, value.as_float_problem())
        try:
            if op == "+":
                result = a + b
            elif op == "-":
                result = a - b
            elif op == "*":
                result = a * b
            elif op == "/":
                if is_int(a) and is_int(b):
                    result = TruncatedQuotient(a, b) if a % b else a // b
                else:
                    result = a / b
            elif op == "%":
                result = a % b if is_int(a) and is_int(b) else math.fmod(a, b)
            elif op == "max":
                result = max(a, b)
            else:
                result = min(a, b)
        except (OverflowError, ValueError):
            raise self.error(node, f"compile-time {op} of {a} and {b} is out of range") from None
        # Float arithmetic does not raise: an infinity from finite operands is an overflow, and
        # a NaN (from infinities) is never meant (the language has no NaN literal).
        finite_operands = math.isfinite(a) and math.isfinite(b)
        if isinstance(result, float) and (math.isnan(result) or math.isinf(result) and finite_operands):
            what = "not a number" if math.isnan(result) else "out of range (inf)"
            raise self.error(node, f"compile-time {op} of {a} and {b} is {what}")
        if is_int(result) and not I64_MIN <= result <= I64_MAX:
            raise self.error(node, f"compile-time integer {op} overflows 64 bits")
        return result

    # ------------------------------------------------------------------ kernels

    def module(self, tree: Tree, kernel: str | None) -> ModuleOp:
        kernels = [k for k in tree.children if isinstance(k, Tree) and k.data == "kernel"]
        if not kernels:
            raise TkError("no kernel in the file", self.filename, 1, 1, self.source)
        names = [self.kernel_name(k) for k in kernels]
        seen: dict[str, Token] = {}
        for name in names:
            if str(name) in seen:
                raise self.error(name, f"kernel '{name}' is already defined (line {seen[str(name)].line})")
            seen[str(name)] = name
        self.define_functions([f for f in tree.children if isinstance(f, Tree) and f.data == "function"], seen)
        if kernel is not None:
            if kernel not in seen:
                raise TkError(
                    f"no kernel named '{kernel}' (the file defines {', '.join(seen)}){did_you_mean(kernel, seen)}",
                    self.filename,
                )
            kernels = [k for k, n in zip(kernels, names) if str(n) == kernel]
        declared = declared_params(kernels)
        if unknown := [name for name in self.overrides if name not in declared]:
            built = ", ".join(str(self.kernel_name(k)) for k in kernels)
            owner = f"kernel {built} has" if len(kernels) == 1 else f"kernels {built} have"
            have = ", ".join(declared) if declared else "no parameters"
            raise TkError(
                f"unknown parameter '{unknown[0]}' ({owner} {have}){did_you_mean(unknown[0], declared)}",
                self.filename,
            )
        module = ModuleOp([self.kernel(k) for k in kernels])
        self.verify(module)
        return module

    def define_functions(self, nodes: list[Tree], kernels: Mapping[str, Token]) -> None:
        """Record the file's functions; a name that is already a builtin, a kernel or another
        function is an error (a call must mean one thing), as is a parameter given twice."""
        for node in nodes:
            token, params, _, _ = self.function_parts(node)
            name = str(token)
            if name in BUILTIN_FUNCTIONS:
                raise self.error(token, f"'{name}' is a builtin function and cannot be redefined")
            if name in kernels:
                raise self.error(token, f"'{name}' names both a kernel (line {kernels[name].line}) and a function")
            if name in self.functions:
                line = position(self.functions[name])[0]
                raise self.error(token, f"function '{name}' is already defined (line {line})")
            if name in CONSTANTS or name in FILLS or name in BY_NAME:
                raise self.error(token, f"'{name}' is a builtin name and cannot be redefined")
            seen: set[str] = set()
            for param in params:
                if str(param) in seen:
                    raise self.error(param, f"parameter '{param}' of function '{name}' is given twice")
                seen.add(str(param))
            self.functions[name] = node

    @staticmethod
    def function_parts(node: Tree) -> tuple[Token, list[Token], list[Tree], Tree]:
        """A function's name, parameters, body statements and returned expression."""
        _, name, *rest = node.children
        result = rest[-1]
        params = [c for c in rest if isinstance(c, Token) and c.type == "NAME"]
        body = [c for c in rest[:-1] if isinstance(c, Tree)]
        assert isinstance(name, Token) and isinstance(result, Tree)
        return name, params, body, result

    def inline(self, token: Token, args: list[Value]) -> Value:
        """The value of a call of a function: its body built here, in a scope of its own that sees
        the builtin constants and its parameters bound to `args` (what each call passes: tiles,
        vectors, scalars or compile-time numbers). A mistake in the body is reported at its line
        in the function and names the call."""
        name = str(token)
        node = self.functions[name]
        _, params, body, result = self.function_parts(node)
        if name in self.inlining:
            chain = " -> ".join([*self.inlining[self.inlining.index(name):], name])
            raise self.error(token, f"function '{name}' calls itself ({chain}); functions are inlined at each "
                                    "call, so they cannot recurse")
        if len(self.inlining) >= MAX_DEPTH:
            raise self.error(token, f"functions call each other more than {MAX_DEPTH} deep")
        if len(args) != len(params):
            plural = "" if len(params) == 1 else "s"
            raise self.error(token, f"function '{name}' takes {len(params)} argument{plural} "
                                    f"({', '.join(map(str, params))}), got {len(args)}")
        caller_scopes = self.scopes
        self.scopes = [self.scopes[0], {}]
        self.inlining.append(name)
        try:
            for param, value in zip(params, args):
                self.declare(param, "let", value)
            for stmt in body:
                core = stmt.children[-1]
                if core.data != "let_stmt":
                    what = core.data.removesuffix("_stmt")
                    raise self.error(core, f"a function body holds let statements and one return, not a {what} "
                                           "statement")
                self.statement(stmt)
            with self.at(result):
                return self.expr(result)
        except TkError as err:
            line, col = position(token)
            note = f" (in function '{name}', called at line {line}:{col})"
            raise TkError(err.message + note, err.filename, err.line, err.col, err.source) from None
        finally:
            self.scopes = caller_scopes
            self.inlining.pop()

    @staticmethod
    def kernel_name(node: Tree) -> Token:
        return next(c for c in node.children if isinstance(c, Token))

    def kernel(self, node: Tree) -> tile.KernelOp:
        annotations = [c for c in node.children if isinstance(c, Tree) and c.data == "annotation"]
        param_lists = [c for c in node.children if isinstance(c, Tree) and c.data == "param_list"]
        args = [c for c in node.children if isinstance(c, Tree) and c.data == "arg"]
        body = node.children[-1]
        name = self.kernel_name(node)
        with self.scope(), self.at(name):
            params = self.params(param_lists[0] if param_lists else None)
            kernel_annotations = {**self.annotations(annotations, "kernel"), **self.pins}
            arg_types, dims = self.args(args)
            block = Block(arg_types=arg_types)
            for arg_node, value in zip(args, block.args):
                self.declare(arg_node.children[0], "arg", value)
            for token, arg_index, axis in dims.values():
                self.declare(token, "dim", None, (block.args[arg_index], axis))
            self.dims_end: Operation | None = None
            self.kernel_block = block
            self.grid: Node | None = None
            self.block = block
            with self.scope():
                self.statements(body)
            if self.grid is None:
                raise self.error(name, f"kernel '{name}' has no grid statement (e.g. `grid (M / BM) as (i)`)")
            self.insert(tile.ReturnOp())
            op = tile.KernelOp(str(name), arg_types, Region(block), params, kernel_annotations)
            op.location = self.loc
            self.check_scalar_loads_read_only(op)
            if floor_divided := tile.floor_divided_dims(op):
                op.attributes[tile.FLOOR_DIVIDED] = DictionaryAttr(
                    {dim: IntegerAttr(multiple, 64) for dim, multiple in sorted(floor_divided.items())})
            return op

    def check_scalar_loads_read_only(self, kernel: tile.KernelOp) -> None:
        """A scalar read of an f32 tensor the kernel also writes is an error at the read: scalar
        loads are pure (tile.LoadScalarOp), so it could see the tensor before or after any store."""
        stored = {op.tensor for op in kernel.walk() if isinstance(op, tile.StoreOp)}
        for op in kernel.walk():
            if isinstance(op, tile.LoadScalarOp) and op.tensor in stored:
                name = kernel.arg_names[kernel.body.block.args.index(op.tensor)]
                raise error_at(op, f"the kernel stores to {name}, so it cannot read scalars of it (load {name}[...] : "
                                   f"f32 reads tensors the kernel only reads); load a tile of it instead")

    def params(self, node: Tree | None) -> dict[str, Attribute]:
        declared: dict[str, Attribute] = {}
        for param in [p for p in (node.children if node is not None else []) if isinstance(p, Tree)]:
            token, expr = param.children
            value = self.const(expr, f"the default of parameter '{token}'")
            if str(token) in self.overrides:
                value = self.override(token, value, self.overrides[str(token)])
            if is_int(value) and not I64_MIN <= value <= I64_MAX:
                raise self.error(token, f"parameter '{token}' = {value} does not fit in 64 bits")
            if isinstance(value, bool):
                attr: Attribute = IntegerAttr(int(value), IntegerType(1))
            elif isinstance(value, int):
                attr = IntegerAttr(value, 64)
            else:
                attr = FloatAttr(value, Float64Type())
            self.declare(token, "param", value)
            declared[str(token)] = attr
        return declared

    def override(self, token: Node, default: Number, value: object) -> Number:
        kinds = {bool: "a bool", int: "an integer", float: "a float"}
        if not isinstance(value, bool | int | float) and callable(item := getattr(value, "item", None)):
            value = item()  # a numpy scalar (np.int64(64)) is the Python number it holds
        if isinstance(value, float) and math.isnan(value):
            raise self.error(token, f"the override {token}=nan of parameter '{token}' is not a number")
        if isinstance(default, bool) and is_int(value) and value in (0, 1):
            return bool(value)  # -D CAUSAL=1 reads naturally
        if isinstance(default, bool) == isinstance(value, bool):
            if isinstance(default, float) and is_number(value):
                return float(value)
            if type(default) is type(value):
                return value
        shown = str(value).lower() if isinstance(value, bool) else repr(value)
        raise self.error(
            token,
            f"parameter '{token}' is {kinds[type(default)]}, but the override {token}={shown} is "
            f"{kinds.get(type(value), type(value).__name__)}",
        )

    def args(self, nodes: list[Tree]) -> tuple[list[Attribute], dict[str, tuple[Node, int, int]]]:
        types: list[Attribute] = []
        dims: dict[str, tuple[Node, int, int]] = {}
        arg_names = {str(n.children[0]) for n in nodes}
        seen: set[str] = set()
        for index, node in enumerate(nodes):
            token, dtype, dim_list = node.children
            if str(token) in seen:
                raise self.error(token, f"argument '{token}' is already defined")
            seen.add(str(token))
            shape: list[str | int] = []
            for axis, dim in enumerate(dim_list.children):
                if isinstance(dim, Tree) and dim.data == "name" and self.lookup(str(dim.children[0])) is None:
                    dim_token = dim.children[0]
                    if str(dim_token) in arg_names:
                        raise self.error(dim_token, f"'{dim_token}' names both an argument and a dimension")
                    dims.setdefault(str(dim_token), (dim_token, index, axis))
                    shape.append(str(dim_token))
                    continue
                symbolic = [name for name in _names_in(dim) if name in dims]
                if symbolic:
                    raise self.error(dim, f"a dimension is a new name (bound at launch) or a compile-time "
                                          f"expression, and '{symbolic[0]}' is bound at launch: give this dimension a "
                                          f"name of its own and check it in the kernel if it must agree")
                size = self.const_int(dim, "a fixed tensor dimension")
                if size < 1 or size > I64_MAX:
                    raise self.error(dim, f"a tensor dimension must be positive, got {size}")
                if size >= 2**31:
                    raise self.error(dim, f"a tensor dimension must be below 2^31 (a kernel's index arithmetic is "
                                          f"32-bit signed on the GPU), got {size}")
                shape.append(size)
            if not 1 <= len(shape) <= 5:
                raise self.error(token, f"a global tensor has rank 1 to 5 (TMA's limit), got {len(shape)}")
            types.append(GlobalType(shape, BY_NAME[str(dtype.children[0])].ir_type()))
        return types, dims

    # ------------------------------------------------------------------ annotations

    def annotations(self, nodes: Sequence[Tree], target: str) -> dict[str, Attribute]:
        """Annotations on a kernel, a for loop or a let, checked and turned into attributes."""
        targets = {"kernel": "a kernel", "for": "a for loop", "let": "a let of a load"}
        result: dict[str, Attribute] = {}
        for node in nodes:
            token, arg_list = node.children
            name = str(token)
            if name not in ANNOTATION_PLACES:
                known = ", ".join(f"@{n}" for n in ANNOTATION_PLACES)
                raise self.error(token, f"unknown annotation @{name} (known: {known})")
            if target not in ANNOTATION_PLACES[name].split(" or "):
                where = " or ".join(targets[place] for place in ANNOTATION_PLACES[name].split(" or "))
                raise self.error(token, f"@{name} applies to {where}, not to {targets.get(target, 'this statement')}")
            if name in result:
                raise self.error(token, f"@{name} is given twice")
            arg_nodes = [] if arg_list is None else list(arg_list.children)
            arity = {"registers": 2, **dict.fromkeys(tile.UNIT_PINS, 0)}.get(name, 1)
            if name == "persistent" and len(arg_nodes) == 1:  # @persistent(0) pins it off
                arity = 1
            if len(arg_nodes) != arity:
                raise self.error(
                    token, f"@{name} takes {arity} argument{'s' if arity != 1 else ''}, got {len(arg_nodes)}"
                )
            values = [self.const_int(n, f"the argument of @{name}") for n in arg_nodes]
            for value, arg_node in zip(values, arg_nodes):
                if (problem := annotation_problem(name, value)) is not None:
                    raise self.error(arg_node, problem)
            result[name] = annotation_attr(name, values)
        return result

    # ------------------------------------------------------------------ statements

    def statements(self, block: Tree) -> None:
        for stmt in block.children:
            if isinstance(stmt, Tree):
                self.statement(stmt)

    def statement(self, node: Tree) -> None:
        *annotation_nodes, core = node.children
        target = {"for_stmt": "for", "let_stmt": "let"}.get(core.data, "statement")
        annotations = self.annotations(annotation_nodes, target)
        if target == "for" and "stages" in self.pins:
            # -D @stages=N (a tuning configuration) sets every ring's depth, the loops' pins too
            annotations.pop("stages", None)
        handler = getattr(self, core.data)
        with self.at(core):
            try:
                handler(core, annotations)
            except VerifyException as err:  # an op or type the checks here did not foresee
                raise self.error(core, str(err)) from None

    def grid_stmt(self, node: Tree, _: dict[str, Attribute]) -> None:
        extents_node, *names = node.children
        if self.blocks_deep != 0:
            raise self.error(node, "grid must be a statement of the kernel body, not inside a loop or if")
        if self.grid is not None:
            raise self.error(node, f"the kernel already has a grid (line {position(self.grid)[0]})")
        extents = [self.index(self.expr(e), e, "a grid extent") for e in extents_node.children]
        if len(extents) != len(names):
            raise self.error(node, f"grid has {len(extents)} extents but {len(names)} names")
        if not 1 <= len(extents) <= 3:
            raise self.error(node, f"grid takes 1 to 3 axes, got {len(extents)}")
        self.grid = names[0]
        self.insert(tile.GridOp(extents, [str(n) for n in names]))
        for axis, token in enumerate(names):
            with self.at(token):
                self.declare(token, "grid", self.emit(tile.BlockIdOp(axis)))

    def require_stmt(self, node: Tree, _: dict[str, Attribute]) -> None:
        (expr,) = node.children
        if self.blocks_deep != 0:
            raise self.error(node, "require must be a statement of the kernel body, not inside a loop or if")
        text = " ".join(re.sub(r"//[^\r\n]*", " ", self.source_text(expr)).split())  # comments dropped
        value = self.expr(expr)
        if isinstance(value, bool):
            if not value:
                raise self.error(expr, f"'{text}' is false for every launch (it reads only compile-time values)")
            return
        condition = self.boolean(value, expr)
        if tile.require_slice(condition) is None:
            raise self.error(expr, "require takes a condition on the tensor dims and the compile-time parameters "
                                   "(comparisons, and, or, not over index arithmetic: + - * / % min max ceildiv), "
                                   "which the runtime checks from the arguments' shapes before it launches; this "
                                   "one reads other values (a block index, a loop counter, a loaded value) or "
                                   "computes with something else (f32, a ?: choice)")
        if (terms := tile.require_terms(condition)) > tile.REQUIRE_TERMS:
            raise self.error(expr, f"this condition has {terms} terms written out (a value it reads twice counts "
                                   f"twice), and the launch contract holds at most {tile.REQUIRE_TERMS}")
        self.insert(tile.RequireOp(condition, text))

    def source_text(self, node: Node) -> str:
        """The characters of the source `node` was parsed from."""
        if isinstance(node, Token):
            return str(node)
        start, end = getattr(node.meta, "start_pos", None), getattr(node.meta, "end_pos", None)
        return self.source[start:end] if start is not None and end is not None else ""

    def let_stmt(self, node: Tree, annotations: dict[str, Attribute]) -> None:
        token, expr = node.children
        if annotations and not (isinstance(expr, Tree) and expr.data == "load"):
            raise self.error(token, "@swizzle applies to a let whose value is a load")
        value = self.load(expr, annotations) if annotations else self.expr(expr)
        self.declare(token, "let", value)

    def var_stmt(self, node: Tree, _: dict[str, Attribute]) -> None:
        token, expr = node.children
        value = self.expr(expr)
        if isinstance(value, SSAValue) and isinstance(value.type, GlobalType):
            raise self.error(expr, "a var cannot hold a global tensor")
        self.declare(token, "var", self.runtime(value, expr))

    def assign_stmt(self, node: Tree, _: dict[str, Attribute]) -> None:
        token, op_node, expr = node.children
        op = op_node.children[0]
        binding = self.lookup(str(token))
        if binding is None:
            raise self.unknown(token)
        if binding.kind != "var":
            kinds = {
                "let": "a let",
                "param": "a compile-time parameter",
                "arg": "a kernel argument",
                "dim": "a tensor dimension",
                "grid": "a block index",
                "loop": "a loop counter",
                "builtin": "a builtin constant",
            }
            hint = "; declare it with `var` to make it assignable" if binding.kind == "let" else ""
            raise self.error(token, f"cannot assign to '{token}': it is {kinds[binding.kind]}{hint}")
        value = self.expr(expr)
        if str(op) != "=":
            assert isinstance(binding.value, SSAValue)
            with self.at(op):
                value = self.binary(str(op)[0], binding.value, value, op)
        assert isinstance(binding.value, SSAValue)
        new = self.coerce(value, binding.value.type, expr, f"var '{token}'")
        self.hint(new, str(token))
        binding.value = new

    def store_stmt(self, node: Tree, _: dict[str, Attribute]) -> None:
        self.store(node)

    def store_add_stmt(self, node: Tree, _: dict[str, Attribute]) -> None:
        self.store(node, tile.StoreReduction.ADD)

    def store(self, node: Tree, reduce: tile.StoreReduction | None = None) -> None:
        """`store T[...] = e`, or with `reduce` (`store_add`) e added to T's elements."""
        token, coord_list, expr = node.children
        statement = "store" if reduce is None else f"store_{reduce}"
        tensor = self.tensor(token)
        value = self.expr(expr)
        if not is_tile(value):
            raise self.error(expr, f"{statement} takes a tile or vector, got {describe(value)}")
        coords, ends, coord_attributes = self.coords(tensor, token, coord_list, value.type)
        assert isinstance(tensor.type, GlobalType)
        element = tensor.type.element_type
        name = tile.element_name(element)
        dtype = dtypes.of_type(element)
        if reduce is not None and not (dtype is not None and dtype.store_add):
            takes = " or ".join(d.name for d in dtypes.DTYPES if d.store_add)
            raise self.error(token, f"{statement} adds into tensors of {takes}, and '{token}' holds {name}")
        if value.type.element_type != element:
            raise self.error(
                expr,
                f"'{token}' holds {name} but the {'stored' if reduce is None else 'added'} value is "
                f"{type_name(value.type)}; convert it with {name}(...)",
            )
        # a shared tile is stored from registers: the epilogue path every tile store takes
        store = tile.StoreOp(self.reg(value), tensor, coords, ends, reduce)
        store.attributes.update(coord_attributes)
        self.insert(store)

    def carried(self, nodes: Sequence[Node | None]) -> list[Binding]:
        """The outer `var`s that the statements under `nodes` assign, in first-assignment order."""
        found: list[Binding] = []
        for node in nodes:
            if not isinstance(node, Tree):
                continue
            for sub in node.iter_subtrees_topdown():
                if sub.data == "assign_stmt":
                    binding = self.lookup(str(sub.children[0]))
                    if binding is not None and binding.kind == "var" and all(b is not binding for b in found):
                        found.append(binding)
        return found

    def for_stmt(self, node: Tree, annotations: dict[str, Attribute]) -> None:
        token, lo_node, _, hi_node, body_node = node.children
        lo = self.index(self.expr(lo_node), lo_node, "a loop bound")
        hi = self.index(self.expr(hi_node), hi_node, "a loop bound")
        step = self.index(1, node)
        carried = self.carried([body_node])
        inits = [b.runtime_value() for b in carried]
        body = Block(arg_types=[IndexType(), *(v.type for v in inits)])
        with self.into(body), self.scope():
            self.declare(token, "loop", body.args[0])
            for binding, arg in zip(carried, body.args[1:]):
                binding.value = arg
                self.hint(arg, binding.name)
            self.statements(body_node)
            outs = [b.runtime_value() for b in carried]
            # A var the body assigns only in code that was folded away is not loop-carried.
            replaced: dict[SSAValue, SSAValue] = {}
            for k in reversed(range(len(carried))):
                arg = body.args[1 + k]
                if outs[k] is arg:
                    arg.replace_all_uses_with(inits[k])
                    body.erase_arg(arg)
                    replaced[arg] = inits[k]
                    carried[k].value = inits[k]
            kept = [k for k in range(len(carried)) if outs[k] not in replaced]
            self.insert(scf.YieldOp(*[replaced.get(outs[k], outs[k]) for k in kept]))
        loop = self.insert(scf.ForOp(lo, hi, step, [inits[k] for k in kept], body))
        loop.attributes.update(annotations)
        for k, result in zip(kept, loop.results):
            carried[k].value = result
            self.hint(result, carried[k].name)

    def if_stmt(self, node: Tree, _: dict[str, Attribute] | None = None) -> None:
        cond_node, then_node, else_node = node.children
        cond = self.expr(cond_node)
        if isinstance(cond, bool):
            taken, untaken = (then_node, else_node) if cond else (else_node, then_node)
            with self.scope():
                self.branch(taken)
            with self.discarded():
                self.branch(untaken)
            return
        cond = self.boolean(cond, cond_node)
        carried = self.carried([then_node, else_node])
        before = [b.runtime_value() for b in carried]
        blocks = [Block(), Block()]
        outs: list[list[SSAValue]] = []
        for block, branch in zip(blocks, (then_node, else_node)):
            with self.into(block), self.scope():
                self.branch(branch)
            outs.append([b.runtime_value() for b in carried])
            for binding, value in zip(carried, before):
                binding.value = value
        # Only the vars that some branch really changes become results.
        kept = [k for k in range(len(carried)) if any(out[k] is not before[k] for out in outs)]
        for block, out in zip(blocks, outs):
            with self.into(block):
                self.insert(scf.YieldOp(*[out[k] for k in kept]))
        if_op = self.insert(scf.IfOp(cond, [before[k].type for k in kept], Region(blocks[0]), Region(blocks[1])))
        for k, result in zip(kept, if_op.results):
            carried[k].value = result
            self.hint(result, carried[k].name)

    def branch(self, node: Tree | None) -> None:
        if node is None:
            return
        if node.data == "if_else":
            with self.at(node.children[0]):
                self.if_stmt(node.children[0])
        else:
            self.statements(node)

    # ------------------------------------------------------------------ expressions

    def expr(self, node: Node) -> Value:
        assert isinstance(node, Tree), node  # the grammar makes every expression a rule
        with self.at(node):
            return getattr(self, "x_" + node.data)(node)

    def unknown(self, token: Node) -> TkError:
        name = str(token)
        hint = did_you_mean(name, self.visible_names() + BUILTIN_FUNCTIONS + list(self.functions))
        # `letz = 3` parses as an assignment to a name: a statement's keyword glued to its name
        glued = [k for k in ("store_add", "store", "let", "var", "return") if name.startswith(k) and len(name) > len(k)]
        if not hint and glued:
            hint = f"; did you mean '{glued[0]} {name[len(glued[0]):]}'?"
        return self.error(token, f"unknown name '{name}'{hint}")

    def x_number(self, node: Tree) -> Value:
        text = str(node.children[0])
        if any(c in text for c in ".eE"):
            value = float(text)
            if (problem := float_problem(text, value)) is not None:
                raise self.error(node, f"number {text} {problem}")
            return value
        if len(text) > 19:
            raise self.error(node, f"integer {text} does not fit in 64 bits")
        return int(text)

    def x_boolean(self, node: Tree) -> Value:
        return str(node.children[0]) == "true"

    def x_name(self, node: Tree) -> Value:
        token = node.children[0]
        binding = self.lookup(str(token))
        if binding is None:
            raise self.unknown(token)
        if binding.kind == "dim" and binding.value is None:
            assert binding.dim is not None
            tensor, axis = binding.dim
            if self.discarding:  # not worth keeping for the rest of the kernel
                return self.emit(tile.DimOp(tensor, axis))
            op = tile.DimOp(tensor, axis)
            op.location = self.loc
            # Dims depend only on kernel arguments: emit them once, at the top of the kernel.
            first = self.kernel_block.first_op
            if self.dims_end is not None:
                self.kernel_block.insert_op_after(op, self.dims_end)
            elif first is not None:
                self.kernel_block.insert_op_before(op, first)
            else:
                self.kernel_block.add_op(op)
            self.dims_end = op
            binding.value = op.result
            self.hint(op.result, str(token))
        assert binding.value is not None
        return binding.value

    def tensor(self, token: Node) -> SSAValue:
        binding = self.lookup(str(token))
        if binding is None:
            raise self.unknown(token)
        if binding.kind != "arg":
            raise self.error(token, f"'{token}' is not a global tensor (a kernel argument)")
        assert isinstance(binding.value, SSAValue)
        return binding.value

    def x_binop(self, node: Tree) -> Value:
        lhs, op, rhs = node.children
        a, b = self.expr(lhs), self.expr(rhs)
        with self.at(op):
            return self.binary(str(op), a, b, op)

    def binary(self, op: str, a: Value, b: Value, node: Node) -> Value:
        """a ⊙ b for `+ - * / %` and `max`/`min`, over every kind of operand."""
        if not isinstance(a, SSAValue) and not isinstance(b, SSAValue):
            return self.fold(op, a, b, node)
        if op in ("/", "%") and is_number(b) and b == 0:  # of tiles, vectors and scalars alike
            raise self.error(node, f"division by zero: the divisor is the constant {b}")
        for v in (a, b):
            if isinstance(v, SSAValue) and isinstance(v.type, GlobalType):
                raise self.error(node, f"'{op}' cannot take a global tensor; load a tile from it first")
        if is_tile(a) or is_tile(b):
            if op == "%":
                raise self.error(node, "'%' applies to integers, not tiles")
            return self.tile_binary(op, a, b, node)
        kinds = {self.scalar_kind(v) for v in (a, b)}
        if "bool" in kinds:
            raise self.error(node, f"'{op}' applies to numbers, not bools")
        if kinds <= {"int", "index"}:
            if op == "%":
                return self.index_remainder(self.index(a, node), self.index(b, node))
            return self.emit(INDEX_OPS[op](self.index(a, node), self.index(b, node)))
        if kinds <= {"int", "float", "f32"}:
            if op == "%":
                raise self.error(node, "'%' applies to integers")
            return self.emit(FLOAT_OPS[op](self.f32(a, node), self.f32(b, node)))
        raise self.error(
            node, f"'{op}' cannot mix {describe(a)} and {describe(b)}; convert an index to a scalar with f32(...)"
        )

    def tile_binary(self, op: str, a: Value, b: Value, node: Node) -> SSAValue:
        """a ⊙ b element-wise where either is a tile; the other may be a number or an f32 scalar."""
        operands: list[SSAValue] = []
        for v in (a, b):
            if is_tile(v):
                operands.append(self.reg(v))
            elif is_number(v) or has_type(v, Float32Type):
                operands.append(self.f32(v, node))
            else:
                other = a if v is b else b
                hint = "; convert an index to a scalar with f32(...)" if isinstance(v, SSAValue) and isinstance(v.type, IndexType) else ""
                raise self.error(node, f"'{op}' cannot combine {describe(other)} with {describe(v)}{hint}")
        x, y = operands
        if is_tile(a) and is_tile(b) and x.type != y.type:
            hint = ""
            if isinstance(x.type, tile.RegisterTileType) != isinstance(y.type, tile.RegisterTileType):
                hint = "; broadcast a vector over a tile with add_row/sub_row/mul_row/div_row or the _col forms"
            got = f"{type_name(x.type)} and {type_name(y.type)}"
            raise self.error(node, f"'{op}' needs operands of one shape and dtype, got {got}{hint}")
        return self.emit(tile.BinaryOp(TILE_FNS[op], x, y))

    @staticmethod
    def scalar_kind(value: Value) -> str:
        if isinstance(value, bool) or has_type(value, IntegerType(1)):
            return "bool"
        if is_int(value):
            return "int"
        if isinstance(value, float):
            return "float"
        if has_type(value, IndexType):
            return "index"
        return "f32"

    def x_sign(self, node: Tree) -> Value:
        op, operand = node.children
        value = self.expr(operand)
        with self.at(op):
            if isinstance(value, bool) or (isinstance(value, SSAValue) and self.scalar_kind(value) == "bool"):
                raise self.error(op, f"unary '{op}' applies to numbers, not bools")
            if isinstance(value, SSAValue) and isinstance(value.type, GlobalType):
                raise self.error(op, f"unary '{op}' cannot take a global tensor")
            if str(op) == "+":
                return value
            if is_number(value):
                return -value
            if is_tile(value):
                return self.emit(tile.UnaryOp(UnaryFn.NEG, self.reg(value)))
            if has_type(value, Float32Type):
                return self.emit(arith.NegfOp(value))
            return self.binary("-", 0, value, op)

    def x_compare(self, node: Tree) -> Value:
        lhs, op_node, rhs = node.children
        op = op_node.children[0]
        a, b = self.expr(lhs), self.expr(rhs)
        with self.at(op):
            if any(isinstance(v, SSAValue) and isinstance(v.type, GlobalType) for v in (a, b)):
                raise self.error(op, "comparisons apply to scalars and tiles, not tensors; load a tile first")
            if is_tile(a) or is_tile(b):
                return self.tile_binary(str(op), a, b, op)
            kinds = {self.scalar_kind(v) for v in (a, b)}
            if "bool" in kinds and kinds != {"bool"}:
                raise self.error(op, f"cannot compare {describe(a)} with {describe(b)}")
            if kinds == {"bool"} and str(op) not in ("==", "!="):
                raise self.error(op, f"'{op}' does not apply to bools")
            if not isinstance(a, SSAValue) and not isinstance(b, SSAValue):
                return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[str(op)]
            if kinds == {"bool"}:
                return self.emit(arith.CmpiOp(self.boolean(a, op), self.boolean(b, op), CMPI[str(op)]))
            if kinds <= {"int", "index"}:
                return self.emit(arith.CmpiOp(self.index(a, op), self.index(b, op), CMPI[str(op)]))
            if kinds <= {"int", "float", "f32"}:
                return self.emit(arith.CmpfOp(self.f32(a, op), self.f32(b, op), CMPF[str(op)]))
            raise self.error(op, f"cannot compare {describe(a)} with {describe(b)}; convert with f32(...)")

    def x_logic(self, node: Tree) -> Value:
        lhs, op, rhs = node.children
        is_and = str(op) == "and"
        a = self.expr(lhs)
        if is_tile(a):  # element-wise: both sides are computed
            with self.at(op):
                return self.tile_binary(str(op), a, self.expr(rhs), op)
        if not isinstance(a, bool):
            a = self.boolean(a, lhs)
        elif a != is_and:  # false and ... / true or ...: the right side does not matter
            with self.discarded():
                self.boolean(self.expr(rhs), rhs)
            return a
        b = self.expr(rhs)
        if isinstance(a, bool):
            return b if isinstance(b, bool) else self.boolean(b, rhs)
        if isinstance(b, bool):
            return a if b == is_and else b
        with self.at(op):
            return self.emit((arith.AndIOp if is_and else arith.OrIOp)(a, self.boolean(b, rhs)))

    def x_logic_not(self, node: Tree) -> Value:
        op, operand = node.children
        value = self.expr(operand)
        with self.at(op):
            if isinstance(value, bool):
                return not value
            if is_tile(value):
                return self.emit(tile.UnaryOp(UnaryFn.NOT, self.reg(value)))
            return self.emit(arith.XOrIOp(self.boolean(value, operand), self.boolean(True, op)))

    def x_select(self, node: Tree) -> Value:
        cond_node, op, then_node, else_node = node.children
        cond = self.expr(cond_node)
        if isinstance(cond, bool):
            taken, untaken = (then_node, else_node) if cond else (else_node, then_node)
            value = self.expr(taken)
            with self.discarded():
                self.expr(untaken)
            return value
        cond = self.boolean(cond, cond_node)
        blocks = [Block(), Block()]
        values: list[Value] = []
        for block, branch in zip(blocks, (then_node, else_node)):
            with self.into(block):
                values.append(self.expr(branch))
        with self.at(op):
            if any(is_tile(v) for v in values):
                return self.select_tiles(cond, blocks, values, (then_node, else_node), op)
            # Scalars: compute both sides here and pick one (they are pure).
            kinds = {self.scalar_kind(v) for v in values}
            if any(isinstance(v, SSAValue) and isinstance(v.type, GlobalType) for v in values):
                raise self.error(op, "a select cannot choose between global tensors")
            if len(kinds) > 1 and not (kinds <= {"int", "index"} or kinds <= {"int", "float", "f32"}):
                raise self.error(
                    op, f"the branches of a select differ: {describe(values[0])} and {describe(values[1])}"
                )
            type_ = (
                IndexType() if kinds <= {"int", "index"} else Float32Type() if "bool" not in kinds else IntegerType(1)
            )
            results = []
            for block, value, branch in zip(blocks, values, (then_node, else_node)):
                with self.into(block):
                    results.append(self.coerce(value, type_, branch, "the select"))
                for inner in list(block.ops):
                    inner.detach()
                    self.block.add_op(inner)
            return self.emit(arith.SelectOp(cond, results[0], results[1]))

    def select_tiles(
        self, cond: SSAValue, blocks: list[Block], values: list[Value], nodes: tuple[Node, Node], op: Node
    ) -> SSAValue:
        results = []
        for block, value, branch in zip(blocks, values, nodes):
            if not is_tile(value):
                raise self.error(
                    branch, f"the branches of a select differ: {describe(values[0])} and {describe(values[1])}"
                )
            with self.into(block):
                results.append(self.reg(value))
        if results[0].type != results[1].type:
            raise self.error(
                op, f"the branches of a select differ: {type_name(results[0].type)} and {type_name(results[1].type)}"
            )
        for block, result in zip(blocks, results):
            with self.into(block):
                self.insert(scf.YieldOp(result))
        return self.emit(scf.IfOp(cond, [results[0].type], Region(blocks[0]), Region(blocks[1])))

    # ------------------------------------------------------------------ tiles and memory

    def tile_type(self, kind: str, dtype: str, dims_node: Tree) -> tile.AnyTile:
        dims = [self.const_int(d, "a tile dimension") for d in dims_node.children]
        rank = 2 if kind in ("st", "rt") else 1
        if len(dims) != rank:
            raise self.error(dims_node, f"{kind} takes {rank} dimension{'s' if rank > 1 else ''}, got {len(dims)}")
        for d, d_node in zip(dims, dims_node.children):
            if d > 2**31:
                raise self.error(d_node, f"tile dimension {d} is too large")
            if d <= 0 or d % tile.TILE_QUANTUM:
                raise self.error(d_node, f"tile dimensions must be positive multiples of {tile.TILE_QUANTUM}, got {d}")
        if not BY_NAME[dtype].in_tiles:
            raise self.error(dims_node, f"tiles and vectors hold {', '.join(n for n, d in BY_NAME.items() if d.in_tiles)}, "
                                   f"not {dtype}: an {dtype} tensor is read one element at a time (load T[i] : {dtype})")
        element = BY_NAME[dtype].ir_type()
        if kind in ("st", "rt"):
            return tile.SharedTileType(dims, element) if kind == "st" else tile.RegisterTileType(dims, element)
        return tile.SharedVectorType(dims[0], element) if kind == "sv" else tile.RegisterVectorType(dims[0], element)

    def coords(self, tensor: SSAValue, token: Node, coord_list: Tree, tile_type: tile.AnyTile
               ) -> tuple[list[SSAValue], list[SSAValue], dict[str, Attribute]]:
        """Tile coordinates into `tensor`, checked against the tile's shape; the ends of the
        axes given as `elem(x, end)`; and the op's attributes that say which coordinates count
        elements and which axes the ends bound."""
        gl = tensor.type
        assert isinstance(gl, GlobalType)
        nodes = coord_list.children
        if len(nodes) != gl.rank:
            raise self.error(
                coord_list, f"'{token}' has rank {gl.rank}, so it takes {gl.rank} tile coordinates, got {len(nodes)}"
            )
        shape = tile_type.get_shape()
        if len(shape) > gl.rank:
            raise self.error(token, f"a {type_name(tile_type)} does not fit the rank-{gl.rank} tensor '{token}'")
        coords: list[SSAValue] = []
        ends: list[SSAValue] = []
        elements: list[int] = []
        bounded: list[int] = []
        for axis, node in enumerate(nodes):
            if isinstance(node, Tree) and node.data == "call" and str(node.children[0]) == ELEMENT_COORD:
                arg_list = node.children[1]
                args = [] if arg_list is None else list(arg_list.children)
                if len(args) not in (1, 2):
                    raise self.error(node.children[0], f"{ELEMENT_COORD} takes 1 or 2 arguments, got {len(args)}")
                if axis < gl.rank - len(shape):
                    raise self.error(node, f"{ELEMENT_COORD}(...) marks a coordinate along the tile's dims; "
                                           f"the leading coordinates of '{token}' already count elements")
                elements.append(axis)
                if len(args) == 2:
                    bounded.append(axis)
                    ends.append(self.index(self.expr(args[1]), args[1], "the end of an element range"))
                node = args[0]
            coords.append(self.index(self.expr(node), node, "a tile coordinate"))
        attributes: dict[str, Attribute] = {}
        if elements:
            attributes[tile.ELEMENT_COORDS] = ArrayAttr([IntegerAttr(a, 64) for a in elements])
        if bounded:
            attributes[tile.ELEMENT_ENDS] = ArrayAttr([IntegerAttr(a, 64) for a in bounded])
        return coords, ends, attributes

    def x_load(self, node: Tree) -> Value:
        return self.load(node, {})

    def x_load_scalar(self, node: Tree) -> Value:
        """`load T[i, j] : i32`: one element of an i32 tensor, at element indices, as an index;
        `load S[i] : f32`: one element of an f32 tensor the kernel does not write, as an f32 scalar."""
        _, token, index_list, dtype_node = node.children
        with self.at(node):
            tensor = self.tensor(token)
            gl = tensor.type
            assert isinstance(gl, GlobalType)
            held = tile.element_name(gl.element_type)
            asked = str(dtype_node.children[0])
            if held != asked:
                raise self.error(
                    dtype_node,
                    f"a load without a tile type reads one element of an i32 or f32 tensor, of its own dtype "
                    f"(load T[i] : i32, load S[i] : f32); '{token}' holds {held}"
                    + (f": read it with load {token}[...] : {held}" if held in dtypes.SCALAR_LOADS
                       else f": load a tile of it (load {token}[...] : rt<{held}>[R, C])"),
                )
            nodes = index_list.children
            if len(nodes) != gl.rank:
                raise self.error(index_list, f"'{token}' has rank {gl.rank}, so a scalar load takes {gl.rank} indices, "
                                             f"got {len(nodes)}")
            indices = [self.index(self.expr(n), n, "an element index") for n in nodes]
            return self.emit(tile.LoadScalarOp(tensor, indices))

    def load(self, node: Tree, attributes: dict[str, Attribute]) -> SSAValue:
        _, token, coord_list, type_node = node.children
        with self.at(node):
            kind_node, dtype_node, dims_node = type_node.children
            kind = str(kind_node.children[0])
            tensor = self.tensor(token)
            type_ = self.tile_type(kind, str(dtype_node.children[0]), dims_node)
            coords, ends, coord_attributes = self.coords(tensor, token, coord_list, type_)
            attributes = {**attributes, **coord_attributes}
            gl = tensor.type
            assert isinstance(gl, GlobalType)
            if gl.element_type != type_.element_type:
                have, want = tile.element_name(gl.element_type), tile.element_name(type_.element_type)
                raise self.error(
                    dtype_node,
                    f"load cannot convert: '{token}' holds {have}, the tile holds {want} "
                    f"(load as {have}, then convert with {want}(...))",
                )
            shared = tile.same_kind(type_, type_.element_type)
            if kind == "rt":
                shared = tile.SharedTileType(type_.get_shape(), type_.element_type)
            elif isinstance(type_, tile.RegisterVectorType):
                shared = tile.SharedVectorType(type_.length, type_.element_type)
            load = self.insert(tile.LoadOp(tensor, coords, shared, ends))
            load.attributes.update(attributes)
            result = load.results[0]
            return self.emit(tile.ToRegOp(result)) if kind in ("rt", "rv") else result

    def x_fill(self, node: Tree) -> Value:
        kind_node, dtype_node, dims_node = node.children
        kind = str(kind_node.children[0])
        rank = len(dims_node.children)
        if rank not in (1, 2):
            raise self.error(dims_node, f"{kind} makes a tile [rows, cols] or a vector [length], got {rank} dimensions")
        type_ = self.tile_type("rt" if rank == 2 else "rv", str(dtype_node.children[0]), dims_node)
        return self.emit(tile.FillOp(FILLS[kind], type_))

    def x_fill_value(self, node: Tree) -> Value:
        return FILLS[str(node.children[0].children[0])]

    def x_convert(self, node: Tree) -> Value:
        dtype_node, operand = node.children
        dtype = str(dtype_node.children[0])
        if not BY_NAME[dtype].in_tiles:
            raise self.error(dtype_node, f"{dtype}(...) converts nothing: an {dtype} tensor is read one element at a "
                                         f"time (load T[i] : {dtype}), as an index")
        value = self.expr(operand)
        if is_tile(value):
            value = self.reg(value)
            element = BY_NAME[dtype].ir_type()
            if value.type.element_type == element:
                return value
            return self.emit(tile.ConvertOp(value, element))
        if dtype != "f32":
            raise self.error(node, f"{dtype}(...) converts tiles and vectors; scalars are f32, got {describe(value)}")
        if is_number(value):
            return float(value)
        if has_type(value, Float32Type):
            return value
        if has_type(value, IndexType):
            # signed: an index may be negative (`f32(d - R)`)
            as_int = self.emit(arith.IndexCastOp(value, IntegerType(64)))
            return self.emit(arith.SIToFPOp(as_int, Float32Type()))
        raise self.error(node, f"f32(...) cannot convert {describe(value)}")

    # ------------------------------------------------------------------ builtin functions

    def x_call(self, node: Tree) -> Value:
        token, arg_list = node.children
        name = str(token)
        if name in self.functions:
            assert isinstance(token, Token)
            arg_nodes = [] if arg_list is None else list(arg_list.children)
            return self.inline(token, [self.expr(a) for a in arg_nodes])
        if name not in BUILTIN_FUNCTIONS:
            if self.lookup(name) is not None:
                raise self.error(token, f"'{name}' is not a function")
            raise self.unknown(token)
        arg_nodes = [] if arg_list is None else list(arg_list.children)
        args = [self.expr(a) for a in arg_nodes]
        with self.at(token):
            if name in UNARY:
                self.arity(token, args, 1)
                return self.unary(name, args[0], arg_nodes[0])
            if name in VECTOR_REDUCTIONS and len(args) == 1:
                return self.vector_reduce(name, args[0], arg_nodes[0])
            if name in ("max", "min"):
                self.arity(token, args, 1, 2)
                return self.binary(name, args[0], args[1], token)
            if name == "pow":
                self.arity(token, args, 2)
                return self.power(args[0], args[1], arg_nodes, token)
            if name == "sum":
                self.arity(token, args, 1)
            if name in SCANS:
                self.arity(token, args, 1)
                return self.cumsum(name, args[0], arg_nodes[0])
            if name in REDUCTIONS:
                self.arity(token, args, 1)
                fn, axis = REDUCTIONS[name]
                return self.emit(tile.ReduceOp(fn, axis, self.tile_arg(args[0], arg_nodes[0], name)))
            if name in BROADCASTS:
                self.arity(token, args, 2)
                return self.broadcast(name, args, arg_nodes)
            if name in MMAS:
                self.arity(token, args, 2, 3)
                return self.mma(name, args, arg_nodes)
            if name == "ceildiv":
                self.arity(token, args, 2)
                return self.ceildiv(args, arg_nodes, token)
            if name == "bounds_mask":
                return self.bounds_mask(token, args, arg_nodes)
            if name == ELEMENT_COORD:
                raise self.error(token, f"{ELEMENT_COORD}(x) marks a coordinate of a load or store that counts elements, "
                                        f"not tiles (load A[{ELEMENT_COORD}(row), 0] : ...); it has no value of its own")
            if name in POSITIONS:
                self.arity(token, args, 1, 2)
                return self.position(name, args, arg_nodes)
            if name == "where":
                self.arity(token, args, 3)
                return self.where(args, arg_nodes)
            self.arity(token, args, 1, 2, 3, 4)
            return self.causal_mask(args, arg_nodes)

    def arity(self, token: Node, args: list[Value], *counts: int) -> None:
        if len(args) not in counts:
            want = " or ".join(str(c) for c in counts)
            raise self.error(token, f"{token} takes {want} argument{'s' if counts != (1,) else ''}, got {len(args)}")

    def unary(self, name: str, value: Value, node: Node) -> Value:
        fn, fold, scalar_op = UNARY[name]
        if is_tile(value):
            return self.emit(tile.UnaryOp(fn, self.reg(value)))
        if is_number(value):
            try:
                result = fold(value)
            except (ValueError, ZeroDivisionError):
                raise self.error(node, f"{name}({value}) is undefined") from None
            except OverflowError:
                raise self.error(node, f"{name}({value}) overflows") from None
            return result
        if has_type(value, Float32Type):
            if fn == UnaryFn.RELU:
                return self.emit(arith.MaxnumfOp(value, self.f32(0.0, node)))
            if scalar_op is None:
                raise self.error(node, f"{name} of an f32 scalar is not supported yet: apply it to a tile or vector")
            return self.emit(scalar_op(value))
        raise self.error(node, f"{name} takes a tile, vector or number, got {describe(value)}")

    def power(self, base: Value, exponent: Value, nodes: list[Node], token: Node) -> Value:
        """pow(x, n) for a compile-time integer n: x multiplied by itself by repeated squaring
        (x^5 = (x^2)^2 * x), each product an ordinary `*` (so a bf16 tile rounds after each);
        n = 0 gives ones, n < 0 the reciprocal 1 / x^-n."""
        if not is_int(exponent):
            raise self.error(nodes[1], f"pow takes a compile-time integer exponent, got {describe(exponent)}")
        if is_number(base):
            if is_int(base) and abs(base) >= 2 and exponent >= 64:
                raise self.error(token, f"pow({base}, {exponent}) overflows 64 bits")
            try:
                folded = float(base) ** exponent if exponent < 0 or isinstance(base, float) else base**exponent
            except ZeroDivisionError:
                raise self.error(token, f"pow({base}, {exponent}) divides by zero") from None
            except OverflowError:
                raise self.error(token, f"pow({base}, {exponent}) overflows") from None
            if is_int(folded) and not I64_MIN <= folded <= I64_MAX:
                raise self.error(token, f"pow({base}, {exponent}) overflows 64 bits")
            return folded
        if is_tile(base):
            base = self.reg(base)
        elif self.scalar_kind(base) == "index":
            if exponent < 0:
                raise self.error(nodes[1], f"pow of an index takes an exponent >= 0, got {exponent}")
        elif not has_type(base, Float32Type):
            raise self.error(nodes[0], f"pow takes a tile, vector or number, got {describe(base)}")
        if exponent == 0:
            if is_tile(base):
                return self.emit(tile.FillOp(1.0, base.type))
            return 1 if self.scalar_kind(base) == "index" else 1.0
        result: Value | None = None
        remaining = abs(exponent)
        while remaining:
            if remaining & 1:
                result = base if result is None else self.binary("*", result, base, token)
            remaining >>= 1
            if remaining:
                base = self.binary("*", base, base, token)
        assert result is not None
        return self.binary("/", 1.0, result, token) if exponent < 0 else result

    def broadcast(self, name: str, args: list[Value], nodes: list[Node]) -> SSAValue:
        fn, axis = BROADCASTS[name]
        source = self.tile_arg(args[0], nodes[0], name)
        vector = self.tile_arg(args[1], nodes[1], name + " (second argument)", "vector")
        assert isinstance(source.type, tile.RegisterTileType) and isinstance(vector.type, tile.RegisterVectorType)
        rows, cols = source.type.get_shape()
        length = rows if axis == Axis.ROW else cols
        if vector.type.length != length:
            what = "rows" if axis == Axis.ROW else "columns"
            raise self.error(
                nodes[1],
                f"{name} over {type_name(source.type)} needs a vector of length {length} (one per {what[:-1]}), "
                f"got {type_name(vector.type)}",
            )
        if vector.type.element_type != source.type.element_type:
            raise self.error(
                nodes[1], f"{name} needs one dtype, got {type_name(source.type)} and {type_name(vector.type)}"
            )
        return self.emit(tile.BroadcastOp(fn, axis, source, vector))

    def vector_reduce(self, name: str, value: Value, node: Node) -> SSAValue:
        """sum(v), max(v), min(v): a vector reduced in f32 to an f32 scalar; a bf16, f16 or fp8
        vector is converted to f32 first (exact), so its padding is masked in f32 too."""
        if is_tile(value) and isinstance(value.type, tile.RegisterTileType | tile.SharedTileType):
            raise self.error(node, f"{name} of one argument reduces a vector to a scalar; reduce a tile with "
                                   f"row_{name} or col_{name} first, got {describe(value)}")
        vector = self.tile_arg(value, node, name, "vector")
        assert isinstance(vector.type, tile.RegisterVectorType)
        if not isinstance(vector.type.element_type, Float32Type):
            vector = self.emit(tile.ConvertOp(vector, Float32Type()))
        return self.emit(tile.VectorReduceOp(VECTOR_REDUCTIONS[name], vector))

    def cumsum(self, name: str, value: Value, node: Node) -> SSAValue:
        """row_cumsum(t), col_cumsum(t) on tiles, cumsum(v) on vectors: inclusive prefix sums,
        computed in f32 and rounded to the operand's dtype."""
        axis = SCANS[name]
        source = self.tile_arg(value, node, name, "tile" if axis is not None else "vector")
        assert isinstance(source.type, tile.RegisterTileType | tile.RegisterVectorType)
        return self.emit(tile.CumsumOp(source, axis))

    def mma(self, name: str, args: list[Value], nodes: list[Node]) -> SSAValue:
        transpose_a, transpose_b = MMAS[name]
        operands: list[SSAValue] = []
        for value, node, which in ((args[0], nodes[0], "a"), (args[1], nodes[1], "b")):
            if not is_tile(value) or not isinstance(value.type, tile.RegisterTileType | tile.SharedTileType):
                raise self.error(node, f"{name} operand {which} must be a tile, got {describe(value)}")
            operands.append(value)
        a, b = operands
        fp8 = any(isinstance(v.type, tile.RegisterTileType | tile.SharedTileType)  # fp8e4m3, fp8e5m2
                  and tile.element_bytes(v.type.element_type) == 1 for v in operands)
        if fp8 and name != "mma_ABt":
            raise self.error(nodes[0], f"an fp8 mma is mma_ABt (a [M, K], b stored [N, K]): wgmma reads fp8 "
                                       f"operands K-major only; {name} needs another layout")
        # wgmma reads B, a transposed A and an fp8 A from shared memory: move register tiles there.
        if isinstance(b.type, tile.RegisterTileType):
            b = self.emit(tile.ToSharedOp(b))
        if (transpose_a or fp8) and isinstance(a.type, tile.RegisterTileType):
            a = self.emit(tile.ToSharedOp(a))
        a_type, b_type = a.type, b.type
        assert isinstance(a_type, tile.RegisterTileType | tile.SharedTileType) and isinstance(b_type, tile.SharedTileType)
        dtypes = {a_type.element_type, b_type.element_type}
        if len(dtypes) != 1 or isinstance(a_type.element_type, Float32Type):
            raise self.error(
                nodes[0],
                f"{name} operands must share one of bf16, f16, fp8e4m3, fp8e5m2, got {type_name(a_type)} and "
                f"{type_name(b_type)}; convert with bf16(...)",
            )
        (ar, ac), (br, bc) = a_type.get_shape(), b_type.get_shape()
        m, ka = (ac, ar) if transpose_a else (ar, ac)
        kb, n = (bc, br) if transpose_b else (br, bc)
        if ka != kb:
            raise self.error(
                nodes[1],
                f"{name} inner dimensions differ: a is {type_name(a_type)} (K = {ka}), "
                f"b is {type_name(b_type)} (K = {kb})",
            )
        result_type = tile.RegisterTileType([m, n], Float32Type())
        acc = None
        if len(args) == 3:
            acc_value = args[2]
            acc = self.reg(acc_value) if is_tile(acc_value) else None
            if acc is None or acc.type != result_type:
                raise self.error(
                    nodes[2],
                    f"the accumulator of {name} must be {type_name(result_type)}, got {describe(acc_value)}",
                )
        return self.emit(tile.MmaOp(a, b, acc, result_type, transpose_a, transpose_b))

    def causal_mask(self, args: list[Value], nodes: list[Node]) -> SSAValue:
        source = self.tile_arg(args[0], nodes[0], "causal_mask")
        offsets: list[Value] = [0, 0]
        offset_nodes = [nodes[0], nodes[0]]
        fill: float = -math.inf
        fill_node = nodes[0]
        if len(args) in (2, 4):
            given, fill_node = args[-1], nodes[-1]
            if not is_number(given):
                raise self.error(
                    fill_node, f"the fill of causal_mask must be a compile-time number, got {describe(given)}"
                )
            fill = given
        if len(args) >= 3:
            offsets, offset_nodes = args[1:3], nodes[1:3]
        row, col = (self.index(v, n, "an offset") for v, n in zip(offsets, offset_nodes))
        fill = self.f32_attr(fill, fill_node).value.data
        return self.emit(tile.MaskOp(tile.MaskKind.CAUSAL, source, row, col, fill))

    def position(self, name: str, args: list[Value], nodes: list[Node]) -> SSAValue:
        """row_index(t[, first]) / col_index(t[, first]): an f32 tile of t's shape holding each
        element's row (column) plus `first`; of a vector, an f32 vector of its length holding each
        element's index plus `first` (either name: a vector has one axis). Only the shape is read."""
        shape_of = args[0]
        if not is_tile(shape_of):
            raise self.error(nodes[0], f"{name} takes a tile or a vector (for its shape), got {describe(shape_of)}")
        first = self.index(args[1] if len(args) == 2 else 0, nodes[-1], "an offset")
        if isinstance(shape_of.type, tile.RegisterVectorType | tile.SharedVectorType):
            vector = tile.RegisterVectorType(shape_of.type.length, Float32Type())
            return self.emit(tile.PositionOp(Axis.ROW, first, vector))
        assert isinstance(shape_of.type, tile.RegisterTileType | tile.SharedTileType)
        result_type = tile.RegisterTileType(shape_of.type.get_shape(), Float32Type())
        return self.emit(tile.PositionOp(POSITIONS[name], first, result_type))

    def where(self, args: list[Value], nodes: list[Node]) -> SSAValue:
        """where(cond, a, b): a where cond != 0, else b, per element, of tiles or of vectors; a or b
        may be a number or an f32 scalar; the result has the shaped branches' type (f32 when both
        are scalars)."""
        cond = self.tile_arg(args[0], nodes[0], "where", "tile or vector")
        assert isinstance(cond.type, tile.RegisterTileType | tile.RegisterVectorType)
        kind = type(cond.type)
        branches: list[SSAValue] = []
        for value, node in zip(args[1:], nodes[1:]):
            if is_tile(value):
                branches.append(self.tile_arg(value, node, "where", "tile or vector"))
            elif is_number(value) or has_type(value, Float32Type):
                branches.append(self.f32(value, node))
            else:
                raise self.error(node, f"where chooses between tiles, vectors, numbers and f32 scalars, got {describe(value)}")
        shaped = [b.type for b in branches if isinstance(b.type, tile.RegisterTileType | tile.RegisterVectorType)]
        result_type = shaped[0] if shaped else tile.same_kind(cond.type, Float32Type())
        for branch_type, node in zip([b.type for b in branches], nodes[1:]):
            if isinstance(branch_type, tile.RegisterTileType | tile.RegisterVectorType) and branch_type != result_type:
                raise self.error(node, f"the branches of where differ: {type_name(result_type)} and "
                                       f"{type_name(branch_type)}")
        assert isinstance(result_type, tile.RegisterTileType | tile.RegisterVectorType)
        if not isinstance(result_type, kind):
            raise self.error(nodes[0], f"the condition of where must be a {'vector' if isinstance(result_type, tile.RegisterVectorType) else 'tile'} "
                                       f"like its branches ({type_name(result_type)}), got {type_name(cond.type)}")
        if result_type.get_shape() != cond.type.get_shape():
            raise self.error(nodes[0], f"the condition of where must have the branches' shape "
                                       f"{list(result_type.get_shape())}, got {type_name(cond.type)}")
        return self.emit(tile.SelectOp(cond, branches[0], branches[1], result_type))

    def ceildiv(self, args: list[Value], nodes: list[Node], token: Node) -> Value:
        """⌈a / b⌉ of integers or indices: the number of tiles that cover a dim, the last one partial."""
        a, b = args
        if is_int(b) and b <= 0:
            raise self.error(nodes[1], f"ceildiv needs a positive divisor, got {b}")
        if is_int(a) and is_int(b):
            return -(-a // b)
        if {self.scalar_kind(v) for v in args} <= {"int", "index"}:
            return self.emit(arith.CeilDivSIOp(self.index(a, nodes[0]), self.index(b, nodes[1])))
        raise self.error(token, f"ceildiv takes integers or indices, got {describe(a)} and {describe(b)}")

    def bounds_mask(self, token: Node, args: list[Value], nodes: list[Node]) -> SSAValue:
        """bounds_mask(t, rows, cols[, fill]) / bounds_mask(v, n[, fill]): elements at or past the limits
        become fill (-inf unless given)."""
        if not args:
            self.arity(token, args, 2, 3, 4)
        source = self.tile_arg(args[0], nodes[0], "bounds_mask", "tile or vector")
        assert isinstance(source.type, tile.ShapedTileType)
        rank = len(source.type.get_shape())
        self.arity(token, args, rank + 1, rank + 2)
        fill: float = -math.inf
        if len(args) == rank + 2:
            given = args[-1]
            if not is_number(given):
                raise self.error(nodes[-1], f"the fill of bounds_mask must be a compile-time number, got {describe(given)}")
            fill = self.f32_attr(given, nodes[-1]).value.data
        limits = [self.index(v, n, "a limit") for v, n in zip(args[1 : rank + 1], nodes[1 : rank + 1])]
        return self.emit(tile.BoundsMaskOp(source, limits, fill))

    # ------------------------------------------------------------------ verification

    def verify(self, module: ModuleOp) -> None:
        """Verify; an op the checks above let through becomes a TkError at its source line."""
        try:
            module.verify()
        except VerifyException as module_err:
            for op in module.walk():
                try:
                    op.verify(verify_nested_ops=False)
                except VerifyException as err:
                    _, line, col = location_of(op)
                    message = str(err).split("\n")[0].removeprefix("Operation does not verify: ")
                    raise TkError(f"invalid {op.name}: {message}", self.filename, line, col, self.source) from None
            message = str(module_err).split("\n")[0]
            raise TkError(f"invalid IR: {message}", self.filename, None, None, self.source) from None


def build_module(
    tree: Tree, source: str, filename: str, params: Mapping[str, Number] | None, kernel: str | None
) -> ModuleOp:
    """The tile-dialect module of a parse tree (one `tile.kernel` per kernel, or just `kernel`)."""
    return _Builder(source, filename, dict(params or {})).module(tree, kernel)
