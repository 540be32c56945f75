// tkc-opt reads .tk files (-k, -D), runs tkc's passes by name and prints PTX with -t ptx;
// stock xdsl-opt finds the tile dialect and tkc's passes through the xdsl.universe plugin.
// RUN: tkc-opt %examples/gemm.tk -k gemm -D BM=64 | filecheck %s --check-prefix=TK
// RUN: tkc-opt %S/Inputs/gemm.mlir -p canonicalize,cse,tile-swizzle-select | filecheck %s --check-prefix=PASS
// RUN: xdsl-opt %S/Inputs/gemm.mlir -p canonicalize,cse,tile-swizzle-select | filecheck %s --check-prefix=PASS
// RUN: tkc-opt %S/Inputs/gemm.mlir -p canonicalize,cse,tile-swizzle-select,tile-bank-conflicts,tile-occupancy-plan,tile-pipeline,tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings,sm90-verify-barriers,convert-sm90-to-ptx,ptx-flatten-control-flow -t ptx | filecheck %s --check-prefix=PTX
// RUN: not tkc-opt %S/Inputs/gemm.mlir -p tile-nonsense 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not tkc-opt %S/Inputs/bad.mlir 2>&1 | filecheck %s --check-prefix=BAD

// TK:      tile.kernel @gemm
// TK-SAME: params = {BM = 64 : i64, BN = 256 : i64, BK = 64 : i64}

// PASS: tile.load %A[{{.*}}] {swizzle = #tile.decision<128,
// PASS: !tile.st<128x64xbf16, swizzle 128>

// PTX: .target sm_90a
// PTX: wgmma.mma_async

// UNKNOWN: tkc-opt: error: Unrecognized passes: ['tile-nonsense']

// BAD:      bad.mlir:3:{{[0-9]+}}: error: Operation tile.nonsense is not registered
// BAD-NEXT: "tile.nonsense"() : () -> ()
// BAD-NEXT: {{^ +\^$}}
// BAD-NOT:  Traceback
