"""Shrink a failing case to a small one with the same failure signature.

The source is cut at line granularity: first whole blocks (a line that opens `{` through the
line that closes it) are removed or unwrapped, then delta debugging (ddmin) over the remaining
lines finds a 1-minimal set, then single tokens are dropped where that keeps the failure (and the
gaps they leave are closed); finally the command-line options are dropped one by one. Comment lines at the top (the replay header)
are kept as they are. A trial counts when `run_case` reports the same signature; results are
cached by text, and a budget of trials and seconds bounds the search (timeouts make trials
expensive).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from harness import COMPILE_LIMIT_S, Case, run_case
from tk_mutator import TOKEN


class Budget:
    def __init__(self, trials: int, seconds: float):
        self.trials, self.deadline = trials, time.monotonic() + seconds

    def spent(self) -> bool:
        return self.trials <= 0 or time.monotonic() > self.deadline


def _oracle(signature: str, template: Case, budget: Budget, limit_s: float) -> Callable[[str, Case | None], bool]:
    cache: dict[tuple[str, str | None, tuple[str, ...]], bool] = {}
    needs_ptxas = signature.startswith("ptxas")

    def fails(source: str, options: Case | None = None) -> bool:
        base = options or template
        key = (source, base.kernel, base.defines)
        if key not in cache:
            if budget.spent():
                return False
            budget.trials -= 1
            case = Case(source, base.kernel, base.defines, base.origin, base.suffix)
            cache[key] = run_case(case, limit_s, ptxas=needs_ptxas).failure == signature
        return cache[key]

    return fails


def _split_header(lines: list[str]) -> tuple[list[str], list[str]]:
    n = 0
    while n < len(lines) and lines[n].startswith("//"):
        n += 1
    return lines[:n], lines[n:]


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(open, close) line pairs of the brace blocks whose braces sit at line ends/starts."""
    stack, pairs = [], []
    for i, line in enumerate(lines):
        text = line.strip()
        if text.startswith("}") and stack:
            pairs.append((stack.pop(), i))
        if text.endswith("{"):
            stack.append(i)
    return sorted(pairs, key=lambda p: p[0] - p[1])  # biggest first


def _ddmin(items: list[str], test: Callable[[list[str]], bool], budget: Budget) -> list[str]:
    n = 2
    while len(items) >= 2 and not budget.spent():
        chunk = -(-len(items) // n)
        parts = [items[i : i + chunk] for i in range(0, len(items), chunk)]
        for k in range(len(parts)):
            complement = [x for j, p in enumerate(parts) if j != k for x in p]
            if test(complement):
                items, n = complement, max(n - 1, 2)
                break
        else:
            if n >= len(items):
                break
            n = min(len(items), 2 * n)
    return items


def minimize(case: Case, signature: str, trials: int = 400, seconds: float = 240.0,
             limit_s: float = COMPILE_LIMIT_S) -> Case:
    """A smaller case with `signature` (or `case` itself if it does not reproduce)."""
    budget = Budget(trials, seconds)
    fails = _oracle(signature, case, budget, limit_s)
    if not fails(case.source):
        return case
    header, body = _split_header(case.source.split("\n"))

    def text(lines: list[str]) -> str:
        return "\n".join(header + lines)

    changed = True
    while changed and not budget.spent():
        changed = False
        for start, end in _blocks(body):
            for cut in (body[:start] + body[end + 1 :], body[:start] + body[start + 1 : end] + body[end + 1 :]):
                if fails(text(cut)):
                    body, changed = cut, True
                    break
            if changed:
                break
    body = _ddmin(body, lambda lines: fails(text(lines)), budget)
    body = _drop_tokens(body, lambda lines: fails(text(lines)), budget)
    tidy = [_tidy(line) for line in body]
    if tidy != body and fails(text(tidy)):
        body = tidy
    source = text(body)
    result = Case(source, case.kernel, case.defines, case.origin, case.suffix)
    for k in range(len(result.defines) - 1, -1, -1):
        fewer = Case(source, result.kernel, result.defines[:k] + result.defines[k + 1 :], case.origin, case.suffix)
        if fails(source, fewer):
            result = fewer
    if result.kernel is not None:
        unnamed = Case(source, None, result.defines, case.origin, case.suffix)
        if fails(source, unnamed):
            result = unnamed
    return result


def _tidy(line: str) -> str:
    """`line` without the gaps dropped tokens leave: runs of spaces, spaces after ( and [, before , ) ]."""
    indent = line[: len(line) - len(line.lstrip())]
    body = re.sub(r" {2,}", " ", line.strip())
    body = re.sub(r"([(\[]) ", r"\1", body)
    body = re.sub(r" ([,)\]])", r"\1", body)
    return indent + body


def _drop_tokens(body: list[str], test: Callable[[list[str]], bool], budget: Budget) -> list[str]:
    """Remove single significant tokens (and a following comma) from each line where it still fails."""
    for i in range(len(body)):
        tokens = TOKEN.findall(body[i])
        k = 0
        while k < len(tokens) and not budget.spent():
            if not tokens[k].strip():
                k += 1
                continue
            width = 2 if k + 1 < len(tokens) and tokens[k + 1] == "," else 1
            trial = tokens[:k] + tokens[k + width :]
            candidate = body[:i] + ["".join(trial)] + body[i + 1 :]
            if test(candidate):
                tokens, body = trial, candidate
            else:
                k += 1
    return body
