"""What keeps a `tkc compile` process fast (issue 16; docs/internals.md, "Where compile time goes"),
checked where it is deterministic: the modules a compile loads, and lark's grammar tables coming
from the cache once they are there (and a cache that cannot be written costing only the time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GEMM = str(REPO / "examples/gemm.tk")

NOT_FOR_COMPILING = ("numpy", "ml_dtypes", "torch", "cuda", "tkc.interpreter", "tkc.runtime", "tkc.backends.ptxas")
"""What `tkc compile --emit=ptx` has no use for: each costs tens of milliseconds to import (numpy
also starts its BLAS threads), and the interpreter, the runtime and ptxas have other callers."""


def _compile_in_subprocess(cache_dir: Path, snippet: str = "") -> dict[str, object]:
    """A forced `tkc compile examples/gemm.tk --emit=ptx` in a fresh interpreter (after running
    `snippet` there): its exit status, the modules it loaded and the grammar files in the cache."""
    code = (
        "import json, sys\n"
        f"{snippet}\n"
        "from tkc import cli\n"
        "status = cli.main(['compile', sys.argv[1], '--emit=ptx', '-o', sys.argv[2]])\n"
        "print(json.dumps({'status': status, 'modules': sorted(sys.modules)}))\n"
    )
    env = {**os.environ, "TKC_CACHE_DIR": str(cache_dir), "TKC_ALWAYS_COMPILE": "1"}
    out = subprocess.run([sys.executable, "-c", code, GEMM, os.devnull], capture_output=True, text=True, env=env,
                         check=True).stdout
    result: dict[str, object] = json.loads(out)
    return result


def test_compiling_loads_no_numpy_torch_interpreter_or_runtime(tmp_path: Path) -> None:
    result = _compile_in_subprocess(tmp_path)
    assert result["status"] == 0
    modules = result["modules"]
    assert isinstance(modules, list)
    loaded = [m for m in modules if any(m == name or m.startswith(name + ".") for name in NOT_FOR_COMPILING)]
    assert loaded == []


def test_the_grammar_tables_come_from_the_cache(tmp_path: Path) -> None:
    """The first compile analyses the grammar and stores the tables; the next loads them, so it
    compiles with lark's LALR analysis made to fail."""
    assert _compile_in_subprocess(tmp_path)["status"] == 0
    assert len(list(tmp_path.glob("grammar-*.lark"))) == 1
    no_analysis = (
        "import lark.parsers.lalr_analysis as analysis\n"
        "def refuse(*args, **kwargs): raise AssertionError('the grammar was analysed again')\n"
        "analysis.LALR_Analyzer.compute_lalr = refuse"
    )
    assert _compile_in_subprocess(tmp_path, no_analysis)["status"] == 0


def test_a_cache_that_cannot_be_made_only_costs_time(tmp_path: Path) -> None:
    """TKC_CACHE_DIR under a regular file: no grammar cache, no compile cache, the same PTX."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert _compile_in_subprocess(blocker / "cache")["status"] == 0


def test_only_a_process_that_ends_leaves_the_collector_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The console scripts (process_ends=True) skip the collection that turning the collector back
    on would start; a caller that goes on, such as this test process, gets it back on."""
    import gc

    from tkc import cli, opt

    out = str(tmp_path / "gemm.ptx")
    monkeypatch.setenv("TKC_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("TKC_CACHE_DIR", str(tmp_path))
    try:
        assert cli.main(["compile", GEMM, "--emit=ptx", "-o", out]) == 0
        assert gc.isenabled()
        assert opt.main([GEMM, "-p", "canonicalize", "-o", out]) == 0
        assert gc.isenabled()
        assert cli.main(["compile", GEMM, "--emit=ptx", "-o", out], process_ends=True) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
