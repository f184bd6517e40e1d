// The C API (zero-c/Zero.h) from C: register, parse a training step, compile
// it with a DeepSpeed configuration, get the report and the schedule, and the
// errors of each step. The report and the schedule are zero-opt's for the same
// step and configuration.
//
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 -o %t.mlir
// RUN: zero-capi-test %t.mlir %S/Inputs/stage3.json %t 2>&1 | FileCheck %s
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage3.json \
// RUN:   --zero-world-size=2 --zero-report=%t.zero-opt.report.json \
// RUN:   --zero-emit-schedule=%t.zero-opt.schedule.json -o /dev/null
// RUN: diff %t.report.json %t.zero-opt.report.json
// RUN: diff %t.schedule.json %t.zero-opt.schedule.json
//
// The report goes through a temporary file, as zero-plan-memory writes it:
// without a directory for it, the run fails and says why.
// RUN: env TMPDIR=%t.missing zero-capi-test %t.mlir %S/Inputs/stage3.json \
// RUN:   %t.no-temp 2>&1 | FileCheck %s --check-prefix=NO-TEMP
// NO-TEMP-LABEL: @with-config
// NO-TEMP:       result: failure
// NO-TEMP-NEXT:  error: cannot create a temporary file for the report:
// NO-TEMP-NEXT:  contains zero.all_gather_start: no
// NO-TEMP:       report: no
// NO-TEMP-NEXT:  schedule: no

#include "zero-c/Zero.h"

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Text gathered from MlirStringCallbacks.
typedef struct {
  char *data;
  size_t size;
} Buffer;

static void append(Buffer *buffer, const char *data, size_t size) {
  buffer->data = realloc(buffer->data, buffer->size + size + 1);
  memcpy(buffer->data + buffer->size, data, size);
  buffer->size += size;
  buffer->data[buffer->size] = '\0';
}

static void reset(Buffer *buffer) {
  free(buffer->data);
  buffer->data = NULL;
  buffer->size = 0;
}

static const char *text(const Buffer *buffer) {
  return buffer->data ? buffer->data : "";
}

typedef struct {
  Buffer report, schedule, diagnostics;
} Results;

static void onReport(MlirStringRef piece, void *userData) {
  append(&((Results *)userData)->report, piece.data, piece.length);
}

static void onSchedule(MlirStringRef piece, void *userData) {
  append(&((Results *)userData)->schedule, piece.data, piece.length);
}

static void onDiagnostic(MlirStringRef piece, void *userData) {
  Buffer *diagnostics = &((Results *)userData)->diagnostics;
  append(diagnostics, piece.data, piece.length);
  append(diagnostics, "\n", 1);
}

static void onPrint(MlirStringRef piece, void *userData) {
  append((Buffer *)userData, piece.data, piece.length);
}

static ZeroPipelineOutputs outputsTo(Results *results) {
  ZeroPipelineOutputs outputs = {onReport, onSchedule, onDiagnostic, results};
  return outputs;
}

static void resetResults(Results *results) {
  reset(&results->report);
  reset(&results->schedule);
  reset(&results->diagnostics);
}

static char *readFile(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  Buffer buffer = {NULL, 0};
  char chunk[4096];
  size_t size;
  while ((size = fread(chunk, 1, sizeof(chunk), file)) > 0)
    append(&buffer, chunk, size);
  fclose(file);
  return buffer.data;
}

/// Writes `contents` to PREFIX`suffix` and returns that path (static
/// storage, until the next call).
static const char *writeFile(const char *prefix, const char *suffix,
                             const char *contents) {
  static char path[4096];
  snprintf(path, sizeof(path), "%s%s", prefix, suffix);
  FILE *file = fopen(path, "wb");
  if (!file) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  fputs(contents, file);
  fclose(file);
  return path;
}

