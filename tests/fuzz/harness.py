"""Run one fuzz case through `tkc compile` in-process and classify what happened.

A case is a `.tk` source plus the command line options a user would give (`-k`, `-D`). The
harness writes the source to a temporary file, calls `tkc.cli.main` with that argv (so exit
statuses, diagnostics and the internal-error report are exactly the CLI's), under a wall-clock
limit, and sorts the result into one outcome:

- ``ok``: exit 0 with PTX;
- ``rejected``: exit 1 with a diagnostic;
- ``internal``: exit 2, any other status, or an exception escaping `main` (SystemExit included);
- ``timeout``: the wall-clock limit passed.

A *failure* is anything the compiler must never do, named by a signature that stays the same
when the same bug is hit by a different program: an internal error (exception type and the
innermost tkc frame it was raised from), a timeout (the tkc file that was running), a
diagnostic that is not `file:line:col: error: ...` inside the file followed by the source line
and a caret (only -D/-k mistakes may be unlocated), and PTX that ptxas rejects (its error code,
e.g. C7602). ``ok`` and ``rejected`` outcomes without a failure are what a fuzz-clean compiler
produces.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import tkc  # light: the package itself loads neither xDSL nor CUDA

REPO = Path(tkc.__file__).resolve().parents[1]
"""The checkout of the compiler under test (the editable install's), whose frames signatures name."""
PROJECT_DIRS = ("tkc", "passes", "dialects", "backends")
"""The repository's source directories: the frames a signature names (not xDSL's, not lark's)."""

COMPILE_LIMIT_S = 10.0
PTXAS_LIMIT_S = 30.0


@dataclass(frozen=True)
class Case:
    """One compiler invocation: `tkc compile FILE [-k kernel] [-D define ...]` of `source`."""

    source: str
    kernel: str | None = None
    defines: tuple[str, ...] = ()
    """`-D` arguments as typed on the command line, e.g. ``("BM=96", "CAUSAL=true")``."""
    origin: str = ""
    """Where the case came from (generator seed, mutated example), for reports only."""
    suffix: str = ".tk"
    """The file's suffix: `.tk`, or `.mlir` for tile-dialect IR."""

    def options(self) -> list[str]:
        argv = [] if self.kernel is None else ["-k", self.kernel]
        for define in self.defines:
            argv += ["-D", define]
        return argv


@dataclass
class Outcome:
    kind: str
    """ok, rejected, internal or timeout."""
    failure: str | None = None
    """The failure signature, None when the compiler behaved."""
    message: str = ""
    """The diagnostic, the internal error's report, or ptxas's log: what a person reads first."""
    ptx: str | None = None
    ptxas_checked: bool = False
    seconds: float = 0.0
    details: dict[str, str] = field(default_factory=dict)


class CaseTimeout(BaseException):
    """Raised by the alarm; a BaseException so that the CLI's `except Exception` lets it through."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise CaseTimeout in the main thread after `seconds` (SIGALRM; Unix, main thread only)."""

    def expire(signum, frame):
        raise CaseTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def project_path(filename: str) -> str | None:
    """`filename` relative to the repository if it is one of tkc's own sources, else None."""
    try:
        rel = Path(filename).resolve().relative_to(REPO)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts and rel.parts[0] in PROJECT_DIRS else None


def innermost_project_frame(frames: list[tuple[str, int, str]]) -> tuple[str, int, str] | None:
    """The last (filename, line, function) of `frames` that is tkc's own code, as a repository path."""
    for filename, line, function in reversed(frames):
        if (rel := project_path(filename)) is not None:
            return rel, line, function
    return None


_FRAME = re.compile(r'^  File "([^"]+)", line (\d+), in (\S+)', re.M)


def _last_traceback(text: str) -> list[tuple[str, int, str]]:
    """The frames of the last `Traceback (most recent call last):` block of `text`."""
    start = text.rfind("Traceback (most recent call last):")
    if start < 0:
        return []
    return [(f, int(n), fn) for f, n, fn in _FRAME.findall(text[start:])]


def normalise(message: str, words: int = 10) -> str:
    """A message with its program-specific parts (names in quotes, numbers, types) blanked out."""
    message = message.strip().splitlines()[0] if message.strip() else ""
    message = re.sub(r"'[^']*'|\"[^\"]*\"", "'_'", message)
    message = re.sub(r"\b\w+<[^<>]*>\[[^\]]*\]", "T", message)  # tile types such as rt<f32>[64, 64]
    message = re.sub(r"![\w.]+<[^<>]*>", "T", message)  # IR types such as !sm90.smem<64x128xbf16, swizzle 0>
    message = re.sub(r"%\w+", "%_", message)
    message = re.sub(r"\[[^\[\]]*\]", "[_]", message)  # lists: shapes, values, candidates
    message = re.sub(r"\b\d+(\.\d+)?(e[+-]?\d+)?\b", "0", message)
    return " ".join(message.split()[:words])


def internal_signature(stderr: str) -> str:
    """`internal TYPE at FILE:FUNCTION` from the CLI's report and the traceback TKC_TRACEBACK=1 prints."""
    match = re.search(r"internal compiler error: ([\w.]+)", stderr)
    exc_type = match.group(1).rstrip(":") if match else "unknown"
    frame = innermost_project_frame(_last_traceback(stderr))
    site = f"{frame[0]}:{frame[2]}" if frame else "?"
    signature = f"internal {exc_type} at {site}"
    if frame is not None and frame[0] == "tkc/driver.py":
        # raised by the driver about a pass (invalid IR after it): the pass and what broke name it
        running = re.search(r"after pass ([\w-]+)", stderr) or re.search(r"while running pass ([\w-]+)", stderr)
        detail = re.search(r"internal compiler error: [\w.]+: (.*)", stderr)
        what = normalise(re.sub(r".*after pass [\w-]+: ", "", detail.group(1)), 6) if detail else ""
        signature += f" ({running.group(1)}: {what})" if running else f" ({what})"
    return signature


DIAGNOSTIC = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+))?: error: (?P<message>.*)$")


