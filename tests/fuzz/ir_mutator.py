"""Mutations of MLIR text (tkc's IR dumps at any stage: tile, sm90, ptx).

`mutate(text, rng)` applies one to three random edits of the kinds a user (or a damaged file)
makes: lines deleted, duplicated, swapped or moved (values used before they are defined, ops
outside their region); numbers changed to edge values (shapes that are not multiples of 16,
axes past a rank, counts past a register's width, floats too large for f32); value, symbol,
keyword and op names exchanged for others of the same text, two operands of a line swapped,
attribute entries deleted (decisions, pins, properties); element and tile types
exchanged; string literals damaged (the kernels' ABI JSON, decision reasons, PTX type
suffixes); single tokens deleted. Every choice comes from `rng`, so a seed reproduces a case.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

NUMBER = re.compile(r"(?<![A-Za-wyz_%@#^\d.\\])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")
"""Integer and float literals, also inside shapes (`128x64xbf16`), not inside names (`%acc_1`, `bf16`)."""
VALUE_NAME = re.compile(r"%[A-Za-z0-9_]+")
SYMBOL_NAME = re.compile(r"@[A-Za-z0-9_]+")
OP_NAME = re.compile(r"\b(?:tile|sm90|ptx|arith|scf|math)\.[a-z_0-9]+\b")
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
ATTRIBUTE_ENTRY = re.compile(r'(?<=[{,] )[a-z_.]+ = (?:#tile\.decision<[^<>]*>|"(?:[^"\\]|\\.)*"|[^,{}]+?)(?:, |(?=}))')
TOKEN = re.compile(r"%[\w]+|@[\w]+|!?[\w.]+|\S")

TYPES = ["bf16", "f16", "f32", "f64", "f8E4M3FN", "i1", "i32", "i64", "index", "b16", "b32", "b64", "pred"]
TILE_KINDS = ["!tile.rt", "!tile.st", "!tile.rv", "!tile.sv", "!tile.gl", "!sm90.frag", "!sm90.smem", "!ptx.reg"]
KEYWORDS = [
    ["row", "col"],
    ["sum", "max", "min"],
    ["add", "sub", "mul", "div", "max", "min"],
    ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "neg", "relu"],
    ["block", "warpgroup", "warp"],
    ["transpose_a", "transpose_b"],
    ["producer", "consumer"],
    ["u32", "s32", "b32", "u64", "f32", "bf16", "pred"],
]
"""Words exchanged for another of the same group (enum values, scopes, PTX type suffixes)."""
EDGE_NUMBERS = [
    "0", "1", "-1", "2", "3", "7", "8", "15", "17", "24", "33", "48", "63", "65", "100", "129", "255", "257",
    "1000", "65536", "2147483647", "2147483648", "4294967296", "9223372036854775808", "100000000000000000000",
    "0.5", "-0.0", "1.0e+39", "3.4e+38", "1.0e+300", "-1.0e+39",
]
STRING_DAMAGE = ['"', "\\", "\\22", "{", "}", "[", "]", ",", ":", "x", "0", "-1", "null", "\\22kind\\22", " "]


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _content_lines(lines: list[str]) -> list[int]:
    """Indices of lines with text (blank lines and the trailing newline are not worth an edit)."""
    return [i for i, line in enumerate(lines) if line.strip()]


def delete_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    if candidates := _content_lines(lines):
        del lines[rng.choice(candidates)]
    return "\n".join(lines)


def duplicate_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    if candidates := _content_lines(lines):
        i = rng.choice(candidates)
        lines.insert(rng.choice([i + 1, rng.randrange(len(lines) + 1)]), lines[i])
    return "\n".join(lines)


def swap_lines(text: str, rng: random.Random) -> str:
    """Swap a line with one nearby (mostly in the same block: a use before its definition)."""
    lines = _lines(text)
    candidates = _content_lines(lines)
    if len(candidates) >= 2:
        k = rng.randrange(len(candidates))
        j = min(len(candidates) - 1, max(0, k + rng.choice([-3, -2, -1, 1, 2, 3, 8])))
        a, b = candidates[k], candidates[j]
        lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


def move_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    if candidates := _content_lines(lines):
        line = lines.pop(rng.choice(candidates))
        lines.insert(rng.randrange(len(lines) + 1), line)
    return "\n".join(lines)


def _replace_match(text: str, pattern: re.Pattern[str], rng: random.Random, new: Callable[[str], str]) -> str:
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[: m.start()] + new(m.group()) + text[m.end() :]


def change_number(text: str, rng: random.Random) -> str:
    def new(old: str) -> str:
        if rng.random() < 0.6:
            return rng.choice(EDGE_NUMBERS)
        value = float(old) if any(c in old for c in ".e") else int(old)
        changed = rng.choice([value + 1, value - 1, value * 2, value // 2 if isinstance(value, int) else value / 2, -value])
        return str(changed)

    return _replace_match(text, NUMBER, rng, new)


def change_name(text: str, rng: random.Random) -> str:
    """A value, symbol, op or keyword replaced by another of the same kind from this text."""
    kind = rng.choice(["value", "value", "symbol", "op", "keyword"])
    if kind == "keyword":
        group = rng.choice(KEYWORDS)
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, group)) + r")\b")
        return _replace_match(text, pattern, rng, lambda old: rng.choice([w for w in group if w != old]))
    pattern = {"value": VALUE_NAME, "symbol": SYMBOL_NAME, "op": OP_NAME}[kind]
    names = sorted(set(pattern.findall(text)))
    if len(names) < 2:
        return text
    return _replace_match(text, pattern, rng, lambda old: rng.choice([n for n in names if n != old]))


def swap_operands(text: str, rng: random.Random) -> str:
    """Two value names of one line exchanged (operands of one type often stay type-correct)."""
    lines = _lines(text)
    candidates = [i for i, line in enumerate(lines) if len(set(VALUE_NAME.findall(line))) >= 2]
    if not candidates:
        return text
    i = rng.choice(candidates)
    a, b = rng.sample(sorted(set(VALUE_NAME.findall(lines[i]))), 2)
    lines[i] = re.sub(rf"{re.escape(a)}\b|{re.escape(b)}\b", lambda m: b if m.group() == a else a, lines[i])
    return "\n".join(lines)


def delete_attribute(text: str, rng: random.Random) -> str:
    """One `name = value` entry of an attribute dictionary removed (a decision, a pin, a property)."""
    return _replace_match(text, ATTRIBUTE_ENTRY, rng, lambda old: "")


def change_type(text: str, rng: random.Random) -> str:
    if rng.random() < 0.7:
        pattern = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, TYPES)) + r")\b")
        return _replace_match(text, pattern, rng, lambda old: rng.choice([t for t in TYPES if t != old]))
    pattern = re.compile("|".join(map(re.escape, TILE_KINDS)))
    return _replace_match(text, pattern, rng, lambda old: rng.choice([t for t in TILE_KINDS if t != old]))


def damage_string(text: str, rng: random.Random) -> str:
    def new(old: str) -> str:
        body = old[1:-1]
        i = rng.randrange(len(body) + 1)
        j = min(len(body), i + rng.randrange(1, 12))
        edit = rng.choice(["delete", "insert", "replace", "truncate"])
        if edit == "delete":
            body = body[:i] + body[j:]
        elif edit == "insert":
            body = body[:i] + rng.choice(STRING_DAMAGE) + body[i:]
        elif edit == "replace":
            body = body[:i] + rng.choice(STRING_DAMAGE) + body[j:]
        else:
            body = body[:i]
        return '"' + body + '"'

    return _replace_match(text, STRING, rng, new)


def delete_token(text: str, rng: random.Random) -> str:
    return _replace_match(text, TOKEN, rng, lambda old: "")


MUTATIONS: list[tuple[Callable[[str, random.Random], str], int]] = [
    (delete_line, 3),
    (duplicate_line, 2),
    (swap_lines, 4),
    (move_line, 1),
    (change_number, 5),
    (change_name, 4),
    (swap_operands, 2),
    (delete_attribute, 2),
    (change_type, 3),
    (damage_string, 3),
    (delete_token, 1),
]
"""Each kind of edit with its weight."""


def mutate(text: str, rng: random.Random) -> str:
    """`text` after one to three random edits (one most often)."""
    kinds, weights = zip(*MUTATIONS)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        text = rng.choices(kinds, weights)[0](text, rng)
    return text
