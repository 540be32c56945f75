import numpy as np

def inputs(params, rng):
    T, S1, BQ, NT = params["T"], params["S1"], params["BQ"], params["NT"]
    cuts = np.sort(rng.integers(0, T + 1, size=S1 - 2))
    cu = np.concatenate([[0], cuts, [T]]).astype(np.int32)
    # leave the last 5 rows outside every sequence (they must keep their values)
    cu[-1] = max(cu[-2], T - 5)
    tiles = [(s, q) for s in range(S1 - 1) for q in range(-(-(cu[s + 1] - cu[s]) // BQ))]
    assert len(tiles) <= NT, len(tiles)
    while len(tiles) < NT:
        tiles.append((0, 10**5))       # empty: starts past its sequence's end
    return {"CU": cu, "Tiles": np.asarray(tiles, np.int32)}

def reference(inputs, params):
    o = np.asarray(inputs["O"], np.float32); do = np.asarray(inputs["dO"], np.float32)
    lse = np.asarray(inputs["LSE"], np.float32); cu = inputs["CU"]
    d = np.full(lse.shape, np.nan, np.float32); l2 = np.full(lse.shape, np.nan, np.float32)
    d[:, :cu[-1]] = (o * do).sum(-1)[:, :cu[-1]]
    l2[:, :cu[-1]] = lse[:, :cu[-1]] * np.float32(1.4426950408889634)
    return {"Delta": d, "LSE2": l2}
