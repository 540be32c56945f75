"""Source text → lark parse tree, with every failure turned into a located `TkError`.

The grammar (`tk.lark`) is LALR(1) with lark's contextual lexer, so the type and fill words
(`st`, `bf16`, `zero` ...) are keywords only where the grammar can use them. Every state of the
lexer also scans NAME (`_WholeWords`): a word is read whole and only then recognised as a
keyword, so `kernelk` is the name `kernelk`, never `kernel k`, even where no name may stand. The
words of `KEYWORDS` are recognised in every state, so they are reserved: never names.

Syntax errors say what was expected and what was found; invalid UTF-8 and absurdly deep nesting
are reported the same way (the builder recurses over the tree, so depth is bounded here, before
any recursion happens).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from lark import Lark, Token, Tree
from lark.lark import PostLex
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from tkc.diagnostics import TkError
from tkc.dtypes import BY_NAME

KEYWORDS = tuple("kernel fn return let var for in if else store store_add load grid require as and or not true false".split())
"""Reserved words: keywords wherever they appear (docs/language.md, "Lexical structure")."""

MAX_DEPTH = 100
"""Deepest nesting of blocks and expressions the frontend accepts (real kernels stay below 20)."""

# How an expected terminal is named in "expected ..." messages.
_TERMINAL_NAMES = {"NAME": "a name", "NUMBER": "a number", "$END": "end of input"}
# Sets of terminals summarised by one phrase when enough of them are expected at once.
_EXPRESSION = {
    *"NAME NUMBER LPAR ADD_OP NOT TRUE FALSE LOAD ZERO ONE NEG_INFTY POS_INFTY".split(),
    *(dtype.upper() for dtype in BY_NAME),  # a dtype starts a conversion
}
_OPERATORS = {"ADD_OP", "MUL_OP", "AND", "OR", "QUESTION"}
_COMPARISONS = {"==", "!=", "<=", ">=", "<", ">"}
_STATEMENTS = {"AT", "FOR", "GRID", "IF", "LET", "NAME", "REQUIRE", "STORE", "STORE_ADD", "VAR"}


class _WholeWords(PostLex):
    """Makes every lexer state scan NAME and the reserved words (the tokens pass unchanged).

    A state that scans only some keywords would match `kernel` at the front of `kernelk`. With
    NAME in every state the longest word wins, and lark turns a NAME whose text is a keyword the
    state scans into that keyword: the reserved ones everywhere, the contextual ones where the
    grammar accepts them.
    """

    always_accept = ("NAME", *(keyword.upper() for keyword in KEYWORDS))

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        return stream


@cache
def _parser() -> Lark:
    from tkc.cache import grammar_cache_file

    grammar = (Path(__file__).parent / "tk.lark").read_text(encoding="utf-8")
    # Analysing the grammar takes longer than parsing a kernel: lark keeps the tables in tkc's cache.
    cached = grammar_cache_file(grammar)
    return Lark(
        grammar,
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=True,
        postlex=_WholeWords(),
        cache=cached or False,
    )


@cache
def _word() -> re.Pattern[str]:
    """The NAME terminal: what a keyword looks like, too."""
    return re.compile(_parser().get_terminal("NAME").pattern.to_regexp())


def _terminal_text(name: str) -> str | None:
    """The literal text of a terminal that matches one fixed string, else None."""
    try:
        pattern = _parser().get_terminal(name).pattern
    except KeyError:
        return None
    if pattern.type == "str":
        return pattern.value
    text = re.sub(r"\\(.)", r"\1", pattern.value)
    return text if re.escape(text) == pattern.value else None


def _describe_expected(expected: set[str]) -> str:
    phrases: list[str] = []
    if {"NAME", "NUMBER", "LPAR"} <= expected:
        phrases.append("an expression")
        expected -= _EXPRESSION
    operators = {t for t in expected if t in _OPERATORS or _terminal_text(t) in _COMPARISONS - {"<", ">"}}
    if operators - _OPERATORS:  # `<` and `>` are comparisons here, not the brackets of a type
        operators |= {t for t in expected if _terminal_text(t) in ("<", ">")}
    if operators & {"ADD_OP", "MUL_OP"} or len(operators) >= 3:
        phrases.append("an operator")
        expected -= operators
    if len(expected & _STATEMENTS) >= 5:
        phrases.append("a statement")
        expected -= _STATEMENTS
    if phrases:
        expected.discard("SEMICOLON")  # optional everywhere: naming it only adds noise
    for name in sorted(expected):
        text = _terminal_text(name)
        phrases.append(_TERMINAL_NAMES.get(name) or (f"'{text}'" if text is not None else name.lower()))
    if len(phrases) > 7:
        phrases = phrases[:7] + ["..."]
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " or " + phrases[-1]


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "end of input"
    if token.type == "NAME":
        return f"name '{token}'"
    if token.type == "NUMBER":
        return f"number {token}"
    if _word().fullmatch(token):
        return f"keyword '{token}'"
    return f"'{token}'"


def _split_keyword(token: Token, expected: set[str]) -> str:
    """"; did you mean 'kernel k'?" for a name that starts with a keyword expected here."""
    if token.type != "NAME":
        return ""
    keywords = [text for text in map(_terminal_text, expected) if text and _word().fullmatch(text)]
    for text in sorted(keywords, key=len, reverse=True):  # the longest keyword that fits
        if token.startswith(text) and len(token) > len(text):
            return f"; did you mean '{text} {token[len(text):]}'?"
    return ""


def _accepted_before(source: str, token: Token) -> tuple[set[str], list[Token]]:
    """The terminals that may stand where `token` does, and the tokens before it.

    The parser that failed has already made the reductions `token` triggered: LALR merges the
    lookaheads of a state's contexts, so in `(a b` it reduces `a` up to `( expr . )`, where only
    `)` is left. Replaying the parse up to `token` and asking there is exact (accepts() feeds
    each terminal to a copy of the parser).
    """
    parser = _parser().parse_interactive(source)
    before: list[Token] = []
    try:
        for next_token in parser.iter_parse():  # yields each token before feeding it
            if token.type != "$END" and next_token.start_pos == token.start_pos:
                break
            before.append(next_token)
    except UnexpectedInput:
        pass  # the lexer found nothing this state scans: the state is already the one before
    return parser.accepts(), before


def _missing_type_hint(accepted: set[str], before: list[Token]) -> str:
    """A load that stops before its type: say what the type looks like."""
    if accepted != {"COLON"}:
        return ""
    statement_tokens = [t.type for t in before[-64:]]
    if "LOAD" not in statement_tokens or "RSQB" != statement_tokens[-1]:
        return ""
    return " (a load names what it loads: `: i32` or `: f32` for a scalar, `: rt<f32>[R, C]` or `: st<bf16>[R, C]` for a tile)"


def _chained_comparison_hint(token: Token, before: list[Token]) -> str:
    """`0 < i < 3`: comparisons do not chain (docs/language.md), so a second one right after a
    comparison's operands gets the spelling that works."""
    if _terminal_text(token.type) not in _COMPARISONS:
        return ""
    for previous in reversed(before):
        text = _terminal_text(previous.type)
        if text in _COMPARISONS:
            return f"; comparisons do not chain: write `a {text} b and b {token} c`"
        if text in ("(", "[", ",", "{", ";", "=", "and", "or", "not", "?", ":"):
            return ""
    return ""