static MlirContext createContext(void) {
  MlirContext context = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  zeroRegisterDialects(registry);
  mlirContextAppendDialectRegistry(context, registry);
  mlirDialectRegistryDestroy(registry);
  return context;
}

/// Parses the file at `path`: its locations name it, as zero-opt's do.
static MlirModule parse(MlirContext context, const char *path) {
  MlirModule module = mlirModuleCreateParseFromFile(
      context, mlirStringRefCreateFromCString(path));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "cannot parse %s\n", path);
    exit(2);
  }
  return module;
}

static const char *resultName(MlirLogicalResult result) {
  return mlirLogicalResultIsSuccess(result) ? "success" : "failure";
}

/// Prints whether the printed module contains `needle`.
static void printContains(MlirModule module, const char *needle) {
  Buffer printed = {NULL, 0};
  mlirOperationPrint(mlirModuleGetOperation(module), onPrint, &printed);
  printf("contains %s: %s\n", needle,
         strstr(text(&printed), needle) ? "yes" : "no");
  reset(&printed);
}

static void testDialectHandle(void) {
  printf("@dialect-handle\n");
  MlirContext context = mlirContextCreate();
  MlirDialect dialect =
      mlirDialectHandleLoadDialect(mlirGetDialectHandle__zero__(), context);
  MlirStringRef ns = mlirDialectGetNamespace(dialect);
  printf("namespace: %.*s\n", (int)ns.length, ns.data);
  mlirContextDestroy(context);
}
// CHECK-LABEL: @dialect-handle
// CHECK:       namespace: zero

typedef MlirLogicalResult (*Runner)(MlirModule module, const char *argument,
                                    int64_t worldSize,
                                    ZeroPipelineOutputs outputs);

static MlirLogicalResult withConfig(MlirModule module, const char *config,
                                    int64_t worldSize,
                                    ZeroPipelineOutputs outputs) {
  return zeroRunPipelineWithConfig(
      module, mlirStringRefCreateFromCString(config), worldSize, outputs);
}

static MlirLogicalResult withOptions(MlirModule module, const char *options,
                                     int64_t worldSize,
                                     ZeroPipelineOutputs outputs) {
  (void)worldSize; // The options say it.
  return zeroRunPipeline(module, mlirStringRefCreateFromCString(options),
                         outputs);
}

/// Runs the pipeline on `step` and prints what it says and delivers, and
/// whether the compiled step contains each of the `needles` (a null-ended
/// list). `results` keeps what was delivered.
static void run(const char *label, Runner runner, const char *step,
                const char *argument, int64_t worldSize,
                const char *const *needles, Results *results) {
  printf("@%s\n", label);
  MlirContext context = createContext();
  MlirModule module = parse(context, step);
  MlirLogicalResult result =
      runner(module, argument, worldSize, outputsTo(results));
  printf("result: %s\n", resultName(result));
  printf("%s", text(&results->diagnostics));
  for (; needles && *needles; ++needles)
    printContains(module, *needles);
  printf("report: %s\n", results->report.size ? "yes" : "no");
  printf("schedule: %s\n", results->schedule.size ? "yes" : "no");
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
}

static void testWithConfig(const char *step, const char *config,
                           const char *prefix) {
  static const char *const needles[] = {"zero.all_gather_start", "zero.adam",
                                        NULL};
  Results results = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
  run("with-config", withConfig, step, config, 2, needles, &results);
  printf("@report\n%s\n", text(&results.report));
  printf("@schedule\n%s\n", text(&results.schedule));
  writeFile(prefix, ".report.json", text(&results.report));
  writeFile(prefix, ".schedule.json", text(&results.schedule));
  resetResults(&results);
}
// CHECK-LABEL: @with-config
// CHECK:       result: success
// CHECK-NEXT:  contains zero.all_gather_start: yes
// CHECK-NEXT:  contains zero.adam: yes
// CHECK-NEXT:  report: yes
// CHECK-NEXT:  schedule: yes
// CHECK-LABEL: @report
// CHECK-DAG:   "stage": 3
// CHECK-DAG:   "world_size": 2
// CHECK-LABEL: @schedule
// CHECK-DAG:   "world_size": 2
// CHECK-DAG:   "all_gather"

