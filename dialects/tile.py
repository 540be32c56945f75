"""The tile dialect: ThunderKittens-style tiles as SSA values at thread-block scope.

Types
  !tile.gl<[M, K], bf16>            global tensor; dims are symbolic names or integers
  !tile.st<128x64xbf16>             shared tile; `, swizzle 128` once tile-swizzle-select decided
  !tile.rt<128x256xf32>             register tile, distributed over the consumer warpgroups
  !tile.rv<128xf32>                 register vector (one value per row or per column of a tile)
  !tile.sv<128xf32>                 shared vector

Every op computes on whole tiles with value semantics. Control flow is `scf`, index and
scalar math is `arith`/`math`. Decisions that passes make are `#tile.decision<value, "reason">`
attributes, so IR dumps explain the compiled kernel; the kernel's occupancy plan is one
`plan = #tile.plan<consumers = #tile.decision<...>, ...>` of them (PlanAttr).
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping, Sequence
from itertools import takewhile
from dataclasses import dataclass
from enum import auto
from typing import ClassVar, cast

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    Float32Type,
    FloatAttr,
    FunctionType,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    UnitAttr,
)
from xdsl.dialects.utils import EnumAttribute, parse_func_op_like, print_func_op_like
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import (
    ConstantLike,
    EffectInstance,
    HasCanonicalizationPatternsTrait,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from tkc import dtypes
from tkc.abi import SWIZZLES
from tkc.dtypes import ElementType, TensorElementType


TILE_QUANTUM = 16
"""Every tile dimension is a multiple of 16 (the wgmma/ldmatrix granule)."""

WARPGROUP_THREADS = 128
"""Threads of a warpgroup: a block runs one producer warpgroup and 1 to 7 consumer ones."""
WGMMA_ROWS = 64
"""Rows of one wgmma (its M): the register-tile rows a consumer warpgroup owns come in these units."""
BAND_COLUMNS = 32
"""A band layout's tile columns and column vectors come in these units: the 4 warps of a warpgroup
times the 8 columns of a register group (sm90.FragmentType)."""
SWIZZLE_SPANS = SWIZZLES
"""Shared-memory layouts TMA and wgmma know: unswizzled, or a 32, 64 or 128-byte swizzle."""
REGISTER_COUNTS = range(24, 257, 8)
"""Per-thread register counts setmaxnreg takes."""
MBARRIER_BYTES = 8
"""The size of one mbarrier (a u64 in shared memory)."""
RING_BARRIERS_PER_STAGE = 2
"""A ring stage's mbarriers: `full` (its loads landed) and `empty` (its readers are done)."""

MAX_PINNED_STAGES = 16
"""The deepest ring @stages(n) may pin."""
SMEM_BUDGET = 232448
"""Dynamic shared memory one block may opt into on Hopper (227 KB)."""
SM_SMEM = 233472
"""Shared memory of one SM (228 KB): blocks on the same SM share it, BLOCK_RESERVED_SMEM each reserved."""
BLOCK_RESERVED_SMEM = 1024
SM_REGISTERS = 65536
MAX_THREAD_REGISTERS = 255


