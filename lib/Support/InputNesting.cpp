//===- InputNesting.cpp - the nesting limit of the zero tools' input ------===//

#include "zero/Support/InputNesting.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

/// The opening bracket that `c` closes, or 0.
static char getOpening(char c) {
  switch (c) {
  case ')':
    return '(';
  case ']':
    return '[';
  case '}':
    return '{';
  case '>':
    return '<';
  default:
    return 0;
  }
}

const char *zero::findNestingPastLimit(StringRef text, unsigned maxDepth) {
  // The open brackets, innermost last; no deeper than maxDepth + 1.
  SmallVector<char, 64> open;
  const char *end = text.end();
  for (const char *p = text.begin(); p != end; ++p) {
    char c = *p;
    switch (c) {
    case '"':
      // A string literal ends at its closing quote or, unterminated (an
      // error the parser reports), at the end of its line.
      for (++p; p != end && *p != '"' && *p != '\n'; ++p)
        if (*p == '\\' && p + 1 != end && p[1] != '\n')
          ++p;
      if (p == end)
        return nullptr;
      break;
    case '/':
      if (p + 1 != end && p[1] == '/') {
        while (p != end && *p != '\n')
          ++p;
        if (p == end)
          return nullptr;
      }
      break;
    case '-':
      if (p + 1 != end && p[1] == '>')
        ++p;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (open.size() == maxDepth)
        return p;
      open.push_back(c);
      break;
    case ')':
    case ']':
    case '}':
    case '>':
      if (!open.empty() && open.back() == getOpening(c))
        open.pop_back();
      break;
    default:
      break;
    }
  }
  return nullptr;
}

std::string zero::getNestingPastLimitMessage(unsigned maxDepth) {
  return (Twine("nesting deeper than ") + Twine(maxDepth) +
          " levels of brackets ((), [], {}, <>): the zero tools refuse "
          "inputs nested this deeply (docs/TrainingStepIR.md, \"Limits\")")
      .str();
}

LogicalResult zero::checkInputNesting(const llvm::MemoryBuffer &buffer,
                                      llvm::raw_ostream &os,
                                      unsigned maxDepth) {
  const char *past = findNestingPastLimit(buffer.getBuffer(), maxDepth);
  if (!past)
    return success();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buffer.getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  sourceMgr.PrintMessage(os, llvm::SMLoc::getFromPointer(past),
                         llvm::SourceMgr::DK_Error,
                         getNestingPastLimitMessage(maxDepth));
  return failure();
}
