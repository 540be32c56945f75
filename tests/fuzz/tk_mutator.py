"""Mutations of `.tk` programs: the examples, the GPU test kernels and generated programs.

`mutate(case, rng)` applies one to three edits chosen from `rng`:

- tokens deleted, duplicated, swapped with the next one, or replaced (by a grammar fragment or
  by another token of the same program: a name, an operator, a keyword); two words run together;
- numbers changed to edge values (tile sizes that are not multiples of 16, or that are but
  odd ones such as 48, 96, 192; zero; huge integers; floats that overflow f32);
- whole lines deleted, duplicated or swapped;
- annotations inserted before a kernel, a loop, a let or any statement, with arguments in and
  out of range;
- `-D` overrides of the kernel's parameters to odd values (and of names it does not declare),
  and `-k` naming the kernel, another one, or none in a file of several kernels.

The edits leave most programs almost right, which is where a compiler's checks have gaps. Every
choice comes from `rng`, so `(seed source, seed)` reproduces a case.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from harness import REPO, Case

TOKEN = re.compile(
    r"//[^\n]*|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|\.\.|[+\-*/<>=!]=|\s+|."
)
FRAGMENTS = (
    "let", "var", "for", "if", "else", "store", "load", "grid", "as", "kernel", "in", "..", "and", "or",
    "not", "true", "false", "?", ":", "=", "+=", "==", "<", ">", "(", ")", "[", "]", "{", "}", ",", ";",
    "-", "*", "/", "%", "0", "1", "16", "64", "3.5", "1e400", "99999999999999999999", "@stages(2)",
    "st<bf16>[64, 64]", "rt<f32>[64, 64]", "rv<f32>[64]", "sv<bf16>[64]", "zero<f32>[64, 64]",
    "neg_infty<f32>[64]", "bf16(", "f32(", "fp8e4m3(", "mma_AB(", "mma_ABt(", "mma_AtB(", "row_max(",
    "col_sum(", "row_cumsum(", "col_cumsum(", "cumsum(", "sum(", "sub_row(", "mul_col(", "causal_mask(", "exp2(", "sqrt(", "max(", "log2e", "inf", "zero",
    "neg_infty", "gl<bf16>[M, K]", "\n", "fn f(x) { return x }\n", "fn", "return", "pow(", "gelu(",
    "fp8e5m2(", "f(",
)
EDGE_INTS = ("0", "1", "2", "3", "8", "15", "16", "17", "24", "32", "48", "80", "96", "112", "160", "192",
             "256", "320", "384", "512", "1024", "4096", "65536", "2147483648", "9223372036854775807",
             "9223372036854775808")
EDGE_FLOATS = ("0.0", "-0.0", "1e-45", "1e38", "3.5e38", "1e300", "0.5", "-1.0", "1e-5")
ODD_DEFINES = ("0", "1", "-16", "3", "17", "24", "48", "80", "96", "112", "160", "192", "320", "384", "512",
               "4096", "2147483648", "true", "false", "1.5", "0x40", "")
PINS = ("@stages", "@stages", "@consumers", "@persistent", "@cluster", "@heavy_first", "@stream_k", "@split_ring", "@fma_exp2", "@schedule_wgmma", "@retain", "@stage", "@registers", "@")
"""Annotations -D may pin (and some it may not), for option_edit."""
ANNOTATIONS = (
    "@stages({})", "@overlap({})", "@swizzle({})", "@consumers({})", "@registers({}, 232)",
    "@registers(40, {})", "@persistent", "@cluster({})", "@heavy_first({})", "@stream_k({})", "@split_ring({})", "@fma_exp2({})", "@schedule_wgmma({})", "@persistent()",
    "@retain({})", "@bogus({})", "@stages",
)
ANNOTATION_ARGS = ("0", "1", "2", "3", "4", "7", "8", "16", "17", "32", "64", "128", "-1", "BM", "1.5", "true")


def seed_sources() -> list[tuple[str, str]]:
    """(name, text) of every `.tk` file the repository ships: the examples and the GPU test kernels."""
    paths = sorted((REPO / "examples").glob("*.tk")) + sorted((REPO / "tests" / "gpu" / "kernels").glob("*.tk"))
    return [(p.relative_to(REPO).as_posix(), p.read_text(encoding="utf-8")) for p in paths]


def _code(source: str) -> str:
    """`source` without its comments, whose prose says "kernel" too ("stops the kernel with ...")."""
    return re.sub(r"//[^\n]*", "", source)


def kernel_names(source: str) -> list[str]:
    return re.findall(r"\bkernel\s+([A-Za-z_]\w*)", _code(source))


def param_names(source: str) -> list[str]:
    names = []
    for params in re.findall(r"\bkernel\s+\w+\s*<([^>]*)>", _code(source)):
        names += re.findall(r"([A-Za-z_]\w*)\s*=", params)
    return names


def _significant(tokens: list[str]) -> list[int]:
    """Indices of the tokens that are not whitespace or comments."""
    return [i for i, t in enumerate(tokens) if t.strip() and not t.startswith("//")]


def token_edit(source: str, rng: random.Random) -> str:
    tokens = TOKEN.findall(source)
    places = _significant(tokens)
    if not places:
        return source + rng.choice(FRAGMENTS)
    at = rng.choice(places)
    action = rng.choice(("delete", "duplicate", "swap", "replace", "replace_same", "insert", "join"))
    if action == "join":
        # two words run together (`kernel k` -> `kernelk`): the lexer must read one name
        gaps = [i for i in range(1, len(tokens) - 1) if tokens[i].isspace() and tokens[i - 1][-1:].isalnum()]
        if gaps:
            del tokens[rng.choice(gaps)]
    elif action == "delete":
        del tokens[at]
    elif action == "duplicate":
        tokens.insert(at, tokens[at] + " ")
    elif action == "swap":
        later = [i for i in places if i > at]
        if later:
            nxt = later[0]
            tokens[at], tokens[nxt] = tokens[nxt], tokens[at]
    elif action == "replace":
        tokens[at] = rng.choice(FRAGMENTS)
    elif action == "replace_same":
        tokens[at] = tokens[rng.choice(places)]
    else:
        tokens.insert(at, f" {rng.choice(FRAGMENTS)} ")
    return "".join(tokens)


def number_edit(source: str, rng: random.Random) -> str:
    tokens = TOKEN.findall(source)
    numbers = [i for i, t in enumerate(tokens) if t[0].isdigit()]
    if not numbers:
        return token_edit(source, rng)
    at = rng.choice(numbers)
    is_float = any(c in tokens[at] for c in ".eE")
    if is_float and rng.random() < 0.8:
        tokens[at] = rng.choice(EDGE_FLOATS)
    elif rng.random() < 0.7:
        tokens[at] = rng.choice(EDGE_INTS)
    else:
        value = int(float(tokens[at]))
        tokens[at] = str(max(0, value + rng.choice((-16, -1, 1, 16, value, -value // 2))))
    return "".join(tokens)


def line_edit(source: str, rng: random.Random) -> str:
    lines = source.split("\n")
    content = [i for i, line in enumerate(lines) if line.strip()]
    if not content:
        return source
    at = rng.choice(content)
    action = rng.choice(("delete", "duplicate", "swap"))
    if action == "delete":
        del lines[at]
    elif action == "duplicate":
        lines.insert(at, lines[at])
    else:
        other = rng.choice(content)
        lines[at], lines[other] = lines[other], lines[at]
    return "\n".join(lines)


def annotation_edit(source: str, rng: random.Random) -> str:
    """Insert an annotation before a kernel, a for, a let or another statement."""
    annotation = rng.choice(ANNOTATIONS).format(rng.choice(ANNOTATION_ARGS))
    lines = source.split("\n")
    targets = {
        "kernel": [i for i, ln in enumerate(lines) if ln.lstrip().startswith(("kernel", "@"))],
        "for": [i for i, ln in enumerate(lines) if ln.lstrip().startswith("for ")],
        "let": [i for i, ln in enumerate(lines) if ln.lstrip().startswith("let ")],
        "any": [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("//")],
    }
    kind = rng.choice([k for k, v in targets.items() if v] or ["any"])
    if not targets[kind]:
        return annotation + "\n" + source
    at = rng.choice(targets[kind])
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at, indent + annotation)
    return "\n".join(lines)


def kernel_edit(source: str, rng: random.Random) -> str:
    """Duplicate the file's first kernel, under a new name (or the same one, a redefinition)."""
    start = source.find("kernel")
    if start < 0:
        return source
    names = kernel_names(source)
    copy = source[start:]
    if names and rng.random() < 0.8:
        copy = re.sub(rf"\bkernel\s+{re.escape(names[0])}\b", f"kernel {names[0]}_2", copy, count=1)
    return source + "\n" + copy


