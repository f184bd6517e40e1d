//===- DataSource.h - what the data arguments hold each step ----*- C++ -*-===//
//
// The data rule (docs/Runtime.md, "Data"): a data argument given an array
// file (`--data NAME=FILE`, .npy or safetensors) reads its samples, the
// file's first dimension, in a seeded shuffle per epoch as PyTorch's
// DistributedSampler does (or in order); integer data arguments named
// `tokens` and `targets` are windows of a token stream (a nanoGPT train.bin
// file, or a synthetic stream), `targets` shifted by one; every other data
// argument is synthetic (Init.h). Each rank reads the rows of the global
// batch that are its own, so the data of the whole job depends only on the
// global row, not on the world size. A run resumed from a checkpoint goes on
// from the rows the saved run had read, whatever its own world size and
// batch.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_DATASOURCE_H
#define ZERO_RUNTIME_DATASOURCE_H

#include "zero/runtime/Executor.h"
#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"
#include "zero/runtime/TokenData.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zero::runtime {

/// The rows of a data argument a job may read: 2^53, so that a row count is
/// exact in JSON's numbers, and far beyond any run.
constexpr int64_t kMaxDataRows = int64_t(1) << 53;

namespace io {
class ArrayFile;
} // namespace io

struct DataOptions {
  uint64_t seed = 0;
  /// A token file (little-endian uint16 ids); empty: synthetic data.
  std::string tokenFile;
  /// Array files by data argument name (.npy, or .safetensors holding a
  /// tensor of the argument's name or a single tensor).
  std::map<std::string, std::string> arrayFiles;
  /// Array samples in a seeded shuffle per epoch; false: in file order.
  bool shuffle = true;
};

/// The row of an array file that global sample `sample` reads: sample s of
/// epoch e = sample / samples is row perm_e[s mod samples], perm_e a
/// Fisher-Yates shuffle whose swap at i (from samples - 1 down to 1) is with
/// syntheticInt(seed, "shuffle", e, i, i + 1) (Init.h); without shuffling,
/// sample mod samples.
int64_t getArrayRow(uint64_t seed, bool shuffle, int64_t samples,
                    int64_t sample);

class DataSource {
public:
  /// Checks the data arguments' shapes and opens the token file. Errors name
  /// the argument or the file.
  static StatusOr<DataSource> create(const Schedule &schedule,
                                     const DataOptions &options, int rank,
                                     int worldSize);

  /// Writes data argument `argument` for 0-based step `step`.
  Status fill(const ArgumentInfo &argument, int64_t step,
              TensorRef tensor) const;
  /// The global rows of each data argument, by name, that the job has read
  /// before step `step` (all ranks together).
  std::map<std::string, int64_t> rowsRead(int64_t step) const;
  /// Continues at step `step` with the rows after `rowsRead` (one entry per
  /// data argument), as a checkpoint recorded them. Errors name the argument
  /// that has no entry or the entry that has no argument.
  Status resumeAt(int64_t step, const std::map<std::string, int64_t> &rowsRead);
  /// fill, as the executor's callback (this must outlive it).
  DataFiller filler() const;

  /// Tokens this rank consumes per step (the elements of `tokens`), or
  /// samples (rows of the first data argument) for models without tokens.
  int64_t tokensPerStep() const { return tokensPerStep_; }

  DataSource(DataSource &&) noexcept;
  DataSource &operator=(DataSource &&) noexcept;
  ~DataSource();

private:
  DataSource();
  struct ArrayArgument;
  Status openArrays(const Schedule &schedule, const DataOptions &options);
  Status fillArray(const ArrayArgument &array, const ArgumentInfo &arg,
                   int64_t step, TensorRef tensor) const;
  /// The file row of global sample `sample` (the epoch's permutation is
  /// cached: ranks read an epoch's samples in order).
  int64_t rowOf(int64_t samples, int64_t sample) const;
  /// The global row of the first of the `rows` rows of argument `name` that
  /// this rank reads at step `step`; -1 beyond kMaxDataRows.
  int64_t getGlobalRow(const std::string &name, int64_t step,
                       int64_t rows) const;

  uint64_t seed_ = 0;
  int rank_ = 0;
  int worldSize_ = 1;
  /// Each data argument's rows per rank and step.
  std::map<std::string, int64_t> rowsPerStep_;
  /// Where the run started: its first step, and the rows read before it.
  int64_t startStep_ = 0;
  std::map<std::string, int64_t> startRows_;
  std::optional<TokenStream> tokens_;
  int64_t tokensPerStep_ = 0;
  /// The array-fed arguments by name, and the shuffle.
  std::map<std::string, std::unique_ptr<ArrayArgument>> arrays_;
  bool shuffle_ = true;
  struct PermutationCache;
  std::unique_ptr<PermutationCache> permutation_;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_DATASOURCE_H
