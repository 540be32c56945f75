"""Tails: the examples on the GPU at shapes that are no multiple of their tiles (tiles that run past
the end of a tensor), against torch and the examples' `_ref.py` references.

Every shape is listed literally. The random GEMM shapes were drawn once with random.Random(12) in
1..3000 per dim, each dim that is the innermost of a bf16 tensor rounded up to a multiple of 8 (TMA
needs 16-byte rows; the runtime refuses others, see test_misaligned_rows_are_refused), redrawn when
any dim was a multiple of its tile; the hand-picked ones add M = 1 and K < BK.

Each tensor is the front of a larger buffer (`buffer[:numel].view(shape)`: contiguous and 16-byte
aligned, as the runtime wants). An input's buffer holds NaN past it, so a tensor map that reached
past the tensor would read NaN into the result. An output starts NaN (an element never written stays
NaN) and its buffer holds SENTINEL past it (anything written past the end changes it).

tests/unit/test_tails_cases.py checks on the CPU that every case here compiles and that the runtime
takes its arguments (`every_case`), so a shape the runtime refuses is found without a GPU. The cases
run in this process, like tests/gpu/test_gemm_gpu.py.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).parents[2] / "examples"
SENTINEL = -4096.0  # exact in bf16 and f32; no output here comes near it
PAD_MIN = 1 << 20  # elements past each tensor: more than a tile of rows past the end of any of them

# kernel -> (A stored transposed, B stored transposed)
GEMM_FORMS = {"gemm": (False, False), "gemm_abt": (False, True), "gemm_atb": (True, False), "gemm_atbt": (True, True)}
GEMM_SHAPES = {  # (M, N, K)
    "gemm": [(1, 264, 8), (1, 8, 24), (200, 520, 24), (2999, 2984, 2984),
             (1944, 1104, 2696), (2168, 2736, 1440), (585, 1568, 48), (1535, 1984, 1128)],
    "gemm_abt": [(1, 264, 8), (1, 8, 24), (130, 264, 3000),
                 (2636, 1888, 2832), (2464, 936, 2288), (596, 1808, 1512), (665, 1392, 864)],
    "gemm_atb": [(8, 264, 1), (8, 8, 24), (136, 264, 8), (2984, 2984, 2999),
                 (248, 2368, 818), (312, 2104, 2814), (1384, 2792, 1658), (360, 80, 249)],
    "gemm_atbt": [(8, 264, 8), (8, 8, 24), (136, 136, 24), (2984, 2984, 2984),
                  (2712, 2088, 920), (376, 1736, 1824), (464, 2712, 1736), (560, 2216, 1288)],
}
GEMM_CASES = [(kernel, shape) for kernel, shapes in GEMM_SHAPES.items() for shape in shapes]

ATTENTION_N = [1, 17, 1000, 2000, 4099]
ATTENTION_CASES = [(n, d, causal) for n in ATTENTION_N for d in (64, 128) for causal in (False, True)]
LSE_CHECKED_UP_TO_N = 2000  # the f32 score matrix of the logsumexp reference stays small

SOFTMAX_SHAPES = [(1, 8), (1, 1000), (77, 136), (4099, 264), (1000, 3000), (4099, 256)]  # (M, N)
LAYERNORM_CASES = [(1, {}), (77, {}), (4099, {}), (333, {"D": 512}), (77, {"D": 1000})]  # (M, params)
ROTARY_SHAPES = [(1, 1, 1), (2, 3, 17), (1, 2, 1000), (2, 2, 4099)]  # (B, H, N)

# (kernel, (M, N, K), the argument named, its innermost dim): a row of bytes no multiple of 16
REFUSED = [("gemm", (1000, 1000, 4001), "A", "K"), ("gemm", (1000, 1001, 1000), "B", "N"),
           ("gemm_atb", (4001, 1000, 1000), "At", "M")]


def _ids(value: Any) -> str:
    if isinstance(value, bool):
        return "causal" if value else "full"
    if isinstance(value, tuple):
        return "x".join(map(str, value))
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items()) or "default"
    return str(value)


def refusal(argument: str, dim: str, extent: int) -> str:
    """The runtime's message for a bf16 argument whose innermost dim makes rows TMA cannot address."""
    return (f"argument {argument}: dim {dim} = {extent} (its innermost) times 2 bytes is not a multiple of 16: "
            f"TMA needs 16-byte aligned rows, so {dim} must be a multiple of 8")


