// tile-mask-tails on positions and selects (hand-written tile IR, a ragged N). A position tile
// reads no tensor: no padding, so a reduction of it needs no mask. A select has the padding of
// its tile operands; its value there is known where the condition's padding picks a branch of
// known padding: x > 0 holds 0 past N (x reads 0 there), so select(x > 0, x, -inf) holds -inf,
// which row_max leaves out as it is, while select(x > 0, x, 1) holds 1 and needs a mask. A
// condition computed from positions (a window around the diagonal) holds no padding of its own,
// so the select's value past N depends on the position: unknown, masked.
// RUN: tkc-opt %s -p tile-mask-tails | filecheck %s

builtin.module {
  tile.kernel @selects(%X: !tile.gl<[M, N], f32>, %S: !tile.gl<[M], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %rows = arith.ceildivui %M, %c64 : index
    tile.grid(%rows) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %row0 = arith.muli %i, %c64 : index
    %zero = arith.constant 0.000000e+00 : f32
    %one = arith.constant 1.000000e+00 : f32
    %ninf = arith.constant 0xff800000 : f32
    %window = arith.constant 8.000000e+00 : f32
    %xs = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %r = tile.position row %row0 : !tile.rt<64x64xf32>
    %c = tile.position col %c0 : !tile.rt<64x64xf32>
    %pos_max = tile.reduce max row %r : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
    %positive = tile.binary gt %x, %zero : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    %kept = tile.select %positive, %x, %ninf : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    %kept_max = tile.reduce max row %kept : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
    %ones = tile.select %positive, %x, %one : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    %ones_max = tile.reduce max row %ones : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
    %gap = tile.binary sub %r, %c : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    %near = tile.binary lt %gap, %window : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    %windowed = tile.select %near, %x, %ninf : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    %windowed_max = tile.reduce max row %windowed : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
    %a = tile.binary add %pos_max, %kept_max : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
    %b = tile.binary add %ones_max, %windowed_max : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
    %sum = tile.binary add %a, %b : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
    tile.store %sum, %S[%i] : !tile.rv<64xf32>, !tile.gl<[M], f32>
    tile.return
  }
}

// CHECK:      tile.kernel @selects({{.*}}) attributes {tail_masks = #tile.decision<2,
// CHECK:      %pos_max = tile.reduce max row %r
// CHECK:      %kept = tile.select %positive, %x, %ninf
// CHECK-NEXT: %kept_max = tile.reduce max row %kept
// CHECK-NEXT: %ones = tile.select %positive, %x, %one
// CHECK-NEXT: %[[ONES:.*]] = scf.if %{{.*}} -> (!tile.rt<64x64xf32>) {
// CHECK-NEXT:   tile.bounds_mask %ones[%{{.*}}, %{{.*}}] fill 0xff800000 : f32 {tails = "row_max at
// CHECK:      %ones_max = tile.reduce max row %[[ONES]]
// CHECK:      %windowed = tile.select %near, %x, %ninf
// CHECK-NEXT: %[[WIN:.*]] = scf.if %{{.*}} -> (!tile.rt<64x64xf32>) {
// CHECK-NEXT:   tile.bounds_mask %windowed
// CHECK:      %windowed_max = tile.reduce max row %[[WIN]]
