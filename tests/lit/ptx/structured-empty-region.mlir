// A structured ptx op whose region has no block (`{}`, as a hand edit or a mutated dump leaves it)
// is a parse error at the region, not an internal error (the fuzzer's mutated dumps found it).
// RUN: not tkc-opt %s 2>&1 | filecheck %s

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @k {params = [], maxntid = array<i64: 128, 1, 1>} {
    %tid = ptx.sreg {reg = "tid.x"} : b32
    %p = ptx.setp(%tid) {cmp = eq, ty = u32, imm = 0 : i64} : pred
    ptx.if %p {
    }
    ptx.ret
  }
}
// CHECK: structured-empty-region.mlir:9:15: error: expected a region of one block, got 0
