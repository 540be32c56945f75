"""The sm90 dialect: the Hopper machine model that tile programs lower to.

Tiles are gone here. What remains is what a Hopper CTA really has:
  - warpgroup roles (`sm90.roles`: one producer warpgroup, N consumer warpgroups) and
    `setmaxnreg` budgets per role;
  - shared memory as addresses (`index`), typed views of tiles in it (`!sm90.smem<...>`: shape,
    dtype and swizzle, which fix TMA boxes and wgmma descriptors), and mbarriers: groups of them
    at fixed offsets (`!sm90.mbarriers<N>`, one barrier per ring stage) and the barrier of one
    stage (`!sm90.mbarrier`), so which barrier an op uses is read off the IR; rings of stages
    (`!sm90.ring`: convert-tile-to-sm90 acquires, waits for and releases stages of them, and
    sm90-build-rings gives each its barriers and expands those ops into mbarrier ops);
  - TMA copies between tensor maps and shared memory, completing on mbarriers;
  - wgmma on shared-memory descriptors or register fragments;
  - register fragments (`!sm90.frag<64x256xf32>`): one warpgroup's slice of a register tile in
    the wgmma accumulator layout (rank 2), or of a row vector (rank 1: the values for the rows
    the warpgroup's threads hold);
  - column vectors (`!sm90.frag<128xf32, col>`): replicated over the warpgroup, each thread
    holding the columns its accumulator registers cover;
  - quad-shuffle row reductions, column reductions, broadcasts and element-wise math on fragments.
Scalars stay in `arith` (index is a 32-bit register in PTX), control flow in `scf`.
convert-sm90-to-ptx expands every op into PTX instructions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, TypeVar, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    ArrayAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    I32,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Data, Dialect, Operation, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    base,
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
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator, Pure, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from tkc.abi import (
    CONDITION_OPERATORS,
    ABIError,
    ArgSpec,
    DimParam,
    Expr,
    KernelABI,
    LaunchContract,
    Param,
    PointerParam,
    ScratchParam,
    SWIZZLES,
    TensorMapParam,
    check_launch_size,
)
from tkc.dialects.tile import (
    index_constant,
    MBARRIER_BYTES,
    RING_BARRIERS_PER_STAGE,
    BAND_COLUMNS,
    TMA_BOX_MAX,
    WARPGROUP_THREADS,
    Axis,
    AxisAttr,
    BinaryFnAttr,
    ElementType,
    MaskKindAttr,
    ReduceFnAttr,
    StoreReductionAttr,
    UnaryFn,
    UnaryFnAttr,
    element_bytes,
    entry_registers,
    parse_layout,
    vector_box,
)


# --------------------------------------------------------------------------- types


FRAGMENT_LAYOUTS = ("", "col", "band", "band_col")
"""A fragment's layouts: "" the wgmma accumulator layout (tiles, row vectors), "col" a column
vector replicated over the warpgroup; "band" a tile or row vector of 16·k rows that every warp
holds whole in rows while the 4 warps interleave its 8-column groups, "band_col" a column vector
laid out as a band tile's columns (FragmentType)."""


