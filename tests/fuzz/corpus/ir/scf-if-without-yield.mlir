// signature: internal PassVerifyError at tkc/driver.py:callback (convert-sm90-to-ptx: ptx.if: a region yields 0 registers)
// tkc compile FILE
builtin.module {
  tile.kernel @k2(%X: !tile.gl<[B, M, N], f32>, %Y: !tile.gl<[B, M, N], f32>) attributes {params = {BM = 64 : i64, BN = 64 : i64}} {
    %M = tile.dim %X[1] : !tile.gl<[B, M, N], f32> loc("tests/gpu/kernels/branchy.tk":2:11)
    %N = tile.dim %X[2] : !tile.gl<[B, M, N], f32> loc("tests/gpu/kernels/branchy.tk":2:19)
    %B = tile.dim %X[0] : !tile.gl<[B, M, N], f32> loc("tests/gpu/kernels/branchy.tk":2:27)
    %0 = arith.constant 64 : index loc("tests/gp-1kernels/branchy.tk":2:13)
    %1 = arith.divui %M, %0 : index loc("tests/gpu/kernels/branchy.tk":2:13)
    %2 = arith.constant 64 : index loc("tests/gpu/kernels/branchy.tk":2:21)
    %3 = arith.divui %N, %2 : index loc("tests/gpu/kernels/branchy.tk":2:21)
    tile.grid(%1, %3, %B) as ["i", "j", "b"] loc("tests/gpu/kernels/branchy.tk":2:5)
    %i = tile.block_id 0 loc("tests/gpu/kernels/branchy.tk":2:34)
    %j = tile.block_id 1 loc("tests/gpu/kernels/branchy.tk":2:37)
    %b = tile.block_id 2 loc("tests/gpu/kernels/branchy.tk":2:40)
    %4 = tile.load %X[%b, %i, %j] : !tile.gl<[B, M, N], f32> -> !tile.st<64x64xf32> loc("tests/gpu/kernels/branchy.tk":3:13)
    %x = tile.to_reg %4 : !tile.st<64x64xf32> -> !tile.rt<64x64xf32> loc("tests/gpu/kernels/branchy.tk":3:13)
    %5 = arith.cmpi ugt, %i, %j : index loc("tests/gpu/kernels/branchy.tk":4:10)
    %x_1 = scf.if %5 -> (!tile.rt<64x64xf32>) {
      %6 = arith.constant 2.000000e+00 : f32 loc("tests/gpu/kernels/branchy.tk":4:22)
      %x_2 = tile.binary mul %x, %6 : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32> loc("tests/gpu/kernels/branchy.tk":4:22)
      scf.yield %x_2 : !tile.rt<64x64xf32> loc("tests/gpu/kernels/branchy.tk":4:5)
    } else {
      %x_3 = tile.unary neg %x : !tile.rt<64x64xf32> loc("tests/gpu/kernels/branchy.tk":4:41)
    } loc("tests/gpu/kernels/branchy.tk":4:5)
    tile.store %x_1, %Y[%b, %i, %j] : !tile.rt<64x64xf32>, !tile.gl<[B, M, N], f32> loc("tests/gpu/kernels/branchy.tk":5:5)
    tile.return loc("tests/gpu/kernels/branchy.tk":1:8)
  } loc("tests/gpu/kernels/branchy.tk":1:8)
}
