"""Reference for decode_g.tk: G (any number of) query rows per KV head attend to the whole KV
cache, as in decode.tk."""

from __future__ import annotations

from decode_ref import reference

__all__ = ["reference"]