@irdl_attr_definition
class FragmentType(ParametrizedAttribute, TypeAttribute):
    """One warpgroup's registers of a tile (rows x cols) or row vector (rows).

    Layout "" (the wgmma accumulator layout): per 64-row m-block, warp w holds rows 16w + lane/4
    and + 8, register n of the block at row +8·((n>>1)&1) and column 8·(n>>2) + 2·(lane%4) +
    (n&1). Layout `col`: a column vector (cols) replicated over the warpgroup: each thread holds
    the C/4 columns its accumulator registers cover, value j at column 8*(j>>1) + 2*(lane%4) +
    (j&1), bf16/f16 neighbours packed in one register as in a tile.

    Layout `band` (a tile of 16·k rows that no wgmma touches, plan `band`): per 16-row block,
    every warp holds rows lane/4 and + 8, and warp w the 8-column groups 4g + w: register n of
    the block at row +8·((n>>1)&1) and column 32·(n>>2) + 8w + 2·(lane%4) + (n&1). So a 16-row
    tile costs each thread a quarter of the registers and work of the 64 rows the accumulator
    layout would pad it to, and a row reduction meets the 4 warps' partials in shared memory.
    A band row vector holds rows lane/4 and + 8 of each block (every warp the same values), a
    `band_col` vector value j at column 32·(j>>1) + 8w + 2·(lane%4) + (j&1)."""

    name = "sm90.frag"
    shape: ArrayAttr[IntAttr]
    element_type: ElementType
    layout: StringAttr
    """One of FRAGMENT_LAYOUTS."""

    def __init__(self, shape: Sequence[int], element_type: Attribute, column: bool = False, band: bool = False):
        layout = ("band_col" if column else "band") if band else ("col" if column else "")
        super().__init__(ArrayAttr(IntAttr(d) for d in shape), element_type, StringAttr(layout))

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def rows(self) -> int:
        return self.get_shape()[0]

    @property
    def is_vector(self) -> bool:
        return len(self.shape.data) == 1

    @property
    def is_column(self) -> bool:
        return self.layout.data in ("col", "band_col")

    @property
    def is_band(self) -> bool:
        return self.layout.data in ("band", "band_col")

    @property
    def is_row_vector(self) -> bool:
        return self.is_vector and not self.is_column

    @property
    def block_rows(self) -> int:
        """The rows of one block of registers: a wgmma's 64 rows, or a band's 16."""
        return 16 if self.is_band else 64

    @property
    def blocks(self) -> int:
        return self.rows // self.block_rows

    @property
    def group_stride(self) -> int:
        """Columns between a thread's 8-column groups: 8, or 32 in a band (4 warps interleave)."""
        return BAND_COLUMNS if self.is_band else 8

    def warp_cols(self, cols: int) -> int:
        """The columns of `cols` one warp holds: all, or a band's quarter."""
        return cols // 4 if self.is_band else cols

    def row_vector(self) -> FragmentType:
        """The row vector of this tile's rows, in its layout."""
        return FragmentType([self.rows], self.element_type, band=self.is_band)

    def col_vector(self) -> FragmentType:
        """The column vector of this tile's columns, in its layout."""
        return FragmentType([self.get_shape()[1]], self.element_type, column=True, band=self.is_band)

    def registers_per_thread(self) -> int:
        """32-bit registers each of the 128 threads holds (bf16/f16 pack two per register)."""
        if self.is_row_vector:
            return 2 * self.blocks
        per_thread = self.warp_cols(self.rows) // 4 if self.is_column else self.rows * self.get_shape()[1] // 128
        return per_thread if element_bytes(self.element_type) == 4 else per_thread // 2

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("x".join(map(str, self.get_shape())) + "x")
            printer.print_attribute(self.element_type)
            if self.layout.data:
                printer.print_string(f", {self.layout.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
            layout = parse_layout(parser)
        return (ArrayAttr(IntAttr(d) for d in dims), element_type, layout)

    def verify(self) -> None:
        shape = self.get_shape()
        if self.layout.data not in FRAGMENT_LAYOUTS:
            raise VerifyException(f"a fragment's layout is one of {', '.join(map(repr, FRAGMENT_LAYOUTS))}, "
                                  f"got {self.layout.data!r}")
        if self.is_column:
            step = BAND_COLUMNS if self.is_band else 16
            if len(shape) != 1 or shape[0] % step:
                raise VerifyException(f"a {self.layout.data} fragment is a vector of {step}*k columns, got {shape}")
            return
        if len(shape) not in (1, 2) or shape[0] % self.block_rows:
            raise VerifyException(f"a {'band ' if self.is_band else ''}fragment has {self.block_rows}*k rows, got {shape}")
        col_step = BAND_COLUMNS if self.is_band else 16
        if len(shape) == 2 and shape[1] % col_step:
            raise VerifyException(f"{'band ' if self.is_band else ''}fragment columns are a multiple of {col_step}, "
                                  f"got {shape}")


@irdl_attr_definition
class SharedRefType(ParametrizedAttribute, TypeAttribute):
    """The address of a tile in shared memory, with the layout TMA wrote and wgmma reads.

    A tile whose rows are wider than the swizzle span is stored as column panels of
    `swizzle` bytes, each covering all rows (the layout TMA boxes of span-wide columns give).
    """

    name = "sm90.smem"
    shape: ArrayAttr[IntAttr]
    element_type: ElementType
    swizzle: IntAttr

    def __init__(self, shape: Sequence[int], element_type: Attribute, swizzle: int):
        super().__init__(ArrayAttr(IntAttr(d) for d in shape), element_type, IntAttr(swizzle))

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def panel_cols(self) -> int:
        """Elements per row of one panel: the swizzle span, or the whole row when unswizzled; a
        vector longer than a TMA box in the equal boxes of tile.vector_box, which lie end to end:
        the same layout as one box (the planner refuses a vector no such boxes divide)."""
        shape = self.get_shape()
        cols = shape[-1]
        if self.swizzle.data == 0 and len(shape) == 1 and cols > TMA_BOX_MAX:
            box = vector_box(cols, element_bytes(self.element_type))
            assert box is not None, "tile-occupancy-plan refuses a vector no equal aligned TMA boxes divide"
            return box
        if self.swizzle.data == 0:
            return cols
        return min(cols, self.swizzle.data // element_bytes(self.element_type))

    @property
    def num_bytes(self) -> int:
        count = 1
        for d in self.get_shape():
            count *= d
        return count * element_bytes(self.element_type)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("x".join(map(str, self.get_shape())) + "x")
            printer.print_attribute(self.element_type)
            printer.print_string(f", swizzle {self.swizzle.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            parser.parse_keyword("swizzle")
            swizzle = parser.parse_integer()
        return (ArrayAttr(IntAttr(d) for d in dims), element_type, IntAttr(swizzle))

    def verify(self) -> None:
        shape = self.get_shape()
        if len(shape) not in (1, 2) or any(d <= 0 for d in shape):
            raise VerifyException(f"a shared tile has 1 or 2 positive dims, got {shape}")
        if self.swizzle.data not in SWIZZLES:
            raise VerifyException(f"swizzle must be 0, 32, 64 or 128 bytes, got {self.swizzle.data}")


@irdl_attr_definition
class TensorMapType(ParametrizedAttribute, TypeAttribute):
    """The generic address of a CUtensorMap kernel parameter."""

    name = "sm90.tmap"




@irdl_attr_definition
class MbarrierGroupType(ParametrizedAttribute, TypeAttribute):
    """`count` mbarriers side by side in shared memory (a ring's full or empty barriers, one per
    stage). It has no register of its own: `sm90.mbarrier_at` reads its base and offset."""

    name = "sm90.mbarriers"
    count: IntAttr

    def __init__(self, count: int):
        super().__init__(IntAttr(count))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.count.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer()),)

    def verify(self) -> None:
        if self.count.data < 1:
            raise VerifyException(f"a group holds at least one mbarrier, got {self.count.data}")


@irdl_attr_definition
class MbarrierType(ParametrizedAttribute, TypeAttribute):
    """One mbarrier of a group; in PTX the b32 register of its shared address."""

    name = "sm90.mbarrier"


MIRRORED_IF = "mirrored_if"
"""On the producer's and the consumers' copies of a tile-level `scf.if` whose branches fill or
wait for ring stages: the if's number among the kernel's ifs (the same in both roles), by which
sm90-verify-barriers pairs the copies and checks they branch alike."""
SCHEDULE_WGMMA = "schedule_wgmma"
"""On an `sm90.kernel` whose plan turned sm90-schedule-wgmma on (`@schedule_wgmma(1)`): the
plan's reason. The pass leaves other kernels as they are."""


@irdl_attr_definition
class RingType(ParametrizedAttribute, TypeAttribute):
    """A ring of shared-memory stages (sm90.ring); no register holds it: sm90-build-rings
    expands its ops before the PTX lowering."""

    name = "sm90.ring"
@irdl_attr_definition
class KernelABIAttr(Data[LaunchContract]):
    """How a kernel is launched (tkc.abi.LaunchContract: a KernelABI less the entry, block and
    shared memory, which the sm90.kernel states itself):

        #sm90.abi<args [A: bf16[M, K], C: f32[M, N]],
                  params [tmap_A = tensormap A box [64, 64] swizzle 128, dim_K = dim K, ptr_C = pointer C],
                  grid [(ceildiv M 128), 1, 1], divisible [K by 64], written [C], dependent_launch>

    A grid extent is an integer, a dim, `num_sms` or `(op lhs rhs)` (tkc/abi.py's operators);
    `whole_tiles [M by 64 "why"]` names the divisors tile-mask-tails asks for, with its reason;
    `requires [(eq M (mul H 2)) "M == H * G (line 3)"]` the kernel's `require` conditions (the
    operators of a requirement, tkc/abi.py's CONDITION_OPERATORS), each with its text;
    `divisible`, `whole_tiles`, `requires`, `written` and `multicast` are left out when empty,
    `dependent_launch` when false.
    The parameters are in the kernel's order, box innermost first."""

    name = "sm90.abi"

    @staticmethod
    def from_abi(abi: KernelABI) -> KernelABIAttr:
        return KernelABIAttr(abi.contract)

    def abi(self, entry: str, block: int, smem_bytes: int) -> KernelABI:
        return self.data.abi(entry, block, smem_bytes)

    def verify(self) -> None:
        try:
            self.data.check()
        except ABIError as e:
            raise VerifyException(f"{self.name}: {e}") from None

    def print_parameter(self, printer: Printer) -> None:
        contract = self.data
        name = printer.print_identifier_or_string_literal

        def section(keyword: str, items: Sequence[_T], print_item: Callable[[_T], None]) -> None:
            printer.print_string(f"{keyword}[")
            printer.print_list(items, print_item)
            printer.print_string("]")

        def name_or_number(value: str | int) -> None:
            if isinstance(value, str):
                name(value)
            else:
                printer.print_string(str(value))

        def arg(a: ArgSpec) -> None:
            name(a.name)
            printer.print_string(f": {a.dtype}")
            section("", a.dims, name_or_number)

        def param(p: Param) -> None:
            name(p.name)
            printer.print_string(f" = {p.kind} ")
            if isinstance(p, ScratchParam):
                expr(p.nbytes)
                return
            name(p.dim if isinstance(p, DimParam) else p.arg)
            if isinstance(p, TensorMapParam):
                printer.print_string(f" box [{', '.join(map(str, p.box))}] swizzle {p.swizzle}")

        def expr(e: Expr) -> None:
            if isinstance(e, tuple):
                printer.print_string(f"({e[0]} ")
                printer.print_list(e[1:], expr, " ")
                printer.print_string(")")
            else:
                name_or_number(e)

        def divisible(pair: tuple[str, int]) -> None:
            name(pair[0])
            printer.print_string(f" by {pair[1]}")

        def whole(entry: tuple[str, int, str]) -> None:
            divisible(entry[:2])
            printer.print_string(" ")
            printer.print_string_literal(entry[2])

        def requirement(entry: tuple[Expr, str]) -> None:
            expr(entry[0])
            printer.print_string(" ")
            printer.print_string_literal(entry[1])

        with printer.in_angle_brackets():
            section("args ", contract.args, arg)
            section(", params ", contract.params, param)
            section(", grid ", contract.grid, expr)
            if contract.divisibility:
                section(", divisible ", contract.divisibility, divisible)
            if contract.whole_tiles:
                section(", whole_tiles ", contract.whole_tiles, whole)
            if contract.requires:
                section(", requires ", contract.requires, requirement)
            if contract.written:
                section(", written ", contract.written, name)
            if contract.multicast:
                section(", multicast ", contract.multicast, name)
            if contract.dependent_launch:
                printer.print_string(", dependent_launch")

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> LaunchContract:
        square = parser.Delimiter.SQUARE
        name = parser.parse_identifier_or_str_literal

        def name_or_number() -> str | int:
            number = parser.parse_optional_integer(allow_boolean=False)
            return number if number is not None else name()

        def arg() -> ArgSpec:
            arg_name = name()
            parser.parse_punctuation(":")
            dtype = parser.parse_identifier()
            return ArgSpec(arg_name, dtype, tuple(parser.parse_comma_separated_list(square, name_or_number)))

        def param() -> Param:
            param_name = name()
            parser.parse_punctuation("=")
            kind = parser.parse_keyword_in(_PARAM_KINDS)
            if kind == DimParam.kind:
                return DimParam(param_name, name())
            if kind == PointerParam.kind:
                return PointerParam(param_name, name())
            if kind == ScratchParam.kind:
                return ScratchParam(param_name, expr())
            tensor = name()
            parser.parse_keyword("box")
            box = tuple(parser.parse_comma_separated_list(square, parser.parse_integer))
            parser.parse_keyword("swizzle")
            return TensorMapParam(param_name, tensor, box, parser.parse_integer())

        def expr() -> Expr:
            if parser.parse_optional_punctuation("(") is None:
                return name_or_number()
            op = parser.parse_keyword_in(CONDITION_OPERATORS)
            lhs, rhs = expr(), expr()
            parser.parse_punctuation(")")
            return (op, lhs, rhs)

        def divisible() -> tuple[str, int]:
            dim = name()
            parser.parse_keyword("by")
            return dim, parser.parse_integer()

        def whole() -> tuple[str, int, str]:
            return *divisible(), parser.parse_str_literal()

        def requirement() -> tuple[Expr, str]:
            return expr(), parser.parse_str_literal()

        with parser.in_angle_brackets():
            parser.parse_keyword("args")
            args = tuple(parser.parse_comma_separated_list(square, arg))
            parser.parse_punctuation(",")
            parser.parse_keyword("params")
            params = tuple(parser.parse_comma_separated_list(square, param))
            parser.parse_punctuation(",")
            parser.parse_keyword("grid")
            grid = parser.parse_comma_separated_list(square, expr)
            more = parser.parse_optional_punctuation(",") is not None
            divisibility: tuple[tuple[str, int], ...] = ()
            if more and parser.parse_optional_keyword("divisible") is not None:
                divisibility = tuple(parser.parse_comma_separated_list(square, divisible))
                more = parser.parse_optional_punctuation(",") is not None
            whole_tiles: tuple[tuple[str, int, str], ...] = ()
            if more and parser.parse_optional_keyword("whole_tiles") is not None:
                whole_tiles = tuple(parser.parse_comma_separated_list(square, whole))
                more = parser.parse_optional_punctuation(",") is not None
            requires: tuple[tuple[Expr, str], ...] = ()
            if more and parser.parse_optional_keyword("requires") is not None:
                requires = tuple(parser.parse_comma_separated_list(square, requirement))
                more = parser.parse_optional_punctuation(",") is not None
            written: tuple[str, ...] = ()
            if more and parser.parse_optional_keyword("written") is not None:
                written = tuple(parser.parse_comma_separated_list(square, name))
                more = parser.parse_optional_punctuation(",") is not None
            multicast: tuple[str, ...] = ()
            section = parser.parse_keyword_in(("multicast", "dependent_launch")) if more else None
            if section == "multicast":
                multicast = tuple(parser.parse_comma_separated_list(square, name))
                if parser.parse_optional_punctuation(",") is not None:
                    section = parser.parse_keyword_in(("dependent_launch",))
        return LaunchContract(
            args, params, cast(tuple[Expr, Expr, Expr], tuple(grid)), divisibility, written, multicast,
            section == "dependent_launch", whole_tiles, requires,
        )


_T = TypeVar("_T")
_PARAM_KINDS = (TensorMapParam.kind, PointerParam.kind, ScratchParam.kind, DimParam.kind)
"""The keywords of the parameter kinds: tkc.abi's `kind` of each."""


Fragment = base(FragmentType)

LOWERED_TYPES = (FragmentType, SharedRefType, TensorMapType, MbarrierGroupType, MbarrierType, RingType)
"""The sm90 types of a kernel's values (convert-sm90-to-ptx's emitter says what each lowers to;
rings are gone by then)."""
SCALAR_TYPES = (IndexType(), IntegerType(1), IntegerType(32), IntegerType(64), Float32Type())
"""The scalars of an sm90 kernel, as convert-sm90-to-ptx holds them in registers (index is 32 bits)."""


def _kernel_of(op: Operation) -> KernelOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelOp):
        parent = parent.parent_op()
    return parent