SOURCE_EDITS = (token_edit, token_edit, number_edit, number_edit, line_edit, annotation_edit, kernel_edit)


def option_edit(case: Case, rng: random.Random) -> Case:
    """Change the command line: -D a parameter or a kernel annotation (`-D @stages=...`) to an
    odd value, or -k another kernel."""
    params = param_names(case.source)
    if rng.random() < 0.75:
        if rng.random() < 0.25:
            name = rng.choice(PINS)
        elif params and rng.random() < 0.9:
            name = rng.choice(params)
        else:
            name = rng.choice(("NOPE", "M", "bm", "K", "D"))
        defines = tuple(d for d in case.defines if not d.startswith(name + "=")) + (f"{name}={rng.choice(ODD_DEFINES)}",)
        return Case(case.source, case.kernel, defines, case.origin)
    names = kernel_names(case.source)
    kernel = rng.choice([*names, None, "nope", *(n.upper() for n in names[:1])])
    return Case(case.source, kernel, case.defines, case.origin)


def mutate(case: Case, rng: random.Random) -> Case:
    """`case` with one to three random edits of its source or command line."""
    source = case.source
    for _ in range(rng.choices((1, 2, 3), weights=(5, 3, 1))[0]):
        if rng.random() < 0.2:
            case = option_edit(Case(source, case.kernel, case.defines, case.origin), rng)
            source = case.source
        else:
            source = rng.choice(SOURCE_EDITS)(source, rng)
    names = kernel_names(source)
    kernel = case.kernel
    if len(names) > 1 and kernel is None and rng.random() < 0.7:
        kernel = rng.choice(names)  # mostly say which kernel, as a user of a multi-kernel file must
    return Case(source, kernel, case.defines, case.origin)


def mutated_case(rng: random.Random, seeds: list[tuple[str, str]], generated_share: float = 0.3) -> Case:
    """A mutation of a random seed program: a shipped .tk file, or (sometimes) a generated one."""
    if rng.random() < generated_share:
        from tk_generator import generate

        base = generate(rng)
        origin = "mutated generated"
    else:
        name, text = rng.choice(seeds)
        base = Case(text)
        origin = f"mutated {name}"
    mutant = mutate(base, rng)
    return Case(mutant.source, mutant.kernel, mutant.defines, origin)