def entry_registers(threads: int, ctas: int) -> int:
    """Registers per thread at entry to a block of `threads` with .maxntid and .minnctapersm `ctas`:
    the SM's register file shared by `ctas` blocks, in the multiples of 8 setmaxnreg counts in."""
    return min(MAX_THREAD_REGISTERS, SM_REGISTERS // (threads * ctas)) // 8 * 8

TMA_BOX_MAX = 256
"""Elements one TMA box spans per dimension at most: a longer vector is copied as several boxes."""
TMA_SMEM_ALIGN = 128
"""A TMA box's shared-memory address is a multiple of this many bytes (an unaligned one stops the
kernel with a misaligned-address error)."""
TMA_GLOBAL_ALIGN = 16
"""A TMA box starts in global memory on a multiple of this many bytes along a tensor's innermost
dim (a row's start, and an `elem` coordinate times the element size: another one stops the
kernel with an illegal-instruction error)."""


def vector_box(length: int, element_bytes: int) -> int | None:
    """The elements of each TMA box a vector of `length` elements is copied in: the whole vector
    when one box spans it, else the largest equal boxes of at most TMA_BOX_MAX elements that lie
    end to end on TMA_SMEM_ALIGN-byte boundaries; None when no such boxes divide the vector."""
    if length <= TMA_BOX_MAX:
        return length
    boxes = [n for n in range(TILE_QUANTUM, TMA_BOX_MAX + 1, TILE_QUANTUM)
             if length % n == 0 and n * element_bytes % TMA_SMEM_ALIGN == 0]
    return max(boxes, default=None)


@dataclass(frozen=True)
class Allowed:
    """The integers an attribute may hold, and how a diagnostic says so."""

    values: Container[int]
    text: str


_COUNT, _SIZE = Allowed(range(1, 1 << 31), "positive"), Allowed(range(0, 1 << 31), "non-negative")
CLUSTER_CTAS = (1, 2, 4)
"""The CTAs per cluster tkc builds (1: none; 2 or 4 along grid axis 0, multicasting what they share)."""
_CONSUMERS, _CLUSTER = Allowed(range(1, 8), "1..7"), Allowed(CLUSTER_CTAS, "1, 2 or 4")
_BUDGET = Allowed((0, *REGISTER_COUNTS), "0 (unchanged) or a multiple of 8 in 24..256")
_STAGES, _FLAG = Allowed(range(1, MAX_PINNED_STAGES + 1), f"1..{MAX_PINNED_STAGES}"), Allowed((0, 1), "0 or 1")
_GROUP = Allowed(range(0, 1 << 31), "0 (grid axis 0 whole) or a count of tile rows")
FMA_EXP2_EVERY_MAX = 8
"""The largest k of @fma_exp2(k): every k-th element of a register tile's exp2 on the FMA pipe."""
_FMA_EXP2 = Allowed(range(0, FMA_EXP2_EVERY_MAX + 1), f"0..{FMA_EXP2_EVERY_MAX}")
MAX_CTAS_PER_SM = 4
"""The most blocks of one kernel the plan puts on an SM (each of at least 256 threads)."""
_CTAS = Allowed(range(1, MAX_CTAS_PER_SM + 1), f"1..{MAX_CTAS_PER_SM}")

KERNEL_PINS = {
    "consumers": _CONSUMERS, "cluster": _CLUSTER, "heavy_first": _FLAG, "stream_k": _FLAG, "split_ring": _FLAG,
    "fma_exp2": _FMA_EXP2, "schedule_wgmma": _FLAG, "dependent_launch": _FLAG, "band": _FLAG, "ctas_per_sm": _CTAS,
    "whole_staging": _FLAG, "shared_staging": _FLAG, "stages": _STAGES, "group_m": _GROUP, "retain": _FLAG,
}
"""The integer annotations of a tile.kernel (the user's pins, as the frontend checks them; `stages`
and `group_m` only come from tile IR), each within what its plan field may hold;
`registers` holds two REGISTER_COUNTS; `persistent` and `whole_tiles` are units."""
UNIT_PINS = ("persistent", "whole_tiles")
"""The kernel annotations that are present or not (`@persistent`, `@whole_tiles`); `persistent`
may also be 0, pinned off (`@persistent(0)`)."""
PLAN_DECISIONS = {
    "consumers": _CONSUMERS,
    "threads": Allowed(range(2 * WARPGROUP_THREADS, 8 * WARPGROUP_THREADS + 1, WARPGROUP_THREADS), "256..1024 by 128"),
    "persistent": _FLAG,
    "stages": _STAGES,
    "smem_bytes": Allowed(range(0, SMEM_BUDGET + 1), f"0..{SMEM_BUDGET} (the shared memory a block may opt into)"),
    "group_m": _GROUP,
    "ctas_per_sm": _COUNT,
    "cluster": _CLUSTER,
    "heavy_first": Allowed(range(-1, 3), "-1 (none) or a grid axis"),
    "table_first": Allowed(range(-1, 3), "-1 (none) or a grid axis"),
    "stream_k": _FLAG,
    "dependent_launch": _FLAG,
    "fma_exp2": _FMA_EXP2,
    "schedule_wgmma": _FLAG,
    "replicated_rows": Allowed(range(0, 1 << 31, 16), "0 (none) or a multiple of 16"),
    "band": _FLAG,
    "whole_staging": _FLAG,
    "shared_staging": _FLAG,
    "producer_registers": _BUDGET,
    "consumer_registers": _BUDGET,
}
"""The fields of a kernel's `#tile.plan` (tile-occupancy-plan's decisions, which passes/plan.py's
KernelPlan reads), in the order the planner decides and the plan prints them. PlanAttr.verify
states how they agree with each other; the kernel's verifier that heavy_first and table_first
are axes of its grid."""
LOOP_DECISIONS = {"stages": _STAGES, "pipeline": _STAGES, "overlap": _FLAG, "turns": _FLAG, "split_ring": _FLAG,
                  "reverse": _FLAG, "sweep": _FLAG, "retain": _SIZE}
"""The pins (`stages`, `overlap`, `turns`, `split_ring`, `reverse`) and decisions (`pipeline`, `overlap`, `turns`,
`split_ring`, `sweep`, `retain`: the tiles kept in shared memory for it) on an scf.for of a kernel."""
SHARED_TILE_DECISIONS = {"swizzle": Allowed(SWIZZLE_SPANS, "0, 32, 64 or 128"), "pad": _SIZE}
"""On a tile.load or tile.to_shared: the swizzle pinned or decided (the tile's type holds a decided
one), and the bytes each row is padded by (tile-bank-conflicts)."""
STORE_DECISIONS = {"staging": SHARED_TILE_DECISIONS["swizzle"]}
"""On a tile.store of a register tile: the swizzle of its staging tile (tile-bank-conflicts)."""


def element_bytes(element_type: Attribute) -> int:
    dtype = dtypes.of_type(element_type)
    if dtype is None:
        raise ValueError(f"no byte size for {element_type}")
    return dtype.bytes


def element_name(element_type: Attribute) -> str:
    """The dtype as the .tk language spells it."""
    dtype = dtypes.of_type(element_type)
    return str(element_type) if dtype is None else dtype.name


def _print_shape_and_element(printer: Printer, shape: Sequence[int], element_type: Attribute) -> None:
    printer.print_string("x".join(str(d) for d in shape) + "x")
    printer.print_attribute(element_type)


def _shape_attr(shape: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr(IntAttr(d) for d in shape)


def _check_integers(attributes: Mapping[str, Attribute], allowed: Mapping[str, Allowed], prefix: str = "") -> None:
    """Each of `attributes` named in `allowed` is an integer (a #tile.decision or a plain integer) in it."""
    for name, rule in allowed.items():
        attr = attributes.get(name)
        if attr is None:
            continue
        value = attr.value if isinstance(attr, DecisionAttr) else attr
        if not isinstance(value, IntegerAttr) or value.value.data not in rule.values:
            raise VerifyException(f"{prefix}{name} must be an integer, {rule.text}; got {value}")


# --------------------------------------------------------------------------- attributes


@irdl_attr_definition
class DecisionAttr(ParametrizedAttribute):
    """A value a pass chose (or an annotation pinned), with the reason, for dumps and reports."""

    name = "tile.decision"
    value: Attribute
    reason: StringAttr

    def __init__(self, value: Attribute | int, reason: str):
        if isinstance(value, int):
            value = IntegerAttr(value, 64)
        super().__init__(value, StringAttr(reason))

    @property
    def int_value(self) -> int:
        assert isinstance(self.value, IntegerAttr)
        return self.value.value.data

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            if isinstance(self.value, IntegerAttr) and self.value.type == IntegerType(64):
                printer.print_string(str(self.value.value.data))
            else:
                printer.print_attribute(self.value)
            printer.print_string(", ")
            printer.print_string_literal(self.reason.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            number = parser.parse_optional_integer()
            value = IntegerAttr(number, 64) if number is not None else parser.parse_attribute()
            parser.parse_punctuation(",")
            reason = parser.parse_str_literal()
        return (value, StringAttr(reason))

    def verify(self) -> None:
        if not isinstance(self.value, IntegerAttr):
            raise VerifyException(f"a decision's value is an integer, got {self.value}")


@irdl_attr_definition
class PlanAttr(ParametrizedAttribute):
    """The occupancy plan of a tile.kernel (its `plan` attribute): one #tile.decision per field of
    PLAN_DECISIONS that a pass decided, printed in that order:
    `#tile.plan<consumers = #tile.decision<2, "why">, threads = #tile.decision<384, "why">, ...>`.
    tile-occupancy-plan writes it and tile-pipeline completes it; passes/plan.py's KernelPlan.of
    reads it, a field absent from it keeping its default."""

    name = "tile.plan"
    decisions: DictionaryAttr

    def __init__(self, decisions: Mapping[str, Attribute]):
        super().__init__(_plan_order(decisions))

    def with_decision(self, name: str, decision: DecisionAttr) -> PlanAttr:
        return PlanAttr({**self.decisions.data, name: decision})

    def without(self, name: str) -> PlanAttr:
        """The plan as if `name` had never been decided (a provisional decision taken back)."""
        return PlanAttr({key: value for key, value in self.decisions.data.items() if key != name})

    def print_parameters(self, printer: Printer) -> None:
        def print_field(field: tuple[str, Attribute]) -> None:
            printer.print_string(f"{field[0]} = ")
            printer.print_attribute(field[1])

        with printer.in_angle_brackets():
            printer.print_list(self.decisions.data.items(), print_field)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        decisions: dict[str, Attribute] = {}

        def parse_field() -> None:
            name = parser.parse_identifier()
            if name in decisions:
                parser.raise_error(f"the plan decides {name} twice")
            parser.parse_punctuation("=")
            decisions[name] = parser.parse_attribute()

        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, parse_field)
        return (_plan_order(decisions),)

    def verify(self) -> None:
        fields = self.decisions.data
        for name, decision in fields.items():
            if name not in PLAN_DECISIONS:
                raise VerifyException(f"a plan has no field {name}; its fields are {', '.join(PLAN_DECISIONS)}")
            if not isinstance(decision, DecisionAttr):
                raise VerifyException(f'the plan\'s {name} must be a #tile.decision<value, "reason">, got {decision}')
        _check_integers(fields, PLAN_DECISIONS, "the plan's ")
        value = {name: decision.int_value for name, decision in fields.items() if isinstance(decision, DecisionAttr)}
        if "threads" in value and "consumers" in value:
            if value["threads"] != WARPGROUP_THREADS * (1 + value["consumers"]):
                raise VerifyException(
                    f"the plan's {value['threads']} threads are not 1 producer + {value['consumers']} consumer "
                    f"warpgroups of {WARPGROUP_THREADS}"
                )
        if value.get("replicated_rows", 0) >= WGMMA_ROWS * value.get("consumers", 1):
            raise VerifyException(
                f"the plan replicates register tiles of up to {value['replicated_rows']} rows, but "
                f"{value.get('consumers', 1)} consumer warpgroup(s) split tiles of {WGMMA_ROWS * value.get('consumers', 1)} "
                "rows and more: only shorter tiles are replicated"
            )
        ctas = value.get("ctas_per_sm", 1)
        if "producer_registers" in value and "consumer_registers" in value:
            producer, consumer = value["producer_registers"], value["consumer_registers"]
            if (producer == 0) != (consumer == 0):
                raise VerifyException(
                    f"the plan's producer_registers ({producer}) and consumer_registers ({consumer}) are both 0 "
                    "(no reallocation) or both setmaxnreg counts: the producer gives back what the consumers take"
                )
            if producer > consumer:  # ptxas refuses a setmaxnreg.dec above every count the program sets
                raise VerifyException(
                    f"the plan's producer_registers ({producer}) exceed its consumer_registers ({consumer}): the "
                    "producer gives registers back (setmaxnreg.dec) and the consumers take them (setmaxnreg.inc)"
                )
            threads, consumers = value.get("threads"), value.get("consumers")
            if producer and threads is not None and consumers is not None:
                pool = threads * entry_registers(threads, ctas)
                if WARPGROUP_THREADS * (producer + consumers * consumer) > pool:
                    raise VerifyException(
                        f"the plan's setmaxnreg counts ({producer} for the producer, {consumer} for each of "
                        f"{consumers} consumer warpgroup(s)) need more than the {pool} registers a {threads}-thread "
                        f"block gets at entry with {ctas} block(s) per SM"
                    )
        if "smem_bytes" in value and ctas * (value["smem_bytes"] + BLOCK_RESERVED_SMEM) > SM_SMEM:
            raise VerifyException(
                f"the plan puts {ctas} block(s) of {value['smem_bytes']} bytes of shared memory on an SM, over its "
                f"{SM_SMEM} ({BLOCK_RESERVED_SMEM} reserved per block)"
            )


def _plan_order(decisions: Mapping[str, Attribute]) -> DictionaryAttr:
    """The fields in PLAN_DECISIONS' order (any other name after them, for the verifier to name)."""
    known = {name: decisions[name] for name in PLAN_DECISIONS if name in decisions}
    return DictionaryAttr({**known, **decisions})


class UnaryFn(StrEnum):
    EXP = auto()
    EXP2 = auto()
    LOG = auto()
    LOG2 = auto()
    SQRT = auto()
    RSQRT = auto()
    ABS = auto()
    NEG = auto()
    RELU = auto()
    TANH = auto()
    SIGMOID = auto()
    SILU = auto()
    GELU_TANH = auto()
    """GELU in its tanh form: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    SOFTPLUS = auto()
    GELU = auto()
    """GELU in its erf form: x/2 (1 + erf(x / sqrt(2))) = x/2 erfc(-x / sqrt(2))."""
    SIN = auto()
    COS = auto()
    NOT = auto()
    """1 where the element is 0, else 0 (NaN counts as nonzero, as in numpy)."""


GELU_SCALE = math.sqrt(2 / math.pi)
GELU_CUBIC = 0.044715
"""gelu_tanh(x) = x/2 (1 + tanh(GELU_SCALE (x + GELU_CUBIC x^3))): the frontend's fold, the
interpreter and the PTX lowering all take the constants from here."""


GELU_ERFC_COEFFICIENTS = (
    -1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
    0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277,
)
"""erfc(z) ~ t exp(-z^2 + c0 + c1 t + ... + c9 t^9), t = 1 / (1 + z/2), for z >= 0: a Chebyshev
fit with a relative error below 1.2e-7 for every z >= 0 (PTX has no erf). The GPU computes
gelu(x) = x (1 - q/2) for x >= 0 and x q/2 for x < 0, q = erfc(|x| / sqrt(2)) by this fit, so
the small result on the negative side keeps its relative accuracy; docs/language.md states the
error measured against the exact form, which the frontend's fold and the interpreter compute."""


class BinaryFn(StrEnum):
    ADD = auto()
    SUB = auto()
    MUL = auto()
    DIV = auto()
    MAX = auto()
    MIN = auto()
    LT = auto()
    LE = auto()
    GT = auto()
    GE = auto()
    EQ = auto()
    NE = auto()
    AND = auto()
    OR = auto()


COMPARISONS = (BinaryFn.LT, BinaryFn.LE, BinaryFn.GT, BinaryFn.GE, BinaryFn.EQ, BinaryFn.NE)
LOGIC = (BinaryFn.AND, BinaryFn.OR)
"""Element-wise conditions give 1 where they hold and 0 where not, in the operands' dtype: a
comparison as IEEE compares (a NaN operand: false, except for `ne`); `and`/`or` count every
nonzero element (NaN too) as true. `tile.select` reads such a tile back as a condition."""


class ReduceFn(StrEnum):
    MAX = auto()
    MIN = auto()
    SUM = auto()


REDUCE_IDENTITY = {ReduceFn.MAX: -math.inf, ReduceFn.MIN: math.inf, ReduceFn.SUM: 0.0}
"""What a reduction counts an element it skips as (padding, masked rows)."""


class StoreReduction(StrEnum):
    """How a `tile.store` combines each element with the tensor's: `add` (store_add) adds it,
    atomically per element."""

    ADD = auto()


class Axis(StrEnum):
    """`row`: one value per row (length = rows); `col`: one value per column (length = cols)."""

    ROW = auto()
    COL = auto()


class MaskKind(StrEnum):
    CAUSAL = auto()


class Role(StrEnum):
    """Which warpgroups run an op of a kernel body (tile-warp-specialize decides)."""

    PRODUCER = auto()
    """Warpgroup 0 only: it issues the loads."""
    CONSUMERS = auto()
    """The consumer warpgroups only: they compute and store."""
    BOTH = auto()


@irdl_attr_definition
class UnaryFnAttr(EnumAttribute[UnaryFn], SpacedOpaqueSyntaxAttribute):
    name = "tile.unary_fn"


@irdl_attr_definition
class BinaryFnAttr(EnumAttribute[BinaryFn], SpacedOpaqueSyntaxAttribute):
    name = "tile.binary_fn"


@irdl_attr_definition
class ReduceFnAttr(EnumAttribute[ReduceFn], SpacedOpaqueSyntaxAttribute):
    name = "tile.reduce_fn"


@irdl_attr_definition
class StoreReductionAttr(EnumAttribute[StoreReduction], SpacedOpaqueSyntaxAttribute):
    name = "tile.store_reduction"


@irdl_attr_definition
class AxisAttr(EnumAttribute[Axis], SpacedOpaqueSyntaxAttribute):
    name = "tile.axis"


@irdl_attr_definition
class MaskKindAttr(EnumAttribute[MaskKind], SpacedOpaqueSyntaxAttribute):
    name = "tile.mask_kind"


@irdl_attr_definition
class RoleAttr(EnumAttribute[Role], SpacedOpaqueSyntaxAttribute):
    name = "tile.role"


# --------------------------------------------------------------------------- types


@irdl_attr_definition
class GlobalType(ParametrizedAttribute, TypeAttribute):
    """A global tensor; each dim is a symbolic name bound at launch, or a fixed size."""

    name = "tile.gl"
    dims: ArrayAttr[StringAttr | IntAttr]
    element_type: TensorElementType

    def __init__(self, dims: Sequence[str | int], element_type: Attribute):
        super().__init__(
            ArrayAttr(IntAttr(d) if isinstance(d, int) else StringAttr(d) for d in dims), element_type
        )

    @property
    def rank(self) -> int:
        return len(self.dims.data)

    def get_dims(self) -> tuple[str | int, ...]:
        return tuple(d.data for d in self.dims.data)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("[" + ", ".join(str(d) for d in self.get_dims()) + "], ")
            printer.print_attribute(self.element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def parse_dim() -> StringAttr | IntAttr:
            number = parser.parse_optional_integer()
            if number is not None:
                return IntAttr(number)
            return StringAttr(parser.parse_identifier())

        with parser.in_angle_brackets():
            dims = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parse_dim)
            parser.parse_punctuation(",")
            element_type = parser.parse_type()
        return (ArrayAttr(dims), element_type)

    def verify(self) -> None:
        if not 1 <= self.rank <= 5:
            raise VerifyException(f"a global tensor has rank 1 to 5 (TMA's limit), got {self.rank}")
        if dtypes.of_type(self.element_type) is None:
            raise VerifyException(f"a global tensor holds one of {', '.join(dtypes.BY_NAME)}, not {self.element_type}")


# A dataclass, so that `shape` and `element_type` are fields of every subclass: irdl's generated
# __eq__/__hash__ compare fields only, and without this any two tiles of a kind compared equal.
@dataclass(frozen=True, init=False)
class ShapedTileType(ParametrizedAttribute, TypeAttribute):
    """Shared by register/shared tiles and vectors: a static shape of 16-multiples and a dtype."""

    shape: ArrayAttr[IntAttr]
    element_type: ElementType
    EXPECTED_RANK: ClassVar[int] = 2

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def rows(self) -> int:
        return self.get_shape()[0]

    @property
    def cols(self) -> int:
        return self.get_shape()[-1]

    @property
    def num_elements(self) -> int:
        count = 1
        for d in self.get_shape():
            count *= d
        return count

    @property
    def num_bytes(self) -> int:
        return self.num_elements * element_bytes(self.element_type)

    def verify(self) -> None:
        shape = self.get_shape()
        if len(shape) != self.EXPECTED_RANK:
            raise VerifyException(f"{self.name} must have rank {self.EXPECTED_RANK}, got shape {shape}")
        for d in shape:
            if d <= 0 or d % TILE_QUANTUM:
                raise VerifyException(
                    f"{self.name} dimensions must be positive multiples of {TILE_QUANTUM}, got {shape}"
                )


@irdl_attr_definition
class RegisterTileType(ShapedTileType):
    name = "tile.rt"

    def __init__(self, shape: Sequence[int], element_type: Attribute):
        super().__init__(_shape_attr(shape), element_type)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_shape_and_element(printer, self.get_shape(), self.element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
        return (_shape_attr(dims), element_type)


@irdl_attr_definition
class SharedTileType(ShapedTileType):
    """A shared tile. `swizzle` is -1 until tile-swizzle-select chooses 0, 32, 64 or 128 bytes."""

    name = "tile.st"
    swizzle: IntAttr

    def __init__(self, shape: Sequence[int], element_type: Attribute, swizzle: int = -1):
        super().__init__(_shape_attr(shape), element_type, IntAttr(swizzle))

    def with_swizzle(self, swizzle: int) -> SharedTileType:
        return SharedTileType(self.get_shape(), self.element_type, swizzle)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_shape_and_element(printer, self.get_shape(), self.element_type)
            if self.swizzle.data >= 0:
                printer.print_string(f", swizzle {self.swizzle.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
            swizzle = -1
            if parser.parse_optional_punctuation(","):
                parser.parse_keyword("swizzle")
                swizzle = parser.parse_integer()
        return (_shape_attr(dims), element_type, IntAttr(swizzle))

    def verify(self) -> None:
        super().verify()
        if self.swizzle.data not in (-1, 0, 32, 64, 128):
            raise VerifyException(f"swizzle must be 0, 32, 64 or 128 bytes, got {self.swizzle.data}")


class _VectorType(ShapedTileType):
    EXPECTED_RANK: ClassVar[int] = 1

    def __init__(self, length: int, element_type: Attribute):
        super().__init__(_shape_attr([length]), element_type)

    @property
    def length(self) -> int:
        return self.get_shape()[0]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_shape_and_element(printer, self.get_shape(), self.element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
        return (_shape_attr(dims), element_type)


def parse_layout(parser: AttrParser) -> StringAttr:
    """The optional `, LAYOUT` after a vector's or fragment's shape (`col`, `band`, ...), or ""
    without one; the type's verify says which layouts it takes."""
    if parser.parse_optional_punctuation(",") is None:
        return StringAttr("")
    return StringAttr(parser.parse_identifier())


@irdl_attr_definition
class RegisterVectorType(_VectorType):
    """A register vector: one value per row of a tile (the default), or with layout `col` one
    value per column (tile-vector-layout infers which; the lowering splits the former by rows
    over the consumers and replicates the latter)."""

    name = "tile.rv"
    layout: StringAttr
    """"" (a row vector, or not yet inferred) or "col"."""

    def __init__(self, length: int, element_type: Attribute, column: bool = False):
        ParametrizedAttribute.__init__(self, _shape_attr([length]), element_type, StringAttr("col" if column else ""))

    @property
    def is_column(self) -> bool:
        return self.layout.data == "col"

    def with_layout(self, column: bool) -> RegisterVectorType:
        return RegisterVectorType(self.length, self.element_type, column)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_shape_and_element(printer, self.get_shape(), self.element_type)
            if self.is_column:
                printer.print_string(", col")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
            layout = parse_layout(parser)
        return (_shape_attr(dims), element_type, layout)

    def verify(self) -> None:
        super().verify()
        if self.layout.data not in ("", "col"):
            raise VerifyException(f"a register vector's layout is the rows' or `col`, got {self.layout.data!r}")


@irdl_attr_definition
class SharedVectorType(_VectorType):
    name = "tile.sv"

    def __init__(self, length: int, element_type: Attribute):  # irdl would make one of the fields
        super().__init__(length, element_type)


RegisterValue = RegisterTileType | RegisterVectorType
"""Values that element-wise ops compute on."""
SharedValue = SharedTileType | SharedVectorType
AnyTile = RegisterTileType | SharedTileType | RegisterVectorType | SharedVectorType


def same_kind(type_: Attribute, element_type: Attribute) -> Attribute:
    """`type_` with another element type (for conversions)."""
    if isinstance(type_, RegisterTileType):
        return RegisterTileType(type_.get_shape(), element_type)
    if isinstance(type_, SharedTileType):
        return SharedTileType(type_.get_shape(), element_type, type_.swizzle.data)
    if isinstance(type_, RegisterVectorType):
        return RegisterVectorType(type_.length, element_type, type_.is_column)
    if isinstance(type_, SharedVectorType):
        return SharedVectorType(type_.length, element_type)
    raise ValueError(f"not a tile type: {type_}")


# --------------------------------------------------------------------------- structure


class KernelHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (HoistConstants(), DropInvariantCarries())


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A kernel: global tensors in, nothing out (results are stores).

    `params` holds the compile-time parameters with their final values; `annotations` the
    user's pins (`@consumers(2)`, `@registers(40, 232)`, `@persistent`, ...), which passes obey.
    """

    name = "tile.kernel"
    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    params = prop_def(DictionaryAttr, default_value=DictionaryAttr({}))
    annotations = prop_def(DictionaryAttr, default_value=DictionaryAttr({}))
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), KernelHasCanonicalizationPatterns())

    def __init__(
        self,
        name: str,
        arg_types: Sequence[Attribute],
        body: Region,
        params: dict[str, Attribute] | None = None,
        annotations: dict[str, Attribute] | None = None,
    ):
        super().__init__(
            regions=[body],
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(arg_types, []),
                "params": DictionaryAttr(params or {}),
                "annotations": DictionaryAttr(annotations or {}),
            },
        )

    @property
    def arg_names(self) -> list[str]:
        return [arg.name_hint or f"arg{i}" for i, arg in enumerate(self.body.block.args)]

    def print(self, printer: Printer) -> None:
        attributes = dict(self.attributes)
        if self.params.data:
            attributes["params"] = self.params
        if self.annotations.data:
            attributes["annotations"] = self.annotations
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            attributes,
            reserved_attr_names=("sym_name", "function_type"),
            print_empty_outputs=False,
        )

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name, input_types, _, region, extra_attrs, _, _ = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type")
        )
        attributes = dict(extra_attrs.data) if extra_attrs is not None else {}
        params = attributes.pop("params", DictionaryAttr({}))
        annotations = attributes.pop("annotations", DictionaryAttr({}))
        assert isinstance(params, DictionaryAttr) and isinstance(annotations, DictionaryAttr)
        kernel = KernelOp(name, input_types, region, dict(params.data), dict(annotations.data))
        kernel.attributes |= attributes
        return kernel

    def verify_(self) -> None:
        block = self.body.block
        if tuple(a.type for a in block.args) != self.function_type.inputs.data:
            raise VerifyException("kernel block arguments must match the kernel's argument types")
        for arg in block.args:
            if not isinstance(arg.type, GlobalType):
                raise VerifyException(f"kernel arguments are global tensors, got {arg.type}")
        grids = [op for op in block.ops if isinstance(op, GridOp)]
        if len(grids) != 1:
            raise VerifyException(f"a kernel has exactly one tile.grid, found {len(grids)}")
        self._verify_plan(len(grids[0].extents))
        recorded = self.attributes.get(FLOOR_DIVIDED)
        if recorded is not None and not (
            isinstance(recorded, DictionaryAttr)
            and all(isinstance(m, IntegerAttr) and isinstance(m.type, IntegerType) and m.value.data > 0
                    for m in recorded.data.values())
        ):
            raise VerifyException(f"{FLOOR_DIVIDED} = {recorded} is not a dictionary of dims to positive integers")

    def _verify_plan(self, grid_rank: int) -> None:
        """The pins and decisions passes read (passes/plan.py) hold values they can obey."""
        pins = self.annotations.data
        _check_integers(pins, KERNEL_PINS, "the annotation ")
        registers = pins.get("registers")
        if registers is not None and not (
            isinstance(registers, ArrayAttr)
            and len(registers.data) == 2
            and all(isinstance(r, IntegerAttr) and r.value.data in REGISTER_COUNTS for r in registers.data)
        ):
            raise VerifyException(f"annotation registers = {registers} is not two multiples of 8 in 24..256")
        for unit in UNIT_PINS:
            pin = pins.get(unit)
            pinned_off = unit == "persistent" and isinstance(pin, IntegerAttr) and pin.value.data == 0
            if pin is not None and not isinstance(pin, UnitAttr) and not pinned_off:
                raise VerifyException(f"annotation {unit} is a unit attribute" + (
                    " or 0 (pinned off)" if unit == "persistent" else ""))
        loose = next((name for name in PLAN_DECISIONS if name in self.attributes), None)
        if loose is not None:
            raise VerifyException(
                f'{loose} is a field of the kernel\'s plan: plan = #tile.plan<{loose} = #tile.decision<value, "reason">>'
            )
        plan = self.attributes.get("plan", PlanAttr({}))
        if not isinstance(plan, PlanAttr):
            raise VerifyException(f"the kernel's plan is a #tile.plan<...>, got {plan}")
        for name in ("heavy_first", "table_first"):
            axis = plan.decisions.data.get(name)
            if isinstance(axis, DecisionAttr) and axis.int_value >= grid_rank:
                raise VerifyException(f"the plan's {name} axis {axis.int_value} is not an axis of the {grid_rank}-D grid")
        for loop in self.walk():
            if isinstance(loop, scf.ForOp):
                _check_integers(loop.attributes, LOOP_DECISIONS, "the scf.for's ")


class HoistConstants(RewritePattern):
    """Every constant moves out of the loops around it in one rewrite (to just before the
    outermost loop of the nest, where xDSL's RehoistConstInLoops takes it one loop per walk of
    the module), and equal constants of one block become one. Without it a nest of d loops costs
    d walks of the module, each with a region DCE, and CSE merges n equal constants one by one,
    rehashing the op that uses them each time (10,000 `var x = 0.0` feeding one loop). Each user
    gets its new operands at once: replacing one operand of an op costs all its operands."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: KernelOp, rewriter: PatternRewriter) -> None:
        first: dict[tuple[Block | None, tuple[object, ...]], Operation] = {}
        replaced: dict[Operation, Operation] = {}
        """Each constant that goes -> the one that takes its uses."""
        for constant in [inner for inner in op.walk() if inner.has_trait(ConstantLike)]:
            outermost = constant
            while isinstance(parent := outermost.parent_op(), scf.ForOp):
                outermost = parent
            key = (outermost.parent_block(), _constant_key(constant))
            if key in first:
                replaced[constant] = first[key]
            elif outermost is not constant:
                first[key] = replaced[constant] = rewriter.insert(constant.clone(), InsertPoint.before(outermost))
            else:
                first[key] = constant
        values = {old: new for constant, kept in replaced.items() for old, new in zip(constant.results, kept.results)}
        users = dict.fromkeys(use.operation for value in values for use in value.uses)
        for user in users:
            user.operands = [values.get(v, v) for v in user.operands]
            rewriter.handle_operation_modification(user)
        for constant in replaced:
            rewriter.erase(constant)


class DropInvariantCarries(RewritePattern):
    """A loop-carried value the loop never changes (each iteration yields the value it entered
    with, or the value the loop started from: `var v = x; for ... { v = x }`) is that value, and
    one nothing reads after the loop or in it is nothing: the loop stops carrying both. The
    frontend makes every `var` assigned in a loop a carried value; this keeps, for one, a shared
    tile assigned its own value from being carried, which the GPU backend cannot do."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: KernelOp, rewriter: PatternRewriter) -> None:
        for loop in [inner for inner in op.walk() if isinstance(inner, scf.ForOp)]:
            body = loop.body.block
            yield_op = body.last_op
            assert isinstance(yield_op, scf.YieldOp)
            keep = []
            for i, (init, arg, result, out) in enumerate(
                    zip(loop.iter_args, body.args[1:], loop.results, yield_op.operands, strict=True)):
                if out is arg or out is init:
                    arg.replace_all_uses_with(init)
                    result.replace_all_uses_with(init)
                elif not result.uses and all(use.operation is yield_op and use.index == i for use in arg.uses):
                    pass  # read by nothing but its own yield (not handed to another carry: `w = v; v = x`)
                else:
                    keep.append(i)
            if len(keep) == len(loop.iter_args):
                continue
            new_body = Block(arg_types=[body.args[0].type, *(body.args[1 + i].type for i in keep)])
            body.args[0].replace_all_uses_with(new_body.args[0])
            for new_arg, i in zip(new_body.args[1:], keep, strict=True):
                body.args[1 + i].replace_all_uses_with(new_arg)
            new_yield = scf.YieldOp(*(yield_op.operands[i] for i in keep))
            rewriter.erase(yield_op)
            for inner in list(body.ops):
                inner.detach()
                new_body.add_op(inner)
            new_body.add_op(new_yield)
            new_loop = scf.ForOp(loop.lb, loop.ub, loop.step, [loop.iter_args[i] for i in keep], Region(new_body))
            new_loop.attributes.update(loop.attributes)
            rewriter.insert(new_loop, InsertPoint.before(loop))
            for new_result, i in zip(new_loop.results, keep, strict=True):
                loop.results[i].replace_all_uses_with(new_result)
            rewriter.erase(loop)


def _constant_key(op: Operation) -> tuple[object, ...]:
    """What makes two constant ops equal: name, properties, attributes, result types."""
    return (op.name, tuple(sorted(op.properties.items())), tuple(sorted(op.attributes.items())), tuple(op.result_types))


SPECULATIVE = "speculative"
"""The unit attribute of a `tile.load` that tile-pipeline hoisted out of a loop: it runs even
where the loop runs no iteration (its coordinates may then lie past the end)."""

FLOOR_DIVIDED = "floor_divided"
"""The kernel attribute in which the frontend records `floor_divided_dims` of the program as
written, so that a pass removing a loop or folding its bound (a loop whose results are unused)
leaves the launch contract what the language says it is, and the runtime refuses what the
interpreter refuses."""


def required_multiples(kernel: KernelOp) -> dict[str, int]:
    """The symbolic dims a `require` makes multiples of a constant (`require N % 64 == 0`, alone
    or one of the operands of an `and`), each with its multiple: the passes may take those dims
    for whole tiles, as the runtime refuses any other launch before it starts."""
    multiples: dict[str, int] = {}
    conditions = [op.condition for op in kernel.body.block.ops if isinstance(op, RequireOp)]
    while conditions:
        owner = conditions.pop().owner
        if isinstance(owner, arith.AndIOp):
            conditions += [owner.lhs, owner.rhs]
        elif isinstance(owner, arith.CmpiOp) and owner.predicate.value.data == 0:  # eq
            for remainder, zero in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
                if index_constant(zero) == 0 and (found := _dim_remainder(remainder)) is not None:
                    dim, multiple = found
                    multiples[dim] = math.lcm(multiples.get(dim, 1), multiple)
    return multiples


def index_constant(value: SSAValue) -> int | None:
    """The integer an arith.constant holds, or None for any other value."""
    owner = value.owner
    return owner.value.value.data if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr) else None


def _dim_remainder(value: SSAValue) -> tuple[str, int] | None:
    """(dim, c) where `value` is a symbolic dim's remainder by a constant c > 1 as the frontend
    spells `%` (`d - (d / c) * c`), else None."""
    owner = value.owner
    if not isinstance(owner, arith.SubiOp) or not isinstance(dim := owner.lhs.owner, DimOp):
        return None
    product = owner.rhs.owner
    if not isinstance(product, arith.MuliOp):
        return None
    for quotient, divisor in ((product.lhs, product.rhs), (product.rhs, product.lhs)):
        division = quotient.owner
        if (isinstance(division, arith.FloorDivSIOp) and division.lhs is owner.lhs
                and (c := index_constant(divisor)) is not None and c > 1 and index_constant(division.rhs) == c):
            name = cast(GlobalType, dim.tensor.type).get_dims()[dim.axis.value.data]
            return (name, c) if isinstance(name, str) else None
    return None


def floor_divided_dims(kernel: KernelOp) -> dict[str, int]:
    """The symbolic dims that a grid extent or a loop bound divides rounding down (`M / BM`),
    each with the multiple it must be: such a count of tiles drops a partial last tile, so a
    launch whose dim is not that multiple would skip elements without a word (the runtime
    refuses it). `ceildiv(M, BM)` counts the partial tile and needs nothing. Those the
    frontend recorded (FLOOR_DIVIDED) count too."""
    counts: list[SSAValue] = []
    for op in kernel.walk():
        if isinstance(op, GridOp):
            counts.extend(op.extents)
        elif isinstance(op, scf.ForOp):
            counts.extend((op.lb, op.ub))
    recorded = kernel.attributes.get(FLOOR_DIVIDED)
    multiples: dict[str, int] = (
        {dim: cast(IntegerAttr, m).value.data for dim, m in recorded.data.items()}
        if isinstance(recorded, DictionaryAttr) else {}
    )
    seen: set[SSAValue] = set()
    while counts:
        value = counts.pop()
        if value in seen or not isinstance(owner := value.owner, Operation):
            continue
        seen.add(value)
        if isinstance(owner, arith.DivUIOp | arith.DivSIOp | arith.FloorDivSIOp) and isinstance(dim := owner.lhs.owner, DimOp):
            divisor = owner.rhs.owner
            if isinstance(divisor, arith.ConstantOp) and isinstance(divisor.value, IntegerAttr):
                name = cast(GlobalType, dim.tensor.type).get_dims()[dim.axis.value.data]
                if isinstance(name, str) and divisor.value.value.data > 1:
                    multiples[name] = math.lcm(multiples.get(name, 1), divisor.value.value.data)
        counts.extend(owner.operands)
    return multiples


@irdl_op_definition
class ReturnOp(IRDLOperation):
    name = "tile.return"
    traits = traits_def(IsTerminator(), HasParent(KernelOp))
    assembly_format = "attr-dict"


@irdl_op_definition
class DimOp(IRDLOperation):
    """The size of one dimension of a global tensor (a symbolic dim, bound at launch)."""

    name = "tile.dim"
    tensor = operand_def(GlobalType)
    axis = prop_def(IntegerAttr[IndexType])
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$tensor `[` $axis `]` attr-dict `:` type($tensor)"

    def __init__(self, tensor: SSAValue, axis: int):
        super().__init__(
            operands=[tensor], properties={"axis": IntegerAttr(axis, IndexType())}, result_types=[IndexType()]
        )

    def verify_(self) -> None:
        assert isinstance(self.tensor.type, GlobalType)
        if not 0 <= self.axis.value.data < self.tensor.type.rank:
            raise VerifyException(f"axis {self.axis.value.data} out of range for {self.tensor.type}")


REQUIRE_OPS: tuple[type[Operation], ...] = (
    DimOp, arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.FloorDivSIOp, arith.CeilDivSIOp,
    arith.MinSIOp, arith.MaxSIOp, arith.CmpiOp, arith.AndIOp, arith.OrIOp, arith.XOrIOp,
)
"""The ops a `tile.require` condition may be computed with: dims, constants and the index and
bool arithmetic of the language, which the runtime evaluates from the arguments' shapes (each
has an operator in the launch contract's expressions)."""


def require_slice(condition: SSAValue) -> list[Operation] | None:
    """The ops `condition` is computed with, each once, or None where one of them is not in
    REQUIRE_OPS (a block index, a loop counter, a loaded value)."""
    seen: dict[Operation, None] = {}
    pending = [condition]
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, REQUIRE_OPS):
            return None
        if owner not in seen:
            seen[owner] = None
            if not isinstance(owner, DimOp):
                pending.extend(owner.operands)
    return list(seen)


REQUIRE_TERMS = 256
"""The most leaves (dims and constants) a requirement may have written out as a tree, the form
the launch contract holds it in: a value it reads twice is written twice."""


def require_terms(condition: SSAValue) -> int:
    """How many leaves `condition` (a require_slice) has written out as a tree, counted without
    writing it out."""
    ops = require_slice(condition) or []
    block = condition.owner.parent_block() if isinstance(condition.owner, Operation) else None
    position = {op: index for index, op in enumerate(block.ops)} if block is not None else {}
    terms: dict[Operation, int] = {}
    for op in sorted(ops, key=lambda op: position.get(op, -1)):
        leaf = isinstance(op, DimOp) or not op.operands
        terms[op] = 1 if leaf else sum(terms[cast(Operation, v.owner)] for v in op.operands)
    return terms.get(cast(Operation, condition.owner), 1)


@irdl_op_definition
class RequireOp(IRDLOperation):
    """A condition on the kernel's dims that every launch must meet (`require H == HKV * G`):
    the runtime refuses a launch where it is false before anything runs, naming the condition
    and the dims it read, and so does the interpreter. It is computed from dims and constants
    only (REQUIRE_OPS), so the launch contract can carry it; `text` is the condition as written."""

    name = "tile.require"
    condition = operand_def(IntegerType(1))
    text = prop_def(StringAttr)
    traits = traits_def(HasParent(KernelOp))
    assembly_format = "$condition $text attr-dict"

    def __init__(self, condition: SSAValue, text: str):
        super().__init__(operands=[condition], properties={"text": StringAttr(text)})

    def verify_(self) -> None:
        if require_slice(self.condition) is None:
            raise VerifyException("tile.require's condition must be computed from tile.dim values and constants "
                                  "with index and bool arithmetic")
        if (terms := require_terms(self.condition)) > REQUIRE_TERMS:
            raise VerifyException(f"tile.require's condition has {terms} terms written out, over {REQUIRE_TERMS}")


@irdl_op_definition
class LoadScalarOp(IRDLOperation):
    """One element of a tensor, at element indices (one per dim): of an i32 tensor as an index
    (offsets and lengths a kernel reads at run time, `load cu_seqlens[b] : i32`), of an f32 tensor
    as an f32 scalar (a scale, `load S[0] : f32`). No kernel stores to a tensor it reads scalars
    from (no tile holds i32; the frontend refuses a store to an f32 one), so the load is pure: it
    may be merged, moved or dropped."""

    name = "tile.load_scalar"
    tensor = operand_def(GlobalType)
    indices = var_operand_def(IndexType)
    result = result_def(base(IndexType) | base(Float32Type))
    traits = traits_def(Pure())
    assembly_format = "$tensor `[` $indices `]` attr-dict `:` type($tensor) `->` type($result)"

    def __init__(self, tensor: SSAValue, indices: Sequence[SSAValue]):
        assert isinstance(tensor.type, GlobalType)
        result = Float32Type() if isinstance(tensor.type.element_type, Float32Type) else IndexType()
        super().__init__(operands=[tensor, indices], result_types=[result])

    def verify_(self) -> None:
        assert isinstance(self.tensor.type, GlobalType)
        held = self.tensor.type.element_type
        if held != IntegerType(32) and not isinstance(held, Float32Type):
            raise VerifyException(f"tile.load_scalar reads i32 and f32 tensors, not {self.tensor.type}")
        if isinstance(held, Float32Type) != isinstance(self.result.type, Float32Type):
            raise VerifyException(f"tile.load_scalar of {self.tensor.type} gives {'f32' if isinstance(held, Float32Type) else 'index'}, "
                                  f"not {self.result.type}")
        if len(self.indices) != self.tensor.type.rank:
            raise VerifyException(
                f"tile.load_scalar of a rank-{self.tensor.type.rank} tensor needs {self.tensor.type.rank} indices, "
                f"got {len(self.indices)}"
            )


@irdl_op_definition
class GridOp(IRDLOperation):
    """The launch grid: one extent per named block index (at most 3), computed from dims."""

    name = "tile.grid"
    extents = var_operand_def(IndexType)
    names = prop_def(ArrayAttr[StringAttr])
    traits = traits_def(HasParent(KernelOp))
    assembly_format = "`(` $extents `)` `as` $names attr-dict"

    def __init__(self, extents: Sequence[SSAValue], names: Sequence[str]):
        super().__init__(operands=[extents], properties={"names": ArrayAttr(StringAttr(n) for n in names)})

    def verify_(self) -> None:
        if not 1 <= len(self.extents) <= 3 or len(self.names.data) != len(self.extents):
            raise VerifyException("tile.grid takes 1 to 3 extents, each with a name")


@irdl_op_definition
class BlockIdOp(IRDLOperation):
    """This block's index along one grid axis."""

    name = "tile.block_id"
    axis = prop_def(IntegerAttr[IndexType])
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$axis attr-dict"

    def __init__(self, axis: int):
        super().__init__(properties={"axis": IntegerAttr(axis, IndexType())}, result_types=[IndexType()])

    def verify_(self) -> None:
        kernel = self.parent_op()
        while kernel is not None and not isinstance(kernel, KernelOp):
            kernel = kernel.parent_op()
        if kernel is None:
            raise VerifyException("it belongs in a tile.kernel")
        at = kernel.body.block.find_ancestor_op_in_block(self)
        above = takewhile(lambda op: op is not at, kernel.body.block.ops)
        grid = next((op for op in above if isinstance(op, GridOp)), None)
        if grid is None:
            raise VerifyException("it must follow the kernel's tile.grid")
        if not 0 <= self.axis.value.data < len(grid.extents):
            raise VerifyException(f"axis {self.axis.value.data} is not an axis of the {len(grid.extents)}-D grid")


# --------------------------------------------------------------------------- memory


ELEMENT_COORDS = "element_coords"
"""The attribute of a tile.load or tile.store that lists the tensor axes whose coordinate counts
elements (`elem(x)` in .tk) rather than tiles: the tile starts at element x along them."""


REALIGNED = "realigned"
"""tile-swizzle-select's decision on the load of a shared vector at an `elem(x)` start along its
tensor's innermost dim that is not provably 16-byte aligned (TMA_GLOBAL_ALIGN): TMA copies from
the boundary at or below x (x & -N for the decision's N elements of 16 bytes), N elements more,
and the consumers read the vector from x mod N on."""


def innermost_element_start(op: LoadOp | StoreOp) -> tuple[SSAValue, int] | None:
    """Where a load or store's `elem(x)` coordinate lies along its tensor's innermost dim, the x
    and the elements of one TMA_GLOBAL_ALIGN-byte unit (TMA starts a box only on such a unit
    there); None where that dim takes no element coordinate, or where a unit is one element."""
    tensor_type = cast(GlobalType, op.tensor.type)
    innermost = tensor_type.rank - 1
    line = TMA_GLOBAL_ALIGN // element_bytes(tensor_type.element_type)
    if innermost not in element_axes(op) or line == 1:
        return None
    return op.coords[innermost], line


def realignment(op: Operation) -> int:
    """The elements a load's buffer holds before its vector starts at most (REALIGNED; 0 if none)."""
    attr = op.attributes.get(REALIGNED)
    return attr.int_value if isinstance(attr, DecisionAttr) else 0


ZERO_PAST_END = "zero_past_end"
"""tile-mask-tails' decision on a tile.load with an element range's end along its rows
(elem(x, end)): an mma sums over those rows, and past the end they hold the tensor's next rows,
so the consumers zero them in shared memory (the reason says which mma)."""

CLIPPED = "clipped"
"""tile-mask-tails' decision on a tile.store whose element range it ended where the value's
padding begins along tile axis N (`#tile.decision<N, "why">`): the end it added is among the
store's `ends`."""

ELEMENT_ENDS = "element_ends"
"""The attribute of a tile.load or tile.store that lists, for each of its `ends` operands, the
axis it bounds (`elem(x, end)` in .tk): the access sees that dim end at `end`."""


def element_ends(op: LoadOp | StoreOp) -> dict[int, SSAValue]:
    """The run-time end of each axis `op` bounds (ELEMENT_ENDS, one per `ends` operand)."""
    attr = op.attributes.get(ELEMENT_ENDS)
    if not isinstance(attr, ArrayAttr):
        return {}
    return {cast(IntegerAttr, a).value.data: end for a, end in zip(attr.data, op.ends)}


def element_axes(op: Operation) -> frozenset[int]:
    """The tensor axes along which `op`'s coordinate counts elements (ELEMENT_COORDS)."""
    attr = op.attributes.get(ELEMENT_COORDS)
    return frozenset(cast(ArrayAttr[IntegerAttr], attr).data[i].value.data for i in range(len(attr))) \
        if isinstance(attr, ArrayAttr) else frozenset()


def coord_scales(op: LoadOp | StoreOp) -> tuple[int, ...]:
    """Per tensor axis, the elements one unit of `op`'s coordinate moves the tile by: the tile's
    extent along a tile axis (tile coordinates), 1 along a leading axis and an `elem` axis."""
    tensor_type = cast(GlobalType, op.tensor.type)
    value = op.result if isinstance(op, LoadOp) else op.value
    shape = cast(ShapedTileType, value.type).get_shape()
    extents = (1,) * (tensor_type.rank - len(shape)) + tuple(shape)
    elements = element_axes(op)
    return tuple(1 if axis in elements else extent for axis, extent in enumerate(extents))


def _check_coords(op: LoadOp | StoreOp, tile_rank: int, what: str) -> None:
    tensor_type = cast(GlobalType, op.tensor.type)
    if len(op.coords) != tensor_type.rank:
        raise VerifyException(
            f"{what} of a rank-{tensor_type.rank} tensor needs {tensor_type.rank} tile coordinates, got {len(op.coords)}"
        )
    if tile_rank > tensor_type.rank:
        raise VerifyException(f"a rank-{tile_rank} tile does not fit a rank-{tensor_type.rank} tensor")
    attr = op.attributes.get(ELEMENT_COORDS)
    if attr is not None and not (isinstance(attr, ArrayAttr) and all(isinstance(a, IntegerAttr) for a in attr)):
        raise VerifyException(f"{what}'s {ELEMENT_COORDS} must be an array of axes")
    first = tensor_type.rank - tile_rank
    ends = op.attributes.get(ELEMENT_ENDS)
    if len(op.ends) != (len(ends) if isinstance(ends, ArrayAttr) else 0):
        raise VerifyException(f"{what} needs one axis in {ELEMENT_ENDS} per `ends` operand")
    for axis in element_ends(op):
        if axis not in element_axes(op):
            raise VerifyException(f"{what}: axis {axis} has an end but no element coordinate (elem(x, end))")
    for axis in sorted(element_axes(op)):
        if not first <= axis < tensor_type.rank:
            raise VerifyException(
                f"{what}: axis {axis} cannot count elements: only the tile's axes ({first} to {tensor_type.rank - 1}) "
                "have tile coordinates (a leading coordinate already counts elements)"
            )


class ReadsTensor(MemoryEffect):
    """The op reads the global tensor that is its first operand (tile.load)."""

    @classmethod
    def get_effects(cls, op: Operation) -> frozenset[EffectInstance]:
        return frozenset((EffectInstance(MemoryEffectKind.READ, op.operands[0]),))


class WritesTensor(MemoryEffect):
    """The op writes the global tensor that is its first operand (tile.store); a reducing store
    (`reduce add`) also reads it, the elements it adds to."""

    @classmethod
    def get_effects(cls, op: Operation) -> frozenset[EffectInstance]:
        write = EffectInstance(MemoryEffectKind.WRITE, op.operands[0])
        if isinstance(op, StoreOp) and op.reduce is not None:
            return frozenset((EffectInstance(MemoryEffectKind.READ, op.operands[0]), write))
        return frozenset((write,))


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Global → shared: the tile at tile coordinates `coords` (a TMA box).

    Coordinates count in units of the tile's extent along each dimension (in elements along the
    axes `element_coords` lists); the leading dimensions of the tensor beyond the tile's rank
    have extent 1 (`coord_scales`). A load reads memory that
    stores write, so it is not pure: CSE merges two loads only with no write between them,
    and nothing moves a load across a store that may overlap it (tkc.passes.alias decides).
    """

    name = "tile.load"
    tensor = operand_def(GlobalType)
    coords = var_operand_def(IndexType)
    ends = var_operand_def(IndexType)
    result = result_def(SharedValue)
    traits = traits_def(ReadsTensor())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$tensor `[` $coords `]` (`ends` `[` $ends^ `]`)? attr-dict `:` type($tensor) `->` type($result)"
    )

    def __init__(self, tensor: SSAValue, coords: Sequence[SSAValue], result_type: Attribute,
                 ends: Sequence[SSAValue] = ()):
        super().__init__(operands=[tensor, coords, ends], result_types=[result_type])

    def verify_(self) -> None:
        assert isinstance(self.tensor.type, GlobalType)
        assert isinstance(self.result.type, SharedTileType | SharedVectorType)
        _check_coords(self, len(self.result.type.get_shape()), "tile.load")
        _check_shared_layout(self)
        if self.tensor.type.element_type != self.result.type.element_type:
            raise VerifyException(
                f"tile.load cannot convert: tensor holds {element_name(self.tensor.type.element_type)}, "
                f"tile holds {element_name(self.result.type.element_type)}"
            )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """A tile (register or shared) → global, at tile coordinates.

    With `reduce add` (`store_add`) each element is added to the tensor's instead, atomically
    per element: the stores of different blocks to one element commute (in an unspecified
    order, so float sums are not bit-reproducible), and a bf16 sum is rounded at each add. Only
    tensors whose dtype allows it (`tkc.dtypes`, `store_add`: f32 and bf16) take it.
    """

    name = "tile.store"
    tensor = operand_def(GlobalType)
    coords = var_operand_def(IndexType)
    ends = var_operand_def(IndexType)
    value = operand_def(AnyTile)
    reduce = opt_prop_def(StoreReductionAttr)
    traits = traits_def(WritesTensor())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "(`reduce` $reduce^)? $value `,` $tensor `[` $coords `]` (`ends` `[` $ends^ `]`)? attr-dict `:` type($value) "
        "`,` type($tensor)"
    )

    def __init__(self, value: SSAValue, tensor: SSAValue, coords: Sequence[SSAValue], ends: Sequence[SSAValue] = (),
                 reduce: StoreReduction | None = None):
        properties = {} if reduce is None else {"reduce": StoreReductionAttr(reduce)}
        super().__init__(operands=[tensor, coords, ends, value], properties=properties)

    @property
    def statement(self) -> str:
        """The .tk statement the op stands for, as diagnostics name it."""
        return "store" if self.reduce is None else f"store_{self.reduce.data}"

    def verify_(self) -> None:
        assert isinstance(self.tensor.type, GlobalType)
        assert isinstance(self.value.type, ShapedTileType)
        _check_coords(self, len(self.value.type.get_shape()), "tile.store")
        _check_integers(self.attributes, STORE_DECISIONS)
        element = self.tensor.type.element_type
        if element != self.value.type.element_type:
            raise VerifyException(
                f"tile.store needs matching dtypes: tensor holds {element_name(element)}, "
                f"value holds {element_name(self.value.type.element_type)} (convert it first)"
            )
        dtype = dtypes.of_type(element)
        if self.reduce is not None and not (dtype is not None and dtype.store_add):
            raise VerifyException(f"tile.store reduce {self.reduce.data} takes tensors of "
                                  f"{' or '.join(d.name for d in dtypes.DTYPES if d.store_add)}, not {element_name(element)}")


def read_tensors(kernel: Operation) -> set[SSAValue]:
    """The global tensors `kernel` reads: those it loads, and those a `store_add` adds to (it
    reads the elements it adds to, so they are inputs as well as outputs)."""
    return {op.tensor for op in kernel.walk()
            if isinstance(op, LoadOp | LoadScalarOp) or isinstance(op, StoreOp) and op.reduce is not None}


@irdl_op_definition
class FenceOp(IRDLOperation):
    """Every tile.store of this block before the fence is complete, and visible to every
    tile.load and tile.store after it.

    tile-memory-order puts one where a load (or store) may touch elements an earlier store of
    the same block wrote, and `reason` says which accesses. On the GPU the stores and the loads
    run on different warpgroups (consumers store, the producer loads with TMA), so program order
    alone does not order them: the consumers wait for their stores to complete and signal, the
    producer waits for the signal before it issues a later load. The interpreter, which runs a
    block in program order, treats it as a no-op.
    """

    name = "tile.fence"
    reason = prop_def(StringAttr)
    assembly_format = "$reason attr-dict"

    def __init__(self, reason: str):
        super().__init__(properties={"reason": StringAttr(reason)})


def _check_same_shape_and_dtype(op: ToRegOp | ToSharedOp) -> None:
    """Moves between shared memory and registers keep the shape and the dtype."""
    source, result = op.source.type, op.result.type
    assert isinstance(source, ShapedTileType) and isinstance(result, ShapedTileType)
    if (source.get_shape(), source.element_type) != (result.get_shape(), result.element_type):
        raise VerifyException(f"{op.name} keeps shape and dtype: {source} -> {result}")


@irdl_op_definition
class ToRegOp(IRDLOperation):
    """Shared → register (ldmatrix / vector loads in the lowering)."""

    name = "tile.to_reg"
    source = operand_def(SharedTileType | SharedVectorType)
    result = result_def(RegisterValue)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue):
        t = source.type
        assert isinstance(t, SharedTileType | SharedVectorType)
        result = (
            RegisterTileType(t.get_shape(), t.element_type)
            if isinstance(t, SharedTileType)
            else RegisterVectorType(t.length, t.element_type)
        )
        super().__init__(operands=[source], result_types=[result])

    def verify_(self) -> None:
        _check_same_shape_and_dtype(self)


@irdl_op_definition
class RetainOp(IRDLOperation):
    """Keep register tile `value` in slot `slot` of retention buffer `buffer` (`slots` slots of
    `layout`, a shared tile's bytes each) for a tile.recall of the same buffer and slot later in
    the block's program. tile-retain-sweep puts these where a loop re-reads tiles the loop before
    it loaded. Each thread writes the elements its fragment holds and a recall reads them back in
    the same layout, so the two need no barrier. A slot at or past `slots` is an error (the pass
    guards every retain with `slot < slots`)."""

    name = "tile.retain"
    value = operand_def(RegisterTileType)
    slot = operand_def(IndexType)
    buffer = prop_def(IntegerAttr)
    slots = prop_def(IntegerAttr)
    layout = prop_def(SharedTileType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$value `,` `slot` $slot attr-dict `:` type($value)"

    def __init__(self, value: SSAValue, slot: SSAValue, buffer: int, slots: int, layout: SharedTileType):
        super().__init__(operands=[value, slot], properties={
            "buffer": IntegerAttr(buffer, 64), "slots": IntegerAttr(slots, 64), "layout": layout})

    def verify_(self) -> None:
        _check_retention(self, self.value.type)


@irdl_op_definition
class RecallOp(IRDLOperation):
    """The register tile a tile.retain of the same buffer kept in slot `slot` (see RetainOp)."""

    name = "tile.recall"
    slot = operand_def(IndexType)
    buffer = prop_def(IntegerAttr)
    slots = prop_def(IntegerAttr)
    layout = prop_def(SharedTileType)
    result = result_def(RegisterTileType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "`slot` $slot attr-dict `:` type($result)"

    def __init__(self, slot: SSAValue, buffer: int, slots: int, layout: SharedTileType):
        super().__init__(operands=[slot], result_types=[RegisterTileType(layout.get_shape(), layout.element_type)],
                         properties={"buffer": IntegerAttr(buffer, 64), "slots": IntegerAttr(slots, 64),
                                     "layout": layout})

    def verify_(self) -> None:
        _check_retention(self, self.result.type)


def _check_retention(op: RetainOp | RecallOp, value_type: Attribute) -> None:
    assert isinstance(value_type, RegisterTileType)
    if (value_type.get_shape(), value_type.element_type) != (op.layout.get_shape(), op.layout.element_type):
        raise VerifyException(f"{op.name} keeps a tile of its layout's shape and dtype: {value_type} in {op.layout}")
    if op.slots.value.data < 1 or op.buffer.value.data < 0:
        raise VerifyException(f"{op.name} needs a buffer index >= 0 and at least one slot")


def _check_shared_layout(op: LoadOp | ToSharedOp) -> None:
    """The swizzle pinned or decided and the row padding of a shared tile; a decided swizzle is the type's."""
    _check_integers(op.attributes, SHARED_TILE_DECISIONS)
    decision, tile_type = op.attributes.get("swizzle"), op.result.type
    if isinstance(decision, DecisionAttr) and isinstance(tile_type, SharedTileType):
        if decision.int_value != tile_type.swizzle.data:
            raise VerifyException(f"the swizzle decision {decision.int_value} is not the swizzle of {tile_type}")


@irdl_op_definition
class ToSharedOp(IRDLOperation):
    """Register → shared (stmatrix / vector stores in the lowering)."""

    name = "tile.to_shared"
    source = operand_def(RegisterTileType | RegisterVectorType)
    result = result_def(SharedValue)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue):
        t = source.type
        assert isinstance(t, RegisterTileType | RegisterVectorType)
        result = (
            SharedTileType(t.get_shape(), t.element_type)
            if isinstance(t, RegisterTileType)
            else SharedVectorType(t.length, t.element_type)
        )
        super().__init__(operands=[source], result_types=[result])

    def verify_(self) -> None:
        _check_same_shape_and_dtype(self)
        _check_shared_layout(self)


# --------------------------------------------------------------------------- compute


@irdl_op_definition
class MmaOp(IRDLOperation):
    """result = acc + op(a) @ op(b), f32 accumulation; op transposes when the flag is set.

    mma_AB: a [M,K], b [K,N]; mma_ABt: b [N,K]; mma_AtB: a [K,M]; mma_AtBt: both.
    Without `acc` the product starts from zero. `a` may be a register tile (A from registers).
    """

    name = "tile.mma"
    a = operand_def(SharedTileType | RegisterTileType)
    b = operand_def(SharedTileType)
    acc = opt_operand_def(RegisterTileType)
    result = result_def(RegisterTileType)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())
    assembly_format = (
        "$a `,` $b (`,` $acc^)? (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)? attr-dict"
        " `:` type($a) `,` type($b) (`,` type($acc)^)? `->` type($result)"
    )

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        acc: SSAValue | None,
        result_type: Attribute,
        transpose_a: bool = False,
        transpose_b: bool = False,
    ):
        super().__init__(
            operands=[a, b, [acc] if acc is not None else []],
            result_types=[result_type],
            properties={
                **({"transpose_a": UnitAttr()} if transpose_a else {}),
                **({"transpose_b": UnitAttr()} if transpose_b else {}),
            },
        )

    def problem_shape(self) -> tuple[int, int, int]:
        """(M, N, K) after applying the transpose flags."""
        assert isinstance(self.a.type, ShapedTileType) and isinstance(self.b.type, ShapedTileType)
        ar, ac = self.a.type.get_shape()
        br, bc = self.b.type.get_shape()
        m, ka = (ac, ar) if self.transpose_a else (ar, ac)
        kb, n = (bc, br) if self.transpose_b else (br, bc)
        if ka != kb:
            raise VerifyException(f"tile.mma inner dimensions differ: {ka} (a) vs {kb} (b)")
        return m, n, ka

    def verify_(self) -> None:
        assert isinstance(self.a.type, ShapedTileType) and isinstance(self.b.type, ShapedTileType)
        assert isinstance(self.result.type, RegisterTileType)
        m, n, _ = self.problem_shape()
        if self.result.type.get_shape() != (m, n):
            raise VerifyException(f"tile.mma result must be {m}x{n}, got {self.result.type.get_shape()}")
        if not isinstance(self.result.type.element_type, Float32Type):
            raise VerifyException("tile.mma accumulates in f32")
        if self.acc is not None and self.acc.type != self.result.type:
            raise VerifyException("tile.mma accumulator and result types must match")
        in_types = {self.a.type.element_type, self.b.type.element_type}
        if len(in_types) != 1 or isinstance(self.a.type.element_type, Float32Type):
            raise VerifyException("tile.mma operands must share one 16- or 8-bit dtype (bf16, f16, fp8e4m3, fp8e5m2)")
        if isinstance(self.a.type, RegisterTileType) and self.transpose_a:
            raise VerifyException("an A operand in registers cannot be transposed (wgmma reads it K-major)")


@irdl_op_definition
class FillOp(IRDLOperation):
    """A register tile or vector with every element set to `value` (0, 1, ±inf, or any f32)."""

    name = "tile.fill"
    value = prop_def(FloatAttr)
    result = result_def(RegisterValue)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($result)"

    def __init__(self, value: float, result_type: Attribute):
        super().__init__(properties={"value": FloatAttr(value, Float32Type())}, result_types=[result_type])


@irdl_op_definition
class UnaryOp(IRDLOperation):
    name = "tile.unary"
    T: ClassVar = VarConstraint("T", base(RegisterTileType) | base(RegisterVectorType))
    fn = prop_def(UnaryFnAttr)
    source = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$fn $source attr-dict `:` type($result)"

    def __init__(self, fn: UnaryFn, source: SSAValue):
        super().__init__(operands=[source], result_types=[source.type], properties={"fn": UnaryFnAttr(fn)})


def _is_scalar(type_: Attribute) -> bool:
    return isinstance(type_, Float32Type)


class BinaryHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (ScaleAfterIf(), AccumulateInMma())


class SelectHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (SelectBeforeScaling(),)


class MaskHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (MaskBeforeScaling(),)


@irdl_op_definition
class BinaryOp(IRDLOperation):
    """Element-wise lhs ⊙ rhs; one side may be an f32 scalar, broadcast to every element."""

    name = "tile.binary"
    fn = prop_def(BinaryFnAttr)
    lhs = operand_def(RegisterValue | Float32Type)
    rhs = operand_def(RegisterValue | Float32Type)
    result = result_def(RegisterValue)
    traits = traits_def(Pure(), BinaryHasCanonicalizationPatterns())
    assembly_format = "$fn $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, fn: BinaryFn, lhs: SSAValue, rhs: SSAValue):
        result_type = rhs.type if _is_scalar(lhs.type) else lhs.type
        super().__init__(operands=[lhs, rhs], result_types=[result_type], properties={"fn": BinaryFnAttr(fn)})

    def verify_(self) -> None:
        lhs, rhs = self.lhs.type, self.rhs.type
        if _is_scalar(lhs) and _is_scalar(rhs):
            raise VerifyException("tile.binary needs at least one tile operand (scalars use arith)")
        tiles = [t for t in (lhs, rhs) if not _is_scalar(t)]
        if any(t != self.result.type for t in tiles):
            raise VerifyException(
                f"tile.binary operands must have the result's shape and dtype: {lhs}, {rhs} -> {self.result.type}"
            )


class ReduceHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (ReduceBeforeScaling(),)


def _scaling(value: SSAValue) -> tuple[SSAValue, SSAValue] | None:
    """(tile, scalar) when `value` is tile * scalar (either order)."""
    op = value.owner
    if not isinstance(op, BinaryOp) or op.fn.data != BinaryFn.MUL:
        return None
    if _is_scalar(op.lhs.type) != _is_scalar(op.rhs.type):
        return (op.rhs, op.lhs) if _is_scalar(op.lhs.type) else (op.lhs, op.rhs)
    return None


def _positive_constant(scalar: SSAValue) -> bool:
    """A finite constant above 0: scaling by it keeps every order (x * inf makes 0 NaN)."""
    constant = scalar.owner
    return (isinstance(constant, arith.ConstantOp) and isinstance(constant.value, FloatAttr)
            and 0 < constant.value.value.data < math.inf)


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Reduce a register tile along rows (one value per row) or columns (one per column)."""

    name = "tile.reduce"
    fn = prop_def(ReduceFnAttr)
    axis = prop_def(AxisAttr)
    source = operand_def(RegisterTileType)
    result = result_def(RegisterVectorType)
    traits = traits_def(Pure(), ReduceHasCanonicalizationPatterns())
    assembly_format = "$fn $axis $source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, fn: ReduceFn, axis: Axis, source: SSAValue, column: bool = False):
        """`column`: the result is typed a column vector (as tile-vector-layout would)."""
        t = source.type
        assert isinstance(t, RegisterTileType)
        length = t.rows if axis == Axis.ROW else t.cols
        super().__init__(
            operands=[source],
            result_types=[RegisterVectorType(length, t.element_type, column)],
            properties={"fn": ReduceFnAttr(fn), "axis": AxisAttr(axis)},
        )

    def verify_(self) -> None:
        assert isinstance(self.source.type, RegisterTileType) and isinstance(self.result.type, RegisterVectorType)
        expected = self.source.type.rows if self.axis.data == Axis.ROW else self.source.type.cols
        if self.result.type.length != expected:
            raise VerifyException(f"a {self.axis.data} reduction of {self.source.type} has length {expected}")
        if self.result.type.element_type != self.source.type.element_type:
            raise VerifyException("tile.reduce keeps the dtype")


class ReduceBeforeScaling(RewritePattern):
    """max(x * c) = max(x) * c (and min) for a finite constant c > 0, exactly (rounding is
    monotone): reduce first, scale the vector. The scaled tile is then used once, so its scaling
    fuses into that use (softmax's sub_row before exp2 becomes one FFMA per element instead of an
    FMUL and an FADD). Not a sum: sum(x) * c rounds and overflows differently from sum(x * c)
    (x = 3e38 in each of two columns, c = 0.5), and c = 0 turns an infinite x's NaN into 0 * inf."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReduceOp, rewriter: PatternRewriter) -> None:
        scaled = _scaling(op.source)
        if scaled is None:
            return
        tile_value, scalar = scaled
        if op.fn.data == ReduceFn.SUM or not _positive_constant(scalar):
            return
        column = isinstance(op.result.type, RegisterVectorType) and op.result.type.is_column
        reduce = ReduceOp(op.fn.data, op.axis.data, tile_value, column)
        rescale = BinaryOp(BinaryFn.MUL, reduce.result, scalar)
        reduce.location = rescale.location = op.location
        rewriter.replace(op, [reduce, rescale])


class AccumulateInMma(RewritePattern):
    """x + mma(a, b) = mma(a, b, x) (either order), where the product has no other use: the
    tensor cores add into x as they go (`acc += mma_AB(a, b)` in a K loop is then the GEMM's
    accumulating mma, with one accumulator live instead of two and a loop stream-K can split).
    Both sum the same f32 terms; only the order of the additions differs."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BinaryOp, rewriter: PatternRewriter) -> None:
        if op.fn.data != BinaryFn.ADD:
            return
        for product, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            mma = product.owner
            if (isinstance(mma, MmaOp) and mma.acc is None and product.has_one_use()
                    and other.type == product.type == op.result.type):
                fused = MmaOp(mma.a, mma.b, other, op.result.type, mma.transpose_a is not None,
                              mma.transpose_b is not None)
                fused.location = mma.location
                rewriter.replace(op, fused)
                rewriter.erase(mma)
                return


class ScaleAfterIf(RewritePattern):
    """if .. { a * c } else { b * c } = (if .. { a } else { b }) * c, for one scalar c defined
    outside the if: the scaling leaves the branches, where ReduceBeforeScaling and the fusion into
    the next use reach it (causal attention masks only its diagonal tiles, under an if)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BinaryOp, rewriter: PatternRewriter) -> None:
        scaled = _scaling(op.result)
        if scaled is None:
            return
        scalar = scaled[1]
        for use in list(op.result.uses):
            yield_op, if_op = use.operation, use.operation.parent_op()
            if not isinstance(yield_op, scf.YieldOp) or not isinstance(if_op, scf.IfOp) or not if_op.false_region.blocks:
                continue
            if isinstance(scalar.owner, Operation) and if_op.is_ancestor(scalar.owner):
                continue
            yields = [region.block.last_op for region in (if_op.true_region, if_op.false_region)]
            unscaled = [_scaling(y.operands[use.index]) if isinstance(y, scf.YieldOp) else None for y in yields]
            if any(u is None or u[1] is not scalar for u in unscaled):
                continue
            for y, u in zip(yields, unscaled):
                assert isinstance(y, scf.YieldOp) and u is not None
                operands = list(y.operands)
                operands[use.index] = u[0]
                rewriter.replace(y, scf.YieldOp(*operands))
            result = if_op.results[use.index]
            rescale = BinaryOp(BinaryFn.MUL, result, scalar)
            rescale.location = op.location
            rewriter.insert(rescale, InsertPoint.after(if_op))
            rewriter.replace_uses_with_if(result, rescale.result, lambda u: u.operation is not rescale)
            return


