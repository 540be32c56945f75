"""Fuzzing the frontend: for any input string, parse_tk returns a verified module or raises
TkError, never another exception, and that diagnostic is located: a line and column inside the
file, rendered as `fuzz.tk:line:col: error: ...`, the source line and a caret under the column.
Inputs are token-level mutations of the examples (deleted, duplicated, swapped, replaced and
glued tokens), random insertions of grammar fragments, and arbitrary text."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tkc.diagnostics import TkError, lone_cr_as_lf
from tkc.frontend import parse_tk

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.tk"))
SOURCES = [p.read_text() for p in EXAMPLES]
TOKEN = re.compile(r"//[^\n]*|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|\.\.|[+\-*/<>=!]=|\s+|.")
FRAGMENTS = [
    "let",
    "var",
    "for",
    "if",
    "else",
    "store",
    "load",
    "grid",
    "as",
    "kernel",
    "in",
    "..",
    "and",
    "or",
    "not",
    "true",
    "false",
    "?",
    ":",
    "=",
    "+=",
    "==",
    "<",
    ">",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    "-",
    "*",
    "/",
    "%",
    "0",
    "1",
    "16",
    "64",
    "3.5",
    "1e400",
    "99999999999999999999",
    "-1",
    "@stages(2)",
    "@swizzle(64)",
    "@consumers(2)",
    "@persistent",
    "@registers(40, 232)",
    "@bogus",
    "st<bf16>[64, 64]",
    "rt<f32>[16]",
    "rv<f32>[64]",
    "sv<bf16>[64]",
    "zero<f32>[64, 64]",
    "neg_infty<f32>[64]",
    "bf16(",
    "f32(",
    "fp8e4m3(",
    "mma_AB(",
    "mma_ABt(",
    "mma_AtB(",
    "row_max(",
    "col_sum(",
    "sub_row(",
    "mul_col(",
    "causal_mask(",
    "exp2(",
    "sqrt(",
    "max(",
    "log2e",
    "ln2",
    "inf",
    "BM",
    "acc",
    "i",
    "k",
    "K",
    "M",
    "A",
    "x",
    "\n",
    " ",
]
CHECK = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def assert_located(err: TkError, source: str) -> None:
    """`err` points into `source` and renders with the line and a caret under the column."""
    lines = lone_cr_as_lf(source).split("\n")  # lines as the lexer counts them (a lone CR ends one)
    assert err.filename == "fuzz.tk" and err.line is not None and err.col is not None, err.render()
    assert 1 <= err.line <= len(lines) and 1 <= err.col <= len(lines[err.line - 1]) + 1, err.render()
    rendered = err.render().split("\n")
    assert rendered[0] == f"fuzz.tk:{err.line}:{err.col}: error: {err.message}"
    assert len(rendered) == 3 and len(rendered[1]) == len(lines[err.line - 1].removesuffix("\r")), err.render()
    assert rendered[2] == " " * (err.col - 1) + "^"


def assert_total(source: str) -> None:
    try:
        module = parse_tk(source, "fuzz.tk")
    except TkError as err:
        assert_located(err, source)
        return
    module.verify()


@st.composite
def mutated(draw: st.DrawFn) -> str:
    tokens = TOKEN.findall(draw(st.sampled_from(SOURCES)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(tokens) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "swap", "replace", "insert", "glue"]))
        if action == "glue":  # `kernel k` -> `kernelk`: a keyword glued to the next word
            while at < len(tokens) and tokens[at].isspace():
                del tokens[at]
        elif action == "delete":
            del tokens[at]
        elif action == "duplicate":
            tokens.insert(at, tokens[at])
        elif action == "swap" and at + 1 < len(tokens):
            tokens[at], tokens[at + 1] = tokens[at + 1], tokens[at]
        elif action == "replace":
            tokens[at] = draw(st.sampled_from(FRAGMENTS))
        else:
            tokens.insert(at, " " + draw(st.sampled_from(FRAGMENTS)) + " ")
    return "".join(tokens)


@CHECK
@given(mutated())
def test_mutated_examples(source: str) -> None:
    assert_total(source)


@CHECK
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map(" ".join))
def test_fragment_soup(source: str) -> None:
    assert_total(source)


@CHECK
@given(st.text(max_size=200))
def test_arbitrary_text(source: str) -> None:
    assert_total(source)


@CHECK
@given(st.sampled_from(SOURCES), st.text(min_size=1, max_size=8), st.integers(0, 10_000))
def test_random_insertions(source: str, insert: str, at: int) -> None:
    at %= len(source) + 1
    assert_total(source[:at] + insert + source[at:])


@CHECK
@given(
    st.sampled_from(SOURCES),
    st.dictionaries(
        st.sampled_from(["BM", "BN", "BK", "BQ", "BKV", "D", "CAUSAL", "EPS", "BC", "NOPE"]),
        st.one_of(st.integers(-(2**70), 2**70), st.integers(0, 512), st.booleans(), st.floats(), st.text(max_size=3)),
        max_size=4,
    ),
)
def test_random_parameter_overrides(source: str, params: dict[str, object]) -> None:
    try:
        module = parse_tk(source, "fuzz.tk", params)  # type: ignore[arg-type]
    except TkError as err:
        if not err.message.startswith("unknown parameter"):  # about -D, not a place in the file
            assert_located(err, source)
        return
    module.verify()
