// RUN: tkc-opt %s -p tile-swizzle-select --split-input-file | filecheck %s
// RUN: not tkc-opt %S/Inputs/bad-swizzle.mlir -p tile-swizzle-select 2>&1 | filecheck %s --check-prefix=BAD

// Each shared tile gets the widest span dividing its row bytes, in its type and as a decision,
// with its alignment; each tile.mma gets the descriptor of each shared operand, K-major or
// MN-major by how the mma reads it.
builtin.module {
  tile.kernel @k(%A: !tile.gl<[M, K], bf16>, %B: !tile.gl<[K, N], bf16>, %X: !tile.gl<[M, N], f32>, %F: !tile.gl<[M, K], f8E4M3FN>) {
    %c0 = arith.constant 0 : index
    tile.grid(%c0) as ["i"]
    // CHECK: %a = tile.load %A[%c0, %c0] {swizzle = #tile.decision<128, "128-byte rows (64 x bf16) as one 128-byte panel (one TMA box); written by TMA, read K-major by wgmma as A">, smem_align = 1024 : i64} : !tile.gl<[M, K], bf16> -> !tile.st<128x64xbf16, swizzle 128>
    %a = tile.load %A[%c0, %c0] : !tile.gl<[M, K], bf16> -> !tile.st<128x64xbf16>
    // CHECK: %b = tile.load {{.*}}"512-byte rows (256 x bf16) as 4 panels of 128 B (one TMA box each); written by TMA, read MN-major by wgmma as B">, smem_align = 1024 : i64} {{.*}} -> !tile.st<64x256xbf16, swizzle 128>
    %b = tile.load %B[%c0, %c0] : !tile.gl<[K, N], bf16> -> !tile.st<64x256xbf16>
    // CHECK: %bt = tile.load {{.*}}read K-major by wgmma as B">{{.*}} -> !tile.st<256x64xbf16, swizzle 128>
    %bt = tile.load %B[%c0, %c0] : !tile.gl<[K, N], bf16> -> !tile.st<256x64xbf16>
    // CHECK: %n64 = tile.load {{.*}}swizzle = #tile.decision<64, "64-byte rows (32 x bf16) as one 64-byte panel (one TMA box){{.*}}smem_align = 512 : i64{{.*}} -> !tile.st<128x32xbf16, swizzle 64>
    %n64 = tile.load %A[%c0, %c0] : !tile.gl<[M, K], bf16> -> !tile.st<128x32xbf16>
    // CHECK: %n32 = tile.load {{.*}}swizzle = #tile.decision<32, {{.*}}smem_align = 256 : i64{{.*}} -> !tile.st<64x16xbf16, swizzle 32>
    %n32 = tile.load %A[%c0, %c0] : !tile.gl<[M, K], bf16> -> !tile.st<64x16xbf16>
    // fp32: 32 columns are 128 bytes.
    // CHECK: %x = tile.load {{.*}}"128-byte rows (32 x f32) as one 128-byte panel (one TMA box); written by TMA, read by ld.shared"{{.*}} -> !tile.st<64x32xf32, swizzle 128>
    %x = tile.load %X[%c0, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x32xf32>
    %xr = tile.to_reg %x : !tile.st<64x32xf32> -> !tile.rt<64x32xf32>
    // fp8: 128 columns are 128 bytes.
    // CHECK: %f = tile.load {{.*}} -> !tile.st<64x128xf8E4M3FN, swizzle 128>
    %f = tile.load %F[%c0, %c0] : !tile.gl<[M, K], f8E4M3FN> -> !tile.st<64x128xf8E4M3FN>
    // CHECK: tile.mma %a, %b {a_desc = #tile.decision<4611686293305360384, "0x4000004000010000: K-major, 128B swizzle (layout 1): LBO 16 (unused), SBO 1024 (8 rows x 128 B), k-step +32 B, panels 16384 B apart">, b_desc = #tile.decision<4611686293338849280, "0x4000004002000000: MN-major, 128B swizzle (layout 1): LBO 8192 (next 128-byte MN panel), SBO 1024 (8 rows x 128 B), k-step +2048 B, panels 8192 B apart">}
    %s = tile.mma %a, %b : !tile.st<128x64xbf16>, !tile.st<64x256xbf16> -> !tile.rt<128x256xf32>
    // CHECK: tile.mma %a, %bt transpose_b {a_desc = {{.*}}, b_desc = #tile.decision<4611686293305360384, "0x4000004000010000: K-major
    %t = tile.mma %a, %bt transpose_b : !tile.st<128x64xbf16>, !tile.st<256x64xbf16> -> !tile.rt<128x256xf32>
    // 64B: SBO 512, layout 2; 32B: SBO 256, layout 3.
    // CHECK: tile.mma %n64, %n64 transpose_b {a_desc = #tile.decision<{{.*}}, "0x8000002000010000: K-major, 64B swizzle (layout 2): LBO 16 (unused), SBO 512
    %u = tile.mma %n64, %n64 transpose_b : !tile.st<128x32xbf16>, !tile.st<128x32xbf16> -> !tile.rt<128x128xf32>
    // CHECK: tile.mma %n32, %n32 transpose_b {a_desc = #tile.decision<{{.*}}, "0xc000001000010000: K-major, 32B swizzle (layout 3): LBO 16 (unused), SBO 256
    %w = tile.mma %n32, %n32 transpose_b : !tile.st<64x16xbf16>, !tile.st<64x16xbf16> -> !tile.rt<64x64xf32>
    tile.return
  }
}

// -----

// A pin is kept and checked; a tile passed around a loop gets one swizzle in every type.
builtin.module {
  tile.kernel @pinned(%A: !tile.gl<[M, K], bf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    tile.grid(%c1) as ["i"]
    // CHECK: %a = tile.load %A[%c0, %c0] {swizzle = #tile.decision<64, "pinned by @swizzle(64); written by TMA, read by ld.shared">, smem_align = 512 : i64} : !tile.gl<[M, K], bf16> -> !tile.st<64x64xbf16, swizzle 64>
    %a = tile.load %A[%c0, %c0] {swizzle = 64 : i64} : !tile.gl<[M, K], bf16> -> !tile.st<64x64xbf16>
    // CHECK: scf.for {{.*}} iter_args(%t = %a) -> (!tile.st<64x64xbf16, swizzle 64>)
    %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%t = %a) -> (!tile.st<64x64xbf16>) {
      scf.yield %t : !tile.st<64x64xbf16>
    }
    // CHECK: tile.to_reg %r : !tile.st<64x64xbf16, swizzle 64> -> !tile.rt<64x64xbf16>
    %x = tile.to_reg %r : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
    tile.return
  }
}

// BAD: error: @swizzle(128) needs rows of a multiple of 128 bytes (TMA box = one 128-byte panel); the 64x32xbf16 tile has 64-byte rows