def _syntax_error(err: UnexpectedInput, source: str, filename: str) -> TkError:
    line, col = err.line, err.column
    if isinstance(err, UnexpectedCharacters):
        at = err.pos_in_stream
        char = source[at] if at is not None and 0 <= at < len(source) else "?"
        message = f"unexpected character {char!r}"
    elif isinstance(err, UnexpectedToken):
        accepted, before = _accepted_before(source, err.token)
        expected = _describe_expected(set(accepted))
        found = f"{_describe_token(err.token)}{_split_keyword(err.token, accepted)}"
        if err.token.type == "$END":
            line, col = _end_position(source)
        elif (before and (end_line := before[-1].end_line) is not None and (end_col := before[-1].end_column) is not None
              and err.token.line is not None and end_line < err.token.line):
            # what is missing belongs at the end of the line before, not under the next statement
            found += f" on line {err.token.line}"
            line, col = end_line, end_col
        message = f"expected {expected}, found {found}{_missing_type_hint(accepted, before)}"
        message += _chained_comparison_hint(err.token, before)
        if err.token.type == "QUESTION" and "MORETHAN" in accepted:
            # a parameter's default stops at `>` (its list's end), so `c ? a : b` needs parentheses there
            message += "; write a conditional default in parentheses: `BM = (c ? 128 : 64)`"
    elif isinstance(err, UnexpectedEOF):
        line, col = _end_position(source)
        message = f"unexpected end of input, expected {_describe_expected(set(err.expected))}"
    else:
        message = "syntax error"
    if line is None or line < 1:
        line, col = _end_position(source)
    return TkError(message, filename, line, col, source)


def _end_position(source: str) -> tuple[int, int]:
    """Just after the last non-blank character, so that the caret lands on a real line."""
    lines = source.rstrip().split("\n")
    return len(lines), len(lines[-1]) + 1


# Trees that add a level of nesting as a user counts it: blocks and expression nodes (the
# statement wrappers around a block do not).
_NESTING = {
    "block",
    "select",
    "logic",
    "logic_not",
    "compare",
    "binop",
    "sign",
    "call",
    "convert",
    "load",
    "fill",
}


def _check_depth(tree: Tree, source: str, filename: str) -> None:
    """Reject programs nested deeper than MAX_DEPTH, iteratively (no recursion to overflow)."""
    stack: list[tuple[Tree, int, int]] = [(tree, 0, 0)]
    while stack:
        node, depth, operators = stack.pop()
        depth += node.data in _NESTING
        operators = operators + 1 if node.data == "binop" else 0
        if depth > MAX_DEPTH:
            line = getattr(node.meta, "line", None)
            col = getattr(node.meta, "column", None)
            message = f"program nests too deeply (more than {MAX_DEPTH} levels of blocks and expressions)"
            if operators > MAX_DEPTH // 2:
                # `a + b + c + ...` is a tree as deep as it has operators
                message += f": an expression of {operators} or more operators in a row; split it with `let`s"
            raise TkError(message, filename, line, col, source)
        stack.extend((child, depth, operators) for child in node.children if isinstance(child, Tree))


def parse_tree(source: str, filename: str = "<input>") -> Tree:
    """The parse tree of `source`; a syntax error becomes a TkError at the offending token."""
    try:
        tree = _parser().parse(source)
    except UnexpectedInput as err:
        raise _syntax_error(err, source, filename) from None
    except RecursionError:
        raise TkError("program nests too deeply", filename, 1, 1, source) from None
    _check_depth(tree, source, filename)
    return tree
