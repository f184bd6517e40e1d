/*===- zero_runtime.h - the runtime's C API ------------------------*- C -*-===*
 *
 * Embeds the runtime in a program of any language with a C FFI: load a
 * schedule, create a runtime for it (world size 1, or every rank of an MPI
 * job started by mpirun), run steps and read the loss.
 *
 * Every function that can fail returns NULL on success and an error message
 * otherwise. The message belongs to the library and stays valid until the
 * next call of this API on the same thread.
 *
 *   zero_schedule *schedule;
 *   zero_runtime *runtime;
 *   zero_runtime_options options;
 *   zero_runtime_options_init(&options);
 *   const char *error = zero_runtime_load("step.json", &schedule);
 *   if (!error)
 *     error = zero_runtime_create(schedule, &options, &runtime);
 *   for (int i = 0; !error && i < 10; ++i)
 *     if (!(error = zero_runtime_step(runtime)))
 *       printf("loss %f\n", zero_runtime_get_loss(runtime));
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_ZERO_RUNTIME_H
#define ZERO_RUNTIME_ZERO_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zero_schedule zero_schedule;
typedef struct zero_runtime zero_runtime;

typedef struct zero_runtime_options {
  /* Keys the initialization and the synthetic data. */
  uint64_t seed;
  /* A token file (uint16 ids) for the tokens/targets arguments; NULL:
   * synthetic data. */
  const char *data;
  /* A safetensors file of full fp32 parameters by name; NULL: the built-in
   * initialization. */
  const char *init_from;
  /* Nonzero: one rank of the MPI job (MPI is initialized if it is not yet);
   * zero: a world of one process. */
  int use_mpi;
  /* Seconds after which a collective that does not complete fails. */
  double comm_timeout;
  /* Bytes of memory the plan may use; 0: no limit. */
  int64_t memory_limit;
  /* A checkpoint to continue from (a checkpoint directory, its `latest` or a
   * step directory; docs/Runtime.md, "Checkpoints") instead of initializing;
   * NULL: none. Excludes init_from. */
  const char *resume_from;
  /* Nonzero: keep each step's gradients for zero_runtime_get_*_grad (a
   * copy of every gradient in fp32). */
  int keep_gradients;
} zero_runtime_options;

/* seed 0, synthetic data, built-in initialization, no MPI, 60 s, no limit,
 * no checkpoint, no kept gradients. */
void zero_runtime_options_init(zero_runtime_options *options);

/* Reads and validates the schedule at `path`. */
const char *zero_runtime_load(const char *path, zero_schedule **schedule);
void zero_schedule_destroy(zero_schedule *schedule);

/* Allocates the schedule's memory and initializes its arguments. The
 * schedule must outlive the runtime. */
const char *zero_runtime_create(const zero_schedule *schedule,
                                const zero_runtime_options *options,
                                zero_runtime **runtime);

/* Runs one step with the next data. */
const char *zero_runtime_step(zero_runtime *runtime);

/* The loss of the last step averaged over the ranks; NaN before the first
 * step or without a loss result. */
double zero_runtime_get_loss(const zero_runtime *runtime);
/* The number of steps run. */
int64_t zero_runtime_get_steps(const zero_runtime *runtime);
int zero_runtime_get_rank(const zero_runtime *runtime);
int zero_runtime_get_world_size(const zero_runtime *runtime);

/* Writes every parameter as full fp32 to a safetensors file (rank 0 writes;
 * every rank must call it). */
const char *zero_runtime_export(zero_runtime *runtime, const char *path);

/* Saves a checkpoint of the steps run as `directory`/step-<S> and points
 * `directory`/latest at it, keeping the newest `keep` checkpoints (0: all).
 * Every rank must call it; on failure the previous checkpoint stays as it
 * was. A directory holds the checkpoints of one run (this runtime's, or the
 * one it resumed from): a save into one of another run fails. */
const char *zero_runtime_save(zero_runtime *runtime, const char *directory,
                              int64_t keep);

/* DeepSpeed's debugging accessors (docs/Runtime.md, "State accessors"), by
 * the parameter's name as the schedule has it, in fp32, between steps.
 *
 * Full forms take or give the whole parameter (flattened, `numel` its
 * element count): every rank must call a full get with the same arguments
 * and every rank gets the result; a full set needs no communication, and
 * each rank keeps its part. Local forms take or give this rank's part as its
 * optimizer states hold it (zero_runtime_get_local_numel elements: its shard
 * of the flat parameter padded to a multiple of the world size at ZeRO stage
 * 1 and up, padding included; the whole parameter at stage 0).
 *
 * fp32_param: the fp32 master weights, else the parameter in fp32. A full
 * set writes the master weights and the parameter the next step reads
 * (rounded to nearest even where it is 16-bit); a local set, as DeepSpeed's,
 * the master weights only where there are some. Padding stays zero.
 * grad: the gradient the optimizer consumed in the last step, averaged over
 * ranks and micro-steps, unscaled and clipped; needs keep_gradients.
 * optimizer_state: `key` is a state of the schedule ("exp_avg",
 * "exp_avg_sq", "momentum_buffer", ...). */
const char *zero_runtime_get_full_numel(zero_runtime *runtime, const char *name,
                                        int64_t *numel);
const char *zero_runtime_get_local_numel(zero_runtime *runtime,
                                         const char *name, int64_t *numel);
const char *zero_runtime_get_full_fp32_param(zero_runtime *runtime,
                                             const char *name, float *out,
                                             int64_t numel);
const char *zero_runtime_get_full_grad(zero_runtime *runtime, const char *name,
                                       float *out, int64_t numel);
const char *zero_runtime_get_full_optimizer_state(zero_runtime *runtime,
                                                  const char *name,
                                                  const char *key, float *out,
                                                  int64_t numel);
const char *zero_runtime_get_local_fp32_param(zero_runtime *runtime,
                                              const char *name, float *out,
                                              int64_t numel);
const char *zero_runtime_get_local_grad(zero_runtime *runtime, const char *name,
                                        float *out, int64_t numel);
const char *zero_runtime_get_local_optimizer_state(zero_runtime *runtime,
                                                   const char *name,
                                                   const char *key, float *out,
                                                   int64_t numel);
const char *zero_runtime_set_full_fp32_param(zero_runtime *runtime,
                                             const char *name,
                                             const float *values,
                                             int64_t numel);
const char *zero_runtime_set_full_optimizer_state(zero_runtime *runtime,
                                                  const char *name,
                                                  const char *key,
                                                  const float *values,
                                                  int64_t numel);
const char *zero_runtime_set_local_fp32_param(zero_runtime *runtime,
                                              const char *name,
                                              const float *values,
                                              int64_t numel);
const char *zero_runtime_set_local_optimizer_state(zero_runtime *runtime,
                                                   const char *name,
                                                   const char *key,
                                                   const float *values,
                                                   int64_t numel);

void zero_runtime_destroy(zero_runtime *runtime);

#ifdef __cplusplus
}
#endif

#endif /* ZERO_RUNTIME_ZERO_RUNTIME_H */
