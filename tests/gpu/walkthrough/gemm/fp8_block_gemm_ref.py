import numpy as np


def inputs(params, rng):
    M, N, K = int(params["M"]), int(params["N"]), int(params["K"])
    kb, nb = -(-K // 128), -(-N // 128)
    assert int(params["KB"]) == kb and int(params["NB"]) == nb
    return {"SA": rng.uniform(0.5, 2, (kb, M)).astype(np.float32),
            "SB": rng.uniform(0.5, 2, (nb, kb)).astype(np.float32)}


def reference(inputs, params):
    a, b, sa, sb = (np.asarray(inputs[n], np.float32) for n in ("A", "B", "SA", "SB"))
    M, K = a.shape
    N = b.shape[0]
    c = np.zeros((M, N), np.float32)
    for k in range(sa.shape[0]):
        ks = slice(k * 128, (k + 1) * 128)
        p = a[:, ks] @ b[:, ks].T
        c += p * sa[k][:, None] * np.repeat(sb[:, k], 128)[:N][None, :]
    return {"C": c}
