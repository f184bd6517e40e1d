//===- JsonReader.cpp - Strict JSON with source positions -----------------===//

#include "JsonReader.h"

#include "zero/Config/ConfigDiagnostics.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"
#include "llvm/Support/raw_ostream.h"

using namespace zero;
using llvm::SMLoc;
using llvm::StringRef;
using llvm::Twine;

namespace {

/// Checks that a text is strict JSON (RFC 8259) and reports each violation at
/// its position. A missing or trailing ',' is reported and skipped so that
/// one pass finds them all; anything else stops the check.
class StrictJsonChecker {
public:
  StrictJsonChecker(llvm::SourceMgr &sourceMgr, StringRef text,
                    DiagnosticList &diagnostics)
      : sourceMgr(sourceMgr), cur(text.begin()), end(text.end()),
        diagnostics(diagnostics) {}

  bool check(bool requireObject) {
    StringRef rest(cur, end - cur);
    if (rest.starts_with("\xEF\xBB\xBF")) // UTF-8 byte order mark.
      cur += 3;
    skipSpace();
    if (requireObject && (cur == end || *cur != '{')) {
      error(cur, cur == end ? "the configuration is empty; expected a JSON "
                              "object"
                            : "a DeepSpeed configuration must be a JSON "
                              "object ('{...}')");
      return false;
    }
    if (!value())
      return false;
    skipSpace();
    if (cur != end)
      return unexpected("the end of the file after the JSON value");
    return !hadError;
  }

private:
  static constexpr unsigned kMaxDepth = 64;

  void error(const char *at, const Twine &message) {
    diagnostics.add([&] {
      return makeDiagnostic(sourceMgr, SMLoc::getFromPointer(at),
                            llvm::SourceMgr::DK_Error, message);
    });
    hadError = true;
  }

  void skipSpace() {
    while (cur != end &&
           (*cur == ' ' || *cur == '\t' || *cur == '\n' || *cur == '\r'))
      ++cur;
  }

  /// The word at `at`, for messages.
  StringRef wordAt(const char *at) const {
    const char *wordEnd = at;
    while (wordEnd != end &&
           (llvm::isAlnum(*wordEnd) || StringRef("_.+-").contains(*wordEnd)))
      ++wordEnd;
    if (wordEnd == at && at != end)
      ++wordEnd;
    return StringRef(at, std::min<size_t>(wordEnd - at, 40));
  }

  bool unexpected(const Twine &expected) {
    StringRef rest(cur, end - cur);
    if (cur == end)
      error(cur, "unexpected end of file; expected " + expected);
    else if (rest.starts_with("#") || rest.starts_with("//") ||
             rest.starts_with("/*"))
      error(cur, "comments are not valid JSON");
    else if (*cur == '\'')
      error(cur, "strings must be in double quotes");
    else
      error(cur, "expected " + expected + ", got '" + wordAt(cur) + "'");
    return false;
  }

  bool value() {
    if (cur == end)
      return unexpected("a value");
    if (*cur == '{')
      return object();
    if (*cur == '[')
      return array();
    if (*cur == '"')
      return string();
    if (llvm::isDigit(*cur) || *cur == '-' || *cur == '+' || *cur == '.')
      return number();
    if (llvm::isAlpha(*cur))
      return literal();
    return unexpected("a value");
  }

  bool startsValue() const {
    return cur != end &&
           (StringRef("{[\"-").contains(*cur) || llvm::isAlnum(*cur));
  }

  bool enter(const char *open) {
    if (++depth <= kMaxDepth)
      return true;
    error(open, "JSON nested deeper than " + Twine(kMaxDepth) + " levels");
    return false;
  }

  bool object() {
    const char *open = cur++;
    if (!enter(open))
      return false;
    skipSpace();
    if (cur != end && *cur == '}')
      return close();
    while (true) {
      if (cur == end || *cur != '"')
        return unexpected("a key in double quotes");
      if (!string())
        return false;
      skipSpace();
      if (cur == end || *cur != ':')
        return unexpected("':' after the key");
      ++cur;
      skipSpace();
      if (!value())
        return false;
      skipSpace();
      if (cur != end && *cur == ',') {
        const char *comma = cur++;
        skipSpace();
        if (cur != end && *cur == '}') {
          error(comma, "trailing ',' before '}' is not valid JSON");
          return close();
        }
        continue;
      }
      if (cur != end && *cur == '}')
        return close();
      if (cur != end && *cur == '"') {
        error(cur, "missing ',' before " + quotedStringAt(cur));
        continue;
      }
      if (cur == end)
        error(open, "this '{' is never closed");
      return unexpected("',' or '}' after the member");
    }
  }

