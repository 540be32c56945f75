"""Reading IR that a user hands to tkc (`tkc compile x.mlir`, `tkc-opt`), at any stage.

The input is parsed and verified before any pass runs, and a mistake in it is the user's: a
TkError at the line and column of the op in the input file. What xDSL leaves to us:
  - its parser gives an op without `loc(...)` an unknown location; here each op's place in the
    input is recorded (tkc.diagnostics.INPUT_PLACES, which leaves the IR and so the dumps as
    they are), so a pass's `error_at(op, ...)` later points at that line. The `loc("k.tk":l:c)`
    a dump gives an op wins (a resumed compile's diagnostics point at the `.tk` source) where
    that line can be shown; one that names a file that cannot be read, or a line or column
    outside it, gives way to the op's place in the input. A verifier's complaint is about the
    input's text, so it points at the op's place in the input either way;
  - an attribute or type whose verifier rejects its parameters raises VerifyException out of
    the parser (a float too large for its type, OverflowError); here it becomes a parse error at
    the op being parsed;
  - its verifier does not check dominance (a value may be used above its definition, or outside
    the region that defines it: the parser accepts forward references); every pass assumes
    it, so it is checked here, in every block, for every stage;
  - it fills a region without a terminator with an empty `scf.yield` and does not compare what
    a region yields with the results of its `scf.if` or `scf.for`; checked here;
  - its string-literal pattern takes exponential time on a string not closed on its line (_Lexer).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, AttributeInvT, Block, BlockArgument, Operation, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer

from tkc.diagnostics import INPUT_PLACES, TkError


class _Lexer(MLIRLexer):
    # xDSL's pattern nests `+` in `*`, which backtracks exponentially when a string is not
    # closed on its line (a damaged dump hung for minutes); this one matches in linear time.
    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


class LocatedParser(Parser):
    """xDSL's parser; `places` holds every op's line and column in the input, which INPUT_PLACES
    also holds for the ops whose location a diagnostic cannot show."""

    def __init__(self, ctx: Context, text: str, filename: str, line_offset: int = 0):
        super().__init__(ctx, "", filename)
        self._parser_state = ParserState(_Lexer(Input(text, filename)))
        self._filename = StringAttr(filename)
        self._line_offset = line_offset
        self._text = text
        self._line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self._first_uses: dict[str, Span] = {}
        """Where each name was first used before a definition: where an undefined name is reported."""
        self._sources: dict[str, list[str] | None] = {}
        """The lines of each file a `loc(...)` names (None: it cannot be read)."""
        self.places: dict[Operation, FileLineColLoc] = {}

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
            module = super().parse_module(allow_implicit_module)
        except ParseError as e:
            if not self.forward_ssa_references or not e.msg.startswith("values used but not defined"):
                raise
            name = next(iter(self.forward_ssa_references))  # xDSL says so at the end of the file
            message = f"%{name} is used, but not defined above the use in its block or an enclosing one"
            raise ParseError(self._first_uses[name], message) from None
        if module not in self.places:  # the implicit module around top-level ops
            self.places[module] = INPUT_PLACES[module] = self.location(0)
        return module

    def resolve_operand(self, operand: UnresolvedOperand, type: AttributeInvT) -> SSAValue[AttributeInvT]:
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
        self.places[op] = self.location(start.start)
        if not self._shows(op.location):
            INPUT_PLACES[op] = self.places[op]
        return op

    def _shows(self, location: Attribute) -> bool:
        """Whether `location` is a line and column of a file that can be read."""
        if not isinstance(location, FileLineColLoc):
            return False
        name = location.filename.data
        if name not in self._sources:
            try:
                self._sources[name] = Path(name).read_bytes().decode("utf-8", errors="replace").split("\n")
            except OSError:
                self._sources[name] = None
        lines, line, column = self._sources[name], location.line.data, location.column.data
        return lines is not None and 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) + 1


def parse_mlir(
    text: str, filename: str, ctx: Context, line_offset: int = 0, implicit_module: bool = True
) -> ModuleOp:
    """The verified module of MLIR `text` (which starts at line `line_offset` + 1 of `filename`)."""
    source = text if line_offset == 0 else None  # otherwise the diagnostic reads the file
    try:
        parser = LocatedParser(ctx, text, filename, line_offset)  # lexes the first token: may fail too
    except ParseError as e:
        start = e.span.start
        line, column = text.count("\n", 0, start) + 1 + line_offset, start - text.rfind("\n", 0, start)
        raise TkError(e.msg, filename, line, column, source) from None
    try:
        module = parser.parse_module(implicit_module)
    except ParseError as e:
        line, column = parser.line_and_column(e.span.start)
        message = e.msg if text[e.span.start :].strip() else f"the input ends inside an op ({e.msg.strip()})"
        raise TkError(message, filename, line, column, source) from None
    _Verifier(parser.places, source).verify(module)
    return module


@dataclass
class _Verifier:
    """Verifies a parsed module: a TkError at the first op (innermost first) that does not, at
    its place in the input, whose text is `source` (None: the diagnostic reads the file)."""

    places: dict[Operation, FileLineColLoc]
    source: str | None

    def verify(self, module: ModuleOp) -> None:
        self.check_dominance(module)  # first: xDSL's verifiers may trip over what it finds
        self.check_yields(module)
        try:
            module.verify()
        except VerifyException as e:
            for op in module.walk(region_first=True):
                try:
                    op.verify(verify_nested_ops=False)
                except VerifyException as op_error:
                    message = _message(op_error).removeprefix(f"{op.name}: ")
                    raise self.error(op, f"invalid {op.name}: {message}") from None
            raise self.error(module, f"invalid IR: {_message(e)}") from None  # a block's own check

    def check_dominance(self, module: ModuleOp) -> None:
        """Every value is defined above its uses (`undominated_uses`)."""
        for op, index, operand, problem in undominated_uses(module):
            text, where = problem.text, problem.where
            if where is not None and text != "inside its own op":
                text += f" (line {self.places[where].line.data})" if where in self.places else " (elsewhere)"
            name = f"%{operand.name_hint}" if operand.name_hint else f"operand {index}"
            raise self.error(op, f"{op.name} uses {name} {text}")

    def check_yields(self, module: ModuleOp) -> None:
        """Each region of an scf.if or scf.for yields values of its results' types."""
        for op in module.walk():
            if not isinstance(op, scf.IfOp | scf.ForOp):
                continue
            wanted = [result.type for result in op.results]
            for region in op.regions:
                for block in region.blocks:
                    terminator = block.last_op
                    given = [value.type for value in terminator.operands] if isinstance(terminator, scf.YieldOp) else None
                    if given != wanted:
                        shown = ", ".join(map(str, wanted)) or "nothing"
                        raise self.error(op, f"each region of this {op.name} must end in an scf.yield of {shown}")

    def error(self, op: Operation, message: str) -> TkError:
        place = self.places[op]
        return TkError(message, place.filename.data, place.line.data, place.column.data, self.source)