def _check_range(op: Operation, what: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise VerifyException(f"{op.name}: {what} must be in {low}..{high}, got {value}")

# --------------------------------------------------------------------------- structure


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A kernel entry: `abi` says how to launch it, with the entry name, block (`threads`) and
    shared memory the op states (kernel_abi() is the tkc.abi.KernelABI of both)."""

    name = "sm90.kernel"
    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())
    abi = prop_def(KernelABIAttr)
    threads = prop_def(IntegerAttr)
    smem_bytes = prop_def(IntegerAttr)
    min_ctas_per_sm = prop_def(IntegerAttr)
    cluster = opt_prop_def(IntegerAttr)
    """CTAs per cluster along x (absent: no clusters)."""
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), NoTerminator())
    assembly_format = (
        "$sym_name `threads` $threads `smem` $smem_bytes `min_ctas` $min_ctas_per_sm (`cluster` $cluster^)?"
        " `abi` $abi attr-dict-with-keyword $body"
    )

    def verify_(self) -> None:
        for op in self.body.walk():
            for value in (*op.results, *(arg for region in op.regions for block in region.blocks for arg in block.args)):
                if not isinstance(value.type, LOWERED_TYPES) and value.type not in SCALAR_TYPES:
                    raise VerifyException(f"{op.name} computes with {value.type}, which no PTX register of the lowering holds")
        try:
            check_launch_size(self.threads.value.data, self.smem_bytes.value.data)
        except ABIError as e:
            raise VerifyException(str(e)) from None
        if self.abi.data.dependent_launch:
            self._verify_waits_for_prior_grids()

    def _verify_waits_for_prior_grids(self) -> None:
        """A dependent launch may start while the kernel before it still reads and writes
        memory: every thread waits (sm90.griddepcontrol_wait, at the kernel's top level) before
        anything but the block's own shared-memory setup, which touches no global memory."""
        for op in self.body.block.ops:
            if isinstance(op, GridDependencyWaitOp):
                return
            setup = isinstance(op, SmemBaseOp | SyncBlockOp | ClusterSyncOp | arith.ConstantOp) or (
                isinstance(op, SingleThreadOp) and op.scope.data == "block"
            )
            if not setup:
                raise VerifyException(
                    f"a dependent launch (abi dependent_launch) runs {op.name} before sm90.griddepcontrol_wait: "
                    "the kernel before it may still be writing what it reads"
                )
        raise VerifyException("a dependent launch (abi dependent_launch) has no top-level sm90.griddepcontrol_wait")

    def __init__(
        self,
        name: str,
        abi: KernelABIAttr | None,
        threads: int,
        smem_bytes: int,
        min_ctas_per_sm: int = 1,
        cluster: int = 1,
    ):
        """`abi` None: set the property once the body is built (its ops name the parameters)."""
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "threads": IntegerAttr(threads, 32),
            "smem_bytes": IntegerAttr(smem_bytes, 32),
            "min_ctas_per_sm": IntegerAttr(min_ctas_per_sm, 32),
        }
        if abi is not None:
            props["abi"] = abi
        if cluster > 1:
            props["cluster"] = IntegerAttr(cluster, 32)
        super().__init__(regions=[Region(Block())], properties=props)

    def kernel_abi(self) -> KernelABI:
        """What the runtime launches this kernel by."""
        return self.abi.abi(self.sym_name.data, self.threads.value.data, self.smem_bytes.value.data)


class _ParamOp(IRDLOperation):
    """The value of the kernel parameter `param` (a parameter of kind `KIND` in the kernel's ABI),
    of the type `RESULT` says."""

    RESULT: ClassVar[Attribute]
    KIND: ClassVar[str]
    param = prop_def(StringAttr)
    traits = traits_def(Pure())
    assembly_format = "$param attr-dict"

    def __init__(self, param: str):
        super().__init__(properties={"param": StringAttr(param)}, result_types=[self.RESULT])

    def verify_(self) -> None:
        kernel = _kernel_of(self)
        if kernel is None:
            raise VerifyException("it belongs in an sm90.kernel")
        params = {p.name: p.kind for p in kernel.abi.data.params}
        if params.get(self.param.data) != self.KIND:
            raise VerifyException(f"the kernel's ABI has no {self.KIND} parameter {self.param.data!r}")


@irdl_op_definition
class TensorMapParamOp(_ParamOp):
    """The generic address of the tensor-map parameter `param` (mov + cvta.param)."""

    name = "sm90.tensormap"
    KIND: ClassVar[str] = "tensormap"
    RESULT: ClassVar[Attribute] = TensorMapType()
    result = result_def(TensorMapType)


@irdl_op_definition
class DimParamOp(_ParamOp):
    """A u32 kernel parameter holding a symbolic dim."""

    name = "sm90.dim"
    KIND: ClassVar[str] = "dim"
    RESULT: ClassVar[Attribute] = IndexType()
    result = result_def(IndexType)


@irdl_op_definition
class PointerParamOp(_ParamOp):
    """A u64 kernel parameter holding a global address (converted with cvta.to.global)."""

    name = "sm90.pointer"
    KIND: ClassVar[str] = "pointer"
    RESULT: ClassVar[Attribute] = IntegerType(64)
    result = result_def(IntegerType(64))


@irdl_op_definition
class ScratchParamOp(_ParamOp):
    """A u64 kernel parameter holding the global address of the scratch memory the runtime
    provides (zero at launch, left zero: stream-K's flags and partial tiles)."""

    name = "sm90.scratch"
    KIND: ClassVar[str] = "scratch"
    RESULT: ClassVar[Attribute] = IntegerType(64)
    result = result_def(IntegerType(64))


class _AxisOp(IRDLOperation):
    """An index along one grid axis (0, 1, 2 = x, y, z)."""

    axis = prop_def(IntegerAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$axis attr-dict"

    def __init__(self, axis: int):
        super().__init__(properties={"axis": IntegerAttr(axis, 32)}, result_types=[IndexType()])

    def verify_(self) -> None:
        if not 0 <= self.axis.value.data <= 2:
            raise VerifyException(f"the axis is 0, 1 or 2 (x, y, z), got {self.axis.value.data}")


@irdl_op_definition
class BlockIdOp(_AxisOp):
    """This block's index along the axis (%ctaid)."""

    name = "sm90.block_id"


@irdl_op_definition
class GridDimOp(_AxisOp):
    """The grid's extent along the axis (%nctaid)."""

    name = "sm90.grid_dim"


class _IndexOp(IRDLOperation):
    """An index the hardware or the launch fixes."""

    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class ClusterRankOp(_IndexOp):
    """This CTA's rank in its cluster."""

    name = "sm90.cluster_rank"


@irdl_op_definition
class SmemBaseOp(_IndexOp):
    """The 1024-aligned shared address where the kernel's shared-memory plan starts."""

    name = "sm90.smem_base"


@irdl_op_definition
class SmemViewOp(IRDLOperation):
    """A typed view of the tile at shared address `addr`."""

    name = "sm90.smem_view"
    addr = operand_def(IndexType)
    result = result_def(SharedRefType)
    traits = traits_def(Pure())
    assembly_format = "$addr attr-dict `:` type($result)"

    def __init__(self, addr: SSAValue, ref_type: SharedRefType):
        super().__init__(operands=[addr], result_types=[ref_type])


@irdl_op_definition
class RolesOp(IRDLOperation):
    """Warp specialisation: warpgroup 0 runs `producer`, warpgroups 1..consumers run `consumer`
    with their consumer index (0-based) as block argument. Register budgets are set on entry
    with setmaxnreg (0 = leave the allocation alone)."""

    name = "sm90.roles"
    consumers = prop_def(IntegerAttr)
    producer_registers = prop_def(IntegerAttr)
    consumer_registers = prop_def(IntegerAttr)
    producer = region_def("single_block")
    consumer = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = (
        "`consumers` $consumers `registers` `(` $producer_registers `,` $consumer_registers `)` "
        "attr-dict-with-keyword `producer` $producer `consumer` $consumer"
    )

    def __init__(self, consumers: int, producer_registers: int, consumer_registers: int):
        super().__init__(
            regions=[Region(Block()), Region(Block(arg_types=[IndexType()]))],
            properties={
                "consumers": IntegerAttr(consumers, 32),
                "producer_registers": IntegerAttr(producer_registers, 32),
                "consumer_registers": IntegerAttr(consumer_registers, 32),
            },
        )

    def verify_(self) -> None:
        consumers = self.consumers.value.data
        kernel = _kernel_of(self)
        if kernel is None or kernel.threads.value.data != WARPGROUP_THREADS * (1 + consumers):
            raise VerifyException(
                f"sm90.roles of 1 producer and {consumers} consumer warpgroups belongs in an sm90.kernel of "
                f"{WARPGROUP_THREADS * (1 + consumers)} threads"
            )
        for what, registers in (("producer", self.producer_registers), ("consumer", self.consumer_registers)):
            n = registers.value.data
            if n and (n % 8 or not 24 <= n <= 256):
                raise VerifyException(f"{what} registers are 0 (unchanged) or a multiple of 8 in 24..256 (setmaxnreg), got {n}")
        producer, consumer = self.producer_registers.value.data, self.consumer_registers.value.data
        threads, ctas = kernel.threads.value.data, kernel.min_ctas_per_sm.value.data
        entry = entry_registers(threads, ctas)
        if producer and consumer and WARPGROUP_THREADS * (producer + consumer * consumers) > entry * threads:
            raise VerifyException(
                f"setmaxnreg gives the producer warpgroup {producer} and each of {consumers} consumer warpgroup(s) "
                f"{consumer} registers per thread, {WARPGROUP_THREADS * (producer + consumer * consumers)} in all, over "
                f"the {entry * threads} a block of {threads} threads holds at entry ({entry} each at {ctas} block(s) "
                f"per SM)"
            )
        if self.producer.block.args or [a.type for a in self.consumer.block.args] != [IndexType()]:
            raise VerifyException("the producer region takes no argument, the consumer region its index")


@irdl_op_definition
class SingleThreadOp(IRDLOperation):
    """The body runs on one thread: thread 0 of the block (`block`), one elected lane of the
    warpgroup's first warp (`warpgroup`), or one elected lane of every warp (`warp`)."""

    name = "sm90.single_thread"
    scope = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = "$scope attr-dict-with-keyword $body"

    def __init__(self, scope: str):
        super().__init__(regions=[Region(Block())], properties={"scope": StringAttr(scope)})

    def verify_(self) -> None:
        if self.scope.data not in ("block", "warpgroup", "warp"):
            raise VerifyException("sm90.single_thread scope is 'block', 'warpgroup' or 'warp'")


def _no_operand_op(op_name: str, doc: str) -> type[IRDLOperation]:
    @irdl_op_definition
    class _Op(IRDLOperation):
        name = op_name
        assembly_format = "attr-dict"

        def __init__(self):
            super().__init__()

    _Op.__doc__ = doc
    return _Op


SyncBlockOp = _no_operand_op("sm90.sync_block", "bar.sync 0: every thread of the block.")
FenceBarrierInitOp = _no_operand_op(
    "sm90.fence_barrier_init", "Make mbarrier inits visible (fence.mbarrier_init.release.cluster)."
)
FenceProxyAsyncOp = _no_operand_op(
    "sm90.fence_proxy_async", "Order this thread's generic-proxy shared writes before async-proxy (TMA, wgmma) reads."
)
TmaStoreCommitOp = _no_operand_op("sm90.tma_store_commit", "cp.async.bulk.commit_group.")
TrapOp = _no_operand_op(
    "sm90.trap",
    "Stop the kernel, failing its launch: an access the program makes at run time broke a rule the "
    "interpreter reports as an error (a scalar load outside its tensor, a tile wholly past the end of a "
    "dim of whole tiles), where the GPU would otherwise read or write the wrong memory silently.",
)
ClusterSyncOp = _no_operand_op(
    "sm90.cluster_sync", "Every thread of every CTA of the cluster (barrier.cluster arrive.release + wait.acquire)."
)
GridDependencyWaitOp = _no_operand_op(
    "sm90.griddepcontrol_wait",
    "griddepcontrol.wait: this thread waits until the grids its launch depends on (a dependent launch, "
    "the ABI's `dependent_launch`) have completed and their writes are visible; without one it returns at once.",
)
LaunchDependentsOp = _no_operand_op(
    "sm90.griddepcontrol_launch_dependents",
    "griddepcontrol.launch_dependents: the grid launched after this one as its dependent may be scheduled once "
    "every block of this grid has run this or exited (it still waits for this grid to complete before it "
    "touches memory).",
)


class _NamedBarrier(IRDLOperation):
    """A named barrier `barrier_id` (0..15) that completes once `threads` threads arrived or synced."""

    barrier_id = operand_def(IndexType)
    threads = prop_def(IntegerAttr)
    assembly_format = "$barrier_id `,` $threads attr-dict"

    def __init__(self, barrier_id: SSAValue, threads: int):
        super().__init__(operands=[barrier_id], properties={"threads": IntegerAttr(threads, 32)})

    def verify_(self) -> None:
        if (barrier := index_constant(self.barrier_id)) is not None:
            _check_range(self, "the barrier id", barrier, 0, 15)
        threads = self.threads.value.data
        if threads % 32 or not 32 <= threads <= 1024:
            raise VerifyException(f"a named barrier synchronises whole warps, 32..1024 threads; got {threads}")


@irdl_op_definition
class NamedBarrierOp(_NamedBarrier):
    """bar.sync id, threads: synchronise a subset of warps (e.g. one consumer warpgroup)."""

    name = "sm90.named_barrier"


@irdl_op_definition
class NamedBarrierArriveOp(_NamedBarrier):
    """bar.arrive id, threads: count the executing warps in at a named barrier without waiting (the
    waiting side is an sm90.named_barrier on the same id and count)."""

    name = "sm90.named_barrier_arrive"


@irdl_op_definition
class MbarrierGroupOp(IRDLOperation):
    """The group of mbarriers at byte `offset` from the shared-memory base `base` (the offset the
    shared-memory plan gave them). It has no code of its own: `sm90.mbarrier_at` adds the
    offset where it addresses a barrier."""

    name = "sm90.mbarrier_group"
    base = operand_def(IndexType)
    offset = prop_def(IntegerAttr[I32])
    result = result_def(MbarrierGroupType)
    traits = traits_def(Pure())
    assembly_format = "$base `offset` $offset attr-dict `:` type($result)"

    def __init__(self, base: SSAValue, offset: int, count: int):
        super().__init__(
            operands=[base], properties={"offset": IntegerAttr(offset, 32)}, result_types=[MbarrierGroupType(count)]
        )

    @property
    def count(self) -> int:
        assert isinstance(self.result.type, MbarrierGroupType)
        return self.result.type.count.data

    def verify_(self) -> None:
        if not isinstance(self.base.owner, SmemBaseOp):
            raise VerifyException("a barrier group is addressed from sm90.smem_base")
        offset = self.offset.value.data
        if offset < 0 or offset % MBARRIER_BYTES:
            raise VerifyException(f"mbarriers lie at 8-byte aligned offsets, got {offset}")


@irdl_op_definition
class MbarrierAtOp(IRDLOperation):
    """The barrier of stage `stage` in each of `groups` (a ring's full and empty barriers, which
    one stage indexes): group offset + 8 * stage from the base, the stage's byte offset computed
    once for all of them."""

    name = "sm90.mbarrier_at"
    groups = var_operand_def(MbarrierGroupType)
    stage = operand_def(IndexType)
    barriers = var_result_def(MbarrierType)
    traits = traits_def(Pure())

    def __init__(self, groups: Sequence[SSAValue], stage: SSAValue):
        super().__init__(operands=[groups, stage], result_types=[[MbarrierType()] * len(groups)])

    def print(self, printer: Printer) -> None:
        """`%full, %empty = sm90.mbarrier_at %f, %e[%stage] : !sm90.mbarriers<4>` (the groups are of one type)."""
        printer.print_string(" ")
        printer.print_list(self.groups, printer.print_operand)
        printer.print_string("[")
        printer.print_operand(self.stage)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.groups[0].type)

    @classmethod
    def parse(cls, parser: Parser) -> MbarrierAtOp:
        groups = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        parser.parse_punctuation("[")
        stage = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        group_type = parser.parse_type()
        op = cls([parser.resolve_operand(g, group_type) for g in groups], parser.resolve_operand(stage, IndexType()))
        op.attributes |= attributes
        return op

    def group_ops(self) -> list[MbarrierGroupOp]:
        return [cast(MbarrierGroupOp, group.owner) for group in self.groups]

    def verify_(self) -> None:
        counts = {cast(MbarrierGroupType, group.type).count.data for group in self.groups}
        if len(self.groups) != len(self.barriers) or len(counts) != 1:
            raise VerifyException("sm90.mbarrier_at takes one stage of groups of one size, one barrier each")
        if not all(isinstance(group.owner, MbarrierGroupOp) for group in self.groups):
            raise VerifyException("the groups of sm90.mbarrier_at are sm90.mbarrier_group results")
        if (stage := index_constant(self.stage)) is not None:
            _check_range(self, "the stage", stage, 0, counts.pop() - 1)


@irdl_op_definition
class RingOp(IRDLOperation):
    """Ring `number` of the kernel as one role's code addresses it from `base`: `stages` stages
    of `stage_bytes` bytes from byte `offset`, a stage per value of the ring count `it`
    (stage it % stages). Each role makes its own value of every ring it uses, all of one
    number; sm90-build-rings gives the ring its full and empty mbarriers."""

    name = "sm90.ring"
    base = operand_def(IndexType)
    number = prop_def(IntegerAttr[I32])
    offset = prop_def(IntegerAttr[I32])
    stages = prop_def(IntegerAttr[I32])
    stage_bytes = prop_def(IntegerAttr[I32])
    result = result_def(RingType)
    traits = traits_def(Pure())
    assembly_format = "$number `at` $base `offset` $offset `stages` $stages `stage_bytes` $stage_bytes attr-dict"

    def __init__(self, base: SSAValue, number: int, offset: int, stages: int, stage_bytes: int):
        super().__init__(
            operands=[base],
            properties={name: IntegerAttr(value, 32) for name, value in
                        (("number", number), ("offset", offset), ("stages", stages), ("stage_bytes", stage_bytes))},
            result_types=[RingType()],
        )

    def verify_(self) -> None:
        if not isinstance(self.base.owner, SmemBaseOp):
            raise VerifyException("a ring is addressed from sm90.smem_base")
        if self.stages.value.data < 1:
            raise VerifyException(f"a ring has at least one stage, got {self.stages.value.data}")


class _RingStageOp(IRDLOperation):
    """An op on the stage of ring count `it` of `ring` (an sm90.ring)."""

    ring = operand_def(RingType)
    it = operand_def(IndexType)

    def ring_op(self) -> RingOp:
        return cast(RingOp, self.ring.owner)

    def verify_(self) -> None:
        if not isinstance(self.ring.owner, RingOp):
            raise VerifyException(f"{self.name} takes the result of an sm90.ring")


@irdl_op_definition
class RingAcquireOp(_RingStageOp):
    """The producer takes stage `it` to fill: waits until its readers released it, expects
    `tx_bytes` on its full barrier. Returns the stage's address and the full barrier its TMA
    loads complete on."""

    name = "sm90.ring_acquire"
    tx_bytes = prop_def(IntegerAttr[I32])
    stage = result_def(IndexType)
    full = result_def(MbarrierType)
    assembly_format = "$ring `[` $it `]` `expect_tx` $tx_bytes attr-dict"

    def __init__(self, ring: SSAValue, it: SSAValue, tx_bytes: int):
        super().__init__(
            operands=[ring, it], properties={"tx_bytes": IntegerAttr(tx_bytes, 32)},
            result_types=[IndexType(), MbarrierType()],
        )


@irdl_op_definition
class RingWaitOp(_RingStageOp):
    """A consumer waits until stage `it`'s loads landed; returns the stage's address."""

    name = "sm90.ring_wait"
    stage = result_def(IndexType)
    assembly_format = "$ring `[` $it `]` attr-dict"

    def __init__(self, ring: SSAValue, it: SSAValue):
        super().__init__(operands=[ring, it], result_types=[IndexType()])


@irdl_op_definition
class RingStageOp(_RingStageOp):
    """The address of stage `it`, which the role already holds (no barrier)."""

    name = "sm90.ring_stage"
    stage = result_def(IndexType)
    assembly_format = "$ring `[` $it `]` attr-dict"

    def __init__(self, ring: SSAValue, it: SSAValue):
        super().__init__(operands=[ring, it], result_types=[IndexType()])


@irdl_op_definition
class RingReleaseOp(_RingStageOp):
    """The consumers are done with stage `it` (the wgmmas reading it completed). With `rank`
    (this CTA's rank in its cluster of n CTAs) the stage was multicast to all of them, so it is
    released in each other CTA (rank ^ 1, .., rank ^ (n - 1)) too."""

    name = "sm90.ring_release"
    ring = operand_def(RingType)
    it = operand_def(IndexType)
    rank = opt_operand_def(IndexType)
    assembly_format = "$ring `[` $it `]` (`cluster_rank` $rank^)? attr-dict"

    def __init__(self, ring: SSAValue, it: SSAValue, rank: SSAValue | None = None):
        super().__init__(operands=[ring, it, [rank] if rank is not None else []])


@irdl_op_definition
class MbarrierInitOp(IRDLOperation):
    name = "sm90.mbarrier_init"
    barrier = operand_def(MbarrierType)
    count = prop_def(IntegerAttr)
    assembly_format = "$barrier `,` $count attr-dict"

    def __init__(self, barrier: SSAValue, count: int):
        super().__init__(operands=[barrier], properties={"count": IntegerAttr(count, 32)})

    def verify_(self) -> None:
        _check_range(self, "the arrival count", self.count.value.data, 1, (1 << 20) - 1)


@irdl_op_definition
class MbarrierArriveOp(IRDLOperation):
    """One arrival on the barrier; with `tx_bytes`, also expect that many TMA bytes (expect_tx).
    With `cta`, the arrival is on the barrier at the same address in that CTA of the cluster."""

    name = "sm90.mbarrier_arrive"
    barrier = operand_def(MbarrierType)
    cta = opt_operand_def(IndexType)
    tx_bytes = opt_prop_def(IntegerAttr)
    assembly_format = "$barrier (`in` `cta` $cta^)? (`expect_tx` $tx_bytes^)? attr-dict"

    def __init__(self, barrier: SSAValue, tx_bytes: int | None = None, cta: SSAValue | None = None):
        props = {"tx_bytes": IntegerAttr(tx_bytes, 32)} if tx_bytes is not None else {}
        super().__init__(operands=[barrier, [cta] if cta is not None else []], properties=props)

    def verify_(self) -> None:
        if self.tx_bytes is not None:
            _check_range(self, "expect_tx", self.tx_bytes.value.data, 1, (1 << 20) - 1)


@irdl_op_definition
class MbarrierWaitOp(IRDLOperation):
    """Spin until the barrier's phase with parity `parity` (0/1) has completed."""

    name = "sm90.mbarrier_wait"
    barrier = operand_def(MbarrierType)
    parity = operand_def(IndexType)
    assembly_format = "$barrier `,` $parity attr-dict"

    def __init__(self, barrier: SSAValue, parity: SSAValue):
        super().__init__(operands=[barrier, parity])


@irdl_op_definition
class TmaLoadOp(IRDLOperation):
    """One TMA box from the tensor map at element `coords` (innermost first) into shared `dst`,
    completing `box_bytes` on `barrier`. With `multicast` (a mask of cluster ranks) the box lands
    at `dst` and completes on `barrier` in every CTA of the mask."""

    name = "sm90.tma_load"
    tensor_map = operand_def(TensorMapType)
    dst = operand_def(IndexType)
    barrier = operand_def(MbarrierType)
    coords = var_operand_def(IndexType)
    box_bytes = prop_def(IntegerAttr)
    multicast = opt_prop_def(IntegerAttr)
    assembly_format = (
        "$tensor_map `[` $coords `]` `->` $dst `bar` $barrier `bytes` $box_bytes (`multicast` $multicast^)? attr-dict"
    )

    def __init__(
        self,
        tensor_map: SSAValue,
        dst: SSAValue,
        barrier: SSAValue,
        coords: Sequence[SSAValue],
        box_bytes: int,
        multicast: int | None = None,
    ):
        props: dict[str, Attribute] = {"box_bytes": IntegerAttr(box_bytes, 32)}
        if multicast is not None:
            props["multicast"] = IntegerAttr(multicast, 32)
        super().__init__(operands=[tensor_map, dst, barrier, coords], properties=props)

    def verify_(self) -> None:
        if not 1 <= len(self.coords) <= 5:
            raise VerifyException("a TMA copy has 1 to 5 coordinates")
        _check_range(self, "the box bytes", self.box_bytes.value.data, 1, (1 << 20) - 1)
        if self.multicast is not None:
            _check_range(self, "the multicast mask", self.multicast.value.data, 1, 0xFFFF)


@irdl_op_definition
class TmaStoreOp(IRDLOperation):
    """One TMA box from shared `src` to the tensor map at element `coords` (bulk group); with
    `reduce add` (store_add) each element is added to the tensor's, atomically per element
    (`cp.reduce.async.bulk.tensor`)."""

    name = "sm90.tma_store"
    tensor_map = operand_def(TensorMapType)
    src = operand_def(IndexType)
    coords = var_operand_def(IndexType)
    reduce = opt_prop_def(StoreReductionAttr)
    assembly_format = "(`reduce` $reduce^)? $src `->` $tensor_map `[` $coords `]` attr-dict"

    def __init__(self, tensor_map: SSAValue, src: SSAValue, coords: Sequence[SSAValue],
                 reduce: StoreReductionAttr | None = None):
        super().__init__(operands=[tensor_map, src, coords], properties={} if reduce is None else {"reduce": reduce})


@irdl_op_definition
class TmaStoreWaitOp(IRDLOperation):
    """Wait until at most `pending` bulk store groups are outstanding; `read` only waits until
    their shared memory has been read (so it can be overwritten)."""

    name = "sm90.tma_store_wait"
    pending = prop_def(IntegerAttr)
    read = opt_prop_def(UnitAttr)
    assembly_format = "$pending (`read` $read^)? attr-dict"

    def __init__(self, pending: int = 0, read: bool = True):
        props: dict[str, Attribute] = {"pending": IntegerAttr(pending, 32)}
        if read:
            props["read"] = UnitAttr()
        super().__init__(properties=props)

    def verify_(self) -> None:
        _check_range(self, "pending", self.pending.value.data, 0, 63)


# --------------------------------------------------------------------------- store → load order


class _SlotOp(IRDLOperation):
    """An op on the 8-byte store-fence slot at shared address `slot`: a u32 the consumers count
    their passes of one tile.fence in, and a u32 the producer counts its own in."""

    slot = operand_def(IndexType)
    assembly_format = "$slot attr-dict"

    def __init__(self, slot: SSAValue):
        super().__init__(operands=[slot])


@irdl_op_definition
class StoreFenceInitOp(_SlotOp):
    """Zero both counters of the slot (before the block's first sync)."""

    name = "sm90.store_fence_init"


@irdl_op_definition
class StoreFenceSignalOp(_SlotOp):
    """One thread counts one pass of the consumers (red.release.cta.add 1): every consumer's
    stores before it are complete, so the producer may load what they wrote."""

    name = "sm90.store_fence_signal"


@irdl_op_definition
class StoreFenceWaitOp(_SlotOp):
    """The producer counts its own pass of the fence, then spins (ld.acquire.cta) until the
    consumers have passed it as often. Counts, not mbarrier phases: the consumers may run any
    number of passes ahead (a loop with no loads between two passes) without confusing it."""

    name = "sm90.store_fence_wait"


FenceProxyAsyncGlobalOp = _no_operand_op(
    "sm90.fence_proxy_async_global",
    "Order this thread's global-memory accesses in the generic proxy with its async-proxy (TMA) "
    "ones (fence.proxy.async.global).",
)


# --------------------------------------------------------------------------- tensor cores


@irdl_op_definition
class WgmmaOp(IRDLOperation):
    """Issue acc (+)= op(a) @ op(b) for one warpgroup as a wgmma group (fence, K/16 mma_async,
    commit). `a` is the whole shared A tile, of which this warpgroup uses the M-rows (columns
    when transposed) from `a_offset` on, or a bf16/f16 fragment (`a_offset` then absent); `b` is
    a shared tile. The result is valid only after `sm90.wgmma_wait`."""

    name = "sm90.wgmma"
    a = operand_def(SharedRefType | FragmentType)
    b = operand_def(SharedRefType)
    acc = opt_operand_def(FragmentType)
    a_offset = opt_operand_def(IndexType)
    result = result_def(FragmentType)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    assembly_format = (
        "$a (`[` $a_offset^ `]`)? `,` $b (`,` $acc^)? (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?"
        " attr-dict `:` type($a) `,` type($b) (`,` type($acc)^)? `->` type($result)"
    )
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        acc: SSAValue | None,
        result_type: Attribute,
        transpose_a: bool,
        transpose_b: bool,
        a_offset: SSAValue | None = None,
    ):
        props: dict[str, Attribute] = {}
        if transpose_a:
            props["transpose_a"] = UnitAttr()
        if transpose_b:
            props["transpose_b"] = UnitAttr()
        super().__init__(
            operands=[a, b, [acc] if acc else [], [a_offset] if a_offset else []],
            result_types=[result_type],
            properties=props,
        )

    def problem_shape(self) -> tuple[int, int, int]:
        """(M, N, K) of this warpgroup's product (M from the result: the warpgroup's rows)."""
        assert isinstance(self.result.type, FragmentType)
        assert isinstance(self.a.type, SharedRefType | FragmentType) and isinstance(self.b.type, SharedRefType)
        a_shape = self.a.type.get_shape()
        b_shape = self.b.type.get_shape()
        k = a_shape[0] if self.transpose_a else a_shape[1]
        n = b_shape[0] if self.transpose_b else b_shape[1]
        return self.result.type.rows, n, k

    def verify_(self) -> None:
        m, n, k = self.problem_shape()
        assert isinstance(self.result.type, FragmentType)
        assert isinstance(self.b.type, SharedRefType)
        k_b = self.b.type.get_shape()[1 if self.transpose_b else 0]
        if self.result.type.get_shape() != (m, n) or m % 64 or not 8 <= n <= 256 or k != k_b:
            raise VerifyException(f"wgmma of {self.a.type} and {self.b.type} cannot produce {self.result.type}")
        if isinstance(self.a.type, SharedRefType) != (self.a_offset is not None):
            raise VerifyException("a shared A operand takes an offset; a fragment A operand does not")


