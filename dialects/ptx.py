"""The ptx dialect: one op per PTX instruction, on typed virtual registers.

Registers are SSA values of type `!ptx.reg<pred|b16|b32|b64|f32>`; ptxas allocates the physical
registers. PTX has no phis, so a value is a *register*, not a single assignment: `ptx.assign`
writes an existing register (printed as `mov`), and instructions with in/out operands (wgmma
accumulators) take them as operands and write them in place. Control flow is structured at
first (`ptx.if`, `ptx.for`, `ptx.loop`: regions over registers, see `StructuredOp`), then flat
after ptx-flatten-control-flow: `ptx.label` and `ptx.bra` (optionally predicated) in the single
block of a `ptx.entry`, which is all the printer takes.

Instruction ops name their operands and results (`a`, `b`, `addr`, `acc`, `d`, ...: IRDL
operand/result definitions, so their count and register type are checked by IRDL) and type their
properties: the type suffix `ty` is a `PtxTypeAttr`, modifiers `mods` a `ModifiersAttr` (a
sequence of `Modifier`s), comparisons, state spaces, memory orders, ... enum attributes.
Families share a base: `_Unary`/`_Binary`/`_Ternary` arithmetic (the last source of the latter
two may be `imm`: for float types the IEEE-754 bits of the f32 value, so every value
round-trips exactly), `_Memory`, `_Barrier`, `_MbarOp`; tables (TYPES, INT_MODS, FLOAT_MODS)
say what each opcode takes. One syntax serves all (`PtxInst`):
`%r = ptx.add(%a, %b) {ty = u32} : b32`; `%d = ptx.mul(%a) {ty = u32, mods = wide, imm = 8 : i64} : b64`;
an op with several variadic groups braces each: `ptx.wgmma({%d0, ...}, {%desc_a}, %desc_b) {...}`.

Each op renders its own PTX line in `ptx(names)`; `backends/ptx_printer.py` adds the module,
entry, register declarations and register names. `ptx_builder.PtxBuilder` is the API the
lowering writes code with.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
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
    IRDLOperation,
    OptOperandDef,
    VarOperandDef,
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
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from tkc.abi import ABIError, KernelABI

# --------------------------------------------------------------------------- types

REG_KINDS = ("pred", "b16", "b32", "b64", "f32")
"""Register classes; the printer declares one `.reg` array per class."""

REG_PREFIX = {"pred": "%p", "b16": "%rs", "b32": "%r", "b64": "%rd", "f32": "%f"}

_KIND_BITS = {"pred": 1, "b16": 16, "b32": 32, "b64": 64, "f32": 32}

_TYPE_KIND = {
    "pred": "pred",
    **dict.fromkeys(("b8", "b16", "u16", "s16", "f16", "bf16", "e4m3x2", "e5m2x2"), "b16"),
    **dict.fromkeys(("b32", "u32", "s32", "f16x2", "bf16x2"), "b32"),
    **dict.fromkeys(("b64", "u64", "s64"), "b64"),
    "f32": "f32",
}
"""The register class that holds a value of each PTX instruction type."""


def kind_of_type(ty: str) -> str:
    """Register class for a PTX type suffix (`u32` -> `b32`, `f32` -> `f32`, `bf16` -> `b16`)."""
    try:
        return _TYPE_KIND[ty]
    except KeyError:
        raise VerifyException(f"unknown PTX type '{ty}'") from None


def type_bits(ty: str) -> int:
    return _KIND_BITS[kind_of_type(ty)]


@irdl_attr_definition
class RegType(ParametrizedAttribute, TypeAttribute):
    """A virtual register of one class: `!ptx.reg<b32>`."""

    name = "ptx.reg"
    kind: StringAttr

    def __init__(self, kind: str):
        super().__init__(StringAttr(kind))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.kind.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_identifier()),)

    def verify(self) -> None:
        if self.kind.data not in REG_KINDS:
            raise VerifyException(f"register class must be one of {REG_KINDS}, got '{self.kind.data}'")


REG = {k: RegType(k) for k in REG_KINDS}
"""The register types, shared (attributes are immutable)."""


def reg_kind(v: SSAValue) -> str:
    """The register class of a register value."""
    assert isinstance(v.type, RegType)
    return v.type.kind.data


def reg_bits(v: SSAValue) -> int:
    """The width of a register value's class."""
    return _KIND_BITS[reg_kind(v)]


