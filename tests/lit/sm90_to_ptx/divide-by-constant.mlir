// Division of a tile by a constant: a multiplication by the reciprocal where that equals the
// division for every x (IEEE: x / ±0 = x * ±inf, exactly, signed zeros, infinities and NaN
// included); a real div where 1/c is no normal f32 (a subnormal c overflows it). Hand-written
// tile IR: the frontend rejects a division by a constant zero, this IR must still lower.
// RUN: tkc compile %s --emit=ptx | filecheck %s
// CHECK: mul.f32 %{{.*}}, 0f7F800000;
// CHECK: mul.f32 %{{.*}}, 0fFF800000;
// CHECK: div.rn.f32 %{{.*}}, 0f000116C2;
// CHECK: mul.f32 %{{.*}}, 0f3E800000;

builtin.module {
  tile.kernel @div(%X: !tile.gl<[M, N], f32>, %P: !tile.gl<[M, N], f32>, %Q: !tile.gl<[M, N], f32>, %R: !tile.gl<[M, N], f32>, %S: !tile.gl<[M, N], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %0 = arith.constant 64 : index
    %1 = arith.divui %M, %0 : index
    %2 = arith.constant 64 : index
    %3 = arith.divui %N, %2 : index
    tile.grid(%1, %3) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %4 = tile.load %X[%i, %j] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %4 : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %5 = arith.constant 0.000000e+00 : f32
    %6 = tile.binary div %x, %5 : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    tile.store %6, %P[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    %7 = arith.constant -0.000000e+00 : f32
    %8 = tile.binary div %x, %7 : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    tile.store %8, %Q[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    %9 = arith.constant 9.999950e-41 : f32
    %10 = tile.binary div %x, %9 : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    tile.store %10, %R[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    %11 = arith.constant 4.000000e+00 : f32
    %12 = tile.binary div %x, %11 : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    tile.store %12, %S[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
