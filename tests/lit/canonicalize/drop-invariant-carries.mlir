// RUN: tkc-opt %s -p canonicalize | filecheck %s
// A loop stops carrying a value it never changes (each iteration yields what it entered with, or
// the loop's starting value: `var v = x; for ... { v = x }`), its uses reading that value, and a
// value nothing reads (neither after the loop nor in it); what it changes stays carried.

// CHECK-LABEL: tile.kernel @carries
// CHECK:      %[[X:.*]] = tile.load
// CHECK:      %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (!tile.rt<64x64xf32>) {
// CHECK-NEXT:   %[[VB:.*]] = tile.to_reg %[[X]]
// CHECK-NEXT:   %[[V:.*]] = tile.convert %[[VB]]
// CHECK-NEXT:   %[[SUM:.*]] = tile.binary add %[[ACC]], %[[V]]
// CHECK-NEXT:   scf.yield %[[SUM]] : !tile.rt<64x64xf32>
// CHECK-NEXT: }
// CHECK-NEXT: tile.store %[[R]]
// CHECK-NEXT: %[[AFTER:.*]] = tile.to_reg %[[X]]
tile.kernel @carries(%A: !tile.gl<[M, N], bf16>, %F: !tile.gl<[M, N], f32>) {
  %c64 = arith.constant 64 : index
  %m = tile.dim %A[0] : !tile.gl<[M, N], bf16>
  %g = arith.divui %m, %c64 : index
  tile.grid(%g) as ["i"]
  %i = tile.block_id 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %x = tile.load %A[%i, %c0] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
  %zero = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
  %acc, %same, %kept, %dead = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %zero, %s = %x, %t = %x, %d = %zero) -> (!tile.rt<64x64xf32>, !tile.st<64x64xbf16>, !tile.st<64x64xbf16>, !tile.rt<64x64xf32>) {
    %vb = tile.to_reg %s : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
    %v = tile.convert %vb : !tile.rt<64x64xbf16> -> !tile.rt<64x64xf32>
    %sum = tile.binary add %a, %v : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %sum, %x, %t, %v : !tile.rt<64x64xf32>, !tile.st<64x64xbf16>, !tile.st<64x64xbf16>, !tile.rt<64x64xf32>
  }
  tile.store %acc, %F[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
  %afterb = tile.to_reg %kept : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
  %after = tile.convert %afterb : !tile.rt<64x64xbf16> -> !tile.rt<64x64xf32>
  tile.store %after, %F[%i, %c1] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
  tile.return
}

// A carry whose value the next iteration hands to another carry (`w = v; v = x`, w read after the
// loop) is read by that yield: it stays carried though nothing else reads it (fuzz seed 116).
// CHECK-LABEL: tile.kernel @handed_on
// CHECK:      %{{.*}}, %[[W_OUT:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[V:.*]] = %{{.*}}, %[[W:.*]] = %{{.*}}) -> (!tile.rt<64x64xf32>, !tile.rt<64x64xf32>) {
// CHECK:        scf.yield %{{.*}}, %[[V]] : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>
// CHECK:      tile.store %[[W_OUT]]
tile.kernel @handed_on(%A: !tile.gl<[M, N], bf16>, %F: !tile.gl<[M, N], f32>) {
  %c64 = arith.constant 64 : index
  %m = tile.dim %A[0] : !tile.gl<[M, N], bf16>
  %g = arith.divui %m, %c64 : index
  tile.grid(%g) as ["i"]
  %i = tile.block_id 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
  %v_out, %w_out = scf.for %k = %c0 to %c4 step %c1 iter_args(%v = %zero, %w = %zero) -> (!tile.rt<64x64xf32>, !tile.rt<64x64xf32>) {
    %xs = tile.load %A[%i, %k] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
    %xb = tile.to_reg %xs : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
    %x = tile.convert %xb : !tile.rt<64x64xbf16> -> !tile.rt<64x64xf32>
    scf.yield %x, %v : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>
  }
  tile.store %w_out, %F[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
  tile.return
}
