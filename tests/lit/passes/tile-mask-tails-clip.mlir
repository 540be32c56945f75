// tile-mask-tails on hand-written tile IR: a gather stores row id of E as row r of Y, each one row
// (`store Y[elem(r, r + 1), 0] = load E[elem(id, id + 1), 0] : rt<bf16>[16, 64]`). The value's
// rows end where its range does (id + 1), not where Y's does, so the store's element range is
// ended there too: end min(r + 1, r + (id + 1 - id)), with the reason. The columns need nothing
// (both tiles start at column 0 of 64-column tensors). A second run changes nothing.
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
}

// CHECK:      %id_end = arith.addi %id, %c1 : index
// CHECK-NEXT: %[[VALID:.*]] = arith.subi %id_end, %id : index
// CHECK:      %r_end = arith.addi %r, %c1 : index
// CHECK-NEXT: %[[END:.*]] = arith.addi %r, %[[VALID]] : index
// CHECK-NEXT: %[[BOTH:.*]] = arith.minsi %r_end, %[[END]] : index
// CHECK-NEXT: tile.store %e, %Y[%r, %c0] ends[%[[BOTH]]] {element_coords = [0 : i64], element_ends = [0 : i64], clipped = #tile.decision<0, "the rows of its value end where the padding of a tile it was computed from begins (of the range that ends at 'id_end'): the store's element range ends there, since a store writes no padding">}
