#!/usr/bin/python3
"""Compares two zero-opt reports (--zero-report) of the same model: the
imported step's against zero-model's. Prints what a ZeRO user compares (the
parameters, model states, bytes each step moves, transposes feeding GEMMs)
and the planned peaks with their ratio; exits 1 if a count differs or the
peak ratio is outside [1 - tol, 1 + tol]."""

import json
import sys


def main():
    imported, native, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    a, b = json.load(open(imported)), json.load(open(native))
    ok = True
    pairs = [
        ("num_parameters", a["num_parameters"], b["num_parameters"]),
        ("model_states", a["per_rank_bytes"]["model_states"],
         b["per_rank_bytes"]["model_states"]),
        ("bytes_per_step", a["communication_bytes_per_step"]["total"],
         b["communication_bytes_per_step"]["total"]),
        ("gemm_flops", a["compute"]["gemm_flops"], b["compute"]["gemm_flops"]),
        ("transposes_feeding_gemm", a["compute"]["transposes_feeding_gemm"],
         b["compute"]["transposes_feeding_gemm"]),
    ]
    for name, x, y in pairs:
        same = x == y
        ok &= same
        print(f"{'same' if same else 'DIFFERENT'} {name}: {x} {y}")
    ratio = a["per_rank_bytes"]["peak"] / b["per_rank_bytes"]["peak"]
    within = abs(ratio - 1) <= tol
    ok &= within
    print(f"{'OK' if within else 'FAIL'} peak: {a['per_rank_bytes']['peak']} "
          f"{b['per_rank_bytes']['peak']} ratio {ratio:.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