@irdl_attr_definition
class ParamAttr(ParametrizedAttribute):
    """A kernel parameter: `#ptx.param<"A", tensormap>`; kinds `tensormap`, `u64`, `u32`, ..."""

    name = "ptx.param"
    param_name: StringAttr
    kind: StringAttr

    KINDS: ClassVar = ("tensormap", "u64", "u32", "s32", "f32", "b64", "b32")

    def __init__(self, name: str, kind: str):
        super().__init__(StringAttr(name), StringAttr(kind))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.param_name.data)
        printer.print_string(f", {self.kind.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            name = parser.parse_str_literal()
            parser.parse_punctuation(",")
            return (StringAttr(name), StringAttr(parser.parse_identifier()))

    def verify(self) -> None:
        if self.kind.data not in self.KINDS:
            raise VerifyException(f"parameter kind must be one of {self.KINDS}, got '{self.kind.data}'")

    def declaration(self) -> str:
        if self.kind.data == "tensormap":
            return f".param .align 64 .b8 {self.param_name.data}[128]"
        return f".param .{self.kind.data} {self.param_name.data}"


# --------------------------------------------------------------------------- typed properties


class PtxType(StrEnum):
    """The type suffix of an instruction (`.u32`, `.bf16x2`, ...)."""

    PRED = "pred"
    B8 = "b8"
    """One byte; only loads and stores take it, with a 16-bit register (PTX widens 8-bit values)."""
    B16 = "b16"
    B32 = "b32"
    B64 = "b64"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
    S16 = "s16"
    S32 = "s32"
    S64 = "s64"
    F16 = "f16"
    F16X2 = "f16x2"
    BF16 = "bf16"
    BF16X2 = "bf16x2"
    F32 = "f32"
    E4M3 = "e4m3"
    E5M2 = "e5m2"
    E4M3X2 = "e4m3x2"
    E5M2X2 = "e5m2x2"


@irdl_attr_definition
class PtxTypeAttr(EnumAttribute[PtxType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.type"


class Modifier(StrEnum):
    """One modifier of an instruction; `ModifiersAttr` holds the sequence an instruction takes."""

    RN = "rn"
    RZ = "rz"
    RM = "rm"
    RP = "rp"
    RNI = "rni"
    RZI = "rzi"
    RMI = "rmi"
    RPI = "rpi"
    FTZ = "ftz"
    SAT = "sat"
    APPROX = "approx"
    FULL = "full"
    NAN = "NaN"
    LO = "lo"
    HI = "hi"
    WIDE = "wide"
    RELU = "relu"
    SATFINITE = "satfinite"
    NC = "nc"
    CG = "cg"


@irdl_attr_definition
class ModifierAttr(EnumAttribute[Modifier], SpacedOpaqueSyntaxAttribute):
    name = "ptx.modifier"


@irdl_attr_definition
class ModifiersAttr(ParametrizedAttribute):
    """The modifiers of an instruction in PTX order, `#ptx.mods<approx.ftz>`; which sequences
    an opcode takes is its verifier's table."""

    name = "ptx.mods"
    mods: ArrayAttr[ModifierAttr]

    def __init__(self, text: str):
        unknown = [m for m in text.split(".") if m not in Modifier._value2member_map_]
        if unknown:
            raise VerifyException(f"'{unknown[0]}' is not a PTX modifier; modifiers are {', '.join(Modifier)}")
        super().__init__(ArrayAttr(ModifierAttr(Modifier(m)) for m in text.split(".")))

    @property
    def text(self) -> str:
        return ".".join(m.data for m in self.mods)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.text}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (ModifiersAttr(_parse_modifiers(parser)).mods,)


def _parse_modifiers(parser: AttrParser) -> str:
    text = parser.parse_optional_identifier() or parser.parse_str_literal()
    unknown = [m for m in text.split(".") if m not in Modifier._value2member_map_]
    if unknown:
        parser.raise_error(f"'{unknown[0]}' is not a PTX modifier; modifiers are {', '.join(Modifier)}")
    return text


class Comparison(StrEnum):
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    LO = "lo"
    LS = "ls"
    HI = "hi"
    HS = "hs"
    EQU = "equ"
    NEU = "neu"
    LTU = "ltu"
    LEU = "leu"
    GTU = "gtu"
    GEU = "geu"
    NUM = "num"
    NAN = "nan"


@irdl_attr_definition
class ComparisonAttr(EnumAttribute[Comparison], SpacedOpaqueSyntaxAttribute):
    name = "ptx.cmp"


class Space(StrEnum):
    """A state space."""

    GLOBAL = "global"
    SHARED = "shared"
    PARAM = "param"


@irdl_attr_definition
class SpaceAttr(EnumAttribute[Space], SpacedOpaqueSyntaxAttribute):
    name = "ptx.space"


class MemoryOrder(StrEnum):
    """The memory-model semantics an ordered ld or a red carries, at CTA scope (`.acquire.cta`)."""

    ACQUIRE = "acquire"
    RELEASE = "release"
    RELAXED = "relaxed"


@irdl_attr_definition
class MemoryOrderAttr(EnumAttribute[MemoryOrder], SpacedOpaqueSyntaxAttribute):
    name = "ptx.sem"


class ShuffleMode(StrEnum):
    BFLY = "bfly"
    IDX = "idx"
    UP = "up"
    DOWN = "down"


@irdl_attr_definition
class ShuffleModeAttr(EnumAttribute[ShuffleMode], SpacedOpaqueSyntaxAttribute):
    name = "ptx.shfl_mode"


class Reduction(StrEnum):
    """The operation of a `red` or of a reducing TMA store."""

    ADD = "add"
    MIN = "min"
    MAX = "max"
    INC = "inc"
    DEC = "dec"
    AND = "and"
    OR = "or"
    XOR = "xor"


@irdl_attr_definition
class ReductionAttr(EnumAttribute[Reduction], SpacedOpaqueSyntaxAttribute):
    name = "ptx.reduction"


class RegisterAction(StrEnum):
    """setmaxnreg: raise or lower the warpgroup's register count."""

    INC = "inc"
    DEC = "dec"


@irdl_attr_definition
class RegisterActionAttr(EnumAttribute[RegisterAction], SpacedOpaqueSyntaxAttribute):
    name = "ptx.reg_action"


class ClusterStep(StrEnum):
    ARRIVE = "arrive"
    WAIT = "wait"


@irdl_attr_definition
class ClusterStepAttr(EnumAttribute[ClusterStep], SpacedOpaqueSyntaxAttribute):
    name = "ptx.cluster_step"


TYPED_ATTRS: tuple[type[Attribute], ...] = (PtxTypeAttr, ModifierAttr, ModifiersAttr, ComparisonAttr, SpaceAttr,
                                            MemoryOrderAttr, ShuffleModeAttr, ReductionAttr, RegisterActionAttr,
                                            ClusterStepAttr)


# --------------------------------------------------------------------------- helpers


def f32_bits(value: float) -> int:
    """The IEEE-754 bits of `value` rounded to f32: how float immediates are stored."""
    return struct.unpack("<I", struct.pack("<f", value))[0]


def format_imm(ty: str, value: int) -> str:
    """An immediate as PTX spells it: floats as exact hex bits (`0f3F800000`), bit types in hex."""
    if ty == "f32":
        return f"0f{value & 0xFFFFFFFF:08X}"
    if ty.startswith("b") and value > 0xFF:
        return hex(value)  # masks and descriptor constants read better in hex
    return str(value)


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def _check(cond: bool, op: Operation, msg: str) -> None:
    if not cond:
        raise VerifyException(f"{op.name}: {msg}")


def _check_type_fits(op: Operation, ty: str, values: Sequence[SSAValue], what: str) -> None:
    """Register size must match the instruction type (f32 and b32 registers are interchangeable)."""
    bits = type_bits(ty)
    for v in values:
        _check(reg_bits(v) == bits, op, f"{what} is !ptx.reg<{reg_kind(v)}>, expected a {bits}-bit register for .{ty}")
        # PTX lets f32 registers meet only .f32 and .b32 instructions (b32 registers meet all)
        _check(reg_kind(v) != "f32" or ty in ("f32", "b32"), op, f"{what} is an f32 register, .{ty} needs b32")


Names = dict[SSAValue, str]
"""Register names assigned by the printer."""


def _vec(names: Names, values: Sequence[SSAValue]) -> str:
    return "{" + ", ".join(names[v] for v in values) + "}"


def _addr(names: Names, base: SSAValue, offset: int) -> str:
    return f"[{names[base]}+{offset}]" if offset else f"[{names[base]}]"


# --------------------------------------------------------------------------- instruction base


def _defined_type(parser: Parser, operand: UnresolvedOperand) -> Attribute:
    defined = parser.ssa_values.get(operand.operand_name)
    if defined is None or operand.index >= len(defined):
        parser.raise_error(f"register %{operand.operand_name} is used before it is defined", operand.span)
    return defined[operand.index].type


def _parse_defined_operand(parser: Parser) -> SSAValue:
    """An operand whose register was defined above: in an entry, every use follows its
    definition in text order, so the operand's type need not be printed."""
    operand = parser.parse_unresolved_operand()
    return parser.resolve_operand(operand, _defined_type(parser, operand))


def _parse_operand_or_group(parser: Parser) -> SSAValue | list[SSAValue]:
    if parser.parse_optional_punctuation("{"):
        if parser.parse_optional_punctuation("}"):
            return []
        group = parser.parse_comma_separated_list(parser.Delimiter.NONE, lambda: _parse_defined_operand(parser))
        parser.parse_punctuation("}")
        return group
    return _parse_defined_operand(parser)


def _print_prop(printer: Printer, value: Attribute) -> None:
    """A typed property by its value (`u32`, `approx.ftz`), anything else as MLIR spells it."""
    if isinstance(value, EnumAttribute):
        printer.print_string(value.data.value)
    elif isinstance(value, ModifiersAttr):
        printer.print_string(value.text)
    else:
        printer.print_attribute(value)


def _parse_prop(parser: Parser, kind: object) -> Attribute:
    if kind is ModifiersAttr:
        return ModifiersAttr(_parse_modifiers(parser))
    if isinstance(kind, type) and issubclass(kind, EnumAttribute):
        text = parser.parse_optional_identifier() or parser.parse_str_literal()
        if text not in kind.enum_type._value2member_map_:
            parser.raise_error(f"'{text}' is not one of {', '.join(kind.enum_type)}")
        return kind(kind.enum_type(text))
    return parser.parse_attribute()


class PtxInst(IRDLOperation):
    """Base of every instruction op. Each op names its register operands and results
    (`operand_def`, `result_def`, ...) and types its properties (`PtxTypeAttr`, `ModifiersAttr`,
    the enums above); most share a family base (`_Arith`, `_Memory`, `_Barrier`, `_MbarOp`).

    Syntax: `%r = ptx.op(%a, %b) {ty = u32, mods = lo, imm = 3 : i64} : b32`: the operands in
    declaration order (an op with several variadic groups braces each, `{%d0, %d1}`), the
    typed properties by their values, the results by register class.
    """

    def ptx(self, names: Names) -> str:
        """The PTX line (without indentation), or several lines joined by newlines."""
        raise NotImplementedError

    @classmethod
    def _segmented(cls) -> bool:
        return any(isinstance(o, AttrSizedOperandSegments) for o in cls.get_irdl_definition().options)

    def print(self, printer: Printer) -> None:
        if self.operands:
            items: list[SSAValue | Sequence[SSAValue]] = []
            segmented = self._segmented()
            for (_, definition), group in zip(self.get_irdl_definition().operands, self._operand_groups()):
                if segmented and isinstance(definition, VarOperandDef) and not isinstance(definition, OptOperandDef):
                    items.append(group)
                else:
                    items.extend(group)
            printer.print_string("(")
            printer.print_list(items, lambda item: self._print_item(printer, item))
            printer.print_string(")")
        extra = {k: v for k, v in {**self.properties, **self.attributes}.items() if k != "operandSegmentSizes"}
        if extra:
            printer.print_string(" {")
            for n, (key, value) in enumerate(extra.items()):
                printer.print_string(", " if n else "")
                printer.print_identifier_or_string_literal(key)
                if not isinstance(value, UnitAttr):
                    printer.print_string(" = ")
                    _print_prop(printer, value)
            printer.print_string("}")
        if self.results:
            printer.print_string(" : " + ", ".join(reg_kind(r) for r in self.results))

    def _operand_groups(self) -> list[Sequence[SSAValue]]:
        groups: list[Sequence[SSAValue]] = []
        for name, _ in self.get_irdl_definition().operands:
            value = getattr(self, name)
            groups.append(value if isinstance(value, Sequence) else [] if value is None else [value])
        return groups

    @staticmethod
    def _print_item(printer: Printer, item: SSAValue | Sequence[SSAValue]) -> None:
        if isinstance(item, SSAValue):
            printer.print_operand(item)
            return
        printer.print_string("{")
        printer.print_list(item, printer.print_operand)
        printer.print_string("}")

    @classmethod
    def parse(cls, parser: Parser) -> PtxInst:
        items: list[SSAValue | list[SSAValue]] = []
        if parser.parse_optional_punctuation("("):
            if not parser.parse_optional_punctuation(")"):
                items = parser.parse_comma_separated_list(parser.Delimiter.NONE,
                                                          lambda: _parse_operand_or_group(parser))
                parser.parse_punctuation(")")
        definition = cls.get_irdl_definition()
        props: dict[str, Attribute] = {}
        attrs: dict[str, Attribute] = {}
        if parser.parse_optional_punctuation("{"):
            while True:
                key = parser.parse_optional_identifier() or parser.parse_str_literal()
                prop = definition.properties.get(key)
                value: Attribute = UnitAttr()
                if parser.parse_optional_punctuation("="):
                    value = _parse_prop(parser, getattr(prop.constr, "attr", None) if prop else None)
                (props if prop is not None else attrs)[key] = value
                if not parser.parse_optional_punctuation(","):
                    break
            parser.parse_punctuation("}")
        kinds: list[str] = []
        if parser.parse_optional_punctuation(":"):
            kinds = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_identifier)
        for k in kinds:
            if k not in REG:
                parser.raise_error(f"unknown register class '{k}'")
        results = [REG[k] for k in kinds]
        if not cls._segmented():
            if any(isinstance(item, list) for item in items):
                parser.raise_error(f"{cls.name} takes no operand groups")
            return cls.create(operands=cast(list[SSAValue], items), result_types=results, properties=props,
                              attributes=attrs)
        return cls.build(operands=cls._groups_of(parser, items), result_types=results, properties=props,
                         attributes=attrs)

    @classmethod
    def _groups_of(cls, parser: Parser, items: list[SSAValue | list[SSAValue]]) -> list[SSAValue | list[SSAValue]]:
        """The printed operands as the groups of a segmented op: a `{...}` per variadic one."""
        groups: list[SSAValue | list[SSAValue]] = []
        rest = list(items)
        for name, definition in cls.get_irdl_definition().operands:
            if isinstance(definition, OptOperandDef):
                present = bool(rest) and isinstance(rest[0], SSAValue)
                groups.append([cast(SSAValue, rest.pop(0))] if present else [])
                continue
            if not rest or isinstance(rest[0], list) != isinstance(definition, VarOperandDef):
                what = "a {...} group" if isinstance(definition, VarOperandDef) else "a register"
                parser.raise_error(f"{cls.name} expects {what} for {name}")
            groups.append(rest.pop(0))
        if rest:
            parser.raise_error(f"{cls.name} takes {len(items) - len(rest)} operand groups, got {len(items)}")
        return groups


def _mods(op: Operation) -> str:
    """`.mods` or ''."""
    m = op.properties.get("mods")
    return f".{m.text}" if isinstance(m, ModifiersAttr) else ""


def _reg_or_imm(names: Names, reg: SSAValue | None, imm: IntegerAttr | None, ty: str) -> str:
    """A source that is a register or, where it is absent, the immediate."""
    if reg is not None:
        return names[reg]
    assert imm is not None
    return format_imm(ty, imm.value.data)


def _check_one_of(op: Operation, reg: SSAValue | None, imm: IntegerAttr | None, what: str) -> None:
    _check((reg is None) != (imm is None), op, f"needs exactly one of {what} or imm")


# --------------------------------------------------------------------------- registers and moves


@irdl_op_definition
class RegOp(PtxInst):
    """Declares a register without writing it (e.g. accumulators that `scale-d = false` overwrites)."""

    name = "ptx.reg"
    d = result_def(RegType)

    def ptx(self, names: Names) -> str:
        return ""


@irdl_op_definition
class MovOp(PtxInst):
    """`mov.ty d, a` or `mov.ty d, imm`."""

    name = "ptx.mov"
    a = opt_operand_def(RegType)
    d = result_def(RegType)
    ty = prop_def(PtxTypeAttr)
    imm = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        _check_one_of(self, self.a, self.imm, "a register")
        _check_type_fits(self, self.ty.data, [*self.operands, self.d], "operand")

    def ptx(self, names: Names) -> str:
        ty = self.ty.data
        return f"mov.{ty} {names[self.d]}, {_reg_or_imm(names, self.a, self.imm, ty)};"


@irdl_op_definition
class AssignOp(PtxInst):
    """Writes an existing register: `mov dst, src` (or an immediate)."""

    name = "ptx.assign"
    dst = operand_def(RegType)
    src = opt_operand_def(RegType)
    imm = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        _check_one_of(self, self.src, self.imm, "a source register")
        if self.src is not None:
            _check(reg_bits(self.dst) == reg_bits(self.src), self, "source and destination differ in size")

    def ptx(self, names: Names) -> str:
        ty = reg_kind(self.dst)  # every register class is also a mov type
        return f"mov.{ty} {names[self.dst]}, {_reg_or_imm(names, self.src, self.imm, ty)};"


@irdl_op_definition
class PackOp(PtxInst):
    """`mov.bN d, {lo, hi}`: two half-size registers into one."""

    name = "ptx.pack"
    lo = operand_def(RegType)
    hi = operand_def(RegType)
    d = result_def(RegType)

    def verify_(self) -> None:
        _check(reg_bits(self.lo) == reg_bits(self.hi) and 2 * reg_bits(self.lo) == reg_bits(self.d),
               self, "operands must be two halves of the result")

    def ptx(self, names: Names) -> str:
        return f"mov.b{reg_bits(self.d)} {names[self.d]}, {_vec(names, self.operands)};"


@irdl_op_definition
class UnpackOp(PtxInst):
    """`mov.bN {lo, hi}, a`: one register into two halves."""

    name = "ptx.unpack"
    a = operand_def(RegType)
    lo = result_def(RegType)
    hi = result_def(RegType)

    def verify_(self) -> None:
        _check(reg_bits(self.lo) == reg_bits(self.hi) and 2 * reg_bits(self.lo) == reg_bits(self.a),
               self, "results must be two halves of the operand")

    def ptx(self, names: Names) -> str:
        return f"mov.b{reg_bits(self.a)} {_vec(names, self.results)}, {names[self.a]};"


@irdl_op_definition
class ParamAddrOp(PtxInst):
    """`mov.b64 d, param`: the param-space address of a kernel parameter."""

    name = "ptx.param_addr"
    d = result_def(RegType)
    param = prop_def(StringAttr)

    def verify_(self) -> None:
        _check(reg_kind(self.d) == "b64", self, "result must be b64")

    def ptx(self, names: Names) -> str:
        return f"mov.b64 {names[self.d]}, {self.param.data};"


@irdl_op_definition
class CvtaOp(PtxInst):
    """`cvta.param.u64 d, a` (to generic) or `cvta.to.global.u64 d, a` (`to`)."""

    name = "ptx.cvta"
    a = operand_def(RegType)
    d = result_def(RegType)
    space = prop_def(SpaceAttr)
    to = opt_prop_def(UnitAttr)

    def verify_(self) -> None:
        _check(reg_kind(self.a) == "b64" and reg_kind(self.d) == "b64", self, "operands must be b64")

    def ptx(self, names: Names) -> str:
        to = ".to" if self.to is not None else ""
        return f"cvta{to}.{self.space.data}.u64 {names[self.d]}, {names[self.a]};"


@irdl_op_definition
class LdParamOp(PtxInst):
    """`ld.param.ty d, [param]`."""

    name = "ptx.ld_param"
    d = result_def(RegType)
    param = prop_def(StringAttr)
    ty = prop_def(PtxTypeAttr)

    def verify_(self) -> None:
        _check_type_fits(self, self.ty.data, [self.d], "result")

    def ptx(self, names: Names) -> str:
        return f"ld.param.{self.ty.data} {names[self.d]}, [{self.param.data}];"


@irdl_op_definition
class SmemBaseOp(PtxInst):
    """`mov.u32 d, smem`: shared::cta address of the dynamic shared memory (declares `smem[]`)."""

    name = "ptx.smem_base"
    d = result_def(RegType)

    def verify_(self) -> None:
        _check(reg_kind(self.d) == "b32", self, "result must be b32")

    def ptx(self, names: Names) -> str:
        return f"mov.u32 {names[self.d]}, smem;"


SPECIAL_REGS = {
    **dict.fromkeys(
        ("tid.x", "tid.y", "tid.z", "ntid.x", "ctaid.x", "ctaid.y", "ctaid.z", "nctaid.x", "nctaid.y", "nctaid.z",
         "laneid", "warpid", "smid", "nsmid", "cluster_ctarank", "clusterid.x", "cluster_nctarank"), "b32"),
    **dict.fromkeys(("clock64", "globaltimer"), "b64"),
}


@irdl_op_definition
class SregOp(PtxInst):
    """`mov.u32 d, %tid.x`: a special register (`SPECIAL_REGS`)."""

    name = "ptx.sreg"
    d = result_def(RegType)
    reg = prop_def(StringAttr)

    def verify_(self) -> None:
        kind = SPECIAL_REGS.get(self.reg.data)
        _check(kind is not None, self, f"unknown special register '%{self.reg.data}'")
        _check(reg_kind(self.d) == kind, self, f"%{self.reg.data} needs a {kind} result")

    def ptx(self, names: Names) -> str:
        ty = "u64" if reg_kind(self.d) == "b64" else "u32"
        return f"mov.{ty} {names[self.d]}, %{self.reg.data};"


# --------------------------------------------------------------------------- arithmetic


_INTS = frozenset(("u16", "u32", "u64", "s16", "s32", "s64"))
_SIGNED = frozenset(("s16", "s32", "s64"))
_HALVES = frozenset(("f16", "f16x2", "bf16", "bf16x2"))
_BITS = frozenset(("b16", "b32", "b64"))
_NUMBERS = _INTS | _HALVES | {"f32"}


def _variants(*choices: Sequence[str], required: bool = False) -> tuple[str, ...]:
    """Every modifier string of one (or, unless `required` for the first, none) of each choice, in order."""
    results = [""]
    for i, options in enumerate(choices):
        pick = list(options) if required and i == 0 else ["", *options]
        results = [".".join(p for p in (r, o) if p) for r in results for o in pick]
    return tuple(dict.fromkeys(results))


def _check_mods(op: PtxInst, what: str, allowed: Sequence[str]) -> None:
    mods = op.properties.get("mods")
    given = mods.text if isinstance(mods, ModifiersAttr) else ""
    if given not in allowed:
        named = ["none" if not m else m for m in allowed]
        choices = ", ".join(named[:-1]) + f" or {named[-1]}" if len(named) > 1 else named[0]
        _check(False, op, f"{what} does not take the modifiers {given!r}; it takes {choices}" if given else
               f"{what} needs mods {choices}")


_ROUNDING = ("rn", "rz", "rm", "rp")
_FLOAT_MODS = _variants(_ROUNDING, ("ftz",), ("sat",))
"""add, sub, mul on floats: an optional rounding, flush-to-zero, saturation."""
_APPROX = _variants(("approx",), ("ftz",), required=True)
_NONE = ("",)


class _Arith(PtxInst):
    """`op{.mods}.ty d, a, b...`: the sources in order, the last of a binary or ternary op may be
    `imm` instead of a register. Subclasses set the opcode and the types and modifiers it takes."""

    d = result_def(RegType)
    ty = prop_def(PtxTypeAttr)
    mods = opt_prop_def(ModifiersAttr)

    OPCODE: ClassVar[str] = ""
    TYPES: ClassVar[frozenset[str]] = _NUMBERS
    """The type suffixes PTX accepts for this opcode."""
    INT_MODS: ClassVar[tuple[str, ...]] = _NONE
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _FLOAT_MODS
    """The modifiers PTX accepts (`""`: none) with an integer or bit type, and with a float type."""

    def _check_ty(self) -> None:
        _check(self.ty.data in self.TYPES, self, f"{self.OPCODE} does not take .{self.ty.data}; "
               f"one of {', '.join(sorted(self.TYPES))}")
        floats = self.ty.data in _HALVES | {"f32"}
        _check_mods(self, f"{self.OPCODE}.{self.ty.data}", self.FLOAT_MODS if floats else self.INT_MODS)

    def _last(self) -> tuple[SSAValue | None, IntegerAttr | None] | None:
        """The last source (register, immediate) where it may be an immediate."""
        return None

    def verify_(self) -> None:
        self._check_ty()
        if (last := self._last()) is not None:
            _check_one_of(self, *last, "a last register")
        ty = self.ty.data
        wide = self.mods is not None and self.mods.text == "wide"
        # mul.wide/mad.wide write (and mad.wide adds) a double-width value
        _check(reg_bits(self.d) == type_bits(ty) * (2 if wide else 1), self, "result size does not match the type")
        srcs = self.operands[:2] if wide else self.operands
        _check_type_fits(self, ty, srcs, "source")
        if wide and len(self.operands) == 3:
            _check(reg_bits(self.operands[2]) == 2 * type_bits(ty), self, "mad.wide addend must be double width")

    def ptx(self, names: Names) -> str:
        ty = self.ty.data
        srcs = [names[a] for a in self.operands]
        if (last := self._last()) is not None and last[0] is None:
            srcs.append(_reg_or_imm(names, *last, ty))
        return f"{self.OPCODE}{_mods(self)}.{ty} {names[self.d]}, {', '.join(srcs)};"


class _Unary(_Arith):
    a = operand_def(RegType)


class _Binary(_Arith):
    a = operand_def(RegType)
    b = opt_operand_def(RegType)
    imm = opt_prop_def(IntegerAttr)

    def _last(self) -> tuple[SSAValue | None, IntegerAttr | None]:
        return self.b, self.imm


class _Ternary(_Arith):
    a = operand_def(RegType)
    b = operand_def(RegType)
    c = opt_operand_def(RegType)
    imm = opt_prop_def(IntegerAttr)

    def _last(self) -> tuple[SSAValue | None, IntegerAttr | None]:
        return self.c, self.imm


class _Shift(_Binary):
    TYPES: ClassVar[frozenset[str]] = _BITS | _INTS

    def verify_(self) -> None:
        self._check_ty()
        _check_one_of(self, self.b, self.imm, "a shift register")
        _check_type_fits(self, self.ty.data, [self.a, self.d], "operand")
        if self.b is not None:
            _check(reg_bits(self.b) == 32, self, "shift amount is a 32-bit register")


@irdl_op_definition
class AddOp(_Binary):
    name = "ptx.add"
    OPCODE: ClassVar[str] = "add"


@irdl_op_definition
class SubOp(_Binary):
    name = "ptx.sub"
    OPCODE: ClassVar[str] = "sub"


@irdl_op_definition
class MulOp(_Binary):
    """mods: `lo`, `hi` or `wide` for integers (required by PTX); optional rounding for floats."""

    name = "ptx.mul"
    OPCODE: ClassVar[str] = "mul"
    INT_MODS: ClassVar[tuple[str, ...]] = ("lo", "hi", "wide")


@irdl_op_definition
class DivOp(_Binary):
    """mods for f32: `rn`, `approx`, `full` (required by PTX)."""

    name = "ptx.div"
    OPCODE: ClassVar[str] = "div"
    TYPES: ClassVar[frozenset[str]] = _INTS | {"f32"}
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _APPROX + _variants(("full", *_ROUNDING), ("ftz",), required=True)


@irdl_op_definition
class RemOp(_Binary):
    name = "ptx.rem"
    OPCODE: ClassVar[str] = "rem"
    TYPES: ClassVar[frozenset[str]] = _INTS


@irdl_op_definition
class AndOp(_Binary):
    name = "ptx.and"
    OPCODE: ClassVar[str] = "and"
    TYPES: ClassVar[frozenset[str]] = _BITS | {"pred"}


@irdl_op_definition
class OrOp(_Binary):
    name = "ptx.or"
    OPCODE: ClassVar[str] = "or"
    TYPES: ClassVar[frozenset[str]] = _BITS | {"pred"}


@irdl_op_definition
class XorOp(_Binary):
    name = "ptx.xor"
    OPCODE: ClassVar[str] = "xor"
    TYPES: ClassVar[frozenset[str]] = _BITS | {"pred"}


@irdl_op_definition
class MinOp(_Binary):
    name = "ptx.min"
    OPCODE: ClassVar[str] = "min"
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _variants(("ftz",), ("NaN",))


@irdl_op_definition
class MaxOp(_Binary):
    name = "ptx.max"
    OPCODE: ClassVar[str] = "max"
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _variants(("ftz",), ("NaN",))


@irdl_op_definition
class ShlOp(_Shift):
    name = "ptx.shl"
    OPCODE: ClassVar[str] = "shl"
    TYPES: ClassVar[frozenset[str]] = _BITS


@irdl_op_definition
class ShrOp(_Shift):
    """Arithmetic for `s32`/`s64`, logical for `u32`/`b32`."""

    name = "ptx.shr"
    OPCODE: ClassVar[str] = "shr"


@irdl_op_definition
class MadOp(_Ternary):
    """`mad.{lo,hi,wide}.ty d, a, b, c`."""

    name = "ptx.mad"
    OPCODE: ClassVar[str] = "mad"
    INT_MODS: ClassVar[tuple[str, ...]] = ("lo", "hi", "wide")
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _variants(_ROUNDING, ("ftz",), ("sat",), required=True)


@irdl_op_definition
class FmaOp(_Ternary):
    """`fma.rn.f32 d, a, b, c` (mods carries the rounding, `rn` by default in the builder)."""

    name = "ptx.fma"
    OPCODE: ClassVar[str] = "fma"
    TYPES: ClassVar[frozenset[str]] = _HALVES | {"f32"}
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _variants(_ROUNDING, ("ftz",), ("sat",), required=True)


@irdl_op_definition
class NotOp(_Unary):
    name = "ptx.not"
    OPCODE: ClassVar[str] = "not"
    TYPES: ClassVar[frozenset[str]] = _BITS | {"pred"}


@irdl_op_definition
class NegOp(_Unary):
    name = "ptx.neg"
    OPCODE: ClassVar[str] = "neg"
    TYPES: ClassVar[frozenset[str]] = _SIGNED | _HALVES | {"f32"}
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _variants(("ftz",))


@irdl_op_definition
class AbsOp(_Unary):
    name = "ptx.abs"
    OPCODE: ClassVar[str] = "abs"
    TYPES: ClassVar[frozenset[str]] = _SIGNED | _HALVES | {"f32"}
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _variants(("ftz",))


@irdl_op_definition
class RcpOp(_Unary):
    """mods: `approx.ftz`, `approx`, `rn`."""

    name = "ptx.rcp"
    OPCODE: ClassVar[str] = "rcp"
    TYPES: ClassVar[frozenset[str]] = frozenset(("f32",))
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _APPROX + _variants(_ROUNDING, ("ftz",), required=True)


@irdl_op_definition
class SqrtOp(_Unary):
    name = "ptx.sqrt"
    OPCODE: ClassVar[str] = "sqrt"
    TYPES: ClassVar[frozenset[str]] = frozenset(("f32",))
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _APPROX + _variants(_ROUNDING, ("ftz",), required=True)


@irdl_op_definition
class RsqrtOp(_Unary):
    name = "ptx.rsqrt"
    OPCODE: ClassVar[str] = "rsqrt"
    TYPES: ClassVar[frozenset[str]] = frozenset(("f32",))
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _APPROX


@irdl_op_definition
class Ex2Op(_Unary):
    name = "ptx.ex2"
    OPCODE: ClassVar[str] = "ex2"
    TYPES: ClassVar[frozenset[str]] = _HALVES | {"f32"}
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _APPROX


@irdl_op_definition
class Lg2Op(_Unary):
    name = "ptx.lg2"
    OPCODE: ClassVar[str] = "lg2"
    TYPES: ClassVar[frozenset[str]] = frozenset(("f32",))
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _APPROX


@irdl_op_definition
class TanhOp(_Unary):
    name = "ptx.tanh"
    OPCODE: ClassVar[str] = "tanh"
    TYPES: ClassVar[frozenset[str]] = _HALVES | {"f32"}
    FLOAT_MODS: ClassVar[tuple[str, ...]] = ("approx",)


@irdl_op_definition
class SinOp(_Unary):
    name = "ptx.sin"
    OPCODE: ClassVar[str] = "sin"
    TYPES: ClassVar[frozenset[str]] = frozenset(("f32",))
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _APPROX


@irdl_op_definition
class CosOp(_Unary):
    name = "ptx.cos"
    OPCODE: ClassVar[str] = "cos"
    TYPES: ClassVar[frozenset[str]] = frozenset(("f32",))
    FLOAT_MODS: ClassVar[tuple[str, ...]] = _APPROX


@irdl_op_definition
class PopcOp(_Unary):
    """Result is always a 32-bit count."""

    name = "ptx.popc"
    OPCODE: ClassVar[str] = "popc"
    TYPES: ClassVar[frozenset[str]] = frozenset(("b32", "b64"))

    def verify_(self) -> None:
        self._check_ty()
        _check_type_fits(self, self.ty.data, [self.a], "source")
        _check(reg_bits(self.d) == 32, self, "result must be 32-bit")


@irdl_op_definition
class SetpOp(PtxInst):
    """`setp.cmp.ty p, a, b|imm` -> pred."""

    name = "ptx.setp"
    a = operand_def(RegType)
    b = opt_operand_def(RegType)
    p = result_def(RegType)
    cmp = prop_def(ComparisonAttr)
    ty = prop_def(PtxTypeAttr)
    imm = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        _check_one_of(self, self.b, self.imm, "b")
        _check_type_fits(self, self.ty.data, self.operands, "source")
        _check(reg_kind(self.p) == "pred", self, "result must be pred")

    def ptx(self, names: Names) -> str:
        ty = self.ty.data
        return (f"setp.{self.cmp.data}.{ty} {names[self.p]}, {names[self.a]}, "
                f"{_reg_or_imm(names, self.b, self.imm, ty)};")


@irdl_op_definition
class SelpOp(PtxInst):
    """`selp.ty d, a, b, p`: d = p ? a : b."""

    name = "ptx.selp"
    a = operand_def(RegType)
    b = operand_def(RegType)
    p = operand_def(RegType)
    d = result_def(RegType)
    ty = prop_def(PtxTypeAttr)

    def verify_(self) -> None:
        _check_type_fits(self, self.ty.data, [self.a, self.b, self.d], "operand")
        _check(reg_kind(self.p) == "pred", self, "selector must be pred")

    def ptx(self, names: Names) -> str:
        return f"selp.{self.ty.data} {names[self.d]}, {names[self.a]}, {names[self.b]}, {names[self.p]};"


@irdl_op_definition
class CvtOp(PtxInst):
    """`cvt{.mods}.dst.src d, a{, b}`; packing forms (`bf16x2`, `e4m3x2`) take two f32 sources,
    the first going to the upper half."""

    name = "ptx.cvt"
    a = operand_def(RegType)
    b = opt_operand_def(RegType)
    d = result_def(RegType)
    dst = prop_def(PtxTypeAttr)
    src = prop_def(PtxTypeAttr)
    mods = opt_prop_def(ModifiersAttr)

    MODS: ClassVar[tuple[str, ...]] = _variants(
        (*_ROUNDING, "rni", "rzi", "rmi", "rpi"), ("ftz",), ("sat", "relu", "satfinite", "relu.satfinite")
    )
    """Rounding (to a float, or `i` to an integer), flush-to-zero, saturation."""

    def verify_(self) -> None:
        _check_mods(self, "cvt", self.MODS)
        packs = self.dst.data.endswith("x2") and self.src.data == "f32"
        _check((self.b is not None) == packs, self, f"expected {2 if packs else 1} sources")
        _check_type_fits(self, self.src.data, self.operands, "source")
        _check_type_fits(self, self.dst.data, [self.d], "result")

    def ptx(self, names: Names) -> str:
        srcs = ", ".join(names[a] for a in self.operands)
        return f"cvt{_mods(self)}.{self.dst.data}.{self.src.data} {names[self.d]}, {srcs};"


# --------------------------------------------------------------------------- memory


def _vec_suffix(n: int) -> str:
    return "" if n == 1 else f".v{n}"


class _Memory(PtxInst):
    """An access of global or shared memory at `[addr+offset]`. Each op declares `addr`, its
    first operand, itself (IRDL orders a subclass's operands before its base's)."""

    space = prop_def(SpaceAttr)
    ty = prop_def(PtxTypeAttr)
    offset = prop_def(IntegerAttr, default_value=_int(0))
    mods = opt_prop_def(ModifiersAttr)

    MODS: ClassVar[tuple[str, ...]] = _NONE
    """The modifiers between the state space and the type (`nc`: ld.global.nc, the read-only path)."""

    def _check_space(self, nvals: int, vals: Sequence[SSAValue]) -> None:
        space = self.space.data
        _check(space in ("global", "shared"), self, "space must be global or shared")
        _check_mods(self, f"{self.name[4:]}.{space}", self.MODS if space == "global" else _NONE)
        _check(reg_kind(self.operands[0]) == ("b64" if space == "global" else "b32"), self,
               "address must be b64 for global and b32 for shared")
        _check(nvals in (1, 2, 4), self, "vector width must be 1, 2 or 4")
        _check_type_fits(self, self.ty.data, vals, "value")

    def _address(self, names: Names) -> str:
        return _addr(names, self.operands[0], self.offset.value.data)


SCOPES = ("cta", "gpu")
"""The scopes an ordered ld or red synchronises at: the CTA's threads, or every CTA of the grid
(stream-K's flags between CTAs)."""


def _sem(op: LdOp | RedOp) -> str:
    scope = op.scope.data if op.scope is not None else "cta"
    return f".{op.sem.data}.{scope}" if op.sem is not None else ""


def _check_scope(op: LdOp | RedOp) -> None:
    _check(op.scope is None or (op.sem is not None and op.scope.data in SCOPES), op,
           f"a scope ({' or '.join(SCOPES)}) goes with a memory order")


@irdl_op_definition
class LdOp(_Memory):
    """`ld{.sem.scope}.space{.mods}{.vN}.ty d|{d...}, [addr+offset]`: 1, 2 or 4 results. With
    `sem` (e.g. acquire) the load is ordered by the memory model (one value only), at `scope`
    (cta unless given). `nc` reads through the read-only path, `cg` past L1 (another CTA wrote it)."""

    name = "ptx.ld"
    addr = operand_def(RegType)
    outs = var_result_def(RegType)
    sem = opt_prop_def(MemoryOrderAttr)
    scope = opt_prop_def(StringAttr)
    MODS: ClassVar[tuple[str, ...]] = ("", "nc", "cg")

    def verify_(self) -> None:
        self._check_space(len(self.outs), self.outs)
        _check_scope(self)
        _check(self.sem is None or len(self.outs) == 1, self, "an ordered load reads one value")

    def ptx(self, names: Names) -> str:
        outs = self.outs
        dst = names[outs[0]] if len(outs) == 1 else _vec(names, outs)
        return (f"ld{_sem(self)}.{self.space.data}{_mods(self)}{_vec_suffix(len(outs))}.{self.ty.data} {dst}, "
                f"{self._address(names)};")


@irdl_op_definition
class RedOp(_Memory):
    """`red{.sem.scope}.space.op.ty [addr+offset], b`: an atomic reduction whose old value nobody
    reads; b is a register or `imm`; `scope` as ld's."""

    name = "ptx.red"
    addr = operand_def(RegType)
    b = opt_operand_def(RegType)
    op = prop_def(ReductionAttr)
    sem = opt_prop_def(MemoryOrderAttr)
    scope = opt_prop_def(StringAttr)
    imm = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        _check_one_of(self, self.b, self.imm, "b")
        _check_scope(self)
        self._check_space(1, [self.b] if self.b is not None else [])

    def ptx(self, names: Names) -> str:
        return (f"red{_sem(self)}.{self.space.data}.{self.op.data}.{self.ty.data} "
                f"{self._address(names)}, {_reg_or_imm(names, self.b, self.imm, self.ty.data)};")


@irdl_op_definition
class StOp(_Memory):
    """`st.space{.vN}.ty [addr+offset], v|{v...}`."""

    name = "ptx.st"
    addr = operand_def(RegType)
    values = var_operand_def(RegType)

    def verify_(self) -> None:
        self._check_space(len(self.values), self.values)

    def ptx(self, names: Names) -> str:
        vals = self.values
        src = names[vals[0]] if len(vals) == 1 else _vec(names, vals)
        return f"st.{self.space.data}{_mods(self)}{_vec_suffix(len(vals))}.{self.ty.data} {self._address(names)}, {src};"


@irdl_op_definition
class ShflOp(PtxInst):
    """`shfl.sync.mode.b32 d, a, b, clamp, membermask`; b is `imm` or a register."""

    name = "ptx.shfl"
    a = operand_def(RegType)
    b = opt_operand_def(RegType)
    d = result_def(RegType)
    mode = prop_def(ShuffleModeAttr)
    imm = opt_prop_def(IntegerAttr)
    clamp = prop_def(IntegerAttr)
    membermask = prop_def(IntegerAttr)

    def verify_(self) -> None:
        _check_one_of(self, self.b, self.imm, "b")
        _check(all(reg_bits(v) == 32 for v in [*self.operands, self.d]), self, "operands must be 32-bit")

    def ptx(self, names: Names) -> str:
        b = _reg_or_imm(names, self.b, self.imm, "u32")
        return (f"shfl.sync.{self.mode.data}.b32 {names[self.d]}, {names[self.a]}, {b}, "
                f"{self.clamp.value.data:#x}, {self.membermask.value.data & 0xFFFFFFFF:#x};")


@irdl_op_definition
class StmatrixOp(PtxInst):
    """`stmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 [addr], {r...}`."""

    name = "ptx.stmatrix"
    addr = operand_def(RegType)
    regs = var_operand_def(RegType)
    trans = opt_prop_def(UnitAttr)

    def verify_(self) -> None:
        _check(len(self.regs) in (1, 2, 4), self, "takes an address and 1, 2 or 4 registers")
        _check(all(reg_bits(v) == 32 for v in self.operands), self, "operands must be 32-bit")

    def ptx(self, names: Names) -> str:
        trans = ".trans" if self.trans is not None else ""
        return (f"stmatrix.sync.aligned.m8n8.x{len(self.regs)}{trans}.shared.b16 [{names[self.addr]}], "
                f"{_vec(names, self.regs)};")


@irdl_op_definition
class LdmatrixOp(PtxInst):
    """`ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 {d...}, [addr]`."""

    name = "ptx.ldmatrix"
    addr = operand_def(RegType)
    outs = var_result_def(RegType)
    trans = opt_prop_def(UnitAttr)

    def verify_(self) -> None:
        _check(len(self.outs) in (1, 2, 4), self, "takes an address, gives 1, 2 or 4 registers")
        _check(all(reg_bits(v) == 32 for v in [self.addr, *self.outs]), self, "operands must be 32-bit")

    def ptx(self, names: Names) -> str:
        trans = ".trans" if self.trans is not None else ""
        return (f"ldmatrix.sync.aligned.m8n8.x{len(self.outs)}{trans}.shared.b16 {_vec(names, self.outs)}, "
                f"[{names[self.addr]}];")


# --------------------------------------------------------------------------- synchronisation


class _Barrier(PtxInst):
    """A named barrier: the id is `imm` (0..15) or a b32 register."""

    id = opt_operand_def(RegType)
    imm = opt_prop_def(IntegerAttr)
    count = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        _check_one_of(self, self.id, self.imm, "an id register")
        _check(self.id is None or reg_kind(self.id) == "b32", self, "barrier id register must be b32")
        if self.imm is not None:
            bar_id = self.imm.value.data
            _check(0 <= bar_id <= 15, self, f"barrier id must be in 0..15, got {bar_id}")
        if self.count is not None:
            count = self.count.value.data
            _check(count > 0 and count % 32 == 0, self, f"thread count must be a multiple of 32, got {count}")

    def _bar_text(self, names: Names) -> str:
        count = f", {self.count.value.data}" if self.count is not None else ""
        return _reg_or_imm(names, self.id, self.imm, "u32") + count


@irdl_op_definition
class BarSyncOp(_Barrier):
    """`bar.sync id{, count}`: wait at a named barrier (0 with no count is the whole CTA)."""

    name = "ptx.bar_sync"

    def ptx(self, names: Names) -> str:
        return f"bar.sync {self._bar_text(names)};"


@irdl_op_definition
class BarArriveOp(_Barrier):
    """`bar.arrive id, count`: signal a named barrier without waiting."""

    name = "ptx.bar_arrive"

    def verify_(self) -> None:
        super().verify_()
        _check(self.count is not None, self, "bar.arrive needs a thread count")

    def ptx(self, names: Names) -> str:
        return f"bar.arrive {self._bar_text(names)};"


FENCES = ("proxy.async.shared::cta", "proxy.async.global", "proxy.async", "mbarrier_init.release.cluster",
          "acq_rel.cta", "acq_rel.cluster", "acq_rel.gpu", "sc.cta", "sc.gpu")


@irdl_op_definition
class FenceOp(PtxInst):
    """`fence.<kind>;` for a kind in `FENCES` (a string: PTX spells some with `::`)."""

    name = "ptx.fence"
    kind = prop_def(StringAttr)

    def verify_(self) -> None:
        _check(self.kind.data in FENCES, self, f"unknown fence '{self.kind.data}'")

    def ptx(self, names: Names) -> str:
        return f"fence.{self.kind.data};"


class _MbarOp(PtxInst):
    """An mbarrier instruction on the barrier at b32 shared address `addr`, the first operand,
    which each op declares itself (IRDL orders a subclass's operands before its base's)."""

    def verify_(self) -> None:
        _check(reg_kind(self.operands[0]) == "b32", self, "mbarrier address must be a b32 shared address")


@irdl_op_definition
class MbarInitOp(_MbarOp):
    """`mbarrier.init.shared::cta.b64 [addr], count`."""

    name = "ptx.mbar_init"
    addr = operand_def(RegType)
    count = prop_def(IntegerAttr)

    def verify_(self) -> None:
        super().verify_()
        _check(1 <= self.count.value.data < 1 << 20, self, "arrival count must be in 1..2^20-1")

    def ptx(self, names: Names) -> str:
        return f"mbarrier.init.shared::cta.b64 [{names[self.addr]}], {self.count.value.data};"


@irdl_op_definition
class MbarArriveOp(_MbarOp):
    """`mbarrier.arrive.shared::cta.b64 _, [addr]{, count}`; with `cluster`, the arrive on a barrier
    of another CTA of the cluster (addr from `mapa`). Its release stays at CTA scope, as CUTLASS's: the
    arrivals only say that wgmma finished reading a stage (wait_group already ordered that), and a
    release.cluster arrive costs a cluster-wide MEMBAR per warp per stage, which measured the 2-CTA
    GEMM at 0.67x of cuBLAS."""

    name = "ptx.mbar_arrive"
    addr = operand_def(RegType)
    count = opt_prop_def(IntegerAttr)
    cluster = opt_prop_def(UnitAttr)

    def ptx(self, names: Names) -> str:
        count = f", {self.count.value.data}" if self.count is not None else ""
        space = "shared::cluster" if self.cluster is not None else "shared::cta"
        return f"mbarrier.arrive.{space}.b64 _, [{names[self.addr]}]{count};"


@irdl_op_definition
class MbarArriveExpectTxOp(_MbarOp):
    """`mbarrier.arrive.expect_tx.shared::cta.b64 _, [addr], bytes`."""

    name = "ptx.mbar_arrive_expect_tx"
    addr = operand_def(RegType)
    bytes = prop_def(IntegerAttr)

    def verify_(self) -> None:
        super().verify_()
        _check(self.bytes.value.data > 0, self, "byte count must be positive")

    def ptx(self, names: Names) -> str:
        return f"mbarrier.arrive.expect_tx.shared::cta.b64 _, [{names[self.addr]}], {self.bytes.value.data};"


@irdl_op_definition
class MbarExpectTxOp(_MbarOp):
    """`mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [addr], bytes` (no arrive)."""

    name = "ptx.mbar_expect_tx"
    addr = operand_def(RegType)
    bytes = prop_def(IntegerAttr)

    def ptx(self, names: Names) -> str:
        return f"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{names[self.addr]}], {self.bytes.value.data};"


@irdl_op_definition
class MbarTryWaitOp(_MbarOp):
    """`mbarrier.try_wait.parity.shared::cta.b64 p, [addr], parity` -> pred; parity a register
    or `imm`."""

    name = "ptx.mbar_try_wait"
    addr = operand_def(RegType)
    parity = opt_operand_def(RegType)
    p = result_def(RegType)
    imm = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        super().verify_()
        _check_one_of(self, self.parity, self.imm, "a parity register")
        _check(reg_kind(self.p) == "pred", self, "result must be pred")

    def ptx(self, names: Names) -> str:
        parity = _reg_or_imm(names, self.parity, self.imm, "u32")
        return f"mbarrier.try_wait.parity.shared::cta.b64 {names[self.p]}, [{names[self.addr]}], {parity};"


@irdl_op_definition
class MbarInvalOp(_MbarOp):
    """`mbarrier.inval.shared::cta.b64 [addr]`."""

    name = "ptx.mbar_inval"
    addr = operand_def(RegType)

    def ptx(self, names: Names) -> str:
        return f"mbarrier.inval.shared::cta.b64 [{names[self.addr]}];"


# --------------------------------------------------------------------------- TMA


def _coords(names: Names, coords: Sequence[SSAValue]) -> str:
    return "{" + ", ".join(names[c] for c in coords) + "}"


@irdl_op_definition
class TmaLoadOp(PtxInst):
    """`cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
    [dst], [tmap, {c...}], [mbar]`; with a multicast `mask` (b16), `.multicast::cluster ...,
    ctaMask`: the box lands at `dst` and completes on `mbar` in every CTA of the mask."""

    name = "ptx.tma_load"
    dst = operand_def(RegType)
    tmap = operand_def(RegType)
    mbar = operand_def(RegType)
    coords = var_operand_def(RegType)
    mask = opt_operand_def(RegType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def verify_(self) -> None:
        _check(1 <= len(self.coords) <= 5, self, "takes dst, tmap, mbar, 1..5 coordinates (and a multicast mask)")
        _check(reg_kind(self.dst) == "b32" and reg_kind(self.mbar) == "b32", self,
               "dst and mbar must be b32 shared addresses")
        _check(reg_kind(self.tmap) == "b64", self, "tensor map address must be b64")
        _check(all(reg_kind(c) == "b32" for c in self.coords), self, "coordinates must be b32")
        _check(self.mask is None or reg_kind(self.mask) == "b16", self, "the multicast mask must be b16")

    def ptx(self, names: Names) -> str:
        multicast = ".multicast::cluster" if self.mask is not None else ""
        tail = f", {names[self.mask]}" if self.mask is not None else ""
        return (f"cp.async.bulk.tensor.{len(self.coords)}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                f"{multicast} [{names[self.dst]}], [{names[self.tmap]}, {_coords(names, self.coords)}], "
                f"[{names[self.mbar]}]{tail};")


@irdl_op_definition
class TmaStoreOp(PtxInst):
    """`cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group [tmap, {c...}], [src]`, or with
    `reduce` (add, min, ...) the `cp.reduce.async.bulk.tensor` form."""

    name = "ptx.tma_store"
    tmap = operand_def(RegType)
    src = operand_def(RegType)
    coords = var_operand_def(RegType)
    reduce = opt_prop_def(ReductionAttr)

    def verify_(self) -> None:
        _check(1 <= len(self.coords) <= 5, self, "takes tmap, src and 1..5 coordinates")
        _check(reg_kind(self.tmap) == "b64" and reg_kind(self.src) == "b32", self,
               "tmap must be b64, src a b32 shared address")
        _check(all(reg_kind(c) == "b32" for c in self.coords), self, "coordinates must be b32")

    def ptx(self, names: Names) -> str:
        n = len(self.coords)
        head = (f"cp.reduce.async.bulk.tensor.{n}d.global.shared::cta.{self.reduce.data}" if self.reduce
                else f"cp.async.bulk.tensor.{n}d.global.shared::cta")
        return f"{head}.bulk_group [{names[self.tmap]}, {_coords(names, self.coords)}], [{names[self.src]}];"


@irdl_op_definition
class BulkCommitOp(PtxInst):
    name = "ptx.bulk_commit"

    def ptx(self, names: Names) -> str:
        return "cp.async.bulk.commit_group;"


@irdl_op_definition
class BulkWaitOp(PtxInst):
    """`cp.async.bulk.wait_group{.read} n`."""

    name = "ptx.bulk_wait"
    n = prop_def(IntegerAttr)
    read = opt_prop_def(UnitAttr)

    def verify_(self) -> None:
        _check(0 <= self.n.value.data <= 63, self, "group count must be in 0..63")

    def ptx(self, names: Names) -> str:
        read = ".read" if self.read is not None else ""
        return f"cp.async.bulk.wait_group{read} {self.n.value.data};"


@irdl_op_definition
class PrefetchTensormapOp(PtxInst):
    """`prefetch.tensormap [tmap]` (a generic b64 address)."""

    name = "ptx.prefetch_tensormap"
    tmap = operand_def(RegType)

    def verify_(self) -> None:
        _check(reg_kind(self.tmap) == "b64", self, "tensor map address must be b64")

    def ptx(self, names: Names) -> str:
        return f"prefetch.tensormap [{names[self.tmap]}];"


# --------------------------------------------------------------------------- wgmma


@irdl_op_definition
class WgmmaFenceOp(PtxInst):
    name = "ptx.wgmma_fence"

    def ptx(self, names: Names) -> str:
        return "wgmma.fence.sync.aligned;"


@irdl_op_definition
class WgmmaCommitOp(PtxInst):
    name = "ptx.wgmma_commit"

    def ptx(self, names: Names) -> str:
        return "wgmma.commit_group.sync.aligned;"


@irdl_op_definition
class WgmmaWaitOp(PtxInst):
    """`wgmma.wait_group.sync.aligned n`: wait until at most n groups are in flight."""

    name = "ptx.wgmma_wait"
    n = prop_def(IntegerAttr)

    def verify_(self) -> None:
        _check(0 <= self.n.value.data <= 7, self, "pending group count must be in 0..7")

    def ptx(self, names: Names) -> str:
        return f"wgmma.wait_group.sync.aligned {self.n.value.data};"


WGMMA_K = {"bf16": 16, "f16": 16, "e4m3": 32, "e5m2": 32}


@irdl_op_definition
class WgmmaOp(PtxInst):
    """`wgmma.mma_async.sync.aligned.m64nNkK.f32.T.T {d...}, a, descB, scaleD, sa, sb{, ta}{, tb}`.

    `acc`: N/2 f32 registers, read and written in place; `a`: one b64 descriptor, or four b32
    registers (A in registers); `b`: the B descriptor (b64); `scale_d` (pred) or, without it, the
    `scale_d` immediate (0/1). Transposes exist only for 16-bit types, trans_a only with A in
    shared memory.
    """

    name = "ptx.wgmma"
    acc = var_operand_def(RegType)
    a = var_operand_def(RegType)
    b = operand_def(RegType)
    scale_d_reg = opt_operand_def(RegType)
    n = prop_def(IntegerAttr)
    dtype = prop_def(PtxTypeAttr)
    scale_d = opt_prop_def(IntegerAttr)
    scale_a = prop_def(IntegerAttr, default_value=_int(1))
    scale_b = prop_def(IntegerAttr, default_value=_int(1))
    trans_a = prop_def(IntegerAttr, default_value=_int(0))
    trans_b = prop_def(IntegerAttr, default_value=_int(0))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def verify_(self) -> None:
        n, dtype = self.n.value.data, self.dtype.data
        _check(n % 8 == 0 and 8 <= n <= 256, self, f"N must be a multiple of 8 in 8..256, got {n}")
        _check(dtype in WGMMA_K, self, f"dtype must be one of {tuple(WGMMA_K)}")
        _check(len(self.acc) == n // 2, self, f"m64n{n} takes {n // 2} accumulators, got {len(self.acc)}")
        regs_a = len(self.a) == 4
        _check(len(self.a) in (1, 4) and all(reg_kind(r) == ("b32" if regs_a else "b64") for r in self.a), self,
               "A must be four b32 registers or one b64 descriptor")
        _check(all(reg_kind(d) == "f32" for d in self.acc), self, "accumulators must be f32 registers")
        _check(reg_kind(self.b) == "b64", self, "B descriptor must be b64")
        _check_one_of(self, self.scale_d_reg, self.scale_d, "a scale-d predicate")
        _check(self.scale_d_reg is None or reg_kind(self.scale_d_reg) == "pred", self, "scale-d must be pred")
        _check(self.scale_d is None or self.scale_d.value.data in (0, 1), self, "scale-d imm must be 0 or 1")
        for s in (self.scale_a, self.scale_b):
            _check(s.value.data in (1, -1), self, "imm-scale-a/b must be 1 or -1")
        for t in (self.trans_a, self.trans_b):
            _check(t.value.data in (0, 1), self, "imm-trans-a/b must be 0 or 1")
        if WGMMA_K[dtype] == 32:
            _check(self.trans_a.value.data == 0 and self.trans_b.value.data == 0, self, "fp8 operands must be K-major")
        if regs_a:
            _check(self.trans_a.value.data == 0, self, "A in registers cannot be transposed")

    def ptx(self, names: Names) -> str:
        n, dtype = self.n.value.data, self.dtype.data
        regs_a = len(self.a) == 4
        a_text = _vec(names, self.a) if regs_a else names[self.a[0]]
        tail = [_reg_or_imm(names, self.scale_d_reg, self.scale_d, "u32"), str(self.scale_a.value.data),
                str(self.scale_b.value.data)]
        if WGMMA_K[dtype] == 16:
            if not regs_a:
                tail.append(str(self.trans_a.value.data))
            tail.append(str(self.trans_b.value.data))
        return (f"wgmma.mma_async.sync.aligned.m64n{n}k{WGMMA_K[dtype]}.f32.{dtype}.{dtype} "
                f"{_vec(names, self.acc)}, {a_text}, {names[self.b]}, {', '.join(tail)};")


# --------------------------------------------------------------------------- warp-level control


@irdl_op_definition
class SetmaxnregOp(PtxInst):
    """`setmaxnreg.{inc,dec}.sync.aligned.u32 n`."""

    name = "ptx.setmaxnreg"
    action = prop_def(RegisterActionAttr)
    n = prop_def(IntegerAttr)

    def verify_(self) -> None:
        n = self.n.value.data
        _check(n % 8 == 0 and 24 <= n <= 256, self, f"register count must be a multiple of 8 in 24..256, got {n}")

    def ptx(self, names: Names) -> str:
        return f"setmaxnreg.{self.action.data}.sync.aligned.u32 {self.n.value.data};"


@irdl_op_definition
class MapaOp(PtxInst):
    """`mapa.shared::cluster.u32 d, addr, rank`: the address of the same shared variable in CTA
    `rank` of the cluster."""

    name = "ptx.mapa"
    addr = operand_def(RegType)
    rank = operand_def(RegType)
    d = result_def(RegType)

    def verify_(self) -> None:
        _check(all(reg_kind(v) == "b32" for v in (self.addr, self.rank, self.d)), self, "operands and result are b32")

    def ptx(self, names: Names) -> str:
        return f"mapa.shared::cluster.u32 {names[self.d]}, {names[self.addr]}, {names[self.rank]};"


@irdl_op_definition
class ClusterBarrierOp(PtxInst):
    """`barrier.cluster.arrive.release.aligned` or `barrier.cluster.wait.acquire.aligned` (`step`)."""

    name = "ptx.cluster_barrier"
    step = prop_def(ClusterStepAttr)

    def ptx(self, names: Names) -> str:
        order = "release" if self.step.data == "arrive" else "acquire"
        return f"barrier.cluster.{self.step.data}.{order}.aligned;"


@irdl_op_definition
class GriddepcontrolWaitOp(PtxInst):
    """`griddepcontrol.wait`: wait for the grids this launch depends on to complete, their memory
    operations visible (a no-op in a launch without programmatic dependencies)."""

    name = "ptx.griddepcontrol_wait"

    def ptx(self, names: Names) -> str:
        return "griddepcontrol.wait;"


@irdl_op_definition
class GriddepcontrolLaunchDependentsOp(PtxInst):
    """`griddepcontrol.launch_dependents`: the dependent grid may be scheduled once every block
    of this one has run this or exited."""

    name = "ptx.griddepcontrol_launch_dependents"

    def ptx(self, names: Names) -> str:
        return "griddepcontrol.launch_dependents;"


@irdl_op_definition
class ElectOp(PtxInst):
    """`elect.sync _|p, membermask` -> pred, true in exactly one active lane."""

    name = "ptx.elect"
    p = result_def(RegType)
    membermask = prop_def(IntegerAttr, default_value=_int(0xFFFFFFFF))

    def verify_(self) -> None:
        _check(reg_kind(self.p) == "pred", self, "result must be pred")

    def ptx(self, names: Names) -> str:
        return f"elect.sync _|{names[self.p]}, {self.membermask.value.data & 0xFFFFFFFF:#x};"


@irdl_op_definition
class LabelOp(PtxInst):
    """`name:` a branch target."""

    name = "ptx.label"
    label = prop_def(StringAttr)

    def ptx(self, names: Names) -> str:
        return f"{self.label.data}:"


@irdl_op_definition
class BraOp(PtxInst):
    """`{@{!}p} bra target`."""

    name = "ptx.bra"
    pred = opt_operand_def(RegType)
    target = prop_def(StringAttr)
    negate = opt_prop_def(UnitAttr)

    def verify_(self) -> None:
        _check(self.pred is None or reg_kind(self.pred) == "pred", self, "guard must be pred")
        _check(self.negate is None or self.pred is not None, self, "negate needs a guard predicate")

    def ptx(self, names: Names) -> str:
        if self.pred is None:
            return f"bra.uni {self.target.data};"
        neg = "!" if self.negate is not None else ""
        return f"@{neg}{names[self.pred]} bra {self.target.data};"


@irdl_op_definition
class RetOp(PtxInst):
    name = "ptx.ret"

    def ptx(self, names: Names) -> str:
        return "ret;"


@irdl_op_definition
class TrapOp(PtxInst):
    """`trap;`: the kernel stops and its launch fails (a check the program broke at run time)."""

    name = "ptx.trap"

    def ptx(self, names: Names) -> str:
        return "trap;"


# --------------------------------------------------------------------------- structure


def _print_props_and_region(op: Operation, printer: Printer, region: Region) -> None:
    extra = {**op.properties, **op.attributes}
    extra.pop("sym_name", None)
    if extra:
        printer.print_string(" ")
        printer.print_attr_dict(extra)
    printer.print_string(" ")
    printer.print_region(region, print_entry_block_args=False, print_empty_block=False)


def _parse_props_and_region(cls: type[IRDLOperation], parser: Parser, props: dict[str, Attribute]) -> IRDLOperation:
    extra = parser.parse_optional_attr_dict()
    prop_names = cls.get_irdl_definition().properties
    props |= {k: v for k, v in extra.items() if k in prop_names}
    attrs = {k: v for k, v in extra.items() if k not in prop_names}
    region = parser.parse_region()
    if not region.blocks:
        region.add_block(Block())
    return cls.create(properties=props, attributes=attrs, regions=[region])


@irdl_op_definition
class EntryOp(IRDLOperation):
    """`.visible .entry @name(params)` with its directives; one block of instructions.

    Syntax: `ptx.entry @gemm {params = [#ptx.param<"A", tensormap>], maxntid = array<i64: 384, 1, 1>,
    minnctapersm = 1 : i64} { ... }`.
    """

    name = "ptx.entry"
    sym_name = prop_def(StringAttr)
    params = prop_def(ArrayAttr[ParamAttr], default_value=ArrayAttr(()))
    maxntid = opt_prop_def(DenseArrayBase)
    minnctapersm = opt_prop_def(IntegerAttr)
    maxnreg = opt_prop_def(IntegerAttr)
    reqnctapercluster = opt_prop_def(DenseArrayBase)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, name: str, params: Sequence[ParamAttr] = (), *, maxntid: Sequence[int] | None = None,
                 minnctapersm: int | None = None, maxnreg: int | None = None,
                 reqnctapercluster: Sequence[int] | None = None):
        props: dict[str, Attribute] = {"sym_name": StringAttr(name), "params": ArrayAttr(params)}
        if maxntid is not None:
            props["maxntid"] = DenseArrayBase.from_list(i64, _xyz(maxntid))
        if minnctapersm is not None:
            props["minnctapersm"] = _int(minnctapersm)
        if maxnreg is not None:
            props["maxnreg"] = _int(maxnreg)
        if reqnctapercluster is not None:
            props["reqnctapercluster"] = DenseArrayBase.from_list(i64, _xyz(reqnctapercluster))
        super().__init__(properties=props, regions=[Region(Block())])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        _print_props_and_region(self, printer, self.body)

    @classmethod
    def parse(cls, parser: Parser) -> EntryOp:
        name = parser.parse_symbol_name()
        op = _parse_props_and_region(cls, parser, {"sym_name": name})
        assert isinstance(op, EntryOp)
        return op

    def verify_(self) -> None:
        names = [p.param_name.data for p in self.params]
        _check(len(set(names)) == len(names), self, "duplicate parameter names")
        labels: set[str] = set()
        targets: list[str] = []
        params = set(names)
        defined: set[SSAValue] = set()
        for op in self.body.walk():
            _check(isinstance(op, PtxInst | StructuredOp | YieldOp | RepeatIfOp), self,
                   f"'{op.name}' is not a PTX instruction")
            # registers are named in text order, so a use must follow its definition
            for v in op.operands:
                _check(v in defined, op, "uses a register before the instruction that defines it")
            defined.update(op.results)
            if isinstance(op, LabelOp):
                _check(op.label.data not in labels, op, f"label '{op.label.data}' defined twice")
                labels.add(op.label.data)
            elif isinstance(op, BraOp):
                targets.append(op.target.data)
            elif isinstance(op, ParamAddrOp | LdParamOp):
                _check(op.param.data in params, op, f"no kernel parameter '{op.param.data}'")
        for t in targets:
            _check(t in labels, self, f"branch to undefined label '{t}'")
        if self.maxnreg is not None:
            _check(24 <= self.maxnreg.value.data <= 255, self, "maxnreg must be in 24..255")


def _xyz(dims: Sequence[int]) -> list[int]:
    return [*dims, *[1] * (3 - len(dims))]


@irdl_op_definition
class ModuleOp(IRDLOperation):
    """A PTX module: `.version`, `.target`, `.address_size` and its entries."""

    name = "ptx.module"
    version = prop_def(StringAttr, default_value=StringAttr("8.0"))
    target = prop_def(StringAttr, default_value=StringAttr("sm_90a"))
    address_size = prop_def(IntegerAttr, default_value=_int(64))
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, entries: Sequence[EntryOp] = (), version: str = "8.0", target: str = "sm_90a"):
        super().__init__(properties={"version": StringAttr(version), "target": StringAttr(target),
                                     "address_size": _int(64)},
                         regions=[Region(Block(entries))])

    def print(self, printer: Printer) -> None:
        _print_props_and_region(self, printer, self.body)

    @classmethod
    def parse(cls, parser: Parser) -> ModuleOp:
        op = _parse_props_and_region(cls, parser, {})
        assert isinstance(op, ModuleOp)
        return op

    def verify_(self) -> None:
        major, _, minor = self.version.data.partition(".")
        _check(major.isdigit() and minor.isdigit() and (8, 0) <= (int(major), int(minor)) <= (9, 0), self,
               f"version must be in 8.0..9.0 (the Hopper async features need 8.0, driver 580 takes 9.0), "
               f"got {self.version.data}")
        _check(self.address_size.value.data == 64, self, "address_size must be 64")
        _check(all(isinstance(op, EntryOp) for op in self.body.block.ops), self, "may contain only ptx.entry")
        if "tkc.abi" in self.attributes:
            self._verify_abi(self.attributes["tkc.abi"])

    def _verify_abi(self, attr: Attribute) -> None:
        """The `tkc.abi` the runtime launches by (tkc/abi.py) describes an entry of this module."""
        _check(isinstance(attr, StringAttr), self, "tkc.abi must be a string")
        assert isinstance(attr, StringAttr)
        try:
            abi = KernelABI.from_json(attr.data)
        except ABIError as e:
            raise VerifyException(f"{self.name}: tkc.abi is not a kernel ABI: {e}") from None
        entry = next((op for op in self.body.block.ops if isinstance(op, EntryOp) and op.sym_name.data == abi.entry), None)
        _check(entry is not None, self, f"tkc.abi describes the entry {abi.entry!r}, which the module lacks")
        assert entry is not None
        params = [(p.param_name.data, p.kind.data == "tensormap") for p in entry.params]
        expected = [(p.name, p.kind == "tensormap") for p in abi.params]
        _check(params == expected, self, f"tkc.abi's parameters {[n for n, _ in expected]} are not those of "
                                         f"@{abi.entry}: {[n for n, _ in params]}")


# --------------------------------------------------------------------------- structured control flow


class StructuredOp(IRDLOperation):
    """Control flow that convert-sm90-to-ptx keeps structured and ptx-flatten-control-flow turns
    into labels and branches. Values stay registers: an op names the registers it writes
    (`outs`, `carried`) and its regions' `ptx.yield` says what to copy into them."""


def _print_regs(printer: Printer, keyword: str, values: Sequence[SSAValue]) -> None:
    if values:
        printer.print_string(f" {keyword}(")
        printer.print_list(values, printer.print_operand)
        printer.print_string(")")


def _parse_regs(parser: Parser, keyword: str) -> list[SSAValue]:
    if parser.parse_optional_keyword(keyword) is None:
        return []
    return parser.parse_comma_separated_list(parser.Delimiter.PAREN, lambda: _parse_defined_operand(parser))


def _print_reg_or_imm(printer: Printer, reg: SSAValue | None, imm: IntegerAttr | None) -> None:
    if reg is not None:
        printer.print_operand(reg)
    else:
        assert imm is not None
        printer.print_string(str(imm.value.data))


def _parse_reg_or_imm(parser: Parser) -> SSAValue | int:
    number = parser.parse_optional_integer(allow_negative=True)
    return number if number is not None else _parse_defined_operand(parser)


def _yielded(region: Region) -> Sequence[SSAValue]:
    last = region.block.last_op
    return last.operands if isinstance(last, YieldOp) else ()


def _check_copy(op: Operation, dsts: Sequence[SSAValue], srcs: Sequence[SSAValue], what: str) -> None:
    _check(len(dsts) == len(srcs), op, f"{what} yields {len(srcs)} registers for {len(dsts)}")
    for d, s in zip(dsts, srcs):
        _check(reg_bits(d) == reg_bits(s), op, f"{what} yields a !ptx.reg<{reg_kind(s)}> for a !ptx.reg<{reg_kind(d)}>")


_IF_LABELS = ("ELSE", "ENDIF")


def _parse_one_block(parser: Parser) -> Block:
    """The block of a structured op's region (`{ ... }`), detached from the parsed region; a region
    without one is a parse error at the region (a mutated or hand-written `{}`)."""
    at = parser.pos
    region = parser.parse_region()
    if len(region.blocks) != 1:
        parser.raise_error(f"expected a region of one block, got {len(region.blocks)}", at, parser.pos)
    return region.detach_block(0)


@irdl_op_definition
class IfOp(StructuredOp):
    """`ptx.if %p [negated] [writes(%r...)] [labels("ELSE", "ENDIF")] {then} [else {else}]`: the
    then region runs where p holds (with `negated`, where it does not), the else region, if there
    is one, elsewhere; each ends in a `ptx.yield` of what to copy into the `writes` registers.
    `labels` name the PTX labels the flattening makes (the else label and the end label)."""

    name = "ptx.if"
    cond = operand_def(RegType)
    outs = var_operand_def(RegType)
    negate = opt_prop_def(UnitAttr)
    else_label = prop_def(StringAttr, default_value=StringAttr(_IF_LABELS[0]))
    end_label = prop_def(StringAttr, default_value=StringAttr(_IF_LABELS[1]))
    then_region = region_def("single_block")
    else_region = region_def()

    def __init__(self, cond: SSAValue, outs: Sequence[SSAValue] = (), *, negate: bool = False, has_else: bool = False,
                 labels: tuple[str, str] | None = None):
        props: dict[str, Attribute] = {}
        if negate:
            props["negate"] = UnitAttr()
        if labels is not None:
            props["else_label"], props["end_label"] = StringAttr(labels[0]), StringAttr(labels[1])
        super().__init__(operands=[cond, outs], properties=props,
                         regions=[Region(Block()), Region(Block()) if has_else else Region()])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.cond)
        if self.negate is not None:
            printer.print_string(" negated")
        _print_regs(printer, "writes", self.outs)
        labels = (self.else_label.data, self.end_label.data)
        if labels != _IF_LABELS:
            printer.print_string(f' labels("{labels[0]}", "{labels[1]}")')
        printer.print_string(" ")
        printer.print_region(self.then_region)
        if self.else_region.blocks:
            printer.print_string(" else ")
            printer.print_region(self.else_region)

    @classmethod
    def parse(cls, parser: Parser) -> IfOp:
        cond = _parse_defined_operand(parser)
        negate = parser.parse_optional_keyword("negated") is not None
        outs = _parse_regs(parser, "writes")
        labels = None
        if parser.parse_optional_keyword("labels") is not None:
            names = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_str_literal)
            if len(names) != 2:
                parser.raise_error("labels takes the else label and the end label")
            labels = (names[0], names[1])
        op = cls(cond, outs, negate=negate, labels=labels)
        op.then_region.detach_block(0)  # replaced by the parsed regions
        op.then_region.add_block(_parse_one_block(parser))
        if parser.parse_optional_keyword("else") is not None:
            op.else_region.add_block(_parse_one_block(parser))
        return op

    def verify_(self) -> None:
        _check(reg_kind(self.cond) == "pred", self, "the condition must be pred")
        _check(len(self.else_region.blocks) <= 1, self, "the else region has at most one block")
        for region in (self.then_region, self.else_region):
            if region.blocks:
                _check(isinstance(region.block.last_op, YieldOp), self, "each region ends in ptx.yield")
                _check_copy(self, self.outs, _yielded(region), "a region")


