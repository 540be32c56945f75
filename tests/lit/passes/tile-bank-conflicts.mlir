// RUN: tkc-opt %s -p tile-swizzle-select,tile-bank-conflicts | filecheck %s

// Every warp-level shared access (each thread moving its accumulator-fragment pairs, as the
// lowering emits them) gets its conflict ways under the layout with the fewest
// wavefronts; ties keep the layout tile-swizzle-select chose for TMA and wgmma.
builtin.module {
  tile.kernel @k(%A: !tile.gl<[M, N], bf16>, %X: !tile.gl<[M, N], f32>, %V: !tile.gl<[M], f32>) {
    %c0 = arith.constant 0 : index
    tile.grid(%c0) as ["i"]
    %acc = tile.fill 0.0 : f32 : !tile.rt<128x256xf32>
    %out = tile.convert %acc : !tile.rt<128x256xf32> -> !tile.rt<128x256xbf16>
    // The bf16 epilogue: bf16x2 pairs into a 128B-swizzled staging tile (8-way unswizzled).
    // CHECK: tile.store %out, %A[%c0, %c0] {staging = #tile.decision<128, "128x256xbf16 staging tile, written by st.shared.b32 then one TMA store: 128B swizzle, the fewest wavefronts (bank_conflicts says why)">, bank_conflicts = #tile.decision<1, "st.shared.b32 (4 B/lane): 128B swizzle conflict-free, 512 wavefronts (ideal 512); 64B swizzle conflict-free, 32B swizzle conflict-free, no swizzle 8-way">, smem_access = "st.shared.b32"}
    tile.store %out, %A[%c0, %c0] : !tile.rt<128x256xbf16>, !tile.gl<[M, N], bf16>
    // An f32 epilogue stores accumulator pairs (8 B/lane): only the 32B swizzle is conflict-free.
    // CHECK: tile.store %f, %X[%c0, %c0] {staging = #tile.decision<32, {{.*}}bank_conflicts = #tile.decision<1, "st.shared.v2.f32 (8 B/lane): 32B swizzle conflict-free, 64 wavefronts (ideal 64); 128B swizzle 2-way, 64B swizzle 2-way, no swizzle 4-way">
    %f = tile.fill 1.0 : f32 : !tile.rt<64x32xf32>
    tile.store %f, %X[%c0, %c0] : !tile.rt<64x32xf32>, !tile.gl<[M, N], f32>
    // At an element range's end the rows before it may go as one-row TMA boxes, which start on
    // 128-byte lines of shared memory: the staged rows must be whole lines (32B swizzle's are not).
    // CHECK: tile.store reduce add %f, %X[%c0, %c0] ends[%c0] {element_coords = [0 : i64], element_ends = [0 : i64], staging = #tile.decision<128, "64x32xf32 staging tile, written by st.shared.v2.f32 then one TMA store: 128B swizzle, the fewest wavefronts (bank_conflicts says why); rows of whole 128-byte lines, where the one-row TMA boxes of a tile that reaches past an element range's end start">, bank_conflicts = #tile.decision<2, "st.shared.v2.f32 (8 B/lane): 128B swizzle 2-way, 128 wavefronts (ideal 64); no swizzle 4-way">
    tile.store reduce add %f, %X[%c0, %c0] ends[%c0] {element_coords = [0 : i64], element_ends = [0 : i64]} : !tile.rt<64x32xf32>, !tile.gl<[M, N], f32>
    // A TMA-loaded f32 tile read into registers is re-swizzled to 32B, in its type too.
    // CHECK: %x = tile.load %X[%c0, %c0] {swizzle = #tile.decision<32, "ld.shared.v2.f32 (8 B/lane): 32B swizzle conflict-free, 64 wavefronts (ideal 64); 128B swizzle 2-way, 64B swizzle 2-way, no swizzle 4-way">, smem_align = 256 : i64} : !tile.gl<[M, N], f32> -> !tile.st<64x32xf32, swizzle 32>
    // CHECK: tile.to_reg %x {bank_conflicts = #tile.decision<1, {{.*}}smem_access = "ld.shared.v2.f32"} : !tile.st<64x32xf32, swizzle 32>
    %x = tile.load %X[%c0, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x32xf32>
    %xr = tile.to_reg %x : !tile.st<64x32xf32> -> !tile.rt<64x32xf32>
    // Registers through shared and back (no TMA, no wgmma): any swizzle or none; 128B wins the tie.
    // CHECK: %s = tile.to_shared %bb {swizzle = #tile.decision<128, "128-byte rows (64 x bf16) as one 128-byte panel; written by st.shared, read by ld.shared">, smem_align = 1024 : i64, bank_conflicts = #tile.decision<1, "st.shared.b32 (4 B/lane) + ld.shared.b32 (4 B/lane): 128B swizzle conflict-free, 128 wavefronts (ideal 128); 64B swizzle conflict-free, 32B swizzle conflict-free, no swizzle 8-way">, smem_access = "st.shared.b32"} : !tile.rt<64x64xbf16> -> !tile.st<64x64xbf16, swizzle 128>
    // CHECK: tile.to_reg %s {bank_conflicts = #tile.decision<1, {{.*}}smem_access = "ld.shared.b32"}
    %bb = tile.fill 0.0 : bf16 : !tile.rt<64x64xbf16>
    %s = tile.to_shared %bb : !tile.rt<64x64xbf16> -> !tile.st<64x64xbf16>
    %sr = tile.to_reg %s : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
    // A pinned unswizzled tile keeps its layout; the conflicts are reported.
    // CHECK: tile.to_reg %p {bank_conflicts = #tile.decision<8, "ld.shared.b32 (4 B/lane): no swizzle 8-way, 512 wavefronts (ideal 64)">
    %p = tile.load %A[%c0, %c0] {swizzle = 0 : i64} : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
    %pr = tile.to_reg %p : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
    // Row vectors go straight to global memory: no shared access to plan.
    // CHECK: tile.store %v, %V[%c0] : !tile.rv<128xf32>
    %v = tile.fill 0.0 : f32 : !tile.rv<128xf32>
    tile.store %v, %V[%c0] : !tile.rv<128xf32>, !tile.gl<[M], f32>
    tile.return
  }
}
