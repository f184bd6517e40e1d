//===- InputNesting.h - nesting limit of the tools' input ---*- C++ -*-===//
//
// MLIR's parser, verifier, printer and the walks of passes recurse once per
// level of nesting: of attributes (`[[[...]]]`), of types
// (`tensor<tensor<...>>`, `!llvm.struct<(...)>`) and of regions
// (`scf.execute_region { ... }`). An input nested deeply enough overflows the
// stack, a signal no crash recovery can catch, and 20 KB of brackets is deep
// enough. The zero tools therefore scan an input's brackets before they parse
// it and refuse one nested deeper than kMaxInputNesting, at the bracket that
// goes past it; and they parse and compile on a stack of kToolStackSize bytes,
// so that the limit holds whatever the stack of the calling thread is
// (docs/TrainingStepIR.md, "Limits").
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_SUPPORT_INPUTNESTING_H
#define ZERO_SUPPORT_INPUTNESTING_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace llvm {
class MemoryBuffer;
class raw_ostream;
} // namespace llvm

namespace mlir {
namespace zero {

/// The deepest nesting of brackets (`(`, `[`, `{`, `<`) the zero tools read.
/// A training step nests a few levels (a module, a function, a region, an
/// attribute dictionary, a type); a generic-form region level takes two
/// (`({`).
constexpr unsigned kMaxInputNesting = 256;

/// The stack the zero tools parse and compile on: room for every recursion
/// of MLIR over kMaxInputNesting levels, with a wide margin.
constexpr unsigned kToolStackSize = 64u << 20;

/// The first opening bracket of `text` nested deeper than `maxDepth`, or
/// null. Brackets inside string literals and `//` comments do not count, nor
/// does the `>` of an arrow (`->`); a closing bracket that does not match
/// the innermost open one (`>=` inside parentheses) closes nothing.
const char *findNestingPastLimit(StringRef text,
                                 unsigned maxDepth = kMaxInputNesting);

/// Fails, after printing `FILE:LINE:COL: error: ...` with the line to `os`,
/// where `buffer` nests deeper than `maxDepth`.
LogicalResult checkInputNesting(const llvm::MemoryBuffer &buffer,
                                llvm::raw_ostream &os,
                                unsigned maxDepth = kMaxInputNesting);

/// The error's message for a bracket past `maxDepth`.
std::string getNestingPastLimitMessage(unsigned maxDepth);

} // namespace zero
} // namespace mlir

#endif // ZERO_SUPPORT_INPUTNESTING_H
