"""Reference for colsum_split.tk: Sum += column sums, SumSq += column sums of squares."""
from __future__ import annotations
import numpy as np


def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float64)
    return {"Sum": (np.asarray(inputs["Sum"], np.float64) + x.sum(axis=0)).astype(np.float32),
            "SumSq": (np.asarray(inputs["SumSq"], np.float64) + (x * x).sum(axis=0)).astype(np.float32)}
