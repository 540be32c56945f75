import numpy as np

def inputs(params, rng):
    T, E, BM = params["T"], params["E"], params["BM"]
    assert params["E1"] == E + 1
    cuts = np.sort(rng.integers(0, T + 1, size=E - 1))
    off = np.concatenate([[0], cuts, [T]]).astype(np.int32)
    tiles = [(e, r) for e in range(E) for r in range(-(-(off[e + 1] - off[e]) // BM))]
    nt = params["NT"]
    assert len(tiles) <= nt, (len(tiles), nt)
    # pad the table with empty tiles (rows past their expert's end: nothing is written)
    while len(tiles) < nt:
        tiles.append((E - 1, -(-T // BM) + 1))
    return {"Off": off, "Tiles": np.asarray(tiles, np.int32),
            "Scale": rng.uniform(0.5, 2, size=E).astype(np.float32)}

def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float32); w = np.asarray(inputs["W"], np.float32)
    off = inputs["Off"]; sc = inputs["Scale"]
    y = np.full((x.shape[0], w.shape[2]), np.nan, np.float32)
    for e in range(w.shape[0]):
        a = x[off[e]:off[e + 1]] @ w[e]
        y[off[e]:off[e + 1]] = a / (1 + np.exp(-a)) * sc[e]
    return {"Y": y}