def diagnostic_defect(stderr: str, path: str, source: str, case: Case) -> str | None:
    """What is wrong with the diagnostic of an exit-1 run, or None if it is well formed.

    Well formed: the first line is `PATH:LINE:COL: error: MESSAGE` with LINE:COL inside the file
    (COL may be one past the end of the line: the end of input), then the source line, then a
    caret under COL. -D and -k mistakes (and command-line usage errors about them) may say
    `tkc: error: ...` or `PATH: error: ...` without a place instead, and so may IR (`.mlir`)
    that does not verify. A diagnostic on IR may point at the `.tk` line an op came from.
    """
    lines = stderr.rstrip("\n").splitlines()
    if not lines:
        return "diagnostic missing (exit 1, nothing on stderr)"
    if lines[0].startswith("usage:"):
        usage = next((ln for ln in lines if ": error: " in ln), "")
        if case.defines or case.kernel is not None:
            return None
        return f"usage error without -D/-k: {normalise(usage.partition(': error: ')[2])}"
    head = lines[0]
    match = DIAGNOSTIC.match(head)
    if match is not None and match.group("file") != path and case.suffix == ".mlir":
        # an op of a dump keeps the `.tk` location it came from: the diagnostic points there
        origin = Path(match.group("file"))
        if origin.suffix == ".tk" and origin.is_file():
            path, source = match.group("file"), origin.read_text(encoding="utf-8")
    if match is None or match.group("file") != path:
        message = head.partition("error: ")[2] or head
        unlocated_ok = head.startswith(("tkc: error: ", f"{path}: error: "))
        if unlocated_ok and (re.search(r"\b(parameter|override|kernels?)\b", message) or message.startswith("-D ")) and (
            case.defines or case.kernel is not None or re.search(r"\bkernels\b|-k\b", message)
        ):
            return None  # a -D or -k mistake (a missing -k in a file of several kernels included)
        if unlocated_ok and case.suffix == ".mlir":
            return None  # IR that does not verify: xDSL's verifier names the op, not a position
        return f"diagnostic unlocated: {normalise(re.sub(r'[(][^()]*[)]', '(_)', message))}"
    message = match.group("message")
    if match.group("col") is None:
        return f"diagnostic without a column: {normalise(message)}"
    line, col = int(match.group("line")), int(match.group("col"))
    source_lines = source.splitlines()
    if not 1 <= line <= len(source_lines):
        return f"diagnostic line outside the file: {normalise(message)}"
    text = source_lines[line - 1].replace("\t", " ")
    if not 1 <= col <= len(text) + 1:
        return f"diagnostic column outside the line: {normalise(message)}"
    if len(lines) < 3 or lines[1] != text or lines[2] != " " * (col - 1) + "^":
        return f"diagnostic without its source line and caret: {normalise(message)}"
    return None


def ptxas_signature(log: str) -> str:
    """`ptxas CODE` for ptxas's first error, else its message with the specifics blanked."""
    errors = [ln for ln in log.splitlines() if re.search(r"\b(error|fatal)\b", ln, re.I)]
    first = errors[0] if errors else (log.strip().splitlines() or ["?"])[0]
    if code := re.search(r"\b(C\d{4})\b", first) or re.search(r"\b(C\d{4})\b", log):
        return f"ptxas {code.group(1)}"
    message = re.sub(r"^.*?(error|fatal)\s*:\s*", "", first, flags=re.I)
    return f"ptxas error: {normalise(message, 8)}"