@irdl_op_definition
class ForOp(StructuredOp):
    """`ptx.for %iv < %ub|imm step %s|imm [carried(%r...)] {body}`: while iv < ub (s32), the
    body runs, ending in a `ptx.yield` of the next values of the carried registers; then iv
    (b32, set by the code before the loop) steps by `step` (u32)."""

    name = "ptx.for"
    iv = operand_def(RegType)
    ub = opt_operand_def(RegType)
    step = opt_operand_def(RegType)
    carried = var_operand_def(RegType)
    ub_imm = opt_prop_def(IntegerAttr)
    step_imm = opt_prop_def(IntegerAttr)
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, iv: SSAValue, ub: SSAValue | int, step: SSAValue | int, carried: Sequence[SSAValue] = ()):
        props: dict[str, Attribute] = {}
        if isinstance(ub, int):
            props["ub_imm"] = _int(ub)
        if isinstance(step, int):
            props["step_imm"] = _int(step)
        super().__init__(operands=[iv, [] if isinstance(ub, int) else [ub], [] if isinstance(step, int) else [step],
                                   carried], properties=props, regions=[Region(Block())])

    def bound(self) -> SSAValue | int:
        return self.ub if self.ub is not None else cast(IntegerAttr, self.ub_imm).value.data

    def increment(self) -> SSAValue | int:
        return self.step if self.step is not None else cast(IntegerAttr, self.step_imm).value.data

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.iv)
        printer.print_string(" < ")
        _print_reg_or_imm(printer, self.ub, self.ub_imm)
        printer.print_string(" step ")
        _print_reg_or_imm(printer, self.step, self.step_imm)
        _print_regs(printer, "carried", self.carried)
        printer.print_string(" ")
        printer.print_region(self.body)

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        iv = _parse_defined_operand(parser)
        parser.parse_punctuation("<")
        ub = _parse_reg_or_imm(parser)
        parser.parse_keyword("step")
        step = _parse_reg_or_imm(parser)
        op = cls(iv, ub, step, _parse_regs(parser, "carried"))
        op.body.detach_block(0)
        op.body.add_block(_parse_one_block(parser))
        return op

    def verify_(self) -> None:
        _check(reg_kind(self.iv) == "b32", self, "the induction variable must be b32")
        _check((self.ub is None) != (self.ub_imm is None), self, "needs exactly one of an upper bound register or imm")
        _check((self.step is None) != (self.step_imm is None), self, "needs exactly one of a step register or imm")
        _check(all(reg_kind(v) == "b32" for v in (self.ub, self.step) if v is not None), self, "bounds must be b32")
        _check(isinstance(self.body.block.last_op, YieldOp), self, "the body ends in ptx.yield")
        _check_copy(self, self.carried, _yielded(self.body), "the body")