static void testWithOptions(const char *step) {
  static const char *const needles[] = {"zero.reduce_scatter_start",
                                        "zero.adam", NULL};
  Results results = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
  run("with-options", withOptions, step,
      "stage=2 world-size=4 optimizer=sgd lr=0.1", 0, needles, &results);
  printf("report has stage 2: %s\n",
         strstr(text(&results.report), "\"stage\": 2") ? "yes" : "no");
  printf("schedule has world size 4: %s\n",
         strstr(text(&results.schedule), "\"world_size\": 4") ? "yes" : "no");
  resetResults(&results);
}
// CHECK-LABEL: @with-options
// CHECK:       result: success
// CHECK-NEXT:  contains zero.reduce_scatter_start: yes
// CHECK-NEXT:  contains zero.adam: no
// CHECK-NEXT:  report: yes
// CHECK-NEXT:  schedule: yes
// CHECK-NEXT:  report has stage 2: yes
// CHECK-NEXT:  schedule has world size 4: yes

/// A run with nothing else to check than what it says and delivers.
static void runCase(const char *label, Runner runner, const char *step,
                    const char *argument, int64_t worldSize) {
  Results results = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
  run(label, runner, step, argument, worldSize, NULL, &results);
  resetResults(&results);
}

/// The registered pipeline through MLIR's own pass manager.
static void testRegisteredPipeline(const char *step) {
  printf("@registered-pipeline\n");
  MlirContext context = createContext();
  MlirModule module = parse(context, step);
  MlirPassManager pm = mlirPassManagerCreate(context);
  Buffer errors = {NULL, 0};
  MlirLogicalResult parsed = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString(
          "builtin.module(zero-pipeline{stage=1 world-size=2})"),
      onPrint, &errors);
  printf("parsed: %s [%s]\n", resultName(parsed), text(&errors));
  MlirLogicalResult result =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  printf("result: %s\n", resultName(result));
  printContains(module, "zero.stage = 1");
  reset(&errors);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
}
// CHECK-LABEL: @registered-pipeline
// CHECK:       parsed: success []
// CHECK-NEXT:  result: success
// CHECK-NEXT:  contains zero.stage = 1: yes

