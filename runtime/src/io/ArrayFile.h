//===- ArrayFile.h - a dataset array read sample by sample ------*- C++ -*-===//
//
// Private to the runtime: the array behind `zero-run --data NAME=FILE`, a
// NumPy .npy file (little-endian, C order) or one tensor of a safetensors
// file. The file is mapped read-only; its first dimension indexes the
// samples, the others are each sample's shape.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_SRC_IO_ARRAYFILE_H
#define ZERO_RUNTIME_SRC_IO_ARRAYFILE_H

#include "zero/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zero::runtime::io {

/// "[2, 3]".
std::string formatShape(const std::vector<int64_t> &shape);

class ArrayFile {
public:
  /// Maps `path`: a .npy file, or a .safetensors file whose tensor
  /// `tensorName` (or whose only tensor) is the array. Errors name the file
  /// and what is wrong: an unknown or big-endian dtype, Fortran order, a
  /// header or size that does not match the data, a 0-d array.
  static StatusOr<ArrayFile> open(const std::string &path,
                                  const std::string &tensorName);

  const std::string &path() const { return path_; }
  /// The element type, named as safetensors names them (F32, I64, BOOL).
  const std::string &dtype() const { return dtype_; }
  bool isFloat() const { return isFloat_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t samples() const { return shape_[0]; }
  /// Elements per sample: the product of every dimension but the first.
  int64_t sampleNumel() const { return sampleNumel_; }

  /// The elements, little-endian, in the mapping that holds them.
  const char *data() const { return data_; }
  const std::shared_ptr<const char> &mapping() const { return mapping_; }

  /// Element `index` of the flattened array, as a double (float arrays)
  /// or an integer (the others; BOOL is 0 or 1).
  double loadFloat(int64_t index) const;
  int64_t loadInt(int64_t index) const;

private:
  ArrayFile() = default;

  std::string path_;
  std::string dtype_;
  bool isFloat_ = false;
  int64_t width_ = 0;
  std::vector<int64_t> shape_;
  int64_t sampleNumel_ = 0;
  // The mapping, shared by copies; data_ is its first element.
  std::shared_ptr<const char> mapping_;
  const char *data_ = nullptr;
};

} // namespace zero::runtime::io

#endif // ZERO_RUNTIME_SRC_IO_ARRAYFILE_H
