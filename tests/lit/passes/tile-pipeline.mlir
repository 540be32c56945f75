// RUN: tkc-opt %s -p tile-swizzle-select,tile-bank-conflicts,tile-occupancy-plan,tile-pipeline | filecheck %s
// RUN: tkc-opt %S/Inputs/gemm.mlir -p tile-swizzle-select,tile-bank-conflicts,tile-occupancy-plan,tile-pipeline | filecheck %s --check-prefix=GEMM

// Q does not depend on the loop: it is hoisted (with the constant its coordinates use) and
// loaded once; K and V make the stage of a 3-stage ring after it in shared memory (the first KB
// holds the mbarriers), and the output is staged in Q's bytes, dead by then.
builtin.module {
  tile.kernel @attn(%Q: !tile.gl<[N, 128], bf16>, %K: !tile.gl<[N, 128], bf16>, %O: !tile.gl<[N, 128], bf16>) {
    %n = tile.dim %Q[0] : !tile.gl<[N, 128], bf16>
    %c128 = arith.constant 128 : index
    %g = arith.divui %n, %c128 : index
    tile.grid(%g) as ["qi"]
    %qi = tile.block_id 0
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %o0 = tile.fill 0.0 : f32 : !tile.rt<128x128xf32>
    %o = scf.for %kv = %c0 to %g step %c1 iter_args(%oi = %o0) -> (!tile.rt<128x128xf32>) {
      %z = arith.constant 0 : index
      %q = tile.load %Q[%qi, %z] : !tile.gl<[N, 128], bf16> -> !tile.st<128x128xbf16>
      %k = tile.load %K[%kv, %z] : !tile.gl<[N, 128], bf16> -> !tile.st<128x128xbf16>
      %v = tile.load %K[%kv, %z] : !tile.gl<[N, 128], bf16> -> !tile.st<128x128xbf16>
      %s = tile.mma %q, %k, %oi transpose_b : !tile.st<128x128xbf16>, !tile.st<128x128xbf16>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
      %p = tile.convert %s : !tile.rt<128x128xf32> -> !tile.rt<128x128xbf16>
      %on = tile.mma %p, %v, %s : !tile.rt<128x128xbf16>, !tile.st<128x128xbf16>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
      scf.yield %on : !tile.rt<128x128xf32>
    }
    %ob = tile.convert %o : !tile.rt<128x128xf32> -> !tile.rt<128x128xbf16>
    tile.store %ob, %O[%qi, %c0] : !tile.rt<128x128xbf16>, !tile.gl<[N, 128], bf16>
    tile.return
  }
}
// CHECK:      %z = arith.constant 0 : index
// CHECK-NEXT: %q = tile.load %Q[%qi, %z] {{.*}}smem_offset = 1024 : i64}
// CHECK-NEXT: %o = scf.for
// CHECK-NEXT:   %k = tile.load %K[%kv, %z] {{.*}}stage_offset = 0 : i64}
// CHECK-NEXT:   %v = tile.load %K[%kv, %z] {{.*}}stage_offset = 32768 : i64}
// CHECK:      } {pipeline = #tile.decision<3, "3-stage TMA ring: k 128x128xbf16 + v 128x128xbf16 = 65536 bytes per stage, full/empty mbarrier per stage">, ring_offset = 33792 : i64, stage_bytes = 65536 : i64}
// CHECK:      tile.store %ob, %O[%qi, %c0] {{.*}}smem_offset = 1024 : i64, staging_reuse = #tile.decision<1, "the CTA runs one tile

// In the gemm the 4-stage ring of A and B tiles starts after the mbarriers and the epilogue staging follows it.
// GEMM:      %a = tile.load {{.*}}stage_offset = 0 : i64}
// GEMM-NEXT: %b = tile.load {{.*}}stage_offset = 16384 : i64}
// GEMM:      } {pipeline = #tile.decision<4, "4-stage TMA ring: a 128x64xbf16 + b 64x256xbf16 = 49152 bytes per stage, full/empty mbarrier per stage">, ring_offset = 1024 : i64, stage_bytes = 49152 : i64}
// GEMM:      tile.store {{.*}}smem_offset = 197632 : i64}