@irdl_op_definition
class CumsumOp(IRDLOperation):
    """Inclusive prefix sum: of a tile along `axis` (`row`: along each row, over its columns,
    result[r, c] = sum of source[r, 0..c]; `col`: along each column, over its rows), or of a
    vector over its elements (no axis). Padding along the scanned axis counts as 0; as padding
    only ever ends a tile (a tail past a tensor's end), no valid element sums any. A bf16, f16
    or fp8 operand is summed in f32, each sum rounded once to the operand's dtype."""

    name = "tile.cumsum"
    T: ClassVar = VarConstraint("T", base(RegisterTileType) | base(RegisterVectorType))
    axis = opt_prop_def(AxisAttr)
    source = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$source (`along` $axis^)? attr-dict `:` type($source)"

    def __init__(self, source: SSAValue, axis: Axis | None = None):
        properties = {} if axis is None else {"axis": AxisAttr(axis)}
        super().__init__(operands=[source], result_types=[source.type], properties=properties)

    def verify_(self) -> None:
        is_tile = isinstance(self.source.type, RegisterTileType)
        if is_tile and self.axis is None:
            raise VerifyException("tile.cumsum of a tile scans along `row` or `col`: give the axis")
        if not is_tile and self.axis is not None:
            raise VerifyException("tile.cumsum of a vector scans its one axis: give no axis")


