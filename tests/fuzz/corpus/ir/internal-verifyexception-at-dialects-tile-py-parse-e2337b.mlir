// signature: internal VerifyException at dialects/tile.py:parse
// tkc compile FILE
  tile.kernel @k5(%X: !tile.gl<[N], f32>, %Y: !tile.gl<[N], f32>) attributes {params = {BM = 64 : i64, BN = 64 : i64}} {
    tile.store %9, %Y[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[], i64>