  bool array() {
    const char *open = cur++;
    if (!enter(open))
      return false;
    skipSpace();
    if (cur != end && *cur == ']')
      return close();
    while (true) {
      if (!value())
        return false;
      skipSpace();
      if (cur != end && *cur == ',') {
        const char *comma = cur++;
        skipSpace();
        if (cur != end && *cur == ']') {
          error(comma, "trailing ',' before ']' is not valid JSON");
          return close();
        }
        continue;
      }
      if (cur != end && *cur == ']')
        return close();
      if (startsValue()) {
        error(cur, "missing ',' between array elements");
        continue;
      }
      if (cur == end)
        error(open, "this '[' is never closed");
      return unexpected("',' or ']' after the element");
    }
  }

  bool close() {
    ++cur;
    --depth;
    return true;
  }

  /// The string literal at `at` as written, shortened for messages.
  std::string quotedStringAt(const char *at) const {
    StringRef rest(at + 1, end - at - 1);
    StringRef body =
        rest.take_until([](char c) { return c == '"' || c == '\n'; });
    if (body.size() > 40)
      return "\"" + body.take_front(37).str() + "...\"";
    return "\"" + body.str() + "\"";
  }

  bool string() {
    const char *open = cur++;
    while (true) {
      if (cur == end || *cur == '\n' || *cur == '\r') {
        error(open, "unterminated string");
        return false;
      }
      char c = *cur;
      if (c == '"') {
        ++cur;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        error(cur, "control characters in strings must be escaped");
        ++cur;
        continue;
      }
      if (c != '\\') {
        ++cur;
        continue;
      }
      char escape = cur + 1 == end ? '\0' : cur[1];
      if (escape == 'u') {
        StringRef hex(cur + 2, std::min<size_t>(4, end - cur - 2));
        if (hex.size() != 4 || !llvm::all_of(hex, llvm::isHexDigit))
          error(cur, "'\\u' must be followed by four hex digits");
        cur += 2;
        continue;
      }
      if (escape == '\0' || !StringRef("\"\\/bfnrt").contains(escape))
        error(cur, "invalid escape '\\" + Twine(escape) + "' in a string");
      cur += escape == '\0' ? 1 : 2;
    }
  }

  /// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  static bool isJsonNumber(StringRef text) {
    text.consume_front("-");
    auto digits = [&text] {
      size_t n = 0;
      while (n < text.size() && llvm::isDigit(text[n]))
        ++n;
      text = text.drop_front(n);
      return n;
    };
    if (text.consume_front("0")) {
      if (!text.empty() && llvm::isDigit(text.front()))
        return false;
    } else if (digits() == 0) {
      return false;
    }
    if (text.consume_front(".") && digits() == 0)
      return false;
    if (text.consume_front("e") || text.consume_front("E")) {
      if (!text.consume_front("+"))
        text.consume_front("-");
      if (digits() == 0)
        return false;
    }
    return text.empty();
  }

  bool number() {
    StringRef word = wordAt(cur);
    if (!isJsonNumber(word)) {
      if (word == "-Infinity")
        error(cur, "'-Infinity' is not a JSON number");
      else
        error(cur, "invalid number '" + word + "'");
      return false;
    }
    cur += word.size();
    return true;
  }

  bool literal() {
    StringRef word = wordAt(cur);
    if (word == "true" || word == "false" || word == "null") {
      cur += word.size();
      return true;
    }
    if (word == "True" || word == "False" || word == "TRUE" || word == "FALSE")
      error(cur, "'" + word + "' is not a JSON value; write " + word.lower());
    else if (word == "None" || word == "NULL")
      error(cur, "'" + word + "' is not a JSON value; write null");
    else if (word == "NaN" || word == "Infinity")
      error(cur, "'" + word + "' is not a JSON number");
    else
      error(cur, "unexpected '" + word + "'; strings must be in double quotes");
    return false;
  }

  llvm::SourceMgr &sourceMgr;
  const char *cur;
  const char *end;
  DiagnosticList &diagnostics;
  unsigned depth = 0;
  bool hadError = false;
};

/// Converts the YAML nodes of text that passed the strict check.
class YamlToJson {
public:
  YamlToJson(llvm::SourceMgr &sourceMgr, StringRef text,
             DiagnosticList &diagnostics)
      : sourceMgr(sourceMgr), text(text), diagnostics(diagnostics) {}

