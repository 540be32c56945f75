// The launch contract of an sm90.kernel (#sm90.abi) prints and parses back, in custom and in
// generic form: tensor maps, pointers and dims; grid extents nested over dims, constants and
// num_sms; `divisible`, `whole_tiles` (with tile-mask-tails' reasons), `requires`, `written` and `multicast`
// only where they are not empty; names that are not bare identifiers quoted.
// RUN: TKC_ROUNDTRIP
// RUN: tkc-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

builtin.module {
  sm90.kernel @gemm threads 384 : i32 smem 1024 : i32 min_ctas 1 : i32 abi <args [A: bf16[M, K], B: bf16[K, 256], C: f32[M, 256], L: f32[M]], params [tmap_A_0 = tensormap A box [64, 128] swizzle 128, tmap_B_1 = tensormap B box [64, 64] swizzle 0, ptr_C = pointer C, ptr_L = pointer L, dim_K = dim K, dim_M = dim M], grid [(min (mul (ceildiv M 128) 2) (mul num_sms 1)), 1, 1], divisible [K by 64, M by 128], whole_tiles [M by 128 "the store of C at line 9 must not write padding"], written [C, L]> {
    %k = sm90.dim "dim_K"
    %a = sm90.tensormap "tmap_A_0"
    %c = sm90.pointer "ptr_C"
  }
}
// CHECK:      sm90.kernel @gemm threads 384 : i32 smem 1024 : i32 min_ctas 1 : i32 abi <args [A: bf16[M, K], B: bf16[K, 256], C: f32[M, 256], L: f32[M]],
// CHECK-SAME:   params [tmap_A_0 = tensormap A box [64, 128] swizzle 128, tmap_B_1 = tensormap B box [64, 64] swizzle 0, ptr_C = pointer C, ptr_L = pointer L, dim_K = dim K, dim_M = dim M],
// CHECK-SAME:   grid [(min (mul (ceildiv M 128) 2) (mul num_sms 1)), 1, 1], divisible [K by 64, M by 128], whole_tiles [M by 128 "the store of C at line 9 must not write padding"], written [C, L]> {
// GENERIC:    "sm90.kernel"() <{{.*}}abi = #sm90.abi<args [A: bf16[M, K], B: bf16[K, 256], C: f32[M, 256], L: f32[M]], params [tmap_A_0 = tensormap A box [64, 128] swizzle 128,
// GENERIC-SAME: grid [(min (mul (ceildiv M 128) 2) (mul num_sms 1)), 1, 1], divisible [K by 64, M by 128], whole_tiles [M by 128 "the store of C at line 9 must not write padding"], written [C, L]>

// -----

builtin.module {
  sm90.kernel @copy threads 128 : i32 smem 0 : i32 min_ctas 2 : i32 cluster 2 : i32 abi <args [X: f16[R, 64]], params [ptr_X = pointer X], grid [(div R 64), R, (sub (max R 2) 1)], written [X]> {
    sm90.sync_block
  }
}
// CHECK:      sm90.kernel @copy threads 128 : i32 smem 0 : i32 min_ctas 2 : i32 cluster 2 : i32 abi <args [X: f16[R, 64]], params [ptr_X = pointer X], grid [(div R 64), R, (sub (max R 2) 1)], written [X]> {
// GENERIC:    abi = #sm90.abi<args [X: f16[R, 64]], params [ptr_X = pointer X], grid [(div R 64), R, (sub (max R 2) 1)], written [X]>

// -----

builtin.module {
  sm90.kernel @pairs threads 384 : i32 smem 1024 : i32 min_ctas 1 : i32 cluster 2 : i32 abi <args [A: bf16[M, K], B: bf16[K, N]], params [tmap_B_0 = tensormap B box [64, 64] swizzle 128], grid [(mul (ceildiv M 256) 2), 1, 1], divisible [K by 64], multicast [B]> {
    sm90.sync_block
  }
}
// CHECK:      sm90.kernel @pairs {{.*}} grid [(mul (ceildiv M 256) 2), 1, 1], divisible [K by 64], multicast [B]> {
// GENERIC:    abi = #sm90.abi<{{.*}} divisible [K by 64], multicast [B]>

// -----

builtin.module {
  sm90.kernel @empty threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [], params [], grid [1, 1, 1]> {
    sm90.sync_block
  }
}
// CHECK:      sm90.kernel @empty threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [], params [], grid [1, 1, 1]> {
// GENERIC:    abi = #sm90.abi<args [], params [], grid [1, 1, 1]>

// -----

builtin.module {
  sm90.kernel @quoted threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args ["x-y": f32["n-1"]], params ["ptr_x-y" = pointer "x-y", dim_n = dim "n-1"], grid [(ceildiv "n-1" 64), 1, 1], divisible ["n-1" by 64], written ["x-y"]> {
    sm90.sync_block
  }
}
// CHECK:      abi <args ["x-y": f32["n-1"]], params ["ptr_x-y" = pointer "x-y", dim_n = dim "n-1"], grid [(ceildiv "n-1" 64), 1, 1], divisible ["n-1" by 64], written ["x-y"]> {
// GENERIC:    abi = #sm90.abi<args ["x-y": f32["n-1"]], params ["ptr_x-y" = pointer "x-y", dim_n = dim "n-1"], grid [(ceildiv "n-1" 64), 1, 1], divisible ["n-1" by 64], written ["x-y"]>

// -----

// A programmatic dependent launch: the kernel waits for the one before it first.
builtin.module {
  sm90.kernel @dependent threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f16[R, 64]], params [ptr_X = pointer X], grid [1, 1, 1], multicast [X], dependent_launch> {
    sm90.sync_block
    sm90.griddepcontrol_wait
    sm90.griddepcontrol_launch_dependents
  }
}
// CHECK:      sm90.kernel @dependent {{.*}} grid [1, 1, 1], multicast [X], dependent_launch> {
// CHECK-NEXT:   sm90.sync_block
// CHECK-NEXT:   sm90.griddepcontrol_wait
// CHECK-NEXT:   sm90.griddepcontrol_launch_dependents
// GENERIC:    abi = #sm90.abi<{{.*}} grid [1, 1, 1], multicast [X], dependent_launch>

// -----

// The kernel's `require` conditions: comparisons and bool operators over the dims, each with its text.
builtin.module {
  sm90.kernel @grouped threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [Q: bf16[H, N], K: bf16[HKV, N]], params [ptr_Q = pointer Q], grid [H, 1, 1], requires [(eq H (mul HKV 4)) "H == HKV * G (line 3)", (or (xor (lt N 1) 1) (ge (sub N (mul (div N 64) 64)) 0)) "not N < 1 or N % 64 >= 0"], written [Q]> {
    sm90.sync_block
  }
}
// CHECK:      sm90.kernel @grouped {{.*}} grid [H, 1, 1], requires [(eq H (mul HKV 4)) "H == HKV * G (line 3)", (or (xor (lt N 1) 1) (ge (sub N (mul (div N 64) 64)) 0)) "not N < 1 or N % 64 >= 0"], written [Q]> {
// GENERIC:    abi = #sm90.abi<{{.*}} grid [H, 1, 1], requires [(eq H (mul HKV 4)) "H == HKV * G (line 3)", (or (xor (lt N 1) 1) (ge (sub N (mul (div N 64) 64)) 0)) "not N < 1 or N % 64 >= 0"], written [Q]>
