"""Compares zero-run --explain-json with the measured H100 run it is
calibrated on (docs/PERFORMANCE.md, "CUDA backend": GPT-2 124M, bf16
storage, f32 compute, one GPU, 2026-11-25). The trace names a fused group by
its first instruction, as the model's categories do; its counts are of
instructions, the model's of launches.

A category whose kernels changed after the measurement (CHANGED below) is
not checked against its old time: it is printed with its new prediction,
and the step is checked over the unchanged categories (the measured step
less the changed categories' measured times, against the predicted step
less their predictions). A GPU run recalibrates and empties CHANGED.

With --report, also checks that the model's GEMM FLOPs are the compiler's
(the report's `compute.gemm_flops`): both count 2 * M * N * K per GEMM.

Usage: explain_calibration.py EXPLAIN_JSON [--report REPORT_JSON]
"""
import json
import sys

# Trace category -> (the model's category, measured ms).
MEASURED = {
    "linalg.matmul": ("gemm_f32", 146.0),
    "linalg.batch_matmul": ("batched_gemm_f32", 29.0),
    "linalg.map": ("map", 39.0),
    "linalg.reduce": ("reduce", 38.0),
    "linalg.transpose": ("transpose", 19.0),
    "zero.adam": ("optimizer", 10.0),
}
MEASURED_STEP_MS = 292.2
# Trace category -> what changed in its kernels since the measured run.
CHANGED = {
    "linalg.reduce": "column reductions by blocks of slices",
    "zero.adam": "one multi-tensor launch with the casts, vector loads",
    "linalg.transpose": "the transposes feeding GEMMs read in place",
    "linalg.map": "vectors of 2 to 8 elements per thread, f32 registers",
}
CATEGORY_TOLERANCE = 0.25
TOTAL_TOLERANCE = 0.15

explanation = json.load(open(sys.argv[1]))
for key in ("device", "total_ms", "compute_ms", "comm_ms", "launches",
            "categories"):
    assert key in explanation, "no %r in the explanation" % key
failed = False
measured_step = MEASURED_STEP_MS
predicted_step = explanation["total_ms"]
for trace_name, (category, measured) in MEASURED.items():
    predicted = explanation["categories"][category]["ms"]
    if trace_name in CHANGED:
        measured_step -= measured
        predicted_step -= predicted
        print("%-20s %-18s measured %6.1f ms predicted %6.1f ms changed: %s" %
              (trace_name, category, measured, predicted, CHANGED[trace_name]))
        continue
    error = predicted / measured - 1
    ok = abs(error) <= CATEGORY_TOLERANCE
    failed |= not ok
    print("%-20s %-18s measured %6.1f ms predicted %6.1f ms %+5.0f%% %s" %
          (trace_name, category, measured, predicted, 100 * error,
           "ok" if ok else "OFF"))
error = predicted_step / measured_step - 1
ok = abs(error) <= TOTAL_TOLERANCE
failed |= not ok
print("%-39s measured %6.1f ms predicted %6.1f ms %+5.0f%% %s" %
      ("step" + (" less the changed" if CHANGED else ""), measured_step,
       predicted_step, 100 * error, "ok" if ok else "OFF"))
print("%-39s predicted %6.1f ms" % ("step", explanation["total_ms"]))
if "--report" in sys.argv:
    report = json.load(open(sys.argv[sys.argv.index("--report") + 1]))
    compute = report["compute"]
    for kind, flops in compute["gemm_flops"].items():
        predicted = sum(c["flops"] for name, c in
                        explanation["categories"].items()
                        if name in ("gemm_" + kind, "batched_gemm_" + kind))
        ok = predicted == flops
        failed |= not ok
        print("gemm_flops.%s report %d model %d %s" %
              (kind, flops, predicted, "ok" if ok else "DIFFERENT"))
    print("gemms %d transposes_feeding_gemm %d" %
          (compute["gemms"], compute["transposes_feeding_gemm"]))
sys.exit(1 if failed else 0)
