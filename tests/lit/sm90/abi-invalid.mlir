// #sm90.abi's parser and verifier say what is wrong with a launch contract, at the sm90.kernel
// that holds it (tkc/abi.py's checks: the same the runtime's JSON reader makes).
// RUN: tkc-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A parameter naming no argument.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [ptr_Y = pointer Y], grid [1, 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: parameter 'ptr_Y' names no argument 'Y'

// -----

// A dim parameter naming no dim of the arguments.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [dim_M = dim M], grid [1, 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: parameter 'dim_M' names no dim 'M' of the arguments

// -----

// Two parameters of one name.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [p = pointer X, p = dim N], grid [1, 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: two parameters share a name

// -----

// A swizzle TMA does not have.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N, 64]], params [tmap_X = tensormap X box [64, 64] swizzle 100], grid [1, 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: parameter 'tmap_X' has the swizzle 100, not 0, 32, 64 or 128

// -----

// A box extent of 0.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N, 64]], params [tmap_X = tensormap X box [64, 0] swizzle 128], grid [1, 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: 'box' holds an invalid entry: 0

// -----

// A dim of 0 elements.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[0]], params [], grid [1, 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: 'dims' holds an invalid entry: 0

// -----

// A grid of two extents.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [], grid [N, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: the grid has 3 extents, got 2

// -----

// A grid extent over a name that is no dim.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [], grid [(ceildiv K 64), 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: 'grid' holds an invalid entry: ('ceildiv', 'K', 64)

// -----

// A grid extent that divides by zero.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [], grid [(div N 0), 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: 'grid' holds an invalid entry: ('div', 'N', 0)

// -----

// An operator the runtime does not evaluate.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [], grid [(pow N 2), 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:107: error: Expected one of 'add', 'and', 'ceildiv', 'div', 'eq', 'ge', 'gt', 'le', 'lt', 'max', 'min', 'mul', 'ne', 'or', 'sub', 'xor'

// -----

// A comparison is an operator of a requirement, not of a grid extent.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [], grid [(lt N 2), 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: 'grid' holds an invalid entry: ('lt', 'N', 2)

// -----

// A requirement reads only the arguments' dims.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [], grid [1, 1, 1], requires [(eq M 2) "M == 2"]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: 'requires' holds an invalid entry: (('eq', 'M', 2), 'M == 2')

// -----

// A divisibility of a name that is no dim.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [], grid [1, 1, 1], divisible [M by 64]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: 'divisibility' holds an invalid entry: ('M', 64)

// -----

// A written tensor that is no argument.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [], grid [1, 1, 1], written [Y]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: sm90.abi: 'written' holds an invalid entry: 'Y'

// -----

// A parameter kind the runtime does not pass.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [t = texture X], grid [1, 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:101: error: Expected one of 'dim', 'pointer', 'scratch', 'tensormap'

// -----

// Sections out of order.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [], grid [1, 1, 1], written [X], divisible [N by 64]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:129: error: Expected one of 'dependent_launch', 'multicast'

// -----

// A contract cut short.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [ptr_X = pointer X], grid [1, 1> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:127: error: ']' expected

// -----

// A block of no threads.
builtin.module {
  sm90.kernel @k threads 0 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [], params [], grid [1, 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: invalid sm90.kernel: a block of 0 threads with 0 bytes of shared memory

// -----

// A parameter op the contract does not declare (of this kind).
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [ptr_X = pointer X], grid [1, 1, 1]> {
    %n = sm90.dim "ptr_X"
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 3]]:5: error: invalid sm90.dim: the kernel's ABI has no dim parameter 'ptr_X'

// -----

// A dependent launch that never waits for the kernel before it.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [], params [], grid [1, 1, 1], dependent_launch> {
    sm90.sync_block
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 4]]:3: error: invalid sm90.kernel: a dependent launch (abi dependent_launch) has no top-level sm90.griddepcontrol_wait

// -----

// A dependent launch that reads a parameter's memory before it waits.
builtin.module {
  sm90.kernel @k threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [ptr_X = pointer X], grid [1, 1, 1], dependent_launch> {
    sm90.sync_block
    %x = sm90.pointer "ptr_X"
    sm90.griddepcontrol_wait
  }
}
// CHECK: abi-invalid.mlir:[[# @LINE - 6]]:3: error: invalid sm90.kernel: a dependent launch (abi dependent_launch) runs sm90.pointer before sm90.griddepcontrol_wait: the kernel before it may still be writing what it reads
