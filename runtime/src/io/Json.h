//===- Json.h - the one parser of the runtime's untrusted JSON --*- C++ -*-===//
//
// Private to the runtime: every JSON the runtime reads from a file (the
// schedule, a checkpoint's manifest, a safetensors header, --init-from's
// header) is parsed here, with its size and its nesting bounded before any
// recursive walk of the result (dump(), a copy, a comparison, the decoders)
// can run out of stack. nlohmann's parser itself keeps its nesting on the
// heap; the depth is checked in its callback, which stops at the first
// container past the bound.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_SRC_IO_JSON_H
#define ZERO_RUNTIME_SRC_IO_JSON_H

#include "zero/runtime/Status.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace zero::runtime::io {

/// The deepest nesting of arrays and objects a runtime reader accepts. A
/// schedule nests about 6 deep (a body's indexing maps); the bound leaves
/// room and keeps every recursive walk a few kilobytes of stack.
inline constexpr int kMaxJsonDepth = 256;

/// The largest JSON text a runtime reader accepts by default: 1 GiB (a
/// GPT-2 10B schedule is about 30 MB).
inline constexpr size_t kMaxJsonBytes = size_t(1) << 30;

struct JsonLimits {
  size_t maxBytes = kMaxJsonBytes;
  int maxDepth = kMaxJsonDepth;
  /// Refuse an object with a key twice (nlohmann keeps the last one).
  bool rejectDuplicateKeys = false;
};

/// Parses `text`, read from `name` (a file, for messages). Errors are
/// invalid-argument and read "<name>: <what>: <reason>": a syntax error with
/// nlohmann's position, "nested deeper than 256 levels", "<n> bytes, more
/// than the <m> bytes allowed", "the key 'k' appears twice in one object".
StatusOr<nlohmann::json> parseJson(const std::string &text,
                                   const std::string &name,
                                   const std::string &what = "not valid JSON",
                                   const JsonLimits &limits = {});

} // namespace zero::runtime::io

#endif // ZERO_RUNTIME_SRC_IO_JSON_H
