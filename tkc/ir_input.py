"""Reading IR that a user hands to tkc (`tkc compile x.mlir`, `tkc-opt`), at any stage.

The input is parsed and verified before any pass runs, and a mistake in it is the user's: a
TkError at the line and column of the op in the input file. Three things xDSL leaves to us:
  - its parser gives an op without `loc(...)` an unknown location; here every op gets its place
    in the input, so a verifier, and a pass's `error_at(op, ...)` later, points at that line;
  - an attribute or type whose verifier rejects its parameters raises VerifyException out of
    the parser (a float too large for its type, OverflowError); here it becomes a parse error at
    the op being parsed;
  - its verifier does not check dominance (a value may be used above its definition, or outside
    the region that defines it: the parser accepts forward references); every pass assumes
    it, so it is checked here, in every block, for every stage.
It also lexes string literals in linear time (see _Lexer).
"""

from __future__ import annotations

import bisect
import re

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer

from tkc.diagnostics import TkError, location_of


class _Lexer(MLIRLexer):
    # xDSL's string-literal pattern nests `+` in `*`, which backtracks exponentially when a
    # string is not closed on its line (a damaged dump hung for minutes); this one is linear.
    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


class LocatedParser(Parser):
    """xDSL's parser; every op it parses without a `loc(...)` gets its line and column in the input."""

    def __init__(self, ctx: Context, text: str, filename: str, line_offset: int = 0):
        super().__init__(ctx, "", filename)
        self._parser_state = ParserState(_Lexer(Input(text, filename)))
        self._filename = StringAttr(filename)
        self._line_offset = line_offset
        self._text = text
        self._line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self._first_uses: dict[str, Span] = {}
        """Where each name was first used before a definition: where an undefined name is reported."""

    def line_and_column(self, position: int) -> tuple[int, int]:
        """Of a position in the text; the end of a text that ends in a newline is on its last line."""
        if position == len(self._text) and self._text.endswith("\n"):
            position -= 1
        line = bisect.bisect_right(self._line_starts, position)
        return line + self._line_offset, position - self._line_starts[line - 1] + 1

    def location(self, position: int) -> FileLineColLoc:
        line, column = self.line_and_column(position)
        return FileLineColLoc(self._filename, IntAttr(line), IntAttr(column))

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as e:
            if not self.forward_ssa_references or not e.msg.startswith("values used but not defined"):
                raise
            name = next(iter(self.forward_ssa_references))  # xDSL says so at the end of the file
            message = f"%{name} is used, but not defined above the use in its block or an enclosing one"
            raise ParseError(self._first_uses[name], message) from None

    def resolve_operand(self, operand: UnresolvedOperand, type: Attribute) -> SSAValue:
        if operand.operand_name not in self.ssa_values:
            self._first_uses.setdefault(operand.operand_name, operand.span)
        return super().resolve_operand(operand, type)

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        try:
            op = super().parse_operation()
        except VerifyException as e:  # an attribute of this op rejected its parameters
            raise ParseError(Span(start.start, self.pos, start.input), _message(e)) from None
        except OverflowError as e:  # xDSL packs a float attribute in its type's format
            raise ParseError(Span(start.start, self.pos, start.input), f"a number does not fit its type: {e}") from None
        if isinstance(op.location, UnknownLoc):
            op.location = self.location(start.start)
        return op


def parse_mlir(
    text: str, filename: str, ctx: Context, line_offset: int = 0, implicit_module: bool = True
) -> ModuleOp:
    """The verified module of MLIR `text` (which starts at line `line_offset` + 1 of `filename`)."""
    source = text if line_offset == 0 else None  # otherwise the diagnostic reads the file
    parser = LocatedParser(ctx, text, filename, line_offset)
    try:
        module = parser.parse_module(implicit_module)
    except ParseError as e:
        line, column = parser.line_and_column(e.span.start)
        message = e.msg if text[e.span.start :].strip() else f"the input ends inside an op ({e.msg.strip()})"
        raise TkError(message, filename, line, column, source) from None
    if isinstance(module.location, UnknownLoc):  # the implicit module around top-level ops
        module.location = parser.location(0)
    verify_input(module, filename, source)
    return module


def verify_input(module: ModuleOp, filename: str, source: str | None = None) -> None:
    """Verify `module` and check that every value is defined before its uses (dominance).

    A failure is a TkError at the first op (innermost first) that does not verify.
    """
    check_dominance(module, filename, source)  # first: xDSL's verifiers may trip over what it finds
    try:
        module.verify()
    except VerifyException as e:
        for op in module.walk(region_first=True):
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as op_error:
                message = _message(op_error).removeprefix(f"{op.name}: ")
                raise _error(op, f"invalid {op.name}: {message}", filename, source) from None
        raise _error(module, f"invalid IR: {_message(e)}", filename, source) from None  # a block's own check


def check_dominance(module: ModuleOp, filename: str, source: str | None = None) -> None:
    """A TkError at the first op that uses a value not defined above it in its block or an
    enclosing one (tkc's regions are single blocks, so this is SSA dominance; a use in another
    block of a multi-block region would be reported too)."""
    position = {op: i for block in module.walk_blocks() for i, op in enumerate(block.ops)}
    for op in module.walk():
        for index, operand in enumerate(op.operands):
            if (problem := _dominance_problem(operand, op, position)) is not None:
                name = f"%{operand.name_hint}" if operand.name_hint else f"operand {index}"
                raise _error(op, f"{op.name} uses {name} {problem}", filename, source)


def _dominance_problem(value: SSAValue, user: Operation, position: dict[Operation, int]) -> str | None:
    """Why `user` may not use `value`, or None."""
    if isinstance(value, ForwardDeclaredValue):  # defined only in a region the use is outside of
        return "outside the region that defines it"
    if isinstance(value, BlockArgument):
        block, definition = value.block, value.block.parent_op()
    else:
        assert isinstance(value.owner, Operation)
        block, definition = value.owner.parent_block(), value.owner
    ancestor = block.find_ancestor_op_in_block(user) if isinstance(block, Block) else None
    if ancestor is None:
        return f"outside the region that defines it ({_line_of(definition)})"
    if isinstance(value, BlockArgument) or position[definition] < position[ancestor]:
        return None
    return f"before its definition ({_line_of(definition)})" if ancestor is not definition else "inside its own op"


def _line_of(op: Operation | None) -> str:
    line = location_of(op)[1] if op is not None else None
    return f"line {line}" if line is not None else "elsewhere"


def _error(op: Operation, message: str, filename: str, source: str | None) -> TkError:
    """A TkError at `op`; `source` is the text of `filename`, which op's location may not name."""
    op_file, line, col = location_of(op)
    return TkError(message, op_file or filename, line, col, source if op_file == filename else None)


def _message(error: Exception) -> str:
    """A verifier's message on one line (xDSL's constraint errors take two)."""
    return " ".join(str(error).split()).removeprefix("Operation does not verify: ")