@irdl_op_definition
class VectorReduceOp(IRDLOperation):
    """Reduce an f32 register vector to one f32 scalar; padding counts as the identity."""

    name = "tile.vector_reduce"
    fn = prop_def(ReduceFnAttr)
    source = operand_def(RegisterVectorType)
    result = result_def(Float32Type)
    traits = traits_def(Pure())
    assembly_format = "$fn $source attr-dict `:` type($source)"

    def __init__(self, fn: ReduceFn, source: SSAValue):
        super().__init__(operands=[source], result_types=[Float32Type()], properties={"fn": ReduceFnAttr(fn)})

    def verify_(self) -> None:
        assert isinstance(self.source.type, RegisterVectorType)
        if self.source.type.element_type != Float32Type():
            raise VerifyException("tile.vector_reduce reduces an f32 vector to an f32 scalar: convert it to f32 first")


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """The same vector in the other layout: a row vector (one value per row of a tile) as a
    column vector (one per column), or back. The values do not change; tile-vector-layout inserts
    it where one vector is broadcast both ways, and says why in `layout_change`."""

    name = "tile.transpose"
    source = operand_def(RegisterVectorType)
    result = result_def(RegisterVectorType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, column: bool):
        assert isinstance(source.type, RegisterVectorType)
        super().__init__(operands=[source], result_types=[source.type.with_layout(column)])

    def verify_(self) -> None:
        source, result = self.source.type, self.result.type
        assert isinstance(source, RegisterVectorType) and isinstance(result, RegisterVectorType)
        if source.get_shape() != result.get_shape() or source.element_type != result.element_type:
            raise VerifyException(f"tile.transpose keeps the length and dtype: {source} -> {result}")
        if source.is_column and result.is_column:
            raise VerifyException("tile.transpose changes the layout: a column vector becomes a row vector")


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """tile ⊙ vector, the vector broadcast along `axis`: `row` uses vec[r] for every element of
    row r (sub_row, mul_row, ...); `col` uses vec[c] for every element of column c."""

    name = "tile.broadcast"
    T: ClassVar = VarConstraint("T", base(RegisterTileType))
    fn = prop_def(BinaryFnAttr)
    axis = prop_def(AxisAttr)
    source = operand_def(T)
    vector = operand_def(RegisterVectorType)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$fn $axis $source `,` $vector attr-dict `:` type($source) `,` type($vector)"

    def __init__(self, fn: BinaryFn, axis: Axis, source: SSAValue, vector: SSAValue):
        super().__init__(
            operands=[source, vector],
            result_types=[source.type],
            properties={"fn": BinaryFnAttr(fn), "axis": AxisAttr(axis)},
        )

    def verify_(self) -> None:
        assert isinstance(self.source.type, RegisterTileType) and isinstance(self.vector.type, RegisterVectorType)
        expected = self.source.type.rows if self.axis.data == Axis.ROW else self.source.type.cols
        if self.vector.type.length != expected:
            raise VerifyException(
                f"a {self.axis.data} broadcast over {self.source.type} needs a vector of length {expected}, "
                f"got {self.vector.type.length}"
            )
        if self.vector.type.element_type != self.source.type.element_type:
            raise VerifyException("tile.broadcast operands must share a dtype")


