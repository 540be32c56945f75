// RUN: tkc-opt %s -p tile-swizzle-select,tile-bank-conflicts,tile-occupancy-plan,tile-pipeline | filecheck %s

// Rings at any depth: the inner loop's A tile is its stage; W does not depend on the inner loop
// but on the outer one, so it is hoisted out of the inner loop only, into the outer loop's ring
// (the occupancy plan, which runs before the hoisting, sized that same layout, or tile-pipeline
// would refuse its smem_bytes); the loads in the if's branches are the stage of the if's own
// ring, each branch's from the stage's first byte (one branch fills a stage).
builtin.module {
  tile.kernel @nested(%A: !tile.gl<[M, K], bf16>, %W: !tile.gl<[K, N], bf16>, %B1: !tile.gl<[K, N], bf16>, %C: !tile.gl<[M, N], bf16>) {
    %m = tile.dim %A[0] : !tile.gl<[M, K], bf16>
    %k = tile.dim %A[1] : !tile.gl<[M, K], bf16>
    %n = tile.dim %C[1] : !tile.gl<[M, N], bf16>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %gm = arith.divui %m, %c64 : index
    %kt = arith.divui %k, %c64 : index
    %nt = arith.divui %n, %c64 : index
    tile.grid(%gm) as ["i"]
    %i = tile.block_id 0
    %zero = tile.fill 0.0 : f32 : !tile.rt<64x64xf32>
    scf.for %j = %c0 to %nt step %c1 {
      %acc = scf.for %kk = %c0 to %kt step %c1 iter_args(%acc_i = %zero) -> (!tile.rt<64x64xf32>) {
        %a = tile.load %A[%i, %kk] : !tile.gl<[M, K], bf16> -> !tile.st<64x64xbf16>
        %w = tile.load %W[%c0, %j] : !tile.gl<[K, N], bf16> -> !tile.st<64x64xbf16>
        %p = tile.mma %a, %w, %acc_i : !tile.st<64x64xbf16>, !tile.st<64x64xbf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
        scf.yield %p : !tile.rt<64x64xf32>
      }
      %r = arith.remui %j, %c2 : index
      %even = arith.cmpi eq, %r, %c0 : index
      %out = scf.if %even -> (!tile.rt<64x64xf32>) {
        %b0 = tile.load %W[%c1, %j] : !tile.gl<[K, N], bf16> -> !tile.st<64x64xbf16>
        %x0 = tile.to_reg %b0 : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
        %y0 = tile.convert %x0 : !tile.rt<64x64xbf16> -> !tile.rt<64x64xf32>
        scf.yield %y0 : !tile.rt<64x64xf32>
      } else {
        %b1 = tile.load %B1[%c1, %j] : !tile.gl<[K, N], bf16> -> !tile.st<64x64xbf16>
        %x1 = tile.to_reg %b1 : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
        %y1 = tile.convert %x1 : !tile.rt<64x64xbf16> -> !tile.rt<64x64xf32>
        scf.yield %y1 : !tile.rt<64x64xf32>
      }
      %sum = tile.binary "add" %acc, %out : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
      %bf = tile.convert %sum : !tile.rt<64x64xf32> -> !tile.rt<64x64xbf16>
      tile.store %bf, %C[%i, %j] : !tile.rt<64x64xbf16>, !tile.gl<[M, N], bf16>
    }
    tile.return
  }
}

// CHECK:      scf.for %j = %c0 to %nt step %c1 {
// CHECK-NEXT:   %w = tile.load %W[%c0, %j] {{.*}}stage_offset = 0 : i64}
// CHECK-NEXT:   %acc = scf.for %kk
// CHECK-NEXT:     %a = tile.load %A[%i, %kk] {{.*}}stage_offset = 0 : i64}
// CHECK:        } {pipeline = #tile.decision<[[S:[0-9]+]], "[[S]]-stage TMA ring: a 64x64xbf16 = 8192 bytes per stage, full/empty mbarrier per stage">, ring_offset = [[INNER:[0-9]+]] : i64, stage_bytes = 8192 : i64}
// CHECK:        %b0 = tile.load %W[%c1, %j] {{.*}}stage_offset = 0 : i64}
// CHECK:        %b1 = tile.load %B1[%c1, %j] {{.*}}stage_offset = 0 : i64}
// CHECK:      }{pipeline = #tile.decision<[[S]], "[[S]]-stage TMA ring, a stage per run of a branch that loads: b0 64x64xbf16 or b1 64x64xbf16 = 8192 bytes per stage, full/empty mbarrier per stage">, ring_offset = {{[0-9]+}} : i64, stage_bytes = 8192 : i64}
// CHECK:      } {pipeline = #tile.decision<[[S]], "[[S]]-stage TMA ring: w 64x64xbf16 = 8192 bytes per stage, full/empty mbarrier per stage">, ring_offset = 1024 : i64, stage_bytes = 8192 : i64}