@irdl_op_definition
class WgmmaWaitOp(IRDLOperation):
    """wgmma.wait_group `pending`: afterwards `acc` (issued by an earlier wgmma) may be read."""

    name = "sm90.wgmma_wait"
    T: ClassVar = VarConstraint("T", Fragment)
    acc = operand_def(T)
    result = result_def(T)
    pending = prop_def(IntegerAttr)
    assembly_format = "$acc `,` $pending attr-dict `:` type($acc)"

    def __init__(self, acc: SSAValue, pending: int = 0):
        super().__init__(operands=[acc], result_types=[acc.type], properties={"pending": IntegerAttr(pending, 32)})

    def verify_(self) -> None:
        _check_range(self, "pending", self.pending.value.data, 0, 7)


# --------------------------------------------------------------------------- fragments


@irdl_op_definition
class FillOp(IRDLOperation):
    name = "sm90.fill"
    value = prop_def(FloatAttr)
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($result)"

    def __init__(self, value: float, result_type: Attribute):
        super().__init__(properties={"value": FloatAttr(value, Float32Type())}, result_types=[result_type])


@irdl_op_definition
class UnaryOp(IRDLOperation):
    """`fn` of every element; an exp2 with `fma_every = k` computes every k-th register on the
    FMA pipe (the plan's fma_exp2)."""

    name = "sm90.unary"
    T: ClassVar = VarConstraint("T", Fragment)
    fn = prop_def(UnaryFnAttr)
    fma_every = opt_prop_def(IntegerAttr)
    source = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$fn $source (`fma_every` $fma_every^)? attr-dict `:` type($result)"

    def __init__(self, fn: Attribute, source: SSAValue, fma_every: int = 0):
        properties: dict[str, Attribute] = {"fn": fn}
        if fma_every:
            properties["fma_every"] = IntegerAttr(fma_every, 64)
        super().__init__(operands=[source], result_types=[source.type], properties=properties)

    def verify_(self) -> None:
        if self.fma_every is None:
            return
        if self.fn.data != UnaryFn.EXP2:
            raise VerifyException(f"fma_every is for exp2 (a polynomial of its elements), not {self.fn.data}")
        if not 1 <= self.fma_every.value.data:
            raise VerifyException(f"fma_every must be positive, got {self.fma_every.value.data}")
        if not isinstance(self.source.type, FragmentType) or not isinstance(self.source.type.element_type, Float32Type):
            raise VerifyException("fma_every needs an f32 fragment")


