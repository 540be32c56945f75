"""A fuzzing campaign: many generated and mutated cases over several processes, failures
grouped by signature, one minimized reproducer per signature.

    python tests/fuzz/run_campaign.py --generated 20000 --mutated 20000 [--ir 5000] \\
        --seed S --jobs N --out DIR [--add-to-corpus]

Case `i` of each kind is built from `random.Random(f"{seed}:{kind}:{i}")`, so a (seed, kind,
index) triple reproduces it. `--show KIND:SEED:INDEX` prints one case and its outcome instead. DIR receives `summary.json` (every failing case's seed triple and
signature), `failures/<signature>/` (the first few failing cases as they were) and
`reproducers/<signature>.tk` (minimized, with a header saying how to replay it). With
`--add-to-corpus` the reproducers of signatures the corpus lacks are copied to
tests/fuzz/corpus/tk/. `--ir` mutates the tile IR of the examples with tests/fuzz/ir_mutator.py,
when that file exists.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import multiprocessing
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import COMPILE_LIMIT_S, Case, case_header, run_case  # noqa: E402
from tk_generator import generate  # noqa: E402
from tk_mutator import mutated_case, seed_sources  # noqa: E402

CORPUS = HERE / "corpus" / "tk"
KEEP_PER_SIGNATURE = 5


def slug(signature: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", signature.lower()).strip("-")[:70]
    return f"{words}-{hashlib.sha1(signature.encode()).hexdigest()[:6]}"


_IR_SEEDS: list[str] | None = None


def ir_seeds() -> list[str]:
    """The tile IR of every shipped .tk file: as the frontend builds it and after the tile passes."""
    global _IR_SEEDS
    if _IR_SEEDS is None:
        from tkc.driver import compile_module, ir_text, make_context
        from tkc.frontend import parse_tk

        _IR_SEEDS = []
        for name, text in seed_sources():
            module = parse_tk(text, name)
            _IR_SEEDS.append(ir_text(module))
            _IR_SEEDS.append(ir_text(compile_module(module, "tile", ctx=make_context())))
    return _IR_SEEDS


_IR_MUTATOR: list = []


def ir_mutator():
    """tests/fuzz/ir_mutator.py (`mutate(text, rng) -> str`), or None where it does not exist yet."""
    if not _IR_MUTATOR:
        path = HERE / "ir_mutator.py"
        module = None
        if path.exists():
            spec = importlib.util.spec_from_file_location("ir_mutator", path)
            assert spec and spec.loader
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        _IR_MUTATOR.append(module)
    return _IR_MUTATOR[0]


def build_case(seed: int, kind: str, index: int) -> Case:
    rng = random.Random(f"{seed}:{kind}:{index}")
    origin = f"{kind}:{seed}:{index}"
    if kind == "generated":
        case = generate(rng, origin)
    elif kind == "mutated":
        case = mutated_case(rng, _SEEDS)
    else:
        text = rng.choice(ir_seeds())
        case = Case(ir_mutator().mutate(text, rng), suffix=".mlir")
    return Case(case.source, case.kernel, case.defines, origin, case.suffix)


_SEEDS = seed_sources()
_PTXAS_EVERY = 1
_LIMIT_S = COMPILE_LIMIT_S


def work(task: tuple[int, str, int]) -> dict:
    seed, kind, index = task
    case = build_case(seed, kind, index)
    outcome = run_case(case, _LIMIT_S, ptxas=index % _PTXAS_EVERY == 0)
    record = {"kind": kind, "index": index, "outcome": outcome.kind, "failure": outcome.failure,
              "seconds": round(outcome.seconds, 3), "ptxas": outcome.ptxas_checked}
    if outcome.kind == "rejected" and not outcome.failure:
        record["diagnostic"] = outcome.message.splitlines()[0].partition("error: ")[2][:200]
    if outcome.failure:
        record.update(source=case.source, kernel=case.kernel, defines=list(case.defines),
                      suffix=case.suffix, message=outcome.message[:3000])
    return record


def _init(ptxas_every: int, limit_s: float) -> None:
    global _PTXAS_EVERY, _LIMIT_S
    _PTXAS_EVERY, _LIMIT_S = ptxas_every, limit_s


def _minimize_one(item: tuple[str, dict, int, float]) -> tuple[str, str, str]:
    from minimize import minimize

    signature, record, trials, seconds = item
    case = Case(record["source"], record["kernel"], tuple(record["defines"]), record["origin"], record["suffix"])
    # minimize with the replay header in place (the minimizer keeps leading comments), so that
    # line numbers stay what they were; then rewrite it for the options that are left
    header = case_header(case, signature)
    small = minimize(Case(header + case.source, case.kernel, case.defines, case.origin, case.suffix),
                     signature, trials=trials, seconds=seconds, limit_s=_LIMIT_S)
    body = small.source.split("\n")[header.count("\n"):]
    return signature, case_header(small, signature) + "\n".join(body), small.suffix


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generated", type=int, default=1000)
    parser.add_argument("--mutated", type=int, default=1000)
    parser.add_argument("--ir", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--out", type=Path)
    parser.add_argument("--show", metavar="KIND:SEED:INDEX", help="print one case and what the compiler does with it")
    parser.add_argument("--ptxas-every", type=int, default=1, help="assemble the PTX of every Nth case (default all)")
    parser.add_argument("--limit", type=float, default=COMPILE_LIMIT_S, help="seconds per compilation")
    parser.add_argument("--minimize-trials", type=int, default=300)
    parser.add_argument("--minimize-seconds", type=float, default=180.0)
    parser.add_argument("--no-minimize", action="store_true")
    parser.add_argument("--add-to-corpus", action="store_true")
    args = parser.parse_args(argv)
    if args.show:
        kind, seed, index = args.show.split(":")
        case = build_case(int(seed), kind, int(index))
        outcome = run_case(case, args.limit)
        print(case_header(case, outcome.failure) + case.source, end="")
        print(f"// outcome: {outcome.kind} in {outcome.seconds:.2f} s\n{outcome.message}".rstrip())
        return 0
    if args.out is None:
        parser.error("--out DIR is required for a campaign")

    kinds = [("generated", args.generated), ("mutated", args.mutated)]
    if args.ir:
        if ir_mutator() is None:
            print("--ir: tests/fuzz/ir_mutator.py is not there; skipping IR cases", file=sys.stderr)
        else:
            kinds.append(("ir", args.ir))
    if any(kind == "ir" for kind, _ in kinds):
        ir_seeds()  # once, here: the workers inherit them (they are restarted every 200 cases)
    tasks = [(args.seed, kind, i) for kind, count in kinds for i in range(count)]
    random.Random(args.seed).shuffle(tasks)  # mix slow and fast cases over the workers

    start = time.monotonic()
    outcomes: dict[str, Counter] = defaultdict(Counter)
    seconds: Counter = Counter()
    failures: dict[str, list[dict]] = defaultdict(list)
    diagnostics: Counter = Counter()
    done = 0
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(args.jobs, initializer=_init, initargs=(args.ptxas_every, args.limit), maxtasksperchild=200) as pool:
        for record in pool.imap_unordered(work, tasks, chunksize=2):
            done += 1
            outcomes[record["kind"]][record["outcome"]] += 1
            seconds[record["kind"]] += record["seconds"]
            if record.get("diagnostic"):
                diagnostics[re.sub(r"\d+", "N", record["diagnostic"])[:90]] += 1
            if record["failure"]:
                record["origin"] = f"{record['kind']}:{args.seed}:{record['index']}"
                if record["failure"] not in failures:  # said at once: a run cut short still tells
                    print(f"  new signature: {record['failure']}  (--show {record['origin']})", file=sys.stderr, flush=True)
                failures[record["failure"]].append(record)
            if done % 500 == 0:
                print(f"  {done}/{len(tasks)} cases, {len(failures)} signatures, "
                      f"{time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
    elapsed = time.monotonic() - start

    args.out.mkdir(parents=True, exist_ok=True)
    print(f"{len(tasks)} cases in {elapsed:.0f} s with {args.jobs} jobs (seed {args.seed})")
    for kind, counts in outcomes.items():
        mean = seconds[kind] / max(1, sum(counts.values()))
        print(f"  {kind:10s} " + "  ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f"   ({mean:.2f} s/case)")
    print(f"{sum(len(v) for v in failures.values())} failing cases, {len(failures)} signatures:")
    for signature, records in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        by_kind = Counter(r["kind"] for r in records)
        print(f"  {len(records):5d}  {signature}   [{', '.join(f'{k} {v}' for k, v in by_kind.items())}]")
        folder = args.out / "failures" / slug(signature)
        folder.mkdir(parents=True, exist_ok=True)
        for record in records[:KEEP_PER_SIGNATURE]:
            case = Case(record["source"], record["kernel"], tuple(record["defines"]), record["origin"], record["suffix"])
            name = record["origin"].replace(":", "-") + case.suffix
            (folder / name).write_text(case_header(case, signature) + case.source, encoding="utf-8", errors="surrogateescape")
    print("most frequent rejections (no failure):")
    for message, count in diagnostics.most_common(25):
        print(f"  {count:5d}  {message}")
    summary = {
        "seed": args.seed, "cases": len(tasks), "seconds": round(elapsed), "jobs": args.jobs,
        "outcomes": {k: dict(v) for k, v in outcomes.items()},
        "signatures": {s: [r["origin"] for r in rs] for s, rs in failures.items()},
        "rejections": dict(diagnostics.most_common()),
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))

    if failures and not args.no_minimize:
        repro = args.out / "reproducers"
        repro.mkdir(exist_ok=True)
        items = [(s, min(rs, key=lambda r: len(r["source"])), args.minimize_trials, args.minimize_seconds)
                 for s, rs in failures.items()]
        print(f"minimizing {len(items)} signatures ...", file=sys.stderr, flush=True)
        with ctx.Pool(args.jobs, initializer=_init, initargs=(1, args.limit)) as pool:
            for signature, text, suffix in pool.imap_unordered(_minimize_one, items):
                path = repro / (slug(signature) + suffix)
                path.write_text(text, encoding="utf-8", errors="surrogateescape")
                print(f"  {path}")
                if args.add_to_corpus and suffix == ".tk":
                    known = {_signature_of(p) for p in CORPUS.glob("*.tk")}
                    if signature not in known:
                        CORPUS.mkdir(parents=True, exist_ok=True)
                        (CORPUS / path.name).write_text(text, encoding="utf-8", errors="surrogateescape")
    return 0


def _signature_of(path: Path) -> str | None:
    match = re.search(r"^// signature: (.*)$", path.read_text(encoding="utf-8", errors="replace"), re.M)
    return match.group(1) if match else None


if __name__ == "__main__":
    sys.exit(main())