@irdl_op_definition
class MaskOp(IRDLOperation):
    """Set the elements a mask excludes to `fill`. Causal: element (r, c) is excluded when
    col_offset + c > row_offset + r (offsets are the tile's position in elements)."""

    name = "tile.mask"
    T: ClassVar = VarConstraint("T", base(RegisterTileType))
    kind = prop_def(MaskKindAttr)
    fill = prop_def(FloatAttr)
    source = operand_def(T)
    row_offset = operand_def(IndexType)
    col_offset = operand_def(IndexType)
    result = result_def(T)
    traits = traits_def(Pure(), MaskHasCanonicalizationPatterns())
    assembly_format = "$kind $source `,` $row_offset `,` $col_offset `fill` $fill attr-dict `:` type($source)"

    def __init__(self, kind: MaskKind, source: SSAValue, row_offset: SSAValue, col_offset: SSAValue, fill: float):
        super().__init__(
            operands=[source, row_offset, col_offset],
            result_types=[source.type],
            properties={"kind": MaskKindAttr(kind), "fill": FloatAttr(fill, Float32Type())},
        )


class MaskBeforeScaling(RewritePattern):
    """mask(x * c) = mask(x) * c for a finite constant c > 0 and a fill of 0 or ±inf (fill * c = fill):
    the scaling moves past the mask, on towards ScaleAfterIf and ReduceBeforeScaling, so a kernel
    that scales the scores before masking them gets the same fused exp2 as one that masks first."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MaskOp, rewriter: PatternRewriter) -> None:
        scaled = _scaling(op.source)
        fill = op.fill.value.data
        if scaled is None or not _positive_constant(scaled[1]) or not (fill == 0 or math.isinf(fill)):
            return
        mask = MaskOp(op.kind.data, scaled[0], op.row_offset, op.col_offset, fill)
        rescale = BinaryOp(BinaryFn.MUL, mask.result, scaled[1])
        mask.location = rescale.location = op.location
        rewriter.replace(op, [mask, rescale])


@irdl_op_definition
class BoundsMaskOp(IRDLOperation):
    """Set the elements past a tile's valid extent to `fill`: element (r, c) of a tile when
    r >= limits[0] or c >= limits[1], element i of a vector when i >= limits[0]. Limits are
    signed (a tile wholly past the end of its tensor has a limit <= 0). tile-mask-tails inserts
    these where a reduction or a contraction would otherwise see elements past the end of a
    tensor (`reason` says which); `bounds_mask(t, rows, cols)` writes one by hand."""

    name = "tile.bounds_mask"
    T: ClassVar = VarConstraint("T", base(RegisterTileType) | base(RegisterVectorType))
    fill = prop_def(FloatAttr)
    source = operand_def(T)
    limits = var_operand_def(IndexType)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$source `[` $limits `]` `fill` $fill attr-dict `:` type($source)"

    def __init__(self, source: SSAValue, limits: Sequence[SSAValue], fill: float):
        super().__init__(
            operands=[source, limits], result_types=[source.type], properties={"fill": FloatAttr(fill, Float32Type())}
        )

    def verify_(self) -> None:
        assert isinstance(self.source.type, ShapedTileType)
        rank = len(self.source.type.get_shape())
        if len(self.limits) != rank:
            raise VerifyException(f"tile.bounds_mask of a rank-{rank} value takes {rank} limits, got {len(self.limits)}")


@irdl_op_definition
class PositionOp(IRDLOperation):
    """The element positions of an f32 register tile along one axis: element (r, c) is
    `offset + r` (`row`) or `offset + c` (`col`), offset an index (the tile's first row or column
    in a larger matrix); of an f32 register vector, element i is `offset + i` (its one axis,
    `row`, whichever layout the vector has). Exact while the positions are below 2^24, where f32
    holds every integer. It reads no tile, so it has no padding (like a fill)."""

    name = "tile.position"
    axis = prop_def(AxisAttr)
    offset = operand_def(IndexType)
    result = result_def(base(RegisterTileType) | base(RegisterVectorType))
    traits = traits_def(Pure())
    assembly_format = "$axis $offset attr-dict `:` type($result)"

    def __init__(self, axis: Axis, offset: SSAValue, result_type: Attribute):
        super().__init__(operands=[offset], result_types=[result_type], properties={"axis": AxisAttr(axis)})

    def verify_(self) -> None:
        assert isinstance(self.result.type, RegisterTileType | RegisterVectorType)
        if not isinstance(self.result.type.element_type, Float32Type):
            raise VerifyException(f"tile.position makes f32 tiles and vectors, not {self.result.type}")
        if isinstance(self.result.type, RegisterVectorType) and self.axis.data != Axis.ROW:
            raise VerifyException("a vector's positions run along its one axis: `row`")


@irdl_op_definition
class SelectOp(IRDLOperation):
    """Element-wise `cond != 0 ? on_true : on_false` (NaN counts as nonzero) of tiles or of
    vectors; either branch may be an f32 scalar, broadcast to every element. The condition has the
    result's shape, any dtype (a comparison's 0/1 tile or vector)."""

    name = "tile.select"
    cond = operand_def(RegisterValue)
    on_true = operand_def(RegisterValue | Float32Type)
    on_false = operand_def(RegisterValue | Float32Type)
    result = result_def(RegisterValue)
    traits = traits_def(Pure(), SelectHasCanonicalizationPatterns())
    assembly_format = (
        "$cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,` type($on_true) `,` type($on_false)"
        " `->` type($result)"
    )

    def __init__(self, cond: SSAValue, on_true: SSAValue, on_false: SSAValue, result_type: Attribute):
        super().__init__(operands=[cond, on_true, on_false], result_types=[result_type])

    def verify_(self) -> None:
        result, cond = self.result.type, self.cond.type
        assert isinstance(result, RegisterTileType | RegisterVectorType)
        assert isinstance(cond, RegisterTileType | RegisterVectorType)
        if type(cond) is not type(result) or cond.get_shape() != result.get_shape():
            raise VerifyException(f"tile.select's condition {cond} must have the result's shape {result}")
        if isinstance(cond, RegisterVectorType) and cond.is_column != cast(RegisterVectorType, result).is_column:
            raise VerifyException(f"tile.select's condition {cond} must have the result's layout {result}")
        for branch in (self.on_true.type, self.on_false.type):
            if not _is_scalar(branch) and branch != result:
                raise VerifyException(f"tile.select's branches must have the result's type: {branch} -> {result}")


class SelectBeforeScaling(RewritePattern):
    """where(c, x * k, y * k) = where(c, x, y) * k for one scalar k, and where(c, x * k, f) =
    where(c, x, f) * k (either branch) for a finite constant k > 0 and a constant f of 0 or ±inf
    (f * k = f): the scaling moves past the select as past a mask (MaskBeforeScaling), on towards
    ScaleAfterIf and ReduceBeforeScaling, so a sliding window's `where(gap < W, s, -inf)` keeps
    attention's scaling fused into exp2's FFMA."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SelectOp, rewriter: PatternRewriter) -> None:
        branches = (op.on_true, op.on_false)
        scaled = [None if _is_scalar(b.type) else _scaling(b) for b in branches]
        if scaled[0] is not None and scaled[1] is not None and scaled[0][1] is scaled[1][1]:
            unscaled, scalar = [scaled[0][0], scaled[1][0]], scaled[0][1]
        else:
            which = next((i for i in (0, 1) if scaled[i] is not None and scaled[1 - i] is None), None)
            if which is None:
                return
            tile_value, scalar = cast(tuple[SSAValue, SSAValue], scaled[which])
            fill = _float_constant(branches[1 - which])
            if fill is None or not (fill == 0 or math.isinf(fill)) or not _positive_constant(scalar):
                return
            unscaled = list(branches)
            unscaled[which] = tile_value
        select = SelectOp(op.cond, unscaled[0], unscaled[1], op.result.type)
        rescale = BinaryOp(BinaryFn.MUL, select.result, scalar)
        select.location = rescale.location = op.location
        rewriter.replace(op, [select, rescale])


