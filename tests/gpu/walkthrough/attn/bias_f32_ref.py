"""Reference for bias_f32.tk: the same attention with an additive bias as bias.tk, the bias in f32."""

from __future__ import annotations

from bias_ref import reference

__all__ = ["reference"]
