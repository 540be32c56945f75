"""Fuzzing the IR input: mutated IR dumps of every stage never crash the compiler.

The dumps are the IR of a few examples before the first pass and after every pass (tile,
sm90 and ptx dialect), made in-process. Each case mutates one dump (tests/fuzz/ir_mutator.py)
and compiles it in-process as a user would: `tkc compile x.mlir --emit=ptx`, or `tkc-opt x.mlir`
with the passes that remain after the dump's stage and `-t ptx`. A case passes when the compiler
either succeeds or rejects the input with a located diagnostic (`x.mlir:line:col: error: ...`,
or a pass's at the `.tk` location the dump gave the op: a line of the file, its text and a
caret), never with an internal error (exit 2), and within 10 s of CPU time. The minimized reproducers of what this found are replayed from corpus/ir/ (the files with an
`// expect:` line).

Seeded and bounded; TKC_FUZZ_IR_CASES and TKC_FUZZ_IR_SEED run a larger campaign:
    TKC_FUZZ_IR_CASES=5000 TKC_FUZZ_IR_SEED=1 pytest tests/fuzz/test_fuzz_ir.py
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import random
import re
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest
from ir_mutator import mutate

from tkc import cli, opt
from tkc.driver import PIPELINE, DumpOptions, compile_module, ir_text, load_module, make_context

pytestmark = pytest.mark.fuzz

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ("gemm", "attention", "linear_attention", "layernorm")
REPRODUCERS = sorted(p for p in (Path(__file__).resolve().parent / "corpus" / "ir").glob("*.mlir") if "// expect: " in p.read_text())
"""The minimized reproducers of what this test found (corpus/ir also holds other fuzzers' cases)."""
CASES = int(os.environ.get("TKC_FUZZ_IR_CASES", "300"))
SEED = int(os.environ.get("TKC_FUZZ_IR_SEED", "0"))
CASE_SECONDS = 10.0
LOCATED = re.compile(r"(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): error: ")


@dataclass(frozen=True)
class Dump:
    example: str
    stage: str
    """"input" or the pass the IR is the output of."""
    text: str

    @property
    def remaining_passes(self) -> tuple[str, ...]:
        return PIPELINE if self.stage == "input" else PIPELINE[PIPELINE.index(self.stage) + 1 :]


@functools.cache
def dumps() -> tuple[Dump, ...]:
    """The IR of every example in EXAMPLES before the first pass and after every pass."""
    result: list[Dump] = []
    for example in EXAMPLES:
        module = load_module(REPO / "examples" / f"{example}.tk")
        result.append(Dump(example, "input", ir_text(module)))
        stream = io.StringIO()
        compile_module(module, "ptx", DumpOptions(stream, after_all=True), make_context())
        chunks = re.split(r"^// -----// IR Dump After (\S+) //----- //\n", stream.getvalue(), flags=re.M)
        result += [Dump(example, stage, text) for stage, text in zip(chunks[1::2], chunks[2::2])]
    return tuple(result)


@dataclass(frozen=True)
class Outcome:
    status: int
    stderr: str
    seconds: float
    """CPU time."""


class CaseTimeout(BaseException):
    """Raised by the alarm in a case that runs past CASE_SECONDS (a BaseException, so no
    `except Exception` in the compiler swallows it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """At most `seconds` of this process's CPU time (a busy machine does not make a case slow)."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise CaseTimeout

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def command(dump: Dump, path: Path, rng: random.Random) -> tuple[str, list[str]]:
    """("tkc" or "tkc-opt", argv) compiling `path`, a mutation of `dump`, to PTX."""
    out = str(path.with_suffix(".out"))
    if rng.random() < 0.6:  # resumes from the dump's stage
        return "tkc", ["compile", str(path), "--emit=ptx", "-o", out]
    passes = ["-p", ",".join(dump.remaining_passes)] if dump.remaining_passes else []
    return "tkc-opt", [str(path), *passes, "-t", "ptx", "-o", out]


def run(tool: str, argv: list[str]) -> Outcome:
    """The exit status and stderr of `tool argv`, run in this process."""
    main = cli.main if tool == "tkc" else opt.main
    stderr = io.StringIO()
    start = time.process_time()
    try:
        with time_limit(CASE_SECONDS), contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            try:
                status = main(argv)
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else 1
    except CaseTimeout:
        status = -1
    return Outcome(status, stderr.getvalue(), time.process_time() - start)


def problem(path: Path, text: str, outcome: Outcome) -> str | None:
    """What is wrong with `outcome` for the input `text` at `path`, or None."""
    if outcome.status == -1 or outcome.seconds > CASE_SECONDS:
        return f"took over {CASE_SECONDS:.0f} s"
    if outcome.status == 0:
        return None
    first_line = outcome.stderr.split("\n", 1)[0]
    if outcome.status != 1:
        return f"exit {outcome.status}: {first_line}"
    match = LOCATED.match(outcome.stderr)
    if match is None:
        return f"unlocated: {first_line}"
    if match["file"] != str(path):  # a pass's complaint at the `.tk` location a dump gave the op
        try:
            text = Path(match["file"]).read_text()
        except OSError:
            return f"located in a file that cannot be read: {first_line}"
    lines = text.split("\n")
    line, col = int(match["line"]), int(match["col"])
    if not 1 <= line <= len(lines):
        return f"line {line} is not in the file ({len(lines)} lines): {first_line}"
    source = "".join(c if c.isprintable() else " " for c in lines[line - 1].removesuffix("\r"))  # as rendered
    if not 1 <= col <= len(source) + 1 or f"\n{source}\n{' ' * (col - 1)}^" not in outcome.stderr:
        return f"no source line with a caret at column {col}: {first_line}"
    return None


def signature(message: str) -> str:
    """A problem without its numbers, names and paths, to group cases by cause."""
    return re.sub(r"\d+|%\w+|@\w+|'[^']*'|\"[^\"]*\"|/\S+", "_", message)[:160]


def test_every_dump_compiles_unmutated(tmp_path: Path) -> None:
    rng = random.Random(0)
    for dump in dumps():
        path = tmp_path / f"{dump.example}-{dump.stage}.mlir"
        path.write_text(dump.text)
        tool, argv = command(dump, path, rng)
        outcome = run(tool, argv)
        assert outcome.status == 0, f"{tool} {' '.join(argv)}:\n{outcome.stderr}"


def test_mutated_dumps_are_compiled_or_rejected_with_a_located_diagnostic(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    all_dumps = dumps()
    failures: dict[str, list[str]] = {}
    for case in range(CASES):
        dump = rng.choice(all_dumps)
        text = mutate(dump.text, rng)
        path = tmp_path / f"case{case}.mlir"
        path.write_text(text)
        tool, argv = command(dump, path, rng)
        if (found := problem(path, text, run(tool, argv))) is not None:
            kept = tmp_path / "failed" / f"seed{SEED}-case{case}-{dump.example}-{dump.stage}.mlir"
            kept.parent.mkdir(exist_ok=True)
            kept.write_text(text)
            failures.setdefault(signature(found), []).append(f"{found}\n    {tool} {' '.join(argv)} (kept as {kept})")
    report = "\n".join(f"{len(cases)} x {cases[0]}" for cases in failures.values())
    assert not failures, f"{sum(map(len, failures.values()))} of {CASES} cases failed:\n{report}"


@pytest.mark.parametrize("path", REPRODUCERS, ids=lambda p: p.stem)
def test_corpus_reproducer_is_rejected_with_a_located_diagnostic(path: Path) -> None:
    """A reproducer says how it is compiled (`// tkc compile FILE ARGS`, to PTX) and what the
    diagnostic says (`// expect: TEXT`)."""
    text = path.read_text()
    command_line = re.search(r"^// tkc compile FILE(.*)$", text, re.M)
    expect = re.search(r"^// expect: (.*)$", text, re.M)
    assert command_line is not None and expect is not None
    outcome = run("tkc", ["compile", str(path), "--emit=ptx", *command_line[1].split()])
    assert outcome.status == 1 and problem(path, text, outcome) is None, outcome.stderr
    assert expect[1] in outcome.stderr.split("\n", 1)[0], outcome.stderr