@irdl_op_definition
class BinaryOp(IRDLOperation):
    """Element-wise on fragments of one type; either side may be an f32 scalar."""

    name = "sm90.binary"
    fn = prop_def(BinaryFnAttr)
    lhs = operand_def(FragmentType | Float32Type)
    rhs = operand_def(FragmentType | Float32Type)
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    assembly_format = "$fn $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, fn: Attribute, lhs: SSAValue, rhs: SSAValue):
        result_type = rhs.type if isinstance(lhs.type, Float32Type) else lhs.type
        super().__init__(operands=[lhs, rhs], result_types=[result_type], properties={"fn": fn})


@irdl_op_definition
class RowReduceOp(IRDLOperation):
    """Reduce each row of a rank-2 fragment: thread-local, then shfl.bfly over the quad."""

    name = "sm90.row_reduce"
    fn = prop_def(ReduceFnAttr)
    source = operand_def(FragmentType)
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    assembly_format = "$fn $source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, fn: Attribute, source: SSAValue):
        t = source.type
        assert isinstance(t, FragmentType)
        super().__init__(
            operands=[source], result_types=[t.row_vector()], properties={"fn": fn}
        )


@irdl_op_definition
class RowBroadcastOp(IRDLOperation):
    """tile[r, c] ⊙ vec[r] for a rank-2 fragment and the matching rank-1 fragment."""

    name = "sm90.row_broadcast"
    T: ClassVar = VarConstraint("T", Fragment)
    fn = prop_def(BinaryFnAttr)
    source = operand_def(T)
    vector = operand_def(FragmentType)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$fn $source `,` $vector attr-dict `:` type($source) `,` type($vector)"

    def __init__(self, fn: Attribute, source: SSAValue, vector: SSAValue):
        super().__init__(operands=[source, vector], result_types=[source.type], properties={"fn": fn})