@irdl_op_definition
class LoopOp(StructuredOp):
    """`ptx.loop "LABEL" {body}`: the body runs again while its closing `ptx.repeat_if` holds
    (a spin loop: an mbarrier or a counter wait). LABEL names the PTX label it starts at."""

    name = "ptx.loop"
    label = prop_def(StringAttr)
    body = region_def("single_block")

    def __init__(self, label: str):
        super().__init__(properties={"label": StringAttr(label)}, regions=[Region(Block())])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.label.data)
        printer.print_string(" ")
        printer.print_region(self.body)

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        op = cls(parser.parse_str_literal())
        op.body.detach_block(0)
        op.body.add_block(_parse_one_block(parser))
        return op

    def verify_(self) -> None:
        _check(isinstance(self.body.block.last_op, RepeatIfOp), self, "the body ends in ptx.repeat_if")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """`ptx.yield %r...`: ends a region of ptx.if or ptx.for with the registers to copy (in
    parallel) into the op's `writes` or `carried` registers."""

    name = "ptx.yield"
    values = var_operand_def(RegType)
    traits = traits_def(IsTerminator())

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[values])

    def print(self, printer: Printer) -> None:
        if self.values:
            printer.print_string(" ")
            printer.print_list(self.values, printer.print_operand)

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        first = parser.parse_optional_unresolved_operand()
        if first is None:
            return cls()
        values = [parser.resolve_operand(first, _defined_type(parser, first))]
        while parser.parse_optional_punctuation(","):
            values.append(_parse_defined_operand(parser))
        return cls(values)

    def verify_(self) -> None:
        _check(isinstance(self.parent_op(), IfOp | ForOp), self, "ends a ptx.if or ptx.for region")


