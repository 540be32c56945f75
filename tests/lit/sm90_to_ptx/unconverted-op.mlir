// An op that no pattern of convert-sm90-to-ptx converts is an error at its line, never dropped.
// RUN: not tkc-opt %s -p convert-sm90-to-ptx 2>&1 | filecheck %s

builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [], params [], grid [1, 1, 1]> {
    %x = arith.constant 1.0 : f32
    %y = math.atan %x : f32
  }
}

// CHECK: unconverted-op.mlir:7:5: error: convert-sm90-to-ptx cannot lower math.atan
// CHECK-NEXT:     %y = math.atan %x : f32
// CHECK-NEXT:     ^
