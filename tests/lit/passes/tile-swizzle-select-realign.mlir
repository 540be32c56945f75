// RUN: tkc-opt %s -p tile-swizzle-select | filecheck %s

// A shared vector loaded at an elem start along its tensor's innermost dim that is not provably
// a multiple of 16 bytes is realigned: its TMA box starts at the boundary at or below the start,
// 16 bytes longer, and the consumers read it from the start on. A start provably aligned, a leading
// index and a vector a store reads from shared memory are not.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[H, T], f32>, %B: !tile.gl<[H, T], bf16>, %Start: !tile.gl<[S], i32>, %Y: !tile.gl<[H, T], f32>) {
    %c0 = arith.constant 0 : index
    %c6 = arith.constant 6 : index
    %c8 = arith.constant 8 : index
    tile.grid(%c0) as ["s"]
    %s = tile.block_id 0
    %x0 = tile.load_scalar %Start[%s] : !tile.gl<[S], i32> -> index
    // CHECK: %table = tile.load %X[%c0, %x0] {element_coords = [1 : i64], realigned = #tile.decision<4, "its elem(...) start along the tensor's innermost dim comes from launch-time data, and TMA starts a box only on 16 bytes there: the box starts at the boundary at or below it (4 elements longer), and the consumers read the vector from the start on">}
    %table = tile.load %X[%c0, %x0] {element_coords = [1 : i64]} : !tile.gl<[H, T], f32> -> !tile.sv<64xf32>
    %r1 = tile.to_reg %table : !tile.sv<64xf32> -> !tile.rv<64xf32>
    %six = arith.muli %s, %c6 : index
    // CHECK: %bf = tile.load %B[%c0, %six] {element_coords = [1 : i64], realigned = #tile.decision<8, "its elem(...) start along the tensor's innermost dim is a multiple of 6 element(s), which puts it on a multiple of only 2, not of the 8 TMA needs,
    %bf = tile.load %B[%c0, %six] {element_coords = [1 : i64]} : !tile.gl<[H, T], bf16> -> !tile.sv<64xbf16>
    %r2 = tile.to_reg %bf : !tile.sv<64xbf16> -> !tile.rv<64xbf16>
    %eight = arith.muli %s, %c8 : index
    // CHECK: %aligned = tile.load %X[%c0, %eight] {element_coords = [1 : i64]} :
    %aligned = tile.load %X[%c0, %eight] {element_coords = [1 : i64]} : !tile.gl<[H, T], f32> -> !tile.sv<64xf32>
    %r3 = tile.to_reg %aligned : !tile.sv<64xf32> -> !tile.rv<64xf32>
    // CHECK: %rows = tile.load %X[%x0, %c0] :
    %rows = tile.load %X[%x0, %c0] : !tile.gl<[H, T], f32> -> !tile.sv<64xf32>
    %r4 = tile.to_reg %rows : !tile.sv<64xf32> -> !tile.rv<64xf32>
    // CHECK: %stored = tile.load %X[%c0, %x0] {element_coords = [1 : i64]} :
    %stored = tile.load %X[%c0, %x0] {element_coords = [1 : i64]} : !tile.gl<[H, T], f32> -> !tile.sv<64xf32>
    tile.store %stored, %Y[%c0, %c0] : !tile.sv<64xf32>, !tile.gl<[H, T], f32>
    tile.return
  }
}
