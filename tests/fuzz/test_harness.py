"""The fuzz harness classifies what it sees correctly: the fuzz test's verdicts rest on it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness import Case, case_header, diagnostic_defect, internal_signature, normalise, parse_header, run_case
from tk_generator import generate
from tk_mutator import mutate

pytestmark = pytest.mark.fuzz

REPO = Path(__file__).resolve().parents[2]
SOURCE = "kernel k(X: gl<f32>[M]) {\n    grid (M / 64) as (i)\n    let x = y\n}\n"


def test_ok_with_ptx_assembled() -> None:
    outcome = run_case(Case((REPO / "examples" / "gemm.tk").read_text()))
    assert (outcome.kind, outcome.failure, outcome.ptxas_checked) == ("ok", None, True)


def test_located_diagnostic_is_no_failure() -> None:
    outcome = run_case(Case(SOURCE))
    assert (outcome.kind, outcome.failure) == ("rejected", None)
    assert outcome.message.startswith("case.tk:3:13: error: unknown name 'y'")


def test_unknown_override_may_be_unlocated() -> None:
    outcome = run_case(Case(SOURCE, defines=("NOPE=1",)))
    assert (outcome.kind, outcome.failure) == ("rejected", None)


@pytest.mark.parametrize(
    "stderr, defect",
    [
        ("P:3:13: error: m\n    let x = y\n            ^", None),
        ("P:3:14: error: m\n    let x = y\n             ^", None),  # one past the end of the line
        ("P: error: m", "diagnostic unlocated: m"),
        ("tkc: error: m", "diagnostic unlocated: m"),
        ("P:9:1: error: m", "diagnostic line outside the file: m"),
        ("P:3:40: error: m\n    let x = y\n" + " " * 39 + "^", "diagnostic column outside the line: m"),
        ("P:3: error: m", "diagnostic without a column: m"),
        ("P:3:13: error: m", "diagnostic without its source line and caret: m"),
        ("P:3:13: error: m\n    let x = y\n           ^", "diagnostic without its source line and caret: m"),
        ("", "diagnostic missing (exit 1, nothing on stderr)"),
    ],
)
def test_diagnostic_defects(stderr: str, defect: str | None) -> None:
    assert diagnostic_defect(stderr, "P", SOURCE, Case(SOURCE)) == defect


def test_internal_signature_names_the_raise_site() -> None:
    stderr = (
        "Traceback (most recent call last):\n"
        f'  File "{REPO}/tkc/cli.py", line 161, in main\n'
        f'  File "{REPO}/passes/convert_sm90_to_ptx.py", line 685, in op_sm90_binary\n'
        '  File "/usr/lib/python3.11/somewhere.py", line 1, in helper\n'
        "ZeroDivisionError: float division by zero\n"
        "tkc: internal compiler error: ZeroDivisionError: float division by zero\n"
    )
    assert internal_signature(stderr) == "internal ZeroDivisionError at passes/convert_sm90_to_ptx.py:op_sm90_binary"


def test_normalise_blanks_program_specifics() -> None:
    assert normalise("'+' needs one shape, got rt<f32>[128, 64] and !sm90.frag<64xf32>") == "'_' needs one shape, got T and T"


def test_header_round_trip() -> None:
    case = Case("kernel k() {}\n", "k", ("BM=96", "CAUSAL=true"))
    replayed = parse_header(case_header(case, "sig") + case.source)
    assert (replayed.kernel, replayed.defines) == ("k", ("BM=96", "CAUSAL=true"))


def test_cases_are_reproducible() -> None:
    first, again = generate(random.Random("x:3")), generate(random.Random("x:3"))
    assert first == again
    assert mutate(first, random.Random(5)) == mutate(again, random.Random(5))