# ---- the arguments of each case, as (name, shape, dtype) ----

Args = list[tuple[str, tuple[int, ...], str]]


def gemm_args(kernel: str, m: int, n: int, k: int) -> Args:
    trans_a, trans_b = GEMM_FORMS[kernel]
    a = ("At", (k, m)) if trans_a else ("A", (m, k))
    b = ("Bt", (n, k)) if trans_b else ("B", (k, n))
    return [(*a, "bf16"), (*b, "bf16"), ("C", (m, n), "bf16")]


def attention_args(b: int, h: int, n: int, d: int) -> Args:
    return [*[(name, (b, h, n, d), "bf16") for name in "QKVO"], ("LSE", (b, h, n), "f32")]


def attention_heads(n: int) -> tuple[int, int]:
    """(B, H): several heads where N is small, so a tail that spills reaches a neighbour's rows."""
    return (2, 3) if n < 128 else (1, 2)


def softmax_args(m: int, n: int) -> Args:
    return [("X", (m, n), "bf16"), ("Y", (m, n), "bf16")]


def layernorm_args(m: int, d: int) -> Args:
    rows = [(name, (m, d), "bf16") for name in ("X", "R")]
    return [*rows, ("W", (d,), "bf16"), ("Bias", (d,), "bf16"), ("H", (m, d), "bf16"), ("Y", (m, d), "bf16")]


