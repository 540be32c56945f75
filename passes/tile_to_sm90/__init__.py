"""The parts of convert-tile-to-sm90 (passes/convert_tile_to_sm90.py), one concern per module:
what the kernel's lowering decides once (lowering.py, shared_memory.py, launch_abi.py), the
walk both roles share (roles.py), each role (producer.py, consumer.py), and the conversion of
each op family (rings.py, tma.py, compute.py, mma.py, overlap.py, stores.py, fences.py)."""
