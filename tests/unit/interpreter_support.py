"""Kernels built with the tile dialect's constructors, for the interpreter's tests.

They do not depend on the frontend, so the interpreter is tested on its own; the example
tests (test_interpreter_examples.py) cover the same programs written in `.tk`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from tkc.dialects import tile

bf16, f32 = BFloat16Type(), Float32Type()


def idx(n: int) -> SSAValue:
    return arith.ConstantOp(IntegerAttr(n, IndexType())).result


def scalar(x: float) -> SSAValue:
    return arith.ConstantOp(FloatAttr(x, f32)).result


def kernel(
    name: str, args: dict[str, tile.GlobalType], body: Callable[..., None], params: dict[str, Attribute] | None = None
) -> ModuleOp:
    """A module holding one `tile.kernel` whose body `body(*args)` builds (without the return)."""
    block = Block(arg_types=list(args.values()))
    for arg, arg_name in zip(block.args, args, strict=True):
        arg.name_hint = arg_name
    with ImplicitBuilder(block):
        body(*block.args)
        tile.ReturnOp()
    module = ModuleOp([tile.KernelOp(name, list(args.values()), Region(block), params)])
    module.verify()
    return module


def for_loop(
    lb: SSAValue, ub: SSAValue, carried: Sequence[SSAValue], body: Callable[..., Sequence[SSAValue]]
) -> Sequence[SSAValue]:
    """scf.for with step 1: `body(iv, *carried)` returns the values to yield."""
    block = Block(arg_types=[IndexType(), *(v.type for v in carried)])
    with ImplicitBuilder(block):
        scf.YieldOp(*body(*block.args))
    return scf.ForOp(lb, ub, idx(1), list(carried), block).results


def if_else(
    cond: SSAValue, types: Sequence[Attribute], then: Callable[[], Sequence[SSAValue]], other: Callable[[], Sequence[SSAValue]]
) -> Sequence[SSAValue]:
    then_block, else_block = Block(), Block()
    with ImplicitBuilder(then_block):
        scf.YieldOp(*then())
    with ImplicitBuilder(else_block):
        scf.YieldOp(*other())
    return scf.IfOp(cond, list(types), [then_block], [else_block]).results


def gemm(bm: int = 128, bn: int = 128, bk: int = 64, dtype: Attribute = bf16) -> ModuleOp:
    """C = A @ B, f32 accumulation, C in `dtype` (DESIGN.md §3)."""

    def body(a_arg: SSAValue, b_arg: SSAValue, c_arg: SSAValue) -> None:
        m, k, n = tile.DimOp(a_arg, 0).result, tile.DimOp(a_arg, 1).result, tile.DimOp(b_arg, 1).result
        tile.GridOp([arith.DivUIOp(m, idx(bm)).result, arith.DivUIOp(n, idx(bn)).result], ["i", "j"])
        i, j = tile.BlockIdOp(0).result, tile.BlockIdOp(1).result
        acc_type = tile.RegisterTileType([bm, bn], f32)
        acc = tile.FillOp(0.0, acc_type).result

        def step(kk: SSAValue, acc: SSAValue) -> list[SSAValue]:
            a = tile.LoadOp(a_arg, [i, kk], tile.SharedTileType([bm, bk], dtype)).result
            b = tile.LoadOp(b_arg, [kk, j], tile.SharedTileType([bk, bn], dtype)).result
            return [tile.MmaOp(a, b, acc, acc_type).result]

        (acc,) = for_loop(idx(0), arith.DivUIOp(k, idx(bk)).result, [acc], step)
        tile.StoreOp(tile.ConvertOp(acc, dtype).result, c_arg, [i, j])

    return kernel(
        "gemm",
        {name: tile.GlobalType(dims, dtype) for name, dims in (("A", ["M", "K"]), ("B", ["K", "N"]), ("C", ["M", "N"]))},
        body,
        {"BM": IntegerAttr(bm, 64), "BN": IntegerAttr(bn, 64), "BK": IntegerAttr(bk, 64)},
    )


def attention(d: int = 64, bq: int = 128, bkv: int = 128, causal: bool = False) -> ModuleOp:
    """FlashAttention-2 forward as in DESIGN.md §3 (causal needs bq == bkv)."""
    assert not causal or bq == bkv

    def body(q_arg: SSAValue, k_arg: SSAValue, v_arg: SSAValue, o_arg: SSAValue, lse_arg: SSAValue) -> None:
        n, h, b = (tile.DimOp(q_arg, axis).result for axis in (2, 1, 0))
        tile.GridOp([arith.DivUIOp(n, idx(bq)).result, h, b], ["qi", "h", "b"])
        qi, hi, bi = (tile.BlockIdOp(axis).result for axis in range(3))
        q = tile.LoadOp(q_arg, [bi, hi, qi, idx(0)], tile.SharedTileType([bq, d], bf16)).result
        o_type, vec = tile.RegisterTileType([bq, d], f32), tile.RegisterVectorType(bq, f32)
        s_type = tile.RegisterTileType([bq, bkv], f32)
        init = [tile.FillOp(0.0, o_type).result, tile.FillOp(-math.inf, vec).result, tile.FillOp(0.0, vec).result]
        ub = arith.AddiOp(qi, idx(1)).result if causal else arith.DivUIOp(n, idx(bkv)).result

        def step(kv: SSAValue, o: SSAValue, m: SSAValue, l: SSAValue) -> list[SSAValue]:
            k = tile.LoadOp(k_arg, [bi, hi, kv, idx(0)], tile.SharedTileType([bkv, d], bf16)).result
            v = tile.LoadOp(v_arg, [bi, hi, kv, idx(0)], tile.SharedTileType([bkv, d], bf16)).result
            s = tile.MmaOp(q, k, None, s_type, transpose_b=True).result
            s = tile.BinaryOp(tile.BinaryFn.MUL, s, scalar(math.log2(math.e) / math.sqrt(d))).result
            if causal:
                diagonal = arith.CmpiOp(kv, qi, "eq").result

                def masked() -> list[SSAValue]:
                    rows, cols = arith.MuliOp(qi, idx(bq)).result, arith.MuliOp(kv, idx(bkv)).result
                    return [tile.MaskOp(tile.MaskKind.CAUSAL, s, rows, cols, -math.inf).result]

                (s,) = if_else(diagonal, [s_type], masked, lambda: [s])
            row_max = tile.ReduceOp(tile.ReduceFn.MAX, tile.Axis.ROW, s).result
            m_new = tile.BinaryOp(tile.BinaryFn.MAX, m, row_max).result
            p = tile.UnaryOp(
                tile.UnaryFn.EXP2, tile.BroadcastOp(tile.BinaryFn.SUB, tile.Axis.ROW, s, m_new).result
            ).result
            alpha = tile.UnaryOp(tile.UnaryFn.EXP2, tile.BinaryOp(tile.BinaryFn.SUB, m, m_new).result).result
            l = tile.BinaryOp(
                tile.BinaryFn.ADD,
                tile.BinaryOp(tile.BinaryFn.MUL, l, alpha).result,
                tile.ReduceOp(tile.ReduceFn.SUM, tile.Axis.ROW, p).result,
            ).result
            scaled = tile.BroadcastOp(tile.BinaryFn.MUL, tile.Axis.ROW, o, alpha).result
            o = tile.MmaOp(tile.ConvertOp(p, bf16).result, v, scaled, o_type).result
            return [o, m_new, l]

        o, m, l = for_loop(idx(0), ub, init, step)
        out = tile.ConvertOp(tile.BroadcastOp(tile.BinaryFn.DIV, tile.Axis.ROW, o, l).result, bf16).result
        tile.StoreOp(out, o_arg, [bi, hi, qi, idx(0)])
        lse = tile.BinaryOp(tile.BinaryFn.ADD, m, tile.UnaryOp(tile.UnaryFn.LOG2, l).result).result
        tile.StoreOp(tile.BinaryOp(tile.BinaryFn.MUL, lse, scalar(math.log(2))).result, lse_arg, [bi, hi, qi])

    qkvo = tile.GlobalType(["B", "H", "N", d], bf16)
    return kernel(
        "attn_fwd",
        {"Q": qkvo, "K": qkvo, "V": qkvo, "O": qkvo, "LSE": tile.GlobalType(["B", "H", "N"], f32)},
        body,
        {"D": IntegerAttr(d, 64), "BQ": IntegerAttr(bq, 64), "BKV": IntegerAttr(bkv, 64), "CAUSAL": IntegerAttr(int(causal), 64)},
    )


def bf16_round(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def attention_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> tuple[np.ndarray, np.ndarray]:
    """O and the natural-log LSE of softmax(q k^T / sqrt(d)) v, in f64."""
    q, k, v = (bf16_round(x).astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, s)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    l = p.sum(-1, keepdims=True)
    return p @ v / l, (m + np.log(l))[..., 0]


def rel_error(out: np.ndarray, ref: np.ndarray) -> float:
    out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


def per_block_kernel(
    inputs: dict[str, tile.RegisterTileType], output: tile.RegisterTileType | tile.RegisterVectorType,
    compute: Callable[..., SSAValue],
) -> ModuleOp:
    """One register tile per block from each input `X: gl[B, rows, cols]` (grid (B) as (i)),
    `compute(i, *tiles)` → the value stored to `Y: gl[B, rows, cols]` (a vector: `gl[B, n]`)."""
    out_dims = ["B", *output.get_shape()]

    def body(*args: SSAValue) -> None:
        tile.GridOp([tile.DimOp(args[0], 0).result], ["i"])
        i = tile.BlockIdOp(0).result
        tiles = []
        for arg, t in zip(args, inputs.values()):
            shared = tile.LoadOp(arg, [i, idx(0), idx(0)], tile.SharedTileType(t.get_shape(), t.element_type)).result
            tiles.append(tile.ToRegOp(shared).result)
        coords = [i] + [idx(0)] * len(output.get_shape())
        tile.StoreOp(compute(i, *tiles), args[-1], coords)

    gl_args = {name: tile.GlobalType(["B", *t.get_shape()], t.element_type) for name, t in inputs.items()}
    return kernel("k", gl_args | {"Y": tile.GlobalType(out_dims, output.element_type)}, body)