  bool convert(llvm::yaml::Node *node, StringRef path, JsonNode &out) {
    out.loc = node->getSourceRange().Start;
    if (auto *scalar = llvm::dyn_cast<llvm::yaml::ScalarNode>(node)) {
      // getValue unescapes strings and drops the whitespace that YAML
      // keeps after a plain scalar.
      llvm::SmallString<64> storage;
      StringRef value = scalar->getValue(storage);
      if (scalar->getRawValue().starts_with("\""))
        out.kind = JsonNode::String;
      else if (value == "true" || value == "false")
        out.kind = JsonNode::Bool;
      else if (value == "null")
        out.kind = JsonNode::Null;
      else
        out.kind = JsonNode::Number;
      out.text = value.str();
      return true;
    }
    if (auto *mapping = llvm::dyn_cast<llvm::yaml::MappingNode>(node)) {
      out.kind = JsonNode::Object;
      out.loc = openingBracket(out.loc, '{');
      llvm::StringMap<SMLoc> seen;
      bool ok = true;
      for (llvm::yaml::KeyValueNode &entry : *mapping) {
        auto *keyNode =
            llvm::dyn_cast_or_null<llvm::yaml::ScalarNode>(entry.getKey());
        llvm::yaml::Node *valueNode = entry.getValue();
        if (!keyNode || !valueNode)
          return false;
        JsonMember member;
        llvm::SmallString<64> storage;
        member.key = keyNode->getValue(storage).str();
        member.keyLoc = keyNode->getSourceRange().Start;
        std::string memberPath =
            path.empty() ? member.key : (path + "." + member.key).str();
        auto [it, inserted] = seen.try_emplace(member.key, member.keyLoc);
        if (!inserted) {
          diagnostics.add([&] {
            auto [line, column] = sourceMgr.getLineAndColumn(it->second);
            return makeDiagnostic(
                sourceMgr, member.keyLoc, llvm::SourceMgr::DK_Error,
                "duplicate key '" + shorten(memberPath) + "' (first at line " +
                    Twine(line) + ", column " + Twine(column) + ")");
          });
          ok = false;
        }
        ok &= convert(valueNode, memberPath, member.value);
        out.members.push_back(std::move(member));
      }
      return ok;
    }
    if (auto *sequence = llvm::dyn_cast<llvm::yaml::SequenceNode>(node)) {
      out.kind = JsonNode::Array;
      out.loc = openingBracket(out.loc, '[');
      bool ok = true;
      for (llvm::yaml::Node &element : *sequence) {
        out.elements.emplace_back();
        ok &= convert(&element, path, out.elements.back());
      }
      return ok;
    }
    // Null nodes, aliases and block scalars cannot follow the strict check.
    out.kind = JsonNode::Null;
    return true;
  }

private:
  /// YAML starts a collection at its first entry; point at its bracket.
  SMLoc openingBracket(SMLoc first, char bracket) const {
    const char *p = first.getPointer();
    while (p > text.begin()) {
      --p;
      if (*p == bracket)
        return SMLoc::getFromPointer(p);
      if (!StringRef(" \t\r\n").contains(*p))
        break;
    }
    return first;
  }

  llvm::SourceMgr &sourceMgr;
  StringRef text;
  DiagnosticList &diagnostics;
};

} // namespace

std::string zero::describeJson(const JsonNode &node) {
  switch (node.kind) {
  case JsonNode::Object:
    return "an object";
  case JsonNode::Array: {
    // Short arrays of scalars are shown as written: [0.9, 1.0].
    bool scalars = node.elements.size() <= 4 &&
                   llvm::all_of(node.elements, [](const JsonNode &element) {
                     return element.kind != JsonNode::Object &&
                            element.kind != JsonNode::Array;
                   });
    if (!scalars)
      return "an array";
    std::string text = "[";
    for (const JsonNode &element : node.elements)
      text += (text.size() > 1 ? ", " : "") + describeJson(element);
    return text + "]";
  }
  case JsonNode::Null:
    return "null";
  case JsonNode::Bool:
    return node.text;
  case JsonNode::Number:
    return shorten(node.text, 40);
  case JsonNode::String: {
    std::string quoted = "\"";
    llvm::raw_string_ostream os(quoted);
    llvm::printEscapedString(StringRef(node.text).take_front(40), os);
    if (node.text.size() > 40)
      os << "...";
    os << '"';
    return quoted;
  }
  }
  llvm_unreachable("unknown JSON kind");
}

std::string zero::shorten(StringRef text, size_t limit) {
  if (text.size() <= limit)
    return text.str();
  return (text.take_front(limit - 3) + "...").str();
}

bool zero::readJson(llvm::SourceMgr &sourceMgr, StringRef range,
                    bool requireObject, JsonNode &result,
                    DiagnosticList &diagnostics) {
  StrictJsonChecker checker(sourceMgr, range, diagnostics);
  if (!checker.check(requireObject))
    return false;

  // The YAML parser reports through the SourceMgr; collect its messages.
  size_t firstNew = diagnostics.count();
  auto *oldHandler = sourceMgr.getDiagHandler();
  void *oldContext = sourceMgr.getDiagContext();
  sourceMgr.setDiagHandler(
      [](const llvm::SMDiagnostic &diagnostic, void *context) {
        static_cast<DiagnosticList *>(context)->add(diagnostic);
      },
      &diagnostics);
  llvm::yaml::Stream stream(range, sourceMgr, /*ShowColors=*/false);
  bool ok = false;
  llvm::yaml::document_iterator document = stream.begin();
  if (document != stream.end())
    if (llvm::yaml::Node *root = document->getRoot())
      ok = YamlToJson(sourceMgr, range, diagnostics).convert(root, "", result);
  sourceMgr.setDiagHandler(oldHandler, oldContext);
  return ok && !stream.failed() && diagnostics.count() == firstNew;
}
