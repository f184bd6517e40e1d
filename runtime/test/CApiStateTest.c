/*===- CApiStateTest.c - the state accessors of the C API -----------------===*
 *
 * Run on every rank of an MPI job (or alone) with a schedule whose parameter
 * PARAM has Adam's exp_avg and exp_avg_sq (test/Runtime/state-access-capi.test):
 *
 *   zero-runtime-capi-state SCHEDULE PARAM set DIR
 *     checks the errors, sets every element of PARAM with the full set and
 *     reads it back with the full and local gets (the local part's size and
 *     zero padding), writes the parameters to DIR/set.safetensors, steps and
 *     writes DIR/stepped.safetensors; then sets exp_avg and steps again, and
 *     checks exp_avg = beta1 * set + (1 - beta1) * grad, beta1 learned from
 *     the first step (exp_avg = (1 - beta1) * grad from zero).
 *   zero-runtime-capi-state SCHEDULE PARAM init DIR
 *     starts from DIR/set.safetensors, steps and writes
 *     DIR/init.safetensors, which must be DIR/stepped.safetensors: the step
 *     after the set used the set value.
 *
 * Prints "rank R: OK" per rank; exits 1 at the first failed check.
 *
 *===----------------------------------------------------------------------===*/

#include "zero/runtime/zero_runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "rank %d: line %d: check failed: %s: ", rank, __LINE__, \
              #cond);                                                          \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define OK(call)                                                               \
  do {                                                                         \
    const char *error_ = (call);                                               \
    CHECK(!error_, "%s", error_ ? error_ : "");                                \
  } while (0)

/* `error` is set and holds `text`. */
static void expectError(const char *error, const char *text) {
  CHECK(error, "no error, expected one with \"%s\"", text);
  CHECK(strstr(error, text), "error \"%s\" lacks \"%s\"", error, text);
}

static float *allocate(int64_t numel) {
  float *values = calloc((size_t)(numel > 0 ? numel : 1), sizeof(float));
  CHECK(values, "out of memory");
  return values;
}

