#!/usr/bin/env python3
"""The kernel table in BENCHMARKS.md ("Two partial sums per block"): the lower
of fbench.out's two alternations, CPU-µs per product, old (e00b119, four
partial sums) against new (3f5a100, two)."""
import collections, os, re

here = os.path.dirname(os.path.abspath(__file__))
d = collections.defaultdict(lambda: collections.defaultdict(list))
cur = None
for l in open(os.path.join(here, "fbench.out")):
    if l.startswith("=="):
        cur = l.split()[1]
        continue
    m = re.match(r"BenchmarkF32Activations/(\S+)/T=(\d+)/(\S+)-2\s.*?([\d.]+) cpu-ns/op", l)
    if m:
        d[(m[1], int(m[2]), m[3])][cur].append(float(m[4]) / 1000)
names = {"gate_up_Q4_1_1536x576": "gate/up Q4_1 1536×576", "down_Q4_1_576x1536": "down Q4_1 576×1536", "head_Q8_0_49152x576": "head Q8_0 49152×576"}
print("| matrix | T | before | after | after ÷ before | before, AVX2 | after, AVX2 | ÷ |")
print("|---|--:|--:|--:|--:|--:|--:|--:|")
for mat, name in names.items():
    for T in [1, 2, 4, 8, 16, 32, 190]:
        a, b = d[(mat, T, "f32")], d[(mat, T, "f32avx2")]
        o, n, o2, n2 = min(a["old"]), min(a["new"]), min(b["old"]), min(b["new"])
        print(f"| {name} | {T} | {o:,.0f} | {n:,.0f} | {n/o:.2f} | {o2:,.0f} | {n2:,.0f} | {n2/o2:.2f} |")
