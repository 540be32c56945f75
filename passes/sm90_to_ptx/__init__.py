"""The patterns of convert-sm90-to-ptx, one module per family of sm90 ops (as Triton's
TritonGPUToLLVM keeps one file per op family): `emitter` holds the type converter they share."""