@irdl_op_definition
class RepeatIfOp(IRDLOperation):
    """`ptx.repeat_if %p [negated]`: ends a ptx.loop body; the loop runs again where p holds
    (with `negated`, where it does not)."""

    name = "ptx.repeat_if"
    cond = operand_def(RegType)
    negate = opt_prop_def(UnitAttr)
    traits = traits_def(IsTerminator())

    def __init__(self, cond: SSAValue, negate: bool = False):
        super().__init__(operands=[cond], properties={"negate": UnitAttr()} if negate else {})

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.cond)
        if self.negate is not None:
            printer.print_string(" negated")

    @classmethod
    def parse(cls, parser: Parser) -> RepeatIfOp:
        cond = _parse_defined_operand(parser)
        return cls(cond, parser.parse_optional_keyword("negated") is not None)

    def verify_(self) -> None:
        _check(reg_kind(self.cond) == "pred", self, "the condition must be pred")
        _check(isinstance(self.parent_op(), LoopOp), self, "ends a ptx.loop body")


STRUCTURED_OPS = (IfOp, ForOp, LoopOp)
"""What ptx-flatten-control-flow replaces; the printer prints only flat entries."""


Ptx = Dialect(
    "ptx",
    [ModuleOp, EntryOp, RegOp, MovOp, AssignOp, PackOp, UnpackOp, ParamAddrOp, CvtaOp, LdParamOp, SmemBaseOp,
     SregOp, AddOp, SubOp, MulOp, DivOp, RemOp, AndOp, OrOp, XorOp, MinOp, MaxOp, ShlOp, ShrOp, MadOp, FmaOp,
     NotOp, NegOp, AbsOp, RcpOp, SqrtOp, RsqrtOp, Ex2Op, Lg2Op, TanhOp, SinOp, CosOp, PopcOp, SetpOp, SelpOp, CvtOp, LdOp, StOp, RedOp,
     ShflOp, StmatrixOp, LdmatrixOp, BarSyncOp, BarArriveOp, FenceOp, MbarInitOp, MbarArriveOp,
     MbarArriveExpectTxOp, MbarExpectTxOp, MbarTryWaitOp, MbarInvalOp, TmaLoadOp, TmaStoreOp, BulkCommitOp,
     BulkWaitOp, PrefetchTensormapOp, WgmmaFenceOp, WgmmaCommitOp, WgmmaWaitOp, WgmmaOp, SetmaxnregOp, MapaOp,
     ClusterBarrierOp, GriddepcontrolWaitOp, GriddepcontrolLaunchDependentsOp, ElectOp,
     LabelOp, BraOp, RetOp, TrapOp, IfOp, ForOp, LoopOp, YieldOp, RepeatIfOp],
    [RegType, ParamAttr, *TYPED_ATTRS],
)