def rotary_args(b: int, h: int, n: int, d: int = 128) -> Args:
    return [("X", (b, h, n, d), "bf16"), ("COS", (n, d // 2), "bf16"), ("SIN", (n, d // 2), "bf16"),
            ("Y", (b, h, n, d), "bf16")]


def _compile(example: str, kernel: str | None = None, **params: Any) -> Any:
    import tkc

    return tkc.compile(EXAMPLES / f"{example}.tk", kernel=kernel, **params)


def every_case() -> list[tuple[str, tuple[str, str | None, dict[str, Any]], Args]]:
    """(id, (example, kernel, params), arguments) of every launch here that the runtime must take."""
    cases: list[tuple[str, tuple[str, str | None, dict[str, Any]], Args]] = []
    for kernel, (m, n, k) in GEMM_CASES:
        cases.append((f"{kernel}-{m}x{n}x{k}", (kernel, kernel, {}), gemm_args(kernel, m, n, k)))
    for n, d, causal in ATTENTION_CASES:
        cases.append((f"attention-N{n}-D{d}-{causal}", ("attention", "attn_fwd", {"D": d, "CAUSAL": causal}),
                      attention_args(*attention_heads(n), n, d)))
    for m, n in SOFTMAX_SHAPES:
        cases.append((f"softmax-{m}x{n}", ("softmax", None, {}), softmax_args(m, n)))
    for m, params in LAYERNORM_CASES:
        cases.append((f"layernorm-{m}-{params}", ("layernorm", None, params), layernorm_args(m, params.get("D", 1024))))
    for b, h, n in ROTARY_SHAPES:
        cases.append((f"rotary-{b}x{h}x{n}", ("rotary", None, {}), rotary_args(b, h, n)))
    return cases


# ---- on the GPU ----


def poisoned(shape: tuple[int, ...], dtype: Any, fill: float) -> tuple[Any, Any]:
    """(view, buffer): `shape` at the front of a larger buffer, the view filled with `fill`, the rest
    with NaN for an input (fill finite) or SENTINEL for an output (fill NaN)."""
    import torch

    numel = math.prod(shape)
    rest = SENTINEL if math.isnan(fill) else float("nan")
    buffer = torch.full((numel + max(numel, PAD_MIN),), rest, device="cuda", dtype=dtype)
    view = buffer[:numel].view(shape)
    view.fill_(fill)
    return view, buffer


def random_input(shape: tuple[int, ...]) -> Any:
    import torch

    view, _ = poisoned(shape, torch.bfloat16, 0.0)
    view.copy_(torch.randn(shape, device="cuda"))
    return view


def output(shape: tuple[int, ...], dtype: Any = None) -> tuple[Any, Any]:
    import torch

    return poisoned(shape, dtype or torch.bfloat16, float("nan"))


def check_untouched_past_the_end(name: str, view: Any, buffer: Any) -> None:
    import torch

    torch.cuda.synchronize()
    rest = buffer[view.numel():]
    changed = (rest != SENTINEL).nonzero()
    assert changed.numel() == 0, (
        f"{name}: {changed.numel()} elements past its end were written, the first "
        f"{changed[0].item()} elements past it (now {rest[changed[0]].item()})"
    )


def check_written(name: str, view: Any) -> None:
    import torch

    unwritten = torch.isnan(view).nonzero()
    assert unwritten.numel() == 0, (
        f"{name}: {len(unwritten)} elements are NaN (unwritten?), the first at {unwritten[0].tolist()}"
    )


def relative_error(out: Any, ref: Any) -> float:
    return ((out.float() - ref.float()).norm() / ref.float().norm()).item()


def check_against_reference(example: str, inputs: dict[str, Any], outputs: dict[str, Any],
                            params: dict[str, Any]) -> None:
    """The outputs against the example's `_ref.py` (numpy, f32) with tkc run --check's tolerance."""
    from tkc.runner import CHECK_TOLERANCE, load_reference
    from tkc.runner import relative_error as numpy_relative_error

    reference = load_reference(str(EXAMPLES / f"{example}.tk"))
    expected = reference({n: t.float().cpu().numpy() for n, t in inputs.items()}, params)
    for name, value in outputs.items():
        got = value.float().cpu().numpy()
        _, rel = numpy_relative_error(got, np.asarray(expected[name], np.float32))
        assert rel < CHECK_TOLERANCE, f"{example} {name}: relative error {rel:.3g}"


@pytest.mark.parametrize("kernel, shape", GEMM_CASES, ids=_ids)
def test_gemm_tails_match_torch(kernel: str, shape: tuple[int, int, int]) -> None:
    import torch

    m, n, k = shape
    compiled = _compile(kernel, kernel)
    torch.manual_seed(m * 7 + n * 5 + k)
    (_, a_shape, _), (_, b_shape, _), _ = gemm_args(kernel, m, n, k)
    a, b = random_input(a_shape), random_input(b_shape)
    c, c_buffer = output((m, n))
    compiled(a, b, c)
    torch.cuda.synchronize()
    trans_a, trans_b = GEMM_FORMS[kernel]
    ref = (a.float().T if trans_a else a.float()) @ (b.float().T if trans_b else b.float())
    check_written("C", c)
    check_untouched_past_the_end("C", c, c_buffer)
    rel = relative_error(c, ref)
    assert rel < 1e-2, f"relative error {rel:.3g}"


@pytest.mark.parametrize("n, d, causal", ATTENTION_CASES, ids=_ids)
def test_attention_tails_match_torch(n: int, d: int, causal: bool) -> None:
    import torch
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    b, h = attention_heads(n)
    kernel = _compile("attention", "attn_fwd", D=d, CAUSAL=causal)
    torch.manual_seed(n * 3 + d)
    q, k, v = (random_input((b, h, n, d)) for _ in range(3))
    o, o_buffer = output((b, h, n, d))
    lse, lse_buffer = output((b, h, n), torch.float32)
    kernel(q, k, v, o, lse)
    torch.cuda.synchronize()
    check_written("O", o)
    check_written("LSE", lse)
    check_untouched_past_the_end("O", o, o_buffer)
    check_untouched_past_the_end("LSE", lse, lse_buffer)
    ref_o = sdpa(q.float(), k.float(), v.float(), is_causal=causal)
    rel_o = relative_error(o, ref_o)
    assert rel_o < 1e-2, f"O relative error {rel_o:.3g}"
    if n <= LSE_CHECKED_UP_TO_N:
        scores = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(d)
        if causal:
            above = torch.ones(n, n, device="cuda", dtype=torch.bool).triu(1)
            scores = scores.masked_fill(above, float("-inf"))
        rel_lse = relative_error(lse, torch.logsumexp(scores, -1))
        assert rel_lse < 1e-3, f"LSE relative error {rel_lse:.3g}"


@pytest.mark.parametrize("pins", [{}, {"@retain": 1}, {"@retain": 1, "@ctas_per_sm": 1}],
                         ids=["plan", "retained", "retained-one-block"])
@pytest.mark.parametrize("shape", SOFTMAX_SHAPES, ids=_ids)
def test_softmax_tails_match_reference(shape: tuple[int, int], pins: dict[str, int]) -> None:
    """As planned, with @retain(1) (tile-retain-sweep keeps the first sweep's first 4 tiles in
    shared memory for the second) and with one block per SM as well (up to 19 tiles: every tile
    of these rows)."""
    import torch

    m, n = shape
    kernel = _compile("softmax", **pins)
    torch.manual_seed(m + n)
    x = random_input((m, n))
    y, y_buffer = output((m, n))
    kernel(x, y)
    torch.cuda.synchronize()
    check_written("Y", y)
    check_untouched_past_the_end("Y", y, y_buffer)
    check_against_reference("softmax", {"X": x}, {"Y": y}, {})


@pytest.mark.parametrize("m, params", LAYERNORM_CASES, ids=_ids)
def test_layernorm_tails_match_reference(m: int, params: dict[str, int]) -> None:
    import torch

    kernel = _compile("layernorm", None, **params)
    d = params.get("D", 1024)
    torch.manual_seed(m + d)
    x, r = random_input((m, d)), random_input((m, d))
    w, bias = random_input((d,)), random_input((d,))
    (hidden, h_buffer), (y, y_buffer) = output((m, d)), output((m, d))
    kernel(x, r, w, bias, hidden, y)
    torch.cuda.synchronize()
    for name, view, buffer in (("H", hidden, h_buffer), ("Y", y, y_buffer)):
        check_written(name, view)
        check_untouched_past_the_end(name, view, buffer)
    check_against_reference("layernorm", {"X": x, "R": r, "W": w, "Bias": bias}, {"H": hidden, "Y": y}, params)


@pytest.mark.parametrize("shape", ROTARY_SHAPES, ids=_ids)
def test_rotary_tails_match_reference(shape: tuple[int, int, int]) -> None:
    import torch

    b, h, n = shape
    kernel = _compile("rotary")
    torch.manual_seed(b + h + n)
    x, cos, sin = random_input((b, h, n, 128)), random_input((n, 64)), random_input((n, 64))
    y, y_buffer = output((b, h, n, 128))
    kernel(x, cos, sin, y)
    torch.cuda.synchronize()
    check_written("Y", y)
    check_untouched_past_the_end("Y", y, y_buffer)
    check_against_reference("rotary", {"X": x, "COS": cos, "SIN": sin}, {"Y": y}, {})


@pytest.mark.parametrize("kernel, shape, argument, dim", REFUSED, ids=_ids)
def test_misaligned_rows_are_refused(kernel: str, shape: tuple[int, int, int], argument: str, dim: str) -> None:
    """A row TMA cannot address is refused before the launch: the output stays as it was."""
    import torch

    from tkc.diagnostics import TkError

    compiled = _compile(kernel, kernel)
    (_, a_shape, _), (_, b_shape, _), _ = gemm_args(kernel, *shape)
    a, b = random_input(a_shape), random_input(b_shape)
    c, c_buffer = output((shape[0], shape[1]))
    with pytest.raises(TkError) as refused:
        compiled(a, b, c)
    assert refused.value.message == refusal(argument, dim, dict(zip("MNK", shape))[dim])
    torch.cuda.synchronize()
    assert torch.isnan(c).all(), "a refused launch wrote its output"
    check_untouched_past_the_end("C", c, c_buffer)
