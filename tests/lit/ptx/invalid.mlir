// The ptx verifiers name what is wrong.
// RUN: tkc-opt %s --split-input-file --verify-diagnostics | filecheck %s

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @k {params = []} {
    %0 = ptx.mov {ty = u64, imm = 0 : i64} : b64
    %1 = ptx.reg : f32
    "ptx.wgmma"(%1, %1, %1, %0, %0) <{n = 8 : i64, dtype = #ptx<type bf16>, scale_d = 1 : i64, operandSegmentSizes = array<i32: 3, 1, 1, 0>}> : (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<b64>, !ptx.reg<b64>) -> ()
  }
}
// CHECK: ptx.wgmma: m64n8 takes 4 accumulators, got 3

// -----

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @k {params = []} {
    ptx.setmaxnreg {action = inc, n = 244 : i64}
  }
}
// CHECK: ptx.setmaxnreg: register count must be a multiple of 8 in 24..256, got 244

// -----

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @k {params = []} {
    ptx.bar_sync {imm = 16 : i64}
  }
}
// CHECK: ptx.bar_sync: barrier id must be in 0..15, got 16

// -----

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @k {params = []} {
    ptx.bra {target = "NOWHERE"}
  }
}
// CHECK: ptx.entry: branch to undefined label 'NOWHERE'

// -----

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @k {params = []} {
    %0 = ptx.mov {ty = u64, imm = 1 : i64} : b64
    %1 = ptx.add(%0) {ty = b64, imm = 2 : i64} : b64
  }
}
// CHECK: ptx.add: add does not take .b64

// -----

ptx.module {version = "9.1", target = "sm_90a", address_size = 64 : i64} {
}
// CHECK: ptx.module: version must be in 8.0..9.0
