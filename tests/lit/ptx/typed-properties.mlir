// Instruction properties are typed: a type or modifier PTX lacks does not parse, and the
// generic form spells them as attributes of the ptx dialect.
// RUN: tkc-opt %s --split-input-file --parsing-diagnostics 2>&1 | filecheck %s
// RUN: tkc-opt %s --split-input-file --parsing-diagnostics --print-op-generic 2>&1 | filecheck %s --check-prefix=GENERIC

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @k {params = []} {
    %0 = ptx.mov {ty = u33, imm = 0 : i64} : b32
  }
}
// CHECK: error: 'u33' is not one of pred, b8, b16, b32, b64

// -----

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @k {params = []} {
    %0 = ptx.mov {ty = f32, imm = 0 : i64} : f32
    %1 = ptx.rcp(%0) {ty = f32, mods = approx.fast} : f32
  }
}
// CHECK: error: 'fast' is not a PTX modifier

// -----

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @k {params = []} {
    %0 = ptx.mov {ty = f32, imm = 0 : i64} : f32
    %1 = ptx.rcp(%0) {ty = f32, mods = approx.ftz} : f32
    %2 = ptx.setp(%1, %0) {cmp = ge, ty = f32} : pred
  }
}
// GENERIC: "ptx.rcp"(%{{.*}}) <{ty = #ptx<type f32>, mods = #ptx.mods<approx.ftz>}> : (!ptx.reg<f32>) -> !ptx.reg<f32>
// GENERIC: "ptx.setp"(%{{.*}}, %{{.*}}) <{cmp = #ptx<cmp ge>, ty = #ptx<type f32>}>
