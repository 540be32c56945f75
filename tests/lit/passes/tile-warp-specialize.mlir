// tile-warp-specialize: the producer runs the loads and what their coordinates need, the
// consumers everything else (and the loads, as waits); a loop or if the producer runs carries
// only the values its loads need.
// RUN: tkc-opt %s -p tile-warp-specialize | filecheck %s
// An edited role is a diagnostic at the op when the lowering derives the roles anew:
// RUN: tkc-opt %s -p tile-warp-specialize | sed 's/%%scale_3 = arith.mulf %%scale_2, %%half {role = #tile<role consumers>}/%%scale_3 = arith.mulf %%scale_2, %%half {role = #tile<role both>}/' > %t.mlir
// RUN: not tkc-opt %t.mlir -p convert-tile-to-sm90 2>&1 | filecheck %s --check-prefix=EDITED

builtin.module {
  tile.kernel @roles(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, 64], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %rows = arith.divui %M, %c64 : index
    tile.grid(%rows) as ["i"]
    %i = tile.block_id 0
    %zero = arith.constant 0 : index
    %one = arith.constant 1 : index
    %two = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %trips = arith.divui %N, %c128 : index
    %scale = arith.constant 1.0 : f32
    %half = arith.constant 0.5 : f32
    %acc = tile.fill 0.0 : f32 : !tile.rt<64x64xf32>
    // j is a load coordinate: both carry it; scale only scales tiles: the consumers carry it
    %acc_1, %j_1, %scale_1 = scf.for %k = %zero to %trips step %one iter_args(%acc_2 = %acc, %j_2 = %zero, %scale_2 = %scale) -> (!tile.rt<64x64xf32>, index, f32) {
      %x = tile.load %X[%i, %j_2] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
      %xr = tile.to_reg %x : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
      %scaled = tile.binary mul %xr, %scale_2 : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
      %acc_3 = tile.binary add %acc_2, %scaled : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
      %j_3 = arith.addi %j_2, %two : index
      %scale_3 = arith.mulf %scale_2, %half : f32
      scf.yield %acc_3, %j_3, %scale_3 : !tile.rt<64x64xf32>, index, f32
    }
    // a loop without loads: the consumers' alone
    %acc_4 = scf.for %r = %zero to %two step %one iter_args(%acc_5 = %acc_1) -> (!tile.rt<64x64xf32>) {
      %acc_6 = tile.binary mul %acc_5, %scale_1 : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
      scf.yield %acc_6 : !tile.rt<64x64xf32>
    }
    // an if whose index result is a load coordinate: the producer carries it, not the tile
    %odd = arith.cmpi ugt, %j_1, %two : index
    %col, %tile = scf.if %odd -> (index, !tile.rt<64x64xf32>) {
      scf.yield %one, %acc_4 : index, !tile.rt<64x64xf32>
    } else {
      scf.yield %zero, %acc_1 : index, !tile.rt<64x64xf32>
    }
    // the row of this load is the producer's alone: no consumer op uses it
    %row = arith.muli %i, %two : index
    %bias = tile.load %X[%row, %col] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %biasr = tile.to_reg %bias : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %out = tile.binary add %tile, %biasr : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store %out, %Y[%i, %zero] : !tile.rt<64x64xf32>, !tile.gl<[M, 64], f32>
    tile.return
  }
}

// CHECK:      tile.dim %X[0] {role = #tile<role both>}
// CHECK:      tile.grid(%rows) as ["i"] {role = #tile<role both>}
// CHECK:      %scale = arith.constant {role = #tile<role consumers>} 1.000000e+00 : f32
// CHECK:      tile.fill {{.*}} {role = #tile<role consumers>}
// CHECK:      scf.for %k = %zero to %trips step %one iter_args(%acc_2 = %acc, %[[J:[a-z0-9_]+]] = %zero, %scale_2 = %scale)
// CHECK-NEXT:   tile.load %X[%i, %[[J]]] {role = #tile<role both>}
// CHECK-NEXT:   tile.to_reg %x {role = #tile<role consumers>}
// CHECK-NEXT:   tile.binary mul %xr, %scale_2 {role = #tile<role consumers>}
// CHECK-NEXT:   tile.binary add %acc_2, %scaled {role = #tile<role consumers>}
// CHECK-NEXT:   arith.addi %[[J]], %two {role = #tile<role both>}
// CHECK-NEXT:   %scale_3 = arith.mulf %scale_2, %half {role = #tile<role consumers>}
// CHECK-NEXT:   scf.yield %
// CHECK-NEXT: } {role = #tile<role both>, producer_values = array<i64: 1>}
// CHECK:      scf.for %r = %zero to %two step %one
// CHECK:        scf.yield %
// CHECK-NEXT: } {role = #tile<role consumers>}
// xDSL prints arith.cmpi without its attributes (the lowering derives roles where none is written)
// CHECK:      %odd = arith.cmpi ugt
// CHECK:      scf.if %odd
// CHECK:      }{role = #tile<role both>, producer_values = array<i64: 0>}
// CHECK-NEXT: %row = arith.muli %i, %two {role = #tile<role producer>}
// CHECK-NEXT: tile.load %X[%row, %col] {role = #tile<role both>}
// CHECK:      tile.store {{.*}} {role = #tile<role consumers>}
// CHECK-NEXT: tile.return {role = #tile<role consumers>}

// EDITED: error: arith.mulf has the role #tile<role both>, but tile-warp-specialize decides consumers
