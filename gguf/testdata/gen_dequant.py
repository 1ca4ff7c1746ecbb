"""Generate gguf/testdata/dequant.gguf: one tensor per ggml type with the
gguf Python package's own dequantization beside it, plus metadata of every
value type. The Go tests read it with package gguf and compare.

Run with the reference venv (gguf 0.19.0, numpy):
    /root/.cache/clawrl/refvenv/bin/python gguf/testdata/gen_dequant.py

Types the package can quantize (F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) are
quantized from random floats; the k-quants (which it only dequantizes) are
random block bytes whose f16 scales are set to small finite values.
"""
import os

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import GGML_QUANT_SIZES, GGUFWriter, quants

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261124)
ROWS, COLS = 4, 512  # 2 k-quant super-blocks per row

w = GGUFWriter(os.path.join(HERE, "dequant.gguf"), arch="test")
# Metadata of every value type, scalars and arrays (nested too).
w.add_uint8("t.u8", 200)
w.add_int8("t.i8", -100)
w.add_uint16("t.u16", 60000)
w.add_int16("t.i16", -30000)
w.add_uint32("t.u32", 4000000000)
w.add_int32("t.i32", -2000000000)
w.add_float32("t.f32", 1.5)
w.add_uint64("t.u64", 2**63 + 5)
w.add_int64("t.i64", -(2**62))
w.add_float64("t.f64", -2.25)
w.add_bool("t.bool", True)
w.add_string("t.str", "héllo\nworld")
w.add_array("t.arr_str", ["a", "", "ü"])
w.add_array("t.arr_i32", [1, -2, 3])
w.add_array("t.arr_f32", [0.5, -1.0])
w.add_array("t.arr_bool", [True, False])
w.add_array("t.arr_nested", [[1, 2], [3]])

def add(name, qtype, raw_rows, expect):
    w.add_tensor(name, raw_rows, raw_dtype=qtype)
    w.add_tensor(name + ".expect", expect.astype(np.float32))

x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
x[0, :32] = 0  # an all-zero block
for qt in (T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0):
    if qt == T.F16:
        raw = x.astype(np.float16).view(np.uint8)
    else:
        raw = quants.quantize(x, qt)
    add(qt.name, qt, raw, quants.dequantize(raw, qt))

def random_blocks(qt, n, half_offsets):
    size = GGML_QUANT_SIZES[qt][1]
    b = rng.integers(0, 256, size=(n, size), dtype=np.uint8)
    for off in half_offsets:
        h = (rng.uniform(0.001, 0.05, n) * rng.choice([-1, 1], n)).astype(np.float16)
        b[:, off:off + 2] = h.view(np.uint8).reshape(n, 2)
    return b

nblocks = ROWS * COLS // 256
for qt, offs in ((T.Q2_K, (80, 82)), (T.Q3_K, (108,)), (T.Q4_K, (0, 2)), (T.Q5_K, (0, 2)), (T.Q6_K, (208,))):
    raw = random_blocks(qt, nblocks, offs).reshape(ROWS, -1)
    add(qt.name, qt, raw, quants.dequantize(raw, qt))

# F32 last, with special values.
f = x.copy()
f[1, :4] = [np.inf, -np.inf, -0.0, 1e-40]
add("F32", T.F32, f, f)

w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print("wrote", os.path.join(HERE, "dequant.gguf"))
