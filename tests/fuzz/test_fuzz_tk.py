"""The compiler is fuzz-clean: on generated and mutated `.tk` programs it produces PTX that
ptxas accepts, or a located diagnostic; never an internal error, never a hang.

The cases are seeded (TKC_FUZZ_SEED, default 0) and bounded (TKC_FUZZ_SCALE multiplies the
counts, default 1: about two thousand cases in two to three minutes on two cores, half of it
spent in the known compile-time blowups, each of which runs into the 10 s limit). They run on a
process pool, once per session; each test then checks one chunk. A failure names the case's
seed triple; `python tests/fuzz/run_campaign.py --show generated:0:17` replays it. The corpus
test replays the minimized reproducer of every failure signature found so far (corpus/tk, and
corpus/ir for mutated tile IR).

KNOWN_OPEN lists the failure signatures that are reported and being fixed elsewhere: cases that
hit only those are xfailed. Every other failure fails the test. Empty the table as the fixes land.
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from harness import Outcome, parse_header, run_case
from run_campaign import build_case

pytestmark = pytest.mark.fuzz

KNOWN_OPEN: dict[str, str] = {
    # signature: what it is. The lead empties this table as the fixes are merged.
}

SEED = int(os.environ.get("TKC_FUZZ_SEED", "0"))
SCALE = float(os.environ.get("TKC_FUZZ_SCALE", "1"))
COUNTS = {"generated": round(320 * SCALE), "mutated": round(1600 * SCALE)}
CHUNKS = {"generated": 8, "mutated": 6}
PTXAS_EVERY = 2
"""Assemble the PTX of every other case: ptxas costs a third of a compilation."""
CORPUS = sorted((Path(__file__).parent / "corpus").glob("*/*.*"))
"""corpus/tk/*.tk (this fuzzer's) and corpus/ir/*.mlir (mutated tile IR)."""


def _run(task: tuple[str, int]) -> tuple[str, int, Outcome]:
    kind, index = task
    case = build_case(SEED, kind, index)
    outcome = run_case(case, ptxas=index % PTXAS_EVERY == 0)
    outcome.ptx = None  # not worth sending back
    return kind, index, outcome


@pytest.fixture(scope="session")
def fuzz_results() -> dict[tuple[str, int], Outcome]:
    tasks = [(kind, i) for kind, count in COUNTS.items() for i in range(count)]
    jobs = max(1, min(os.cpu_count() or 1, 8))
    with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=300) as pool:
        return {(kind, i): outcome for kind, i, outcome in pool.imap_unordered(_run, tasks, chunksize=4)}


def check(failures: list[tuple[str, Outcome]]) -> None:
    """Fail on any failure outside KNOWN_OPEN; xfail if the only ones are known."""
    unknown = [(name, o) for name, o in failures if o.failure not in KNOWN_OPEN]
    if unknown:
        lines = [f"{name}: {o.kind}: {o.failure}\n    {o.message.strip()[:600]}" for name, o in unknown[:10]]
        pytest.fail(f"{len(unknown)} case(s) failed:\n" + "\n".join(lines), pytrace=False)
    if failures:
        signatures = sorted({o.failure for _, o in failures})
        pytest.xfail(f"{len(failures)} case(s) hit known open bugs: {'; '.join(signatures)}")


def _chunk_params() -> list[tuple[str, int]]:
    return [(kind, chunk) for kind, n in CHUNKS.items() for chunk in range(n)]


@pytest.mark.parametrize("kind,chunk", _chunk_params(), ids=[f"{k}-{c}" for k, c in _chunk_params()])
def test_fuzz_chunk(fuzz_results: dict[tuple[str, int], Outcome], kind: str, chunk: int) -> None:
    indices = range(chunk, COUNTS[kind], CHUNKS[kind])
    failures = [(f"{kind}:{SEED}:{i}", fuzz_results[(kind, i)]) for i in indices if fuzz_results[(kind, i)].failure]
    check(failures)


def test_fuzz_reaches_ptx(fuzz_results: dict[tuple[str, int], Outcome]) -> None:
    """The generator is worth its time only while most of its programs compile all the way."""
    generated = [o for (kind, _), o in fuzz_results.items() if kind == "generated"]
    ok = sum(o.kind == "ok" for o in generated)
    assert ok >= 0.5 * len(generated), f"only {ok} of {len(generated)} generated programs compiled to PTX"
    assert any(o.ptxas_checked for o in generated)


@pytest.mark.parametrize("path", CORPUS, ids=[f"{p.parent.name}/{p.stem}" for p in CORPUS])
def test_corpus(path: Path) -> None:
    """Each minimized reproducer now compiles or is rejected with a located diagnostic."""
    outcome = run_case(parse_header(path.read_text(encoding="utf-8"), path.name, path.suffix))
    check([(path.name, outcome)] if outcome.failure else [])
