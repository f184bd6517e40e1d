/*===- zero-embed-run.c - a schedule run from C ---------------------------===*
 *
 * Loads a schedule that zero-opt (or a compiler embedding it) wrote, runs a
 * few steps through the runtime's C API (zero/runtime/zero_runtime.h) and
 * prints rank 0's view of each step's loss, averaged over the ranks, to
 * full precision:
 *
 *   zero-embed-run mlp.json --steps 3 --seed 7           (one process)
 *   mpirun -np 2 zero-embed-run mlp.json --steps 3 --mpi (every rank)
 *
 *===----------------------------------------------------------------------===*/

#include "zero/runtime/zero_runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void) {
  fprintf(stderr,
          "usage: zero-embed-run SCHEDULE [--steps N] [--seed S] [--mpi]\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  long long steps = 1;
  zero_runtime_options options;
  zero_runtime_options_init(&options);
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = strtoll(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      options.seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--mpi"))
      options.use_mpi = 1;
    else if (argv[i][0] != '-' && !path)
      path = argv[i];
    else
      return usage();
  }
  if (!path || steps < 1)
    return usage();

  zero_schedule *schedule = NULL;
  zero_runtime *runtime = NULL;
  const char *error = zero_runtime_load(path, &schedule);
  if (!error)
    error = zero_runtime_create(schedule, &options, &runtime);
  for (long long i = 0; !error && i < steps; ++i) {
    error = zero_runtime_step(runtime);
    if (error)
      break;
    double loss = zero_runtime_get_loss(runtime);
    if (!isfinite(loss)) {
      error = "the loss is not finite";
      break;
    }
    if (zero_runtime_get_rank(runtime) == 0)
      printf("step=%lld loss=%.17g\n",
             (long long)zero_runtime_get_steps(runtime), loss);
  }
  if (error)
    fprintf(stderr, "zero-embed-run: %s\n", error);
  zero_runtime_destroy(runtime);
  zero_schedule_destroy(schedule);
  return error ? 1 : 0;
}