@irdl_op_definition
class ColReduceOp(IRDLOperation):
    """Reduce each column of the rank-2 fragments of all `warpgroups` consumer warpgroups into a
    column fragment every one of them holds: thread-local over the thread's rows, shfl.bfly over
    the lanes of a column (masks 4, 8, 16), then through the shared `scratch` buffer (one row of
    C f32 per warp of every warpgroup) between two syncs of named barrier `barrier_id`; this
    warpgroup writes the rows of `warpgroup`. With `replicated`, every warpgroup holds the same
    whole tile: each reads back its own rows only (the others' hold the same partials)."""

    name = "sm90.col_reduce"
    fn = prop_def(ReduceFnAttr)
    source = operand_def(FragmentType)
    scratch = operand_def(IndexType)
    warpgroup = operand_def(IndexType)
    barrier_id = operand_def(IndexType)
    warpgroups = prop_def(IntegerAttr)
    replicated = opt_prop_def(UnitAttr)
    result = result_def(FragmentType)
    assembly_format = (
        "$fn $source `via` $scratch `[` $warpgroup `of` $warpgroups (`replicated` $replicated^)? `]` `bar` "
        "$barrier_id attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(self, fn: Attribute, source: SSAValue, scratch: SSAValue, warpgroup: SSAValue,
                 warpgroups: int, barrier_id: SSAValue, replicated: bool = False):
        t = source.type
        assert isinstance(t, FragmentType)
        properties: dict[str, Attribute] = {"fn": fn, "warpgroups": IntegerAttr(warpgroups, 32)}
        if replicated:
            properties["replicated"] = UnitAttr()
        super().__init__(
            operands=[source, scratch, warpgroup, barrier_id],
            result_types=[t.col_vector()],
            properties=properties,
        )

    @staticmethod
    def scratch_bytes(cols: int, warpgroups: int) -> int:
        """The scratch buffer: one f32 row of the columns per warp of every warpgroup."""
        return 4 * warpgroups * cols * 4


@irdl_op_definition
class BandCombineOp(IRDLOperation):
    """The row reduction of a band tile across its warps: `vector` holds each warp's reduction
    of its own columns (sm90.row_reduce of a band fragment), this its reduction over all 4. The
    quad leaders write their warp's partials to the shared `scratch` (one f32 per row per warp,
    this warpgroup's `warpgroup`-th share) between two syncs of named barrier `barrier_id` (all
    `warpgroups` consumers pass it: they replicate band tiles), then every thread reduces its
    rows' 4 partials in warp order, so every warp holds the same values. `ordered`: the first
    sync is left out, as another combine in the same block, on a region of its own, syncs the
    same threads between any two runs of this one (mark_ordered_band_combines)."""

    name = "sm90.band_combine"
    T: ClassVar = VarConstraint("T", Fragment)
    fn = prop_def(ReduceFnAttr)
    vector = operand_def(T)
    scratch = operand_def(IndexType)
    warpgroup = operand_def(IndexType)
    barrier_id = operand_def(IndexType)
    warpgroups = prop_def(IntegerAttr)
    ordered = opt_prop_def(UnitAttr)
    result = result_def(T)
    assembly_format = (
        "$fn $vector `via` $scratch `[` $warpgroup `of` $warpgroups `]` `bar` $barrier_id (`ordered` $ordered^)? "
        "attr-dict `:` type($vector)"
    )

    def __init__(self, fn: Attribute, vector: SSAValue, scratch: SSAValue, warpgroup: SSAValue, warpgroups: int,
                 barrier_id: SSAValue, ordered: bool = False):
        super().__init__(
            operands=[vector, scratch, warpgroup, barrier_id], result_types=[vector.type],
            properties={"fn": fn, "warpgroups": IntegerAttr(warpgroups, 32), **({"ordered": UnitAttr()} if ordered else {})},
        )

    def verify_(self) -> None:
        t = self.vector.type
        assert isinstance(t, FragmentType)
        if not (t.is_row_vector and t.is_band and isinstance(t.element_type, Float32Type)):
            raise VerifyException(f"sm90.band_combine reduces an f32 band row vector, got {t}")


@irdl_op_definition
class RowScanOp(IRDLOperation):
    """Inclusive prefix sum along the columns of an f32 tile fragment (each row on its own) or
    of a column fragment: thread-local over each pair of neighbouring columns, a scan of the pair
    sums over the quad's 4 lanes (shfl.up 1, 2), then a carry across the 8-column groups."""

    name = "sm90.row_scan"
    T: ClassVar = VarConstraint("T", Fragment)
    source = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source)"

    def __init__(self, source: SSAValue):
        super().__init__(operands=[source], result_types=[source.type])

    def verify_(self) -> None:
        t = self.source.type
        assert isinstance(t, FragmentType)
        if t.is_row_vector or not isinstance(t.element_type, Float32Type):
            raise VerifyException(f"sm90.row_scan scans an f32 tile or column fragment, got {t}")


