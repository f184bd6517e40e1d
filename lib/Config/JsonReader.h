//===- JsonReader.h - Strict JSON with source positions ---------*- C++ -*-===//
//
// JSON is YAML flow syntax, so LLVM's YAML parser reads it with positions for
// every node (as clang's JSONCompilationDatabase does). YAML also accepts
// much that is not JSON: a missing ',' between members, trailing commas,
// comments, single quotes, several documents. A strict syntax check runs
// first so that such text is an error at its exact position, as it is for
// DeepSpeed (Python's json module).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_CONFIG_JSONREADER_H
#define ZERO_LIB_CONFIG_JSONREADER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace zero {

class DiagnosticList;

struct JsonMember;

/// A JSON value and where it starts in its buffer.
struct JsonNode {
  enum Kind { Object, Array, String, Number, Bool, Null };

  Kind kind = Null;
  llvm::SMLoc loc;
  /// String: the unescaped contents; Number: the literal as written;
  /// Bool: "true" or "false".
  std::string text;
  std::vector<JsonMember> members; ///< Object, in file order.
  std::vector<JsonNode> elements;  ///< Array.

  bool isString(llvm::StringRef value) const {
    return kind == String && text == value;
  }
};

struct JsonMember {
  std::string key;
  llvm::SMLoc keyLoc;
  JsonNode value;
};

/// Describes a value for messages: `"abc"`, `1.5`, `true`, `null`,
/// `an object`, `an array`.
std::string describeJson(const JsonNode &node);

/// Reads the JSON text of `range` (inside a buffer of `sourceMgr`). With
/// `requireObject`, the text must be one object (a configuration file);
/// otherwise any value (an override). Duplicate keys are errors. Returns
/// false and adds to `diagnostics` on error.
bool readJson(llvm::SourceMgr &sourceMgr, llvm::StringRef range,
              bool requireObject, JsonNode &result,
              DiagnosticList &diagnostics);

/// `text` for a message, shortened to `limit` characters ("...").
std::string shorten(llvm::StringRef text, size_t limit = 80);

} // namespace zero

#endif // ZERO_LIB_CONFIG_JSONREADER_H