def _float_constant(value: SSAValue) -> float | None:
    constant = value.owner
    if isinstance(constant, arith.ConstantOp) and isinstance(constant.value, FloatAttr):
        return constant.value.value.data
    return None


@irdl_op_definition
class ConvertOp(IRDLOperation):
    """Change the dtype of a register tile or vector (round to nearest even)."""

    name = "tile.convert"
    source = operand_def(RegisterValue)
    result = result_def(RegisterValue)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, element_type: Attribute):
        super().__init__(operands=[source], result_types=[same_kind(source.type, element_type)])

    def verify_(self) -> None:
        assert isinstance(self.source.type, ShapedTileType) and isinstance(self.result.type, ShapedTileType)
        if type(self.source.type) is not type(self.result.type) or (
            self.source.type.get_shape() != self.result.type.get_shape()
        ):
            raise VerifyException("tile.convert changes only the dtype")


Tile = Dialect(
    "tile",
    [
        KernelOp,
        ReturnOp,
        DimOp,
        LoadScalarOp,
        GridOp,
        BlockIdOp,
        LoadOp,
        StoreOp,
        FenceOp,
        RequireOp,
        ToRegOp,
        ToSharedOp,
        RetainOp,
        RecallOp,
        MmaOp,
        FillOp,
        UnaryOp,
        BinaryOp,
        ReduceOp,
        CumsumOp,
        VectorReduceOp,
        TransposeOp,
        BroadcastOp,
        MaskOp,
        BoundsMaskOp,
        PositionOp,
        SelectOp,
        ConvertOp,
    ],
    [
        DecisionAttr,
        PlanAttr,
        UnaryFnAttr,
        BinaryFnAttr,
        ReduceFnAttr,
        StoreReductionAttr,
        AxisAttr,
        MaskKindAttr,
        RoleAttr,
        GlobalType,
        RegisterTileType,
        SharedTileType,
        RegisterVectorType,
        SharedVectorType,
    ],
)