static void testDiagnostics(const char *step, const char *prefix) {
  runCase("bad-json", withConfig, step,
          "{\"zero_optimization\": {\"stage\": 3,}}", 2);
  // CHECK-LABEL: @bad-json
  // CHECK:       result: failure
  // CHECK-NEXT:  <deepspeed-config>:1:{{[0-9]+}}: error: {{.+}}
  // CHECK:       report: no
  // CHECK-NEXT:  schedule: no

  runCase("unknown-key", withConfig, step,
          "{\"zero_optimization\": {\"overlap_com\": true}}", 2);
  // CHECK-LABEL: @unknown-key
  // CHECK:       result: failure
  // CHECK-NEXT:  <deepspeed-config>:1:24: error: unknown key
  // CHECK-SAME:  'zero_optimization.overlap_com'; did you mean 'overlap_comm'?
  // CHECK:       report: no

  // The batch-size rule: 3 is not 2 (micro-batch) x 1 x 2 (ranks).
  runCase("batch-rule", withConfig, step,
          "{\"train_batch_size\": 3, \"train_micro_batch_size_per_gpu\": 2}",
          2);
  // CHECK-LABEL: @batch-rule
  // CHECK:       result: failure
  // CHECK-NEXT:  <deepspeed-config>:{{.*}}error: {{.*}}train_batch_size
  // CHECK:       report: no

  runCase("refused", withConfig, step,
          "{\"fp16\": {\"enabled\": true, \"auto_cast\": true}}", 2);
  // CHECK-LABEL: @refused
  // CHECK:       result: failure
  // CHECK-NEXT:  <deepspeed-config>:1:{{[0-9]+}}: error: fp16.auto_cast: true is not supported yet: {{.+}}
  // CHECK:       report: no

  // A knob the configuration library finds without effect, and one the
  // pipeline does.
  runCase("no-effect", withConfig, step,
          "{\"zero_optimization\": {\"stage\": 1, "
          "\"stage3_max_live_parameters\": 5},\n"
          " \"activation_checkpointing\": {\"number_checkpoints\": 2}}",
          2);
  // CHECK-LABEL: @no-effect
  // CHECK:       result: success
  // CHECK-NEXT:  <deepspeed-config>:1:66: warning:
  // CHECK-SAME:  zero_optimization.stage3_max_live_parameters only applies at
  // CHECK-SAME:  stage 3 (stage is 1)
  // The pipeline's finding points at the key, as zero-opt's do.
  // CHECK:       <deepspeed-config>:2:53: warning: activation_checkpointing.number_checkpoints has no
  // CHECK-SAME:  effect: activation checkpointing is off: {{.+}}
  // CHECK-NEXT:  "activation_checkpointing": {"number_checkpoints": 2}}
  // CHECK-NEXT:  ^
  // CHECK-NEXT:  report: yes
  // CHECK-NEXT:  schedule: yes

  runCase("world-size", withConfig, step, "{}", 0);
  // CHECK-LABEL: @world-size
  // CHECK:       result: failure
  // CHECK-NEXT:  error: the world size must be at least 1, got 0
  // CHECK-NEXT:  report: no

  runCase("no-train-step", withConfig,
          writeFile(prefix, ".no-train-step.mlir", "func.func @f() { return }"),
          "{}", 2);
  // CHECK-LABEL: @no-train-step
  // CHECK:       result: failure
  // CHECK-NEXT:  no-train-step.mlir:0:0: error: no training-step function:
  // CHECK-NEXT:  report: no
  // CHECK-NEXT:  schedule: no

  runCase("unknown-option", withOptions, step, "stage=3 world-sise=2", 0);
  // CHECK-LABEL: @unknown-option
  // CHECK:       result: failure
  // CHECK-NEXT:  error: invalid zero-pipeline options 'stage=3 world-sise=2':
  // CHECK-SAME:  no such option world-sise
  // CHECK:       report: no

  runCase("bad-option-value", withOptions, step, "stage=three", 0);
  // CHECK-LABEL: @bad-option-value
  // CHECK:       'three' value invalid
  // CHECK:       result: failure
  // CHECK-NEXT:  error: invalid zero-pipeline options 'stage=three'
  // CHECK-NEXT:  report: no

  // The plan is over its budget: the report says why, the schedule is not
  // written.
  runCase("over-budget", withOptions, step,
          "stage=3 world-size=2 device-memory=1KiB", 0);
  // CHECK-LABEL: @over-budget
  // CHECK:       result: failure
  // CHECK-NEXT:  zero.c.tmp.mlir:[[#]]:[[#]]: error: the plan needs
  // CHECK-SAME:  more than the budget of 1.00 KiB (1024 bytes)
  // CHECK-NEXT:  note: in the training step '@train_step'
  // CHECK:       report: yes
  // CHECK-NEXT:  schedule: no
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s STEP.mlir DEEPSPEED.json OUTPUT-PREFIX\n",
            argv[0]);
    return 2;
  }
  // In order with what llvm::cl prints to stderr.
  setvbuf(stdout, NULL, _IONBF, 0);
  const char *step = argv[1];
  char *config = readFile(argv[2]);
  zeroRegisterPasses();
  testDialectHandle();
  testWithConfig(step, config, argv[3]);
  testWithOptions(step);
  testRegisteredPipeline(step);
  testDiagnostics(step, argv[3]);
  free(config);
  return 0;
}
