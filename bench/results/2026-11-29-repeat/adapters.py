#!/usr/bin/env python3
"""adapters.py STORE_A STORE_B VERSION...: how many LoRA weights of each
version's adapter differ between two kept stores, the largest difference and
the largest weight (needs the stores' versions/ folders, which the copies
here leave out; safetensors and numpy, e.g. the torch venv clawrl caches)."""
import sys
import numpy as np
from safetensors.numpy import load_file

a_dir, b_dir = sys.argv[1], sys.argv[2]
for v in sys.argv[3:]:
    path = f"versions/v{int(v):06d}/adapter_model.safetensors"
    a, b = load_file(f"{a_dir}/{path}"), load_file(f"{b_dir}/{path}")
    differ = sum(int((a[k] != b[k]).sum()) for k in a)
    total = sum(a[k].size for k in a)
    largest = max(float(np.abs(a[k].astype(np.float32) - b[k].astype(np.float32)).max()) for k in a)
    top = max(float(np.abs(a[k].astype(np.float32)).max()) for k in a)
    print(f"v{v}: {differ} of {total} weights differ, by at most {largest:.3g} (largest weight {top:.3g})")