@dataclass(frozen=True)
class DominanceProblem:
    text: str
    """Why the use may not see the value: outside the region that defines it, before its
    definition, inside its own op."""
    where: Operation | None
    """The op that defines the value (a block argument's: the op owning its block)."""


def undominated_uses(root: Operation) -> Iterator[tuple[Operation, int, SSAValue, DominanceProblem]]:
    """Every (user, operand index, value, why) where a value is used where it is not defined:
    tkc's regions are single blocks, so a value must be defined above its use in the use's block
    or an enclosing one (SSA dominance; a use in another block of a multi-block region is
    reported too); xDSL's verifier does not check this. One scan with the values in scope."""
    visible: set[SSAValue] = set()

    def scan(block: Block) -> Iterator[tuple[Operation, int, SSAValue, DominanceProblem]]:
        defined: list[SSAValue] = list(block.args)
        visible.update(defined)
        for op in block.ops:
            for index, value in enumerate(op.operands):
                if value not in visible:
                    yield op, index, value, _dominance_problem(value, op)
            for region in op.regions:
                for inner in region.blocks:
                    yield from scan(inner)
            visible.update(op.results)
            defined.extend(op.results)
        visible.difference_update(defined)

    for region in root.regions:
        for block in region.blocks:
            yield from scan(block)


def _dominance_problem(value: SSAValue, user: Operation) -> DominanceProblem:
    """Why `user`, which does not see `value`, may not use it."""
    if isinstance(value, ForwardDeclaredValue):  # defined only in a region the use is outside of
        return DominanceProblem("outside the region that defines it", None)
    block: Block | None
    definition: Operation | None
    if isinstance(value, BlockArgument):
        block, definition = value.block, value.block.parent_op()
    else:
        assert isinstance(value.owner, Operation)
        block, definition = value.owner.parent_block(), value.owner
    ancestor = block.find_ancestor_op_in_block(user) if isinstance(block, Block) else None
    if ancestor is None:
        return DominanceProblem("outside the region that defines it", definition)
    if ancestor is definition:
        return DominanceProblem("inside its own op", definition)
    return DominanceProblem("before its definition", definition)


def _message(error: Exception) -> str:
    """A verifier's message on one line (xDSL's constraint errors take two)."""
    return " ".join(str(error).split()).removeprefix("Operation does not verify: ")
