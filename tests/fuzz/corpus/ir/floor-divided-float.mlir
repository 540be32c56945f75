// tkc compile FILE
// expect: is not a dictionary of dims to positive integers
// floor_divided_dims read a float as an integer (TypeError in tile-mask-tails).
  tile.kernel @raw_same_tile(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[ N], f32>) attributes {floor_divided = {M = 64 : i64, N = 64 : f16}, params = {B = 64 : i64}} {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32> loc("":3:11)
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32> loc("tests/gpu/kernels/raw_same_tile.tk":3:18)
    %0 = arith.constant 64 : index loc("tests/gpu/kernels/raw_same_tile.tk":3:13)
    %1 = arith.floordivsi %M, %0 : index loc("tests/gpu/kernels/raw_same_tile.tk":3:13)
    %2 = arith.constant 64 : index loc("tests/gpu/kernels/raw_same_tile.tk":3:20)
    %3 = arith.floordivsi %N, %2 : index loc("tests/gpu/kernels/raw_same_tile.tk":3:20)
    tile.grid(%1, %3) as ["i", "j"] loc("tests/gpu/kernels/raw_same_tile.tk":3:5)
    tile.return loc("tests/gpu/kernels/raw_same_tile.tk":2:8)
  } loc("tests/gpu/kernels/raw_same_tile.tk":2:8)