@irdl_op_definition
class ColScanOp(IRDLOperation):
    """Inclusive prefix sum down the columns of the f32 tile fragments of all `warpgroups`
    consumer warpgroups (warpgroup w holds rows w * R/warpgroups ..): within each warp's 16 rows
    of an m-block by shfl.up over the lanes of a column (4, 8, 16), then the totals of those
    16-row slabs through the shared `scratch` buffer (one f32 row of the columns per slab) between
    two syncs of named barrier `barrier_id`, each thread adding the slabs above its own. With
    `replicated`, every warpgroup holds the whole tile: each scans it alone, all writing the same
    totals to the same slabs (the tile's own, rows / 16 of them)."""

    name = "sm90.col_scan"
    source = operand_def(FragmentType)
    scratch = operand_def(IndexType)
    warpgroup = operand_def(IndexType)
    barrier_id = operand_def(IndexType)
    warpgroups = prop_def(IntegerAttr)
    replicated = opt_prop_def(UnitAttr)
    result = result_def(FragmentType)
    assembly_format = (
        "$source `via` $scratch `[` $warpgroup `of` $warpgroups (`replicated` $replicated^)? `]` `bar` $barrier_id "
        "attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(self, source: SSAValue, scratch: SSAValue, warpgroup: SSAValue, warpgroups: int,
                 barrier_id: SSAValue, replicated: bool = False):
        properties: dict[str, Attribute] = {"warpgroups": IntegerAttr(warpgroups, 32)}
        if replicated:
            properties["replicated"] = UnitAttr()
        super().__init__(
            operands=[source, scratch, warpgroup, barrier_id],
            result_types=[source.type],
            properties=properties,
        )

    def verify_(self) -> None:
        t = self.source.type
        assert isinstance(t, FragmentType)
        if t.is_vector or not isinstance(t.element_type, Float32Type) or self.result.type != t:
            raise VerifyException(f"sm90.col_scan scans an f32 tile fragment into one of its type, got {t}")


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """A row fragment (this warpgroup's rows of a vector, split over `warpgroups` consumers by
    rows) as a column fragment every warpgroup holds whole, or back, through the shared `scratch`
    buffer (one f32 per element) between two syncs of named barrier `barrier_id`; this
    warpgroup's rows start at `row0`."""

    name = "sm90.transpose"
    source = operand_def(FragmentType)
    scratch = operand_def(IndexType)
    row0 = operand_def(IndexType)
    barrier_id = operand_def(IndexType)
    warpgroups = prop_def(IntegerAttr)
    result = result_def(FragmentType)
    assembly_format = (
        "$source `via` $scratch `rows` $row0 `of` $warpgroups `bar` $barrier_id attr-dict"
        " `:` type($source) `->` type($result)"
    )

    def __init__(self, source: SSAValue, result_type: Attribute, scratch: SSAValue, row0: SSAValue,
                 warpgroups: int, barrier_id: SSAValue):
        super().__init__(
            operands=[source, scratch, row0, barrier_id],
            result_types=[result_type],
            properties={"warpgroups": IntegerAttr(warpgroups, 32)},
        )

    def verify_(self) -> None:
        source, result = self.source.type, self.result.type
        assert isinstance(source, FragmentType) and isinstance(result, FragmentType)
        if not (source.is_vector and result.is_vector) or source.is_column == result.is_column:
            raise VerifyException(f"sm90.transpose turns a row fragment into a column fragment or back, got "
                                  f"{source} -> {result}")
        if not (isinstance(source.element_type, Float32Type) and isinstance(result.element_type, Float32Type)):
            raise VerifyException("sm90.transpose moves f32 vectors")
        whole = result.rows if source.is_row_vector else source.rows
        part = source.rows if source.is_row_vector else result.rows
        # a row fragment is its warpgroup's slice of the rows, or all of them where the plan
        # replicates the vector in every consumer (each then writes the same values to the
        # scratch), of the vector's rows rounded up to a multiple of 64 (the rows past the
        # vector's are padding)
        if -(-whole // 64) * 64 not in (part, part * self.warpgroups.value.data):
            raise VerifyException(f"the column fragment holds the rows of all {self.warpgroups.value.data} warpgroups "
                                  f"or of a replicated row fragment: {source} -> {result}")


@irdl_op_definition
class VectorReduceOp(IRDLOperation):
    """Reduce an f32 column fragment to one f32 every thread holds: thread-local, then shfl.bfly
    over the quad (each quad holds all columns)."""

    name = "sm90.vector_reduce"
    fn = prop_def(ReduceFnAttr)
    source = operand_def(FragmentType)
    result = result_def(Float32Type)
    traits = traits_def(Pure())
    assembly_format = "$fn $source attr-dict `:` type($source)"

    def __init__(self, fn: Attribute, source: SSAValue):
        super().__init__(operands=[source], result_types=[Float32Type()], properties={"fn": fn})

    def verify_(self) -> None:
        t = self.source.type
        assert isinstance(t, FragmentType)
        if not t.is_column or not isinstance(t.element_type, Float32Type):
            raise VerifyException(f"sm90.vector_reduce reduces an f32 column fragment, got {t}")


@irdl_op_definition
class ColBroadcastOp(IRDLOperation):
    """tile[r, c] ⊙ vec[c] for a rank-2 fragment and a column fragment of its columns."""

    name = "sm90.col_broadcast"
    T: ClassVar = VarConstraint("T", Fragment)
    fn = prop_def(BinaryFnAttr)
    source = operand_def(T)
    vector = operand_def(FragmentType)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$fn $source `,` $vector attr-dict `:` type($source) `,` type($vector)"

    def __init__(self, fn: Attribute, source: SSAValue, vector: SSAValue):
        super().__init__(operands=[source, vector], result_types=[source.type], properties={"fn": fn})

    def verify_(self) -> None:
        source, vector = self.source.type, self.vector.type
        assert isinstance(source, FragmentType) and isinstance(vector, FragmentType)
        if source.is_vector or not vector.is_column or vector.rows != source.get_shape()[1]:
            raise VerifyException(f"a column broadcast takes a tile fragment and a column fragment of its columns, "
                                  f"got {source} and {vector}")


@irdl_op_definition
class ConvertOp(IRDLOperation):
    """Change a fragment's dtype; f32 → bf16 packs neighbouring columns into one register, which is
    exactly the register-A layout of the next wgmma."""

    name = "sm90.convert"
    source = operand_def(FragmentType)
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, result_type: Attribute):
        super().__init__(operands=[source], result_types=[result_type])


@irdl_op_definition
class MaskOp(IRDLOperation):
    """Set element (r, c) to `fill` when it is masked out: causal masks `col0 + c > row0 + r`,
    with row0/col0 this fragment's position in the kernel's index space (elements)."""

    name = "sm90.mask"
    T: ClassVar = VarConstraint("T", Fragment)
    kind = prop_def(MaskKindAttr)
    fill = prop_def(FloatAttr)
    source = operand_def(T)
    row0 = operand_def(IndexType)
    col0 = operand_def(IndexType)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$kind $source `,` $row0 `,` $col0 `fill` $fill attr-dict `:` type($source)"

    def __init__(self, kind: Attribute, source: SSAValue, row0: SSAValue, col0: SSAValue, fill: FloatAttr):
        super().__init__(
            operands=[source, row0, col0], result_types=[source.type], properties={"kind": kind, "fill": fill}
        )


@irdl_op_definition
class BoundsMaskOp(IRDLOperation):
    """Set element (r, c) of a tile fragment to `fill` when r >= limits[0] or c >= limits[1],
    element i of a vector fragment when i >= limits[0]; r counts from the fragment's first row
    (a consumer's slice), limits are signed."""

    name = "sm90.bounds_mask"
    T: ClassVar = VarConstraint("T", Fragment)
    fill = prop_def(FloatAttr)
    source = operand_def(T)
    limits = var_operand_def(IndexType)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$source `[` $limits `]` `fill` $fill attr-dict `:` type($source)"

    def __init__(self, source: SSAValue, limits: Sequence[SSAValue], fill: FloatAttr):
        super().__init__(operands=[source, limits], result_types=[source.type], properties={"fill": fill})

    def verify_(self) -> None:
        assert isinstance(self.source.type, FragmentType)
        rank = len(self.source.type.get_shape())
        if len(self.limits) != rank:
            raise VerifyException(f"sm90.bounds_mask of a rank-{rank} fragment takes {rank} limits, got {len(self.limits)}")


@irdl_op_definition
class PositionOp(IRDLOperation):
    """Element (r, c) of a tile fragment is `first + r` (`row`) or `first + c` (`col`) as f32, r
    counting from the fragment's first row (a consumer's slice, so `first` includes its row0);
    element i of a row-vector fragment `first + i` (`row`, i from its first row likewise), of a
    column fragment `first + i` (`col`)."""

    name = "sm90.position"
    axis = prop_def(AxisAttr)
    first = operand_def(IndexType)
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    assembly_format = "$axis $first attr-dict `:` type($result)"

    def __init__(self, axis: Attribute, first: SSAValue, result_type: Attribute):
        super().__init__(operands=[first], result_types=[result_type], properties={"axis": axis})

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, FragmentType)
        if not isinstance(t.element_type, Float32Type):
            raise VerifyException(f"sm90.position makes f32 fragments, not {t}")
        if t.is_vector and self.axis.data != (Axis.COL if t.is_column else Axis.ROW):
            raise VerifyException(f"the positions of a {'column' if t.is_column else 'row'} vector fragment run along "
                                  f"its {'columns' if t.is_column else 'rows'}: {t} takes "
                                  f"`{'col' if t.is_column else 'row'}`")


@irdl_op_definition
class SelectOp(IRDLOperation):
    """Element-wise `cond != 0 ? on_true : on_false` on fragments of one shape; either branch may
    be an f32 scalar."""

    name = "sm90.select"
    cond = operand_def(FragmentType)
    on_true = operand_def(FragmentType | Float32Type)
    on_false = operand_def(FragmentType | Float32Type)
    result = result_def(FragmentType)
    traits = traits_def(Pure())
    assembly_format = (
        "$cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,` type($on_true) `,` type($on_false)"
        " `->` type($result)"
    )

    def __init__(self, cond: SSAValue, on_true: SSAValue, on_false: SSAValue, result_type: Attribute):
        super().__init__(operands=[cond, on_true, on_false], result_types=[result_type])

    def verify_(self) -> None:
        for operand in (self.cond, self.on_true, self.on_false):
            if isinstance(operand.type, FragmentType) and operand.type != self.result.type:
                raise VerifyException(f"sm90.select's operands must have the result's type {self.result.type}, "
                                      f"got {operand.type}")