int main(int argc, char **argv) {
  if (argc != 5 || (strcmp(argv[3], "set") && strcmp(argv[3], "init"))) {
    fprintf(stderr, "usage: %s SCHEDULE PARAM set|init DIR\n", argv[0]);
    return 2;
  }
  const char *param = argv[2];
  int init = !strcmp(argv[3], "init");
  char path[4096], setPath[4096];
  snprintf(setPath, sizeof setPath, "%s/set.safetensors", argv[4]);

  zero_schedule *schedule;
  zero_runtime *runtime;
  zero_runtime_options options;
  zero_runtime_options_init(&options);
  CHECK(options.keep_gradients == 0, "keep_gradients starts at %d",
        options.keep_gradients);
  options.use_mpi = 1;
  options.seed = 5;
  options.keep_gradients = 1;
  if (init)
    options.init_from = setPath;
  OK(zero_runtime_load(argv[1], &schedule));
  OK(zero_runtime_create(schedule, &options, &runtime));
  rank = zero_runtime_get_rank(runtime);
  int world = zero_runtime_get_world_size(runtime);

  if (init) {
    OK(zero_runtime_step(runtime));
    snprintf(path, sizeof path, "%s/init.safetensors", argv[4]);
    OK(zero_runtime_export(runtime, path));
    zero_runtime_destroy(runtime);
    zero_schedule_destroy(schedule);
    printf("rank %d: OK\n", rank);
    return 0;
  }

  int64_t numel = 0, local = 0;
  OK(zero_runtime_get_full_numel(runtime, param, &numel));
  OK(zero_runtime_get_local_numel(runtime, param, &local));
  /* The compiler pads to the least multiple of the world size. */
  CHECK(local == (numel + world - 1) / world, "local %lld of %lld on %d",
        (long long)local, (long long)numel, world);
  float *full = allocate(numel), *part = allocate(local);

  /* The documented errors. */
  expectError(zero_runtime_get_full_fp32_param(runtime, "fc0.weigth", full,
                                               numel),
              "no parameter 'fc0.weigth' in ");
  expectError(zero_runtime_get_full_fp32_param(runtime, "fc0.weigth", full,
                                               numel),
              "; did you mean 'fc0.weight'?");
  expectError(zero_runtime_set_full_fp32_param(runtime, param, full, numel - 1),
              "elements given, but its full fp32 value has");
  expectError(zero_runtime_get_local_fp32_param(runtime, param, part, local + 1),
              "but numel is");
  expectError(zero_runtime_get_full_optimizer_state(runtime, param, "exp_avgg",
                                                    full, numel),
              "has no optimizer state 'exp_avgg'; its states are exp_avg, "
              "exp_avg_sq");
  expectError(zero_runtime_get_full_grad(runtime, param, full, numel),
              "no step has run in this session");

  /* Full set, full and local gets. */
  for (int64_t i = 0; i < numel; ++i)
    full[i] = (i % 2 ? -0.25f : 0.5f) * (float)(i + 1) / (float)numel;
  OK(zero_runtime_set_full_fp32_param(runtime, param, full, numel));
  float *back = allocate(numel);
  OK(zero_runtime_get_full_fp32_param(runtime, param, back, numel));
  CHECK(!memcmp(back, full, (size_t)numel * sizeof(float)),
        "the full get differs from the full set");
  OK(zero_runtime_get_local_fp32_param(runtime, param, part, local));
  int64_t begin = world > 1 ? rank * local : 0;
  for (int64_t i = 0; i < local; ++i)
    CHECK(part[i] == (begin + i < numel ? full[begin + i] : 0.0f),
          "local element %lld is %g", (long long)i, part[i]);

  /* A local set: its padding is ignored. */
  for (int64_t i = 0; i < local; ++i)
    part[i] = begin + i < numel ? full[begin + i] : 7.0f;
  OK(zero_runtime_set_local_fp32_param(runtime, param, part, local));
  OK(zero_runtime_get_local_fp32_param(runtime, param, part, local));
  for (int64_t i = 0; i < local; ++i)
    CHECK(part[i] == (begin + i < numel ? full[begin + i] : 0.0f),
          "local element %lld is %g after the local set", (long long)i,
          part[i]);

  /* The step after the set: the init run must step from the same values. */
  OK(zero_runtime_export(runtime, setPath));
  OK(zero_runtime_step(runtime));
  snprintf(path, sizeof path, "%s/stepped.safetensors", argv[4]);
  OK(zero_runtime_export(runtime, path));

  /* The first step's moment from zero gives beta1. */
  float *grad = allocate(numel), *avg = allocate(numel);
  OK(zero_runtime_get_full_grad(runtime, param, grad, numel));
  OK(zero_runtime_get_full_optimizer_state(runtime, param, "exp_avg", avg,
                                           numel));
  double beta1 = -1;
  for (int64_t i = 0; i < numel; ++i)
    if (fabsf(grad[i]) > 1e-6f) {
      beta1 = 1.0 - (double)avg[i] / grad[i];
      break;
    }
  CHECK(beta1 > 0 && beta1 < 1, "beta1 %g from the first step", beta1);
  OK(zero_runtime_get_local_grad(runtime, param, part, local));
  for (int64_t i = 0; i < local; ++i)
    CHECK(part[i] == (begin + i < numel ? grad[begin + i] : 0.0f),
          "local gradient element %lld is %g", (long long)i, part[i]);

  /* Set exp_avg, step: the moment starts from the set value. */
  float *moment = allocate(numel);
  for (int64_t i = 0; i < numel; ++i)
    moment[i] = 0.125f * (float)((i % 5) - 2);
  OK(zero_runtime_set_full_optimizer_state(runtime, param, "exp_avg", moment,
                                           numel));
  OK(zero_runtime_get_local_optimizer_state(runtime, param, "exp_avg", part,
                                            local));
  for (int64_t i = 0; i < local; ++i)
    CHECK(part[i] == (begin + i < numel ? moment[begin + i] : 0.0f),
          "local exp_avg element %lld is %g", (long long)i, part[i]);
  OK(zero_runtime_step(runtime));
  OK(zero_runtime_get_full_grad(runtime, param, grad, numel));
  OK(zero_runtime_get_full_optimizer_state(runtime, param, "exp_avg", avg,
                                           numel));
  for (int64_t i = 0; i < numel; ++i) {
    double expected = beta1 * moment[i] + (1 - beta1) * grad[i];
    CHECK(fabs(avg[i] - expected) <= 1e-5 * (fabs(expected) + 1e-3),
          "exp_avg[%lld] is %.9g after the set, expected %.9g", (long long)i,
          avg[i], expected);
  }

  free(full);
  free(part);
  free(back);
  free(grad);
  free(avg);
  free(moment);
  zero_runtime_destroy(runtime);
  zero_schedule_destroy(schedule);
  printf("rank %d: OK\n", rank);
  return 0;
}