def run_compiler(case: Case, path: str, out: str, limit_s: float) -> tuple[str, int | None, str]:
    """Run `tkc compile`; (kind, exit status, stderr) with kind in {exited, escaped, timeout}."""
    from tkc.cli import main

    argv = ["compile", path, *case.options(), "-o", out]
    stderr = io.StringIO()
    saved = os.environ.get("TKC_TRACEBACK")
    os.environ["TKC_TRACEBACK"] = "1"
    try:
        with time_limit(limit_s), contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            status = main(argv)
        return "exited", status, stderr.getvalue()
    except CaseTimeout as e:
        frame = innermost_project_frame([(f.filename, f.lineno, f.name) for f in traceback.extract_tb(e.__traceback__)])
        return "timeout", None, frame[0] if frame else "?"
    except BaseException as e:  # noqa: BLE001 - SystemExit and anything else escaping main is a bug
        if isinstance(e, KeyboardInterrupt):
            raise
        frames = [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(e.__traceback__)]
        frame = innermost_project_frame(frames)
        site = f"{frame[0]}:{frame[2]}" if frame else "?"
        return "escaped", None, f"{type(e).__name__} escaped tkc.cli.main at {site}: {e}"
    finally:
        if saved is None:
            os.environ.pop("TKC_TRACEBACK", None)
        else:
            os.environ["TKC_TRACEBACK"] = saved


def check_ptx(ptx: str, limit_s: float = PTXAS_LIMIT_S) -> tuple[str | None, str]:
    """(failure signature or None, ptxas log) of assembling `ptx` for sm_90a."""
    from tkc.backends.ptxas import PtxasError, assemble

    try:
        with time_limit(limit_s):
            cubin = assemble(ptx)
    except PtxasError as e:
        return ptxas_signature(e.log), e.log
    except CaseTimeout:
        return "ptxas timeout", ""
    return None, cubin.report.log


def run_case(case: Case, limit_s: float = COMPILE_LIMIT_S, ptxas: bool = True) -> Outcome:
    """Compile `case` with the CLI and classify the result (see the module docstring)."""
    import time

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tkfuzz-") as tmp:
        path, out = os.path.join(tmp, "case" + case.suffix), os.path.join(tmp, "case.ptx")
        Path(path).write_text(case.source, encoding="utf-8", errors="surrogateescape")
        kind, status, text = run_compiler(case, path, out, limit_s)
        elapsed = time.monotonic() - start
        if kind == "timeout":
            return Outcome("timeout", f"timeout in {text}", f"no result after {limit_s:g} s", seconds=elapsed)
        if kind == "escaped":
            return Outcome("internal", text.split(": ", 1)[0], text, seconds=elapsed)
        if status == 1:
            defect = diagnostic_defect(text, path, case.source, case)
            return Outcome("rejected", defect, text.replace(path, "case" + case.suffix), seconds=elapsed)
        if status != 0:
            report = _report(text, path, case.suffix).replace(tmp + os.sep, "")
            return Outcome("internal", internal_signature(text), report, seconds=elapsed)
        ptx = Path(out).read_text() if os.path.exists(out) else ""
    if ".entry" not in ptx:
        return Outcome("internal", "exit 0 without a PTX entry", ptx[:2000], ptx, seconds=elapsed)
    outcome = Outcome("ok", ptx=ptx, seconds=elapsed)
    if ptxas:
        outcome.failure, log = check_ptx(ptx)
        outcome.ptxas_checked = True
        if outcome.failure:
            outcome.message = log
        outcome.seconds = time.monotonic() - start
    return outcome


def _report(stderr: str, path: str, suffix: str) -> str:
    """The CLI's internal-error report without the traceback, with the temporary path blanked."""
    start = stderr.find("tkc: internal compiler error")
    return (stderr[start:] if start >= 0 else stderr).replace(path, "case" + suffix)


def case_header(case: Case, signature: str | None = None) -> str:
    """Comment lines that record how to replay `case` (read back by `parse_header`)."""
    lines = []
    if signature:
        lines.append(f"// signature: {signature}")
    lines.append(f"// tkc compile FILE {' '.join(case.options())}".rstrip())
    return "\n".join(lines) + "\n"


def parse_header(text: str, origin: str = "", suffix: str = ".tk") -> Case:
    """The Case a corpus file describes: its `// tkc compile FILE ...` line gives -k and -D."""
    kernel, defines = None, []
    if match := re.search(r"^// tkc compile FILE(.*)$", text, re.M):
        words = match.group(1).split()
        for flag, value in zip(words[::2], words[1::2]):
            if flag == "-k":
                kernel = value
            elif flag == "-D":
                defines.append(value)
    return Case(text, kernel, tuple(defines), origin, suffix)