@irdl_op_definition
class StoreFragmentOp(IRDLOperation):
    """Write a fragment into the rows of a shared tile from row `row_offset` on (st.shared under
    the tile's swizzle and panel layout). A tile narrower than the fragment receives the
    fragment's columns from `col_start` on (an epilogue staged one chunk at a time)."""

    name = "sm90.store_fragment"
    source = operand_def(FragmentType)
    dst = operand_def(SharedRefType)
    row_offset = operand_def(IndexType)
    col_start = prop_def(IntegerAttr)
    assembly_format = (
        "$source `[` `cols` $col_start `]` `,` $dst `[` $row_offset `]` attr-dict `:` type($source) `,` type($dst)"
    )

    def __init__(self, source: SSAValue, dst: SSAValue, row_offset: SSAValue, col_start: int = 0):
        super().__init__(operands=[source, dst, row_offset], properties={"col_start": IntegerAttr(col_start, 32)})

    def verify_(self) -> None:
        source, dst = self.source.type, self.dst.type
        assert isinstance(source, FragmentType) and isinstance(dst, SharedRefType)
        start = self.col_start.value.data
        if not source.is_vector and (start % 8 or start + dst.get_shape()[-1] > source.get_shape()[1]):
            raise VerifyException(f"columns {start}.. of {source} do not fill {dst}")


@irdl_op_definition
class LoadFragmentOp(IRDLOperation):
    """Read the rows of a shared tile (or row vector) from `row_offset` on into a fragment; a column
    fragment reads its columns of an unswizzled shared vector from element `row_offset` on."""

    name = "sm90.load_fragment"
    source = operand_def(SharedRefType)
    row_offset = operand_def(IndexType)
    result = result_def(FragmentType)
    assembly_format = "$source `[` $row_offset `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, row_offset: SSAValue, result_type: Attribute):
        super().__init__(operands=[source, row_offset], result_types=[result_type])


@irdl_op_definition
class StoreVectorGlobalOp(IRDLOperation):
    """Store a rank-1 fragment (one value per row) to global memory at `base` + row * elem_size,
    starting at element `offset` (one lane per row writes). Element i (from the fragment's first,
    as the offset counts) is stored only where i < `limit` (signed): the end of the tensor; and,
    with `from`, only where i >= `start` (signed): a vector that starts before the tensor's first
    element (an element coordinate below 0) loses its elements there, as a tile's rows do. With
    `reduce add` (store_add, f32 only) each element is added atomically (`red.global.add.f32`)."""

    name = "sm90.store_vector_global"
    source = operand_def(FragmentType)
    base = operand_def(IntegerType(64))
    offset = operand_def(IndexType)
    limit = operand_def(IndexType)
    start = opt_operand_def(IndexType)
    reduce = opt_prop_def(StoreReductionAttr)
    assembly_format = (
        "(`reduce` $reduce^)? $source `,` $base `[` $offset `]` `limit` $limit (`from` $start^)? attr-dict `:` type($source)"
    )

    def __init__(self, source: SSAValue, base: SSAValue, offset: SSAValue, limit: SSAValue,
                 reduce: StoreReductionAttr | None = None, start: SSAValue | None = None):
        super().__init__(operands=[source, base, offset, limit, [] if start is None else [start]],
                         properties={} if reduce is None else {"reduce": reduce})

    def verify_(self) -> None:
        element = cast(FragmentType, self.source.type).element_type
        if self.reduce is not None and not isinstance(element, Float32Type):
            raise VerifyException(f"a vector store with reduce {self.reduce.data} adds f32 values only (red.global.add.f32)")


@irdl_op_definition
class ZeroRowsOp(IRDLOperation):
    """Rows `first` .. of the tile at `tile` become zeros, written by `threads` threads together
    (the consumer warpgroups, thread t = tid - 128 writing every 16-byte chunk c = t mod threads).
    A swizzle permutes 16-byte chunks within a row of a panel, so whole rows stay whole rows."""

    name = "sm90.zero_rows"
    tile = operand_def(SharedRefType)
    first = operand_def(IndexType)
    threads = prop_def(IntegerAttr)
    assembly_format = "$tile `[` $first `:` `]` `by` $threads attr-dict `:` type($tile)"

    def __init__(self, tile: SSAValue, first: SSAValue, threads: int):
        super().__init__(operands=[tile, first], properties={"threads": IntegerAttr(threads, 32)})


_INDEX_OR_F32 = base(IndexType) | base(Float32Type)


@irdl_op_definition
class LoadGlobalScalarOp(IRDLOperation):
    """One 4-byte element of global memory at `base` + 4 * `offset` (ld.global.nc: the kernel
    never writes the tensors it reads scalars from, tile.load_scalar's contract): an i32 as an
    index (an offset or a length the kernel's index math uses, `load cu_seqlens[b] : i32`) or an
    f32 (a scale, `load S[0] : f32`)."""

    name = "sm90.load_global_scalar"
    base = operand_def(IntegerType(64))
    offset = operand_def(IndexType)
    result = result_def(_INDEX_OR_F32)
    traits = traits_def(Pure())
    assembly_format = "$base `[` $offset `]` attr-dict `:` type($result)"

    def __init__(self, base: SSAValue, offset: SSAValue, result_type: Attribute):
        super().__init__(operands=[base, offset], result_types=[result_type])


# --------------------------------------------------------------------------- stream-K partial tiles


class _PartialOp(IRDLOperation):
    """A warpgroup's f32 fragment in global memory, in register order: group q of 4 registers of
    thread t (of the warpgroup's 128) at `base` + `offset` + 16 * (128 q + t), so each group is
    one coalesced 2 KB write or read and the reader needs the writer's layout, not the tile's."""

    source = operand_def(FragmentType)
    base = operand_def(IntegerType(64))
    offset = operand_def(IndexType)

    def verify_(self) -> None:
        t = cast(FragmentType, self.source.type)
        if not isinstance(t.element_type, Float32Type) or t.is_vector or t.registers_per_thread() % 4:
            raise VerifyException(f"a partial tile is an f32 tile fragment of whole 4-register groups, not {t}")


@irdl_op_definition
class StorePartialOp(_PartialOp):
    """Write a partial sum of a stream-K tile for the CTA that finishes the tile (st.global.v4)."""

    name = "sm90.store_partial"
    assembly_format = "$source `,` $base `[` $offset `]` attr-dict `:` type($source)"

    def __init__(self, source: SSAValue, base: SSAValue, offset: SSAValue):
        super().__init__(operands=[source, base, offset])


@irdl_op_definition
class AddPartialOp(_PartialOp):
    """`source` plus the partial sum another CTA wrote (ld.global.cg.v4: past this SM's L1, which
    may hold an older copy of the line)."""

    name = "sm90.add_partial"
    result = result_def(FragmentType)
    assembly_format = "$source `,` $base `[` $offset `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, base: SSAValue, offset: SSAValue):
        super().__init__(operands=[source, base, offset], result_types=[source.type])

    def verify_(self) -> None:
        super().verify_()
        if self.result.type != self.source.type:
            raise VerifyException("the sum has the type of the fragment it adds to")


@irdl_op_definition
class FlagSignalOp(IRDLOperation):
    """Raise the u32 flag at `base` + 4 `index` for other CTAs (red.release.gpu.add 1): what this
    CTA's threads wrote and fenced (sm90.fence_gpu) before a barrier with this thread is visible
    to a CTA that sees the flag."""

    name = "sm90.flag_signal"
    base = operand_def(IntegerType(64))
    index = operand_def(IndexType)
    assembly_format = "$base `[` $index `]` attr-dict"

    def __init__(self, base: SSAValue, index: SSAValue):
        super().__init__(operands=[base, index])


@irdl_op_definition
class FlagWaitOp(IRDLOperation):
    """Spin (ld.acquire.gpu) until the u32 flag at `base` + 4 `index` is raised, then lower it for
    the next launch (a kernel leaves its scratch flags zero)."""

    name = "sm90.flag_wait"
    base = operand_def(IntegerType(64))
    index = operand_def(IndexType)
    assembly_format = "$base `[` $index `]` attr-dict"

    def __init__(self, base: SSAValue, index: SSAValue):
        super().__init__(operands=[base, index])


FenceGpuOp = _no_operand_op(
    "sm90.fence_gpu",
    "Order this thread's memory accesses before it with its later ones for every CTA of the grid "
    "(fence.acq_rel.gpu): its partial-tile stores before the flag that announces them.",
)


Sm90 = Dialect(
    "sm90",
    [
        KernelOp,
        TensorMapParamOp,
        DimParamOp,
        PointerParamOp,
        LoadGlobalScalarOp,
        ScratchParamOp,
        StorePartialOp,
        AddPartialOp,
        FlagSignalOp,
        FlagWaitOp,
        FenceGpuOp,
        ZeroRowsOp,
        BlockIdOp,
        GridDimOp,
        ClusterRankOp,
        ClusterSyncOp,
        GridDependencyWaitOp,
        LaunchDependentsOp,
        SmemBaseOp,
        SmemViewOp,
        RolesOp,
        SingleThreadOp,
        SyncBlockOp,
        FenceBarrierInitOp,
        FenceProxyAsyncOp,
        NamedBarrierOp,
        NamedBarrierArriveOp,
        MbarrierGroupOp,
        MbarrierAtOp,
        RingOp,
        RingAcquireOp,
        RingWaitOp,
        RingStageOp,
        RingReleaseOp,
        MbarrierInitOp,
        MbarrierArriveOp,
        MbarrierWaitOp,
        TmaLoadOp,
        TmaStoreOp,
        TmaStoreCommitOp,
        TmaStoreWaitOp,
        StoreFenceInitOp,
        StoreFenceSignalOp,
        StoreFenceWaitOp,
        FenceProxyAsyncGlobalOp,
        TrapOp,
        WgmmaOp,
        WgmmaWaitOp,
        FillOp,
        UnaryOp,
        BinaryOp,
        RowReduceOp,
        BandCombineOp,
        RowScanOp,
        ColScanOp,
        TransposeOp,
        VectorReduceOp,
        RowBroadcastOp,
        ColReduceOp,
        ColBroadcastOp,
        ConvertOp,
        MaskOp,
        BoundsMaskOp,
        PositionOp,
        SelectOp,
        StoreFragmentOp,
        LoadFragmentOp,
        StoreVectorGlobalOp,
    ],
    [FragmentType, SharedRefType, TensorMapType, KernelABIAttr, MbarrierGroupType, MbarrierType, RingType],
)
