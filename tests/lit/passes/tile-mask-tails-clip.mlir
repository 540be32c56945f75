// tile-mask-tails on hand-written tile IR: gathers of one row of E (`load E[elem(id, id + 1), 0] :
// rt<bf16>[16, 64]`). A range of a fixed length (id + 1 - id = 1) has one valid row wherever id
// lies, so its padding is the tail (1 element, no coordinate):
// - @gather stores it as row r of Y (`store Y[elem(r, r + 1), 0]`), whose range has the same
//   length: the value ends where the destination does, and the store stays as it is;
// - @gather_open stores it at `elem(r)`, a range without an end: the store's range is ended
//   where the value's valid rows end (r + 1), with the reason;
// - @bag sums gathered rows through a loop-carried var: the padding does not move from one
//   row to the next, so it stays exact and the store is left as it is (no whole-tile demand).
// A second run changes nothing.
// RUN: tkc-opt %s -p tile-mask-tails | filecheck %s
// RUN: tkc-opt %s -p tile-mask-tails -o %t.once.mlir && tkc-opt %t.once.mlir -p tile-mask-tails | diff %t.once.mlir -

builtin.module {
  tile.kernel @gather(%Ids: !tile.gl<[T], i32>, %E: !tile.gl<[V, 64], bf16>, %Y: !tile.gl<[T, 64], bf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %T = tile.dim %Ids[0] : !tile.gl<[T], i32>
    tile.grid(%T) as ["r"]
    %r = tile.block_id 0
    %id = tile.load_scalar %Ids[%r] : !tile.gl<[T], i32> -> index
    %id_end = arith.addi %id, %c1 : index
    %es = tile.load %E[%id, %c0] ends[%id_end] {element_coords = [0 : i64], element_ends = [0 : i64]} : !tile.gl<[V, 64], bf16> -> !tile.st<16x64xbf16>
    %e = tile.to_reg %es : !tile.st<16x64xbf16> -> !tile.rt<16x64xbf16>
    %r_end = arith.addi %r, %c1 : index
    tile.store %e, %Y[%r, %c0] ends[%r_end] {element_coords = [0 : i64], element_ends = [0 : i64]} : !tile.rt<16x64xbf16>, !tile.gl<[T, 64], bf16>
    tile.return
  }
  tile.kernel @gather_open(%Ids: !tile.gl<[T], i32>, %E: !tile.gl<[V, 64], bf16>, %Y: !tile.gl<[T, 64], bf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %T = tile.dim %Ids[0] : !tile.gl<[T], i32>
    tile.grid(%T) as ["r"]
    %r = tile.block_id 0
    %id = tile.load_scalar %Ids[%r] : !tile.gl<[T], i32> -> index
    %id_end = arith.addi %id, %c1 : index
    %es = tile.load %E[%id, %c0] ends[%id_end] {element_coords = [0 : i64], element_ends = [0 : i64]} : !tile.gl<[V, 64], bf16> -> !tile.st<16x64xbf16>
    %e = tile.to_reg %es : !tile.st<16x64xbf16> -> !tile.rt<16x64xbf16>
    tile.store %e, %Y[%r, %c0] {element_coords = [0 : i64]} : !tile.rt<16x64xbf16>, !tile.gl<[T, 64], bf16>
    tile.return
  }
  tile.kernel @bag(%Ids: !tile.gl<[T, 4], i32>, %E: !tile.gl<[V, 64], bf16>, %Y: !tile.gl<[T, 64], f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %T = tile.dim %Ids[0] : !tile.gl<[T, 4], i32>
    tile.grid(%T) as ["t"]
    %t = tile.block_id 0
    %zero = tile.fill 0.000000e+00 : f32 : !tile.rt<16x64xf32>
    %sum = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (!tile.rt<16x64xf32>) {
      %id = tile.load_scalar %Ids[%t, %k] : !tile.gl<[T, 4], i32> -> index
      %id_end = arith.addi %id, %c1 : index
      %es = tile.load %E[%id, %c0] ends[%id_end] {element_coords = [0 : i64], element_ends = [0 : i64]} : !tile.gl<[V, 64], bf16> -> !tile.st<16x64xbf16>
      %e = tile.to_reg %es : !tile.st<16x64xbf16> -> !tile.rt<16x64xbf16>
      %wide = tile.convert %e : !tile.rt<16x64xbf16> -> !tile.rt<16x64xf32>
      %next = tile.binary add %acc, %wide : !tile.rt<16x64xf32>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
      scf.yield %next : !tile.rt<16x64xf32>
    }
    %t_end = arith.addi %t, %c1 : index
    tile.store %sum, %Y[%t, %c0] ends[%t_end] {element_coords = [0 : i64], element_ends = [0 : i64]} : !tile.rt<16x64xf32>, !tile.gl<[T, 64], f32>
    tile.return
  }
}

// CHECK-LABEL: tile.kernel @gather(
// CHECK-NOT:   clipped
// CHECK:       tile.store %e, %Y[%r, %c0] ends[%r_end] {element_coords = [0 : i64], element_ends = [0 : i64]}
// CHECK-LABEL: tile.kernel @gather_open(
// CHECK:       %[[END:.*]] = arith.addi %r, %{{.*}} : index
// CHECK-NEXT:  tile.store %e, %Y[%r, %c0] ends[%[[END]]] {element_coords = [0 : i64], element_ends = [0 : i64], clipped = #tile.decision<0, "the rows of its value end where the padding of a tile it was computed from begins (of a range of 1 element(s)): the store's element range ends there, since a store writes no padding">}
// CHECK-LABEL: tile.kernel @bag(
// CHECK-NOT:   clipped
// CHECK-NOT:   whole_tiles
// CHECK:       tile.store %sum, %Y[%t, %c0] ends[%t_end] {element_coords = [0 : i64], element_ends = [0 : i64]}
