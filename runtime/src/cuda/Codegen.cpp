//===- Codegen.cpp - CUDA C++ kernels from linalg region bodies -----------===//
//
// See Codegen.h for the design. The generated source is deterministic (it
// is the key of the kernel cache) and self-contained: no #include, so NVRTC
// compiles it in milliseconds and no toolkit header is needed at run time.
// Its prelude is ops/ElementMath.h, embedded by the build
// (KernelElementMath.inc, from cmake/EmbedText.cmake).
//
//===----------------------------------------------------------------------===//

#include "Codegen.h"

#include "ops/Elements.h"
#include "ops/Predicates.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

namespace zero::runtime::cuda {

namespace {

Status internalError(const std::string &message) {
  return ZERO_ERROR(kInternal, "CUDA kernel generator: " + message);
}

using ops::getRowMajorStrides;

/// Classifies the loops (Codegen.h): parallel when every output indexes
/// the loop or its size is 1, in-thread when no output indexes it, else
/// the whole nest is sequential.
void classifyLoops(LoopNest &nest) {
  const size_t numLoops = nest.loopSizes.size();
  nest.inThread.assign(numLoops, false);
  nest.sequential = false;
  for (size_t d = 0; d < numLoops; ++d) {
    if (nest.loopSizes[d] == 1)
      continue;
    size_t indexing = 0;
    for (const NestOperand &output : nest.outputs)
      indexing += output.strides[d] != 0;
    if (indexing == 0)
      nest.inThread[d] = true;
    else if (indexing != nest.outputs.size())
      nest.sequential = true;
  }
  if (nest.sequential)
    nest.inThread.assign(numLoops, true);
}

const char *elementType(DType type) {
  switch (type) {
  case DType::F32:
    return "float";
  case DType::F64:
    return "double";
  case DType::BF16:
  case DType::F16:
    return "unsigned short";
  case DType::I64:
  case DType::Index:
    return "long long";
  case DType::I32:
    return "int";
  case DType::I1:
    return "unsigned char";
  }
  return "void";
}

/// The type of a register in the register file (an outside scalar).
const char *registerType(DType type) {
  return isFloat(type) ? "double" : "long long";
}

/// f32, bf16 and f16 values are held in float (ElementMath.h's file
/// comment), f64 in double, integers in long long.
bool inFloat(DType type) {
  return type == DType::F32 || type == DType::BF16 || type == DType::F16;
}

/// The type of a body value in the kernel.
const char *valueType(DType type) {
  if (inFloat(type))
    return "float";
  return registerType(type);
}

/// The suffix of ElementMath.h's per-dtype functions (loadF32, roundBF16).
const char *typeSuffix(DType type) {
  switch (type) {
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::BF16:
    return "BF16";
  case DType::F16:
    return "F16";
  case DType::I64:
  case DType::Index:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::I1:
    return "I1";
  }
  return "";
}

using ops::bitWidthOf;

std::string intLiteral(int64_t value) {
  if (value == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return std::to_string(value) + "LL";
}

/// `expr` rounded to the float type `type`: a float expression (`isFloat`)
/// or a double one, through ElementMath.h's overload for it.
std::string roundTo(DType type, const std::string &expr, bool isFloatExpr) {
  if (type == DType::F64 || (type == DType::F32 && isFloatExpr))
    return expr;
  return std::string("zk::round") + typeSuffix(type) + "(" + expr + ")";
}

/// A body value as a double: the functions computed in double (the
/// transcendentals, fmod, pow) take their float operands widened, so that
/// CUDA's float overloads are never chosen.
std::string widened(DType type, const std::string &name) {
  return inFloat(type) ? "(double)" + name : name;
}

/// `expr` (a long long) wrapped to the integer type `type`.
std::string wrapTo(DType type, const std::string &expr) {
  if (type == DType::I1 || type == DType::I32)
    return std::string("zk::wrap") + typeSuffix(type) + "(" + expr + ")";
  return expr;
}

/// The signed value of a canonical integer register (i1 true is -1).
std::string signedOf(DType type, const std::string &name) {
  if (type != DType::I1)
    return name;
  return "zk::toSigned(" + name + ", 1)";
}

/// The unsigned value of a canonical integer register, as unsigned long long.
std::string unsignedOf(DType type, const std::string &name) {
  return "zk::toUnsigned(" + name + ", " + std::to_string(bitWidthOf(type)) +
         ")";
}

/// arith.cmpf or arith.cmpi (`isFloat`) as ElementMath.h's comparison.
std::string compareExpression(ops::Predicate predicate, bool isFloat,
                              DType type, const std::string &x,
                              const std::string &y) {
  const std::string name =
      std::string("zk::Predicate::") + ops::getPredicateEnumerator(predicate);
  if (isFloat)
    return "zk::compareFloats(" + name + ", " + x + ", " + y + ")";
  return "zk::compareInts(" + name + ", " + x + ", " + y + ", " +
         std::to_string(bitWidthOf(type)) + ")";
}

/// The kernel's text, built statement by statement.
class KernelWriter : public SourceWriter {
public:
  KernelWriter(const LoopNest &nest, const ValueTable &values,
               const CodegenOptions &options)
      : nest_(nest), values_(values), options_(options), body_(*nest.body) {}

  StatusOr<GeneratedKernel> run();

private:
  DType dtypeOf(int64_t id) const { return values_.values[id].dtype; }
  /// The C++ name of a body value: by position (argument, op, outside
  /// scalar), never by value id, so that the same body in another place of
  /// the schedule is the same source (and the same kernel).
  std::string name(int64_t id) const {
    auto found = names_.find(id);
    return found == names_.end() ? "undefined" : found->second;
  }

  Status scanBody();
  std::string offsetOf(const NestOperand &operand, const std::string &base,
                       bool parallelPart) const;
  std::string baseOffset(const NestOperand &operand) const;
  std::string load(DType type, const std::string &pointer,
                   const std::string &offset) const {
    return loadExpression(type, pointer, offset);
  }
  std::string store(DType type, const std::string &pointer,
                    const std::string &offset, const std::string &value) const {
    return storeStatement(type, pointer, offset, value);
  }
  Status emitOp(size_t index);
  /// The value of body op `index`; `operands` replaces its operands' names
  /// when given.
  StatusOr<std::string>
  expression(size_t index, const std::vector<std::string> *operands = nullptr);
  /// Output o's combine op applied to `acc` (in its block argument's place)
  /// and `value` (in the element value's place).
  std::string combine(size_t o, const std::string &acc,
                      const std::string &value);
  void emitPointIndices(int64_t numPoints);
  void emitParallel();
  void emitVector();
  void emitCooperative();
  void emitColumns();
  void emitPartials(const std::string &first, int64_t step);
  void emitSequential();
  void emitInputLoads(bool sequentialOffsets);
  Status emitBodyOps();

  const LoopNest &nest_;
  const ValueTable &values_;
  const CodegenOptions &options_;
  const RegionBody &body_;
  Status bodyStatus_;

  size_t numInputs_ = 0;
  std::vector<bool> argumentUsed_;
  std::map<int64_t, std::string> names_;
  std::vector<int64_t> scalars_; // external scalars, parameter order
  std::vector<int64_t> tensors_; // external tensors, parameter order
  std::vector<ExtractSite> sites_;
  std::vector<bool> skipOp_; // the combine ops of a cooperative reduction
};

/// Names the body's values by position, and takes from the checked body
/// which arguments it reads and the scalars and tensors it takes from
/// outside (in parameter order: first use).
Status KernelWriter::scanBody() {
  const ops::BodyProgram &program = nest_.program;
  numInputs_ = nest_.inputs.size();
  const size_t numArguments = numInputs_ + nest_.outputs.size();
  if (program.argumentUsed.size() != numArguments ||
      program.regionOps.size() != body_.ops.size())
    return internalError("the checked body is not the loop nest's");
  argumentUsed_ = program.argumentUsed;
  for (size_t i = 0; i < numArguments; ++i)
    names_.emplace(body_.arguments[i], "arg" + std::to_string(i));
  for (size_t i = 0; i < body_.ops.size(); ++i)
    names_.emplace(body_.ops[i].results[0], "v" + std::to_string(i));
  for (const auto &external : program.externalScalars) {
    names_.emplace(external.first, "ext" + std::to_string(scalars_.size()));
    scalars_.push_back(external.first);
  }
  for (const ops::BodyTensor &tensor : program.externalTensors)
    tensors_.push_back(tensor.value);
  for (size_t i = 0; i < body_.ops.size(); ++i)
    if (body_.ops[i].code() == OpCode::Extract)
      sites_.push_back({i, body_.ops[i].operands[0]});
  return Status::ok();
}

/// The element offset of `operand`: `base` plus the in-thread loops' terms
/// (all loops' terms when `parallelPart`).
std::string KernelWriter::offsetOf(const NestOperand &operand,
                                   const std::string &base,
                                   bool parallelPart) const {
  std::string text = base;
  for (size_t d = 0; d < nest_.loopSizes.size(); ++d) {
    const int64_t stride = operand.strides[d];
    if (stride == 0 || nest_.loopSizes[d] == 1 ||
        (!parallelPart && !nest_.inThread[d]))
      continue;
    std::string term = "i" + std::to_string(d);
    if (stride != 1)
      term += " * " + intLiteral(stride);
    text = text.empty() ? term : text + " + " + term;
  }
  return text.empty() ? "0" : text;
}

/// The offset of `operand` over the parallel loops only.
std::string KernelWriter::baseOffset(const NestOperand &operand) const {
  std::string text;
  for (size_t d = 0; d < nest_.loopSizes.size(); ++d) {
    const int64_t stride = operand.strides[d];
    if (stride == 0 || nest_.loopSizes[d] == 1 || nest_.inThread[d])
      continue;
    std::string term = "i" + std::to_string(d);
    if (stride != 1)
      term += " * " + intLiteral(stride);
    text = text.empty() ? term : text + " + " + term;
  }
  return text.empty() ? "0" : text;
}

StatusOr<std::string>
KernelWriter::expression(size_t index,
                         const std::vector<std::string> *operands) {
  std::vector<std::string> x;
  if (operands)
    x = *operands;
  else
    for (int64_t id : body_.ops[index].operands)
      x.push_back(name(id));
  return bodyOpExpression(nest_.program.regionOps[index], x);
}

} // namespace

StatusOr<std::string> bodyOpExpression(const ops::ScalarOp &op,
                                       const std::vector<std::string> &x) {
  using ops::ScalarOpKind;
  const DType rt = op.resultType;
  const DType ot = op.operandType;
  // The op was checked: its operands are as many as its kind takes.
  auto arity = [&](size_t n) -> Status {
    if (x.size() != n || static_cast<size_t>(ops::getScalarArity(op.kind)) != n)
      return internalError(std::to_string(x.size()) +
                           " operands for an op of " +
                           std::to_string(ops::getScalarArity(op.kind)));
    return Status::ok();
  };
  // Float ops on values held in float compute in f32 where that rounds as
  // double does (+ - * / sqrt, and the exact ones); the others in double.
  const bool floatOperands = inFloat(ot);
  auto unaryF = [&](const char *fn) -> StatusOr<std::string> {
    ZERO_RETURN_IF_ERROR(arity(1));
    return roundTo(rt, std::string(fn) + "(" + widened(ot, x[0]) + ")",
                   /*isFloatExpr=*/false);
  };
  auto exactUnaryF = [&](const char *doubleFn,
                         const char *floatFn) -> StatusOr<std::string> {
    ZERO_RETURN_IF_ERROR(arity(1));
    return roundTo(
        rt, std::string(floatOperands ? floatFn : doubleFn) + "(" + x[0] + ")",
        floatOperands);
  };
  auto binaryF = [&](const char *infix) -> StatusOr<std::string> {
    ZERO_RETURN_IF_ERROR(arity(2));
    return roundTo(rt, x[0] + " " + infix + " " + x[1], floatOperands);
  };
  auto callF = [&](const char *fn) -> StatusOr<std::string> {
    ZERO_RETURN_IF_ERROR(arity(2));
    return roundTo(rt,
                   std::string(fn) + "(" + widened(ot, x[0]) + ", " +
                       widened(ot, x[1]) + ")",
                   /*isFloatExpr=*/false);
  };
  auto exactCallF = [&](const char *fn) -> StatusOr<std::string> {
    ZERO_RETURN_IF_ERROR(arity(2));
    return roundTo(rt, std::string(fn) + "(" + x[0] + ", " + x[1] + ")",
                   floatOperands);
  };
  // Integer ops: the host computes in uint64/int64 and wraps.
  auto binaryI = [&](const char *infix) -> StatusOr<std::string> {
    ZERO_RETURN_IF_ERROR(arity(2));
    return wrapTo(rt, "(long long)((unsigned long long)" + x[0] + " " + infix +
                          " (unsigned long long)" + x[1] + ")");
  };
  auto callI = [&](const std::string &text) -> StatusOr<std::string> {
    ZERO_RETURN_IF_ERROR(arity(2));
    return wrapTo(rt, text);
  };
  // An integer op of ElementMath.h on operands of the operand type's width.
  auto callInt = [&](const char *fn) -> StatusOr<std::string> {
    return callI("(long long)" + std::string(fn) + "(" + x[0] + ", " + x[1] +
                 ", " + std::to_string(bitWidthOf(ot)) + ")");
  };

  switch (op.kind) {
  case ScalarOpKind::AddF:
    return binaryF("+");
  case ScalarOpKind::SubF:
    return binaryF("-");
  case ScalarOpKind::MulF:
    return binaryF("*");
  case ScalarOpKind::DivF:
    return binaryF("/");
  case ScalarOpKind::NegF:
    ZERO_RETURN_IF_ERROR(arity(1));
    return roundTo(rt, "-" + x[0], floatOperands);
  case ScalarOpKind::MaximumF:
    return exactCallF("zk::maximumF");
  case ScalarOpKind::MinimumF:
    return exactCallF("zk::minimumF");
  case ScalarOpKind::RemF:
    return callF("fmod");
  case ScalarOpKind::CmpF:
    ZERO_RETURN_IF_ERROR(arity(2));
    return "(" +
           compareExpression(op.predicate, /*isFloat=*/true, ot, x[0], x[1]) +
           ") ? 1LL : 0LL";
  case ScalarOpKind::AddI:
    return binaryI("+");
  case ScalarOpKind::SubI:
    return binaryI("-");
  case ScalarOpKind::MulI:
    return binaryI("*");
  case ScalarOpKind::DivSI:
    return callInt("zk::divSI");
  case ScalarOpKind::DivUI:
    return callInt("zk::divUI");
  case ScalarOpKind::RemSI:
    return callInt("zk::remSI");
  case ScalarOpKind::RemUI:
    return callInt("zk::remUI");
  case ScalarOpKind::MaxSI:
    return callInt("zk::maxSI");
  case ScalarOpKind::MinSI:
    return callInt("zk::minSI");
  case ScalarOpKind::AndI:
    return callI("(" + x[0] + " & " + x[1] + ")");
  case ScalarOpKind::OrI:
    return callI("(" + x[0] + " | " + x[1] + ")");
  case ScalarOpKind::XOrI:
    return callI("(" + x[0] + " ^ " + x[1] + ")");
  case ScalarOpKind::ShLI:
    return callInt("zk::shLI");
  case ScalarOpKind::ShRSI:
    return callInt("zk::shRSI");
  case ScalarOpKind::ShRUI:
    return callInt("zk::shRUI");
  case ScalarOpKind::CmpI:
    ZERO_RETURN_IF_ERROR(arity(2));
    return "(" +
           compareExpression(op.predicate, /*isFloat=*/false, ot, x[0], x[1]) +
           ") ? 1LL : 0LL";
  case ScalarOpKind::Select:
    ZERO_RETURN_IF_ERROR(arity(3));
    return x[0] + " != 0 ? " + x[1] + " : " + x[2];
  case ScalarOpKind::ExtF:
  case ScalarOpKind::TruncF:
    ZERO_RETURN_IF_ERROR(arity(1));
    return roundTo(rt, x[0], floatOperands);
  case ScalarOpKind::SIToFP:
  case ScalarOpKind::UIToFP: {
    ZERO_RETURN_IF_ERROR(arity(1));
    const std::string value = op.kind == ScalarOpKind::SIToFP
                                  ? signedOf(ot, x[0])
                                  : unsignedOf(ot, x[0]);
    // f32 rounds once from the integer, the others from its double.
    if (rt == DType::F32)
      return "(float)" + value;
    return roundTo(rt, "(double)" + value, /*isFloatExpr=*/false);
  }
  case ScalarOpKind::FPToSI:
    ZERO_RETURN_IF_ERROR(arity(1));
    return wrapTo(rt, "zk::floatToSigned(" + x[0] + ", " +
                          std::to_string(bitWidthOf(rt)) + ")");
  case ScalarOpKind::FPToUI:
    ZERO_RETURN_IF_ERROR(arity(1));
    return wrapTo(rt, "(long long)zk::floatToUnsigned(" + x[0] + ", " +
                          std::to_string(bitWidthOf(rt)) + ")");
  case ScalarOpKind::IndexCast:
  case ScalarOpKind::ExtSI:
    ZERO_RETURN_IF_ERROR(arity(1));
    return wrapTo(rt, signedOf(ot, x[0]));
  case ScalarOpKind::ExtUI:
    ZERO_RETURN_IF_ERROR(arity(1));
    return wrapTo(rt, "(long long)" + unsignedOf(ot, x[0]));
  case ScalarOpKind::TruncI:
    ZERO_RETURN_IF_ERROR(arity(1));
    return wrapTo(rt, x[0]);
  case ScalarOpKind::Bitcast:
    ZERO_RETURN_IF_ERROR(arity(1));
    if (ot == rt || (!isFloat(ot) && !isFloat(rt)))
      return x[0];
    if (ot == DType::F32)
      return "(long long)__float_as_int((float)" + x[0] + ")";
    if (rt == DType::F32)
      return "__int_as_float((int)(unsigned)" + x[0] + ")";
    if (ot == DType::F64)
      return "__double_as_longlong(" + x[0] + ")";
    return "__longlong_as_double(" + x[0] + ")";
  case ScalarOpKind::Exp:
    return unaryF("exp");
  case ScalarOpKind::Exp2:
    return unaryF("exp2");
  case ScalarOpKind::Log:
    return unaryF("log");
  case ScalarOpKind::Log2:
    return unaryF("log2");
  case ScalarOpKind::Log1p:
    return unaryF("log1p");
  case ScalarOpKind::Sqrt:
    return exactUnaryF("sqrt", "sqrtf");
  case ScalarOpKind::Rsqrt:
    // 1 / sqrt, both correctly rounded, as the host does.
    ZERO_RETURN_IF_ERROR(arity(1));
    return roundTo(rt, "1.0 / sqrt(" + widened(ot, x[0]) + ")",
                   /*isFloatExpr=*/false);
  case ScalarOpKind::Tanh: // the host's tanh, which libm's equals once rounded
    return unaryF(rt == DType::F64 ? "tanh" : "zk::tanhForNarrowResult");
  case ScalarOpKind::AbsF:
    return exactUnaryF("fabs", "fabsf");
  case ScalarOpKind::Erf:
    return unaryF("erf");
  case ScalarOpKind::PowF:
    return callF("pow");
  case ScalarOpKind::Sin:
    return unaryF("sin");
  case ScalarOpKind::Cos:
    return unaryF("cos");
  case ScalarOpKind::Floor:
    return unaryF("floor");
  case ScalarOpKind::Ceil:
    return unaryF("ceil");
  case ScalarOpKind::Constant:
    return bodyConstantLiteral(op);
  }
  return internalError("an unknown scalar op");
}

std::string bodyConstantLiteral(const ops::ScalarOp &op) {
  // The checked constant is canonical: rounded to its type, or wrapped.
  if (ops::isFloatType(op.resultType))
    return formatDoubleLiteral(op.constant.f);
  return intLiteral(op.constant.i);
}

const char *elementTypeName(DType type) { return elementType(type); }
const char *registerTypeName(DType type) { return registerType(type); }
const char *valueTypeName(DType type) { return valueType(type); }
std::string int64Literal(int64_t value) { return intLiteral(value); }
std::string loadExpression(DType type, const std::string &pointer,
                           const std::string &offset) {
  return std::string("zk::load") + typeSuffix(type) + "(" + pointer + ", " +
         offset + ")";
}
std::string storeStatement(DType type, const std::string &pointer,
                           const std::string &offset,
                           const std::string &value) {
  return std::string("zk::store") + typeSuffix(type) + "(" + pointer + ", " +
         offset + ", " + value + ");";
}

namespace {

/// Emits body op `index` (not constants: those are loop invariants).
Status KernelWriter::emitOp(size_t index) {
  const OpRecord &op = body_.ops[index];
  const int64_t result = op.results[0];
  const DType rt = dtypeOf(result);
  if (op.code() == OpCode::Constant)
    return Status::ok();
  if (op.code() == OpCode::Index) {
    line("const long long " + name(result) + " = i" +
         std::to_string(op.fields.getInt(Field::Dim)) + ";");
    return Status::ok();
  }
  if (op.code() == OpCode::Extract) {
    // Row-major offset with a bounds check per index; an index outside the
    // tensor is recorded and reads 0.
    const ValueInfo &tensor = values_.values[op.operands[0]];
    const size_t site =
        std::find_if(sites_.begin(), sites_.end(),
                     [&](const ExtractSite &s) { return s.bodyOp == index; }) -
        sites_.begin();
    const size_t param =
        std::find(tensors_.begin(), tensors_.end(), tensor.id) -
        tensors_.begin();
    if (op.operands.size() != tensor.shape.size() + 1)
      return internalError(
          "tensor.extract has " + std::to_string(op.operands.size() - 1) +
          " indices for rank " + std::to_string(tensor.shape.size()));
    const std::vector<int64_t> strides = getRowMajorStrides(tensor.shape);
    const std::string offset = "e" + std::to_string(index);
    const std::string ok = "ok" + std::to_string(index);
    line("long long " + offset + " = 0;");
    line("bool " + ok + " = true;");
    for (size_t d = 0; d < tensor.shape.size(); ++d) {
      const std::string position = name(op.operands[d + 1]);
      open("if ((unsigned long long)" + position +
           " >= " + std::to_string(tensor.shape[d]) + "ULL)");
      line("zk_fail(err, site0" +
           (site ? " + " + std::to_string(site) : std::string()) + ", " +
           std::to_string(d) + ", " + position + ", step);");
      line(ok + " = false;");
      close();
      line(offset + " += " + position +
           (strides[d] == 1 ? "" : " * " + intLiteral(strides[d])) + ";");
    }
    line(std::string("const ") + valueType(rt) + " " + name(result) + " = " +
         ok + " ? " + load(tensor.dtype, "t" + std::to_string(param), offset) +
         " : " + (isFloat(rt) ? "0.0" : "0LL") + ";");
    return Status::ok();
  }
  StatusOr<std::string> text = expression(index);
  if (!text.isOk())
    return text.status();
  line(std::string("const ") + valueType(rt) + " " + name(result) + " = " +
       *text + ";");
  return Status::ok();
}

Status KernelWriter::emitBodyOps() {
  for (size_t i = 0; i < body_.ops.size(); ++i)
    if (skipOp_.empty() || !skipOp_[i])
      ZERO_RETURN_IF_ERROR(emitOp(i));
  return Status::ok();
}

std::string KernelWriter::combine(size_t o, const std::string &acc,
                                  const std::string &value) {
  const size_t accOperand = nest_.accumulatorOperand[o];
  std::vector<std::string> operands(2);
  operands[accOperand] = acc;
  operands[1 - accOperand] = value;
  StatusOr<std::string> text = expression(nest_.combineOps[o], &operands);
  if (!text.isOk()) {
    if (bodyStatus_.isOk())
      bodyStatus_ = text.status();
    return "0";
  }
  return *text;
}

/// Loads the used input arguments at the current point.
void KernelWriter::emitInputLoads(bool sequentialOffsets) {
  for (size_t i = 0; i < numInputs_; ++i) {
    if (!argumentUsed_[i])
      continue;
    const NestOperand &input = nest_.inputs[i];
    const std::string offset =
        sequentialOffsets ? offsetOf(input, "", true)
                          : offsetOf(input, "ba" + std::to_string(i), false);
    line(std::string("const ") + valueType(input.dtype) + " " +
         name(body_.arguments[i]) + " = " +
         load(input.dtype, "a" + std::to_string(i), offset) + ";");
  }
}

/// The point p's parallel loop indices (innermost fastest) and the
/// operands' offsets over the parallel loops. 32-bit division when the
/// space allows it: NVRTC turns it into a multiply by a constant.
void KernelWriter::emitPointIndices(int64_t numPoints) {
  const size_t numLoops = nest_.loopSizes.size();
  const size_t numOutputs = nest_.outputs.size();
  std::vector<size_t> parallel;
  for (size_t d = 0; d < numLoops; ++d)
    if (!nest_.inThread[d] && nest_.loopSizes[d] != 1)
      parallel.push_back(d);
  const bool narrow = numPoints <= 0xffffffffLL;
  const char *qType = narrow ? "unsigned" : "unsigned long long";
  const char *qSuffix = narrow ? "u" : "ULL";
  if (parallel.size() > 1)
    line(std::string(qType) + " q = (" + qType + ")p;");
  for (size_t d = 0; d < numLoops; ++d)
    if (!nest_.inThread[d] && nest_.loopSizes[d] == 1)
      line("const long long i" + std::to_string(d) + " = 0;");
  for (size_t k = parallel.size(); k-- > 0;) {
    const std::string index = "i" + std::to_string(parallel[k]);
    const std::string size = std::to_string(nest_.loopSizes[parallel[k]]);
    if (parallel.size() == 1)
      line("const long long " + index + " = p;");
    else if (k == 0)
      line("const long long " + index + " = (long long)q;");
    else {
      line("const long long " + index + " = (long long)(q % " + size + qSuffix +
           ");");
      line("q /= " + size + qSuffix + ";");
    }
  }
  // Offsets over the parallel loops.
  for (size_t i = 0; i < numInputs_; ++i)
    if (argumentUsed_[i])
      line("const long long ba" + std::to_string(i) + " = " +
           baseOffset(nest_.inputs[i]) + ";");
  for (size_t o = 0; o < numOutputs; ++o)
    line("const long long bo" + std::to_string(o) + " = " +
         baseOffset(nest_.outputs[o]) + ";");
}

void KernelWriter::emitParallel() {
  const size_t numLoops = nest_.loopSizes.size();
  const size_t numOutputs = nest_.outputs.size();
  const int64_t numPoints = nest_.numPoints();
  bool anyInThread = false;
  int64_t numInThread = 1;
  for (size_t d = 0; d < numLoops; ++d)
    if (nest_.inThread[d]) {
      anyInThread = true;
      numInThread *= nest_.loopSizes[d];
    }

  open("for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
       "p < " +
       intLiteral(numPoints) + "; p += (long long)gridDim.x * blockDim.x)");
  emitPointIndices(numPoints);

  if (!anyInThread) {
    emitInputLoads(false);
    for (size_t o = 0; o < numOutputs; ++o) {
      if (!argumentUsed_[numInputs_ + o])
        continue;
      const NestOperand &output = nest_.outputs[o];
      line(std::string("const ") + valueType(output.dtype) + " " +
           name(body_.arguments[numInputs_ + o]) + " = " +
           load(output.dtype, "d" + std::to_string(o),
                "bo" + std::to_string(o)) +
           ";");
    }
    bodyStatus_ = emitBodyOps();
    for (size_t o = 0; o < numOutputs; ++o)
      line(store(nest_.outputs[o].dtype, "r" + std::to_string(o),
                 "bo" + std::to_string(o), name(body_.yield[o])));
    close();
    return;
  }

  // The outputs' arguments accumulate over the in-thread loops, starting
  // from the destinations (all that is stored when those loops are empty).
  for (size_t o = 0; o < numOutputs; ++o) {
    const NestOperand &output = nest_.outputs[o];
    const bool needed = argumentUsed_[numInputs_ + o] || numInThread == 0;
    line(std::string(valueType(output.dtype)) + " " +
         name(body_.arguments[numInputs_ + o]) + " = " +
         (needed ? load(output.dtype, "d" + std::to_string(o),
                        "bo" + std::to_string(o))
                 : std::string(isFloat(output.dtype) ? "0.0" : "0LL")) +
         ";");
  }
  for (size_t d = 0; d < numLoops; ++d)
    if (nest_.inThread[d]) {
      const std::string index = "i" + std::to_string(d);
      open("for (long long " + index + " = 0; " + index + " < " +
           intLiteral(nest_.loopSizes[d]) + "; ++" + index + ")");
    }
  emitInputLoads(false);
  bodyStatus_ = emitBodyOps();
  // All yields are read before any argument changes (a yield may be an
  // argument).
  for (size_t o = 0; o < numOutputs; ++o)
    line(std::string("const ") + valueType(nest_.outputs[o].dtype) + " y" +
         std::to_string(o) + " = " + name(body_.yield[o]) + ";");
  for (size_t o = 0; o < numOutputs; ++o)
    line(name(body_.arguments[numInputs_ + o]) + " = y" + std::to_string(o) +
         ";");
  for (size_t d = 0; d < numLoops; ++d)
    if (nest_.inThread[d])
      close();
  for (size_t o = 0; o < numOutputs; ++o)
    line(store(nest_.outputs[o].dtype, "r" + std::to_string(o),
               "bo" + std::to_string(o),
               name(body_.arguments[numInputs_ + o])));
  close();
}

/// How the vector path reads an operand (Codegen.h, "Vectors").
enum class VectorAccess { Broadcast, Vector, Element };

VectorAccess getVectorAccess(const LoopNest &nest, const NestOperand &operand) {
  const int64_t stride = operand.strides[nest.vectorLoop];
  if (stride == 0)
    return VectorAccess::Broadcast;
  if (stride != 1)
    return VectorAccess::Element;
  for (size_t d = 0; d < nest.vectorLoopsFrom; ++d)
    if (nest.loopSizes[d] > 1 && operand.strides[d] % nest.vectorWidth)
      return VectorAccess::Element;
  return VectorAccess::Vector;
}

/// The vector path (Codegen.h, "Vectors"), then the scalar loop for
/// pointers that are not aligned for it.
void KernelWriter::emitVector() {
  const size_t numOutputs = nest_.outputs.size();
  const int width = nest_.vectorWidth;
  const std::string widthText = std::to_string(width);
  auto vectorType = [&](DType type) {
    return std::string("ZkVector<") + elementType(type) + ", " + widthText +
           ">";
  };
  // The pointers read or written as vectors, and their alignment.
  std::vector<std::string> misalignment;
  auto aligned = [&](const std::string &pointer, DType type) {
    misalignment.push_back("((unsigned long long)" + pointer + " & " +
                           std::to_string(width * getDTypeWidth(type) - 1) +
                           "ULL)");
  };
  for (size_t o = 0; o < numOutputs; ++o) {
    aligned("r" + std::to_string(o), nest_.outputs[o].dtype);
    if (argumentUsed_[numInputs_ + o])
      aligned("d" + std::to_string(o), nest_.outputs[o].dtype);
  }
  for (size_t i = 0; i < numInputs_; ++i)
    if (argumentUsed_[i] &&
        getVectorAccess(nest_, nest_.inputs[i]) == VectorAccess::Vector)
      aligned("a" + std::to_string(i), nest_.inputs[i].dtype);
  std::string check;
  for (const std::string &term : misalignment)
    check += (check.empty() ? "" : " | ") + term;
  open("if ((" + check + ") == 0)");

  const int64_t numPoints = nest_.numPoints();
  open("for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
       "t < " +
       intLiteral(numPoints / width) +
       "; t += (long long)gridDim.x * blockDim.x)");
  line("const long long p = t * " + widthText + ";");
  emitPointIndices(numPoints);
  // Whole vectors and broadcast values first; element loads in the loop.
  for (size_t i = 0; i < numInputs_; ++i) {
    if (!argumentUsed_[i])
      continue;
    const NestOperand &input = nest_.inputs[i];
    const std::string index = std::to_string(i);
    switch (getVectorAccess(nest_, input)) {
    case VectorAccess::Broadcast:
      line(std::string("const ") + valueType(input.dtype) + " " +
           name(body_.arguments[i]) + " = " +
           load(input.dtype, "a" + index, "ba" + index) + ";");
      break;
    case VectorAccess::Vector:
      line("const " + vectorType(input.dtype) + " x" + index + " = *(const " +
           vectorType(input.dtype) + " *)(a" + index + " + ba" + index + ");");
      break;
    case VectorAccess::Element:
      break;
    }
  }
  for (size_t o = 0; o < numOutputs; ++o) {
    const std::string index = std::to_string(o);
    const DType type = nest_.outputs[o].dtype;
    if (argumentUsed_[numInputs_ + o])
      line("const " + vectorType(type) + " xd" + index + " = *(const " +
           vectorType(type) + " *)(d" + index + " + bo" + index + ");");
    line(vectorType(type) + " y" + index + ";");
  }
  line("#pragma unroll");
  open("for (int k = 0; k < " + widthText + "; ++k)");
  for (size_t i = 0; i < numInputs_; ++i) {
    if (!argumentUsed_[i])
      continue;
    const NestOperand &input = nest_.inputs[i];
    const std::string index = std::to_string(i);
    const VectorAccess access = getVectorAccess(nest_, input);
    if (access == VectorAccess::Broadcast)
      continue;
    const int64_t stride = input.strides[nest_.vectorLoop];
    const std::string element =
        access == VectorAccess::Vector
            ? load(input.dtype, "x" + index + ".v", "k")
            : load(input.dtype, "a" + index,
                   "ba" + index + " + k" +
                       (stride == 1 ? "" : " * " + intLiteral(stride)));
    line(std::string("const ") + valueType(input.dtype) + " " +
         name(body_.arguments[i]) + " = " + element + ";");
  }
  for (size_t o = 0; o < numOutputs; ++o)
    if (argumentUsed_[numInputs_ + o])
      line(std::string("const ") + valueType(nest_.outputs[o].dtype) + " " +
           name(body_.arguments[numInputs_ + o]) + " = " +
           load(nest_.outputs[o].dtype, "xd" + std::to_string(o) + ".v", "k") +
           ";");
  bodyStatus_ = emitBodyOps();
  for (size_t o = 0; o < numOutputs; ++o)
    line(store(nest_.outputs[o].dtype, "y" + std::to_string(o) + ".v", "k",
               name(body_.yield[o])));
  close();
  for (size_t o = 0; o < numOutputs; ++o) {
    const std::string index = std::to_string(o);
    line("*(" + vectorType(nest_.outputs[o].dtype) + " *)(r" + index + " + bo" +
         index + ") = y" + index + ";");
  }
  close();
  line("return;");
  close();
  if (bodyStatus_.isOk())
    emitParallel();
}

/// The thread's elements first, first + step, ... of the in-thread loops
/// flattened row-major, combined into the partials c<o>; its first element
/// (e < step) starts them.
void KernelWriter::emitPartials(const std::string &first, int64_t step) {
  const size_t numLoops = nest_.loopSizes.size();
  const size_t numOutputs = nest_.outputs.size();
  const int64_t numElements = nest_.numElements();
  const std::string stepText = intLiteral(step);
  for (size_t o = 0; o < numOutputs; ++o)
    line(std::string(valueType(nest_.outputs[o].dtype)) + " c" +
         std::to_string(o) +
         (isFloat(nest_.outputs[o].dtype) ? " = 0.0;" : " = 0LL;"));
  open("for (long long e = " + first + "; e < " + intLiteral(numElements) +
       "; e += " + stepText + ")");
  std::vector<size_t> reduced;
  for (size_t d = 0; d < numLoops; ++d)
    if (nest_.inThread[d])
      reduced.push_back(d);
  const bool narrow = numElements <= 0xffffffffLL;
  const char *uType = narrow ? "unsigned" : "unsigned long long";
  const char *uSuffix = narrow ? "u" : "ULL";
  if (reduced.size() > 1)
    line(std::string(uType) + " u = (" + uType + ")e;");
  for (size_t k = reduced.size(); k-- > 0;) {
    const std::string index = "i" + std::to_string(reduced[k]);
    const std::string size = std::to_string(nest_.loopSizes[reduced[k]]);
    if (reduced.size() == 1)
      line("const long long " + index + " = e;");
    else if (k == 0)
      line("const long long " + index + " = (long long)u;");
    else {
      line("const long long " + index + " = (long long)(u % " + size + uSuffix +
           ");");
      line("u /= " + size + uSuffix + ";");
    }
  }
  emitInputLoads(false);
  bodyStatus_ = emitBodyOps();
  for (size_t o = 0; o < numOutputs; ++o) {
    const OpRecord &op = body_.ops[nest_.combineOps[o]];
    const std::string value =
        name(op.operands[1 - nest_.accumulatorOperand[o]]);
    const std::string partial = "c" + std::to_string(o);
    line(partial + " = e < " + stepText + " ? " + value + " : " +
         combine(o, partial, value) + ";");
  }
  close();
}

/// A cooperative reduction (Codegen.h): the threads of a warp, or of a
/// block, combine one point's elements in a fixed order.
void KernelWriter::emitCooperative() {
  const size_t numOutputs = nest_.outputs.size();
  const int threads = nest_.pointThreads;
  const bool block = threads > kWarpThreads;
  const int warps = threads / kWarpThreads;
  const int64_t numPoints = nest_.numPoints();
  skipOp_.assign(body_.ops.size(), false);
  for (size_t op : nest_.combineOps)
    skipOp_[op] = true;
  auto partial = [](size_t o) { return "c" + std::to_string(o); };
  auto regType = [&](size_t o) {
    return std::string(valueType(nest_.outputs[o].dtype));
  };
  // Lane distances 16, 8, ... (`from` first): partner values by shuffle.
  auto butterfly = [&](int from) {
    open("for (int m = " + std::to_string(from) + "; m > 0; m >>= 1)");
    for (size_t o = 0; o < numOutputs; ++o)
      line("const " + regType(o) + " o" + std::to_string(o) +
           " = __shfl_xor_sync(0xffffffffu, " + partial(o) + ", m);");
    for (size_t o = 0; o < numOutputs; ++o)
      line(partial(o) + " = " +
           combine(o, partial(o), "o" + std::to_string(o)) + ";");
    close();
  };

  line("const int lane = threadIdx.x & 31;");
  if (block) {
    line("const int warp = threadIdx.x >> 5;");
    for (size_t o = 0; o < numOutputs; ++o)
      line("__shared__ " + regType(o) + " w" + std::to_string(o) + "[" +
           std::to_string(warps) + "];");
    open("for (long long p = blockIdx.x; p < " + intLiteral(numPoints) +
         "; p += gridDim.x)");
  } else {
    open("for (long long p = ((long long)blockIdx.x * blockDim.x + "
         "threadIdx.x) >> 5; p < " +
         intLiteral(numPoints) +
         "; p += ((long long)gridDim.x * blockDim.x) >> 5)");
  }
  emitPointIndices(numPoints);

  emitPartials(block ? "threadIdx.x" : "lane", threads);

  butterfly(kWarpThreads / 2);
  // combine(init, tree) once, by the group's first thread.
  auto finish = [&]() {
    open("if (lane == 0)");
    for (size_t o = 0; o < numOutputs; ++o) {
      const NestOperand &output = nest_.outputs[o];
      const std::string init = name(body_.arguments[numInputs_ + o]);
      line("const " + regType(o) + " " + init + " = " +
           load(output.dtype, "d" + std::to_string(o),
                "bo" + std::to_string(o)) +
           ";");
    }
    for (size_t o = 0; o < numOutputs; ++o)
      line(
          store(nest_.outputs[o].dtype, "r" + std::to_string(o),
                "bo" + std::to_string(o),
                combine(o, name(body_.arguments[numInputs_ + o]), partial(o))));
    close();
  };
  if (!block) {
    finish();
    close();
    return;
  }
  // The warps' values through shared memory, combined by warp 0 (lane w
  // holds warp w's; lanes past the warps only mirror them).
  open("if (lane == 0)");
  for (size_t o = 0; o < numOutputs; ++o)
    line("w" + std::to_string(o) + "[warp] = " + partial(o) + ";");
  close();
  line("__syncthreads();");
  open("if (warp == 0)");
  for (size_t o = 0; o < numOutputs; ++o)
    line(partial(o) + " = w" + std::to_string(o) + "[lane & " +
         std::to_string(warps - 1) + "];");
  butterfly(warps / 2);
  finish();
  close();
  // The next point's warps write w only after warp 0 has read it.
  line("__syncthreads();");
  close();
}

/// A column reduction (Codegen.h): a block of pointsPerBlock adjacent
/// points, each reduced by pointThreads slices; the slices' partials are
/// combined through shared memory in a fixed tree.
void KernelWriter::emitColumns() {
  const size_t numOutputs = nest_.outputs.size();
  const int points = nest_.pointsPerBlock;
  const int slices = nest_.pointThreads;
  const int64_t numPoints = nest_.numPoints();
  skipOp_.assign(body_.ops.size(), false);
  for (size_t op : nest_.combineOps)
    skipOp_[op] = true;
  const std::string pointsText = std::to_string(points);
  for (size_t o = 0; o < numOutputs; ++o)
    line(std::string("__shared__ ") + valueType(nest_.outputs[o].dtype) + " w" +
         std::to_string(o) + "[" + std::to_string(points * slices) + "];");
  line("const int slice = threadIdx.x / " + pointsText + ";");
  open("for (long long first = (long long)blockIdx.x * " + pointsText +
       "; first < " + intLiteral(numPoints) + "; first += (long long)gridDim.x * " +
       pointsText + ")");
  // Threads past the last point reduce it again (every thread reaches the
  // barriers) and store nothing.
  line("const bool owner = first + threadIdx.x % " + pointsText + " < " +
       intLiteral(numPoints) + ";");
  line("const long long p = owner ? first + threadIdx.x % " + pointsText +
       " : " + intLiteral(numPoints - 1) + ";");
  emitPointIndices(numPoints);
  emitPartials("slice", slices);
  for (size_t o = 0; o < numOutputs; ++o)
    line("w" + std::to_string(o) + "[threadIdx.x] = c" + std::to_string(o) +
         ";");
  line("__syncthreads();");
  // Slice s combines slice s + m's partial at m = slices / 2, ..., 1.
  for (int m = slices / 2; m > 0; m /= 2) {
    open("if (slice < " + std::to_string(m) + ")");
    for (size_t o = 0; o < numOutputs; ++o) {
      const std::string w = "w" + std::to_string(o);
      line(w + "[threadIdx.x] = " +
           combine(o, w + "[threadIdx.x]",
                   w + "[threadIdx.x + " + std::to_string(m * points) + "]") +
           ";");
    }
    close();
    line("__syncthreads();");
  }
  // combine(init, tree) once, by slice 0.
  open("if (slice == 0 && owner)");
  for (size_t o = 0; o < numOutputs; ++o) {
    const NestOperand &output = nest_.outputs[o];
    const std::string init = name(body_.arguments[numInputs_ + o]);
    line("const " + std::string(valueType(output.dtype)) + " " + init + " = " +
         load(output.dtype, "d" + std::to_string(o), "bo" + std::to_string(o)) +
         ";");
    line(store(output.dtype, "r" + std::to_string(o), "bo" + std::to_string(o),
               combine(o, init, "w" + std::to_string(o) + "[threadIdx.x]")));
  }
  close();
  // The next points' partials overwrite w only after slice 0 has read it.
  line("__syncthreads();");
  close();
}

/// One thread, every loop in order, the outputs read and written in place in
/// the results (after copying the destinations there), as the host's
/// sequential nest does.
void KernelWriter::emitSequential() {
  const size_t numLoops = nest_.loopSizes.size();
  const size_t numOutputs = nest_.outputs.size();
  line("if (blockIdx.x != 0 || threadIdx.x != 0)");
  line("  return;");
  for (size_t o = 0; o < numOutputs; ++o) {
    const std::string r = "r" + std::to_string(o), d = "d" + std::to_string(o);
    line("if ((const void *)" + r + " != (const void *)" + d + ")");
    line("  for (long long k = 0; k < " + intLiteral(nest_.outputs[o].numel) +
         "; ++k)");
    line("    " + r + "[k] = " + d + "[k];");
  }
  for (size_t d = 0; d < numLoops; ++d) {
    const std::string index = "i" + std::to_string(d);
    open("for (long long " + index + " = 0; " + index + " < " +
         intLiteral(nest_.loopSizes[d]) + "; ++" + index + ")");
  }
  emitInputLoads(true);
  for (size_t o = 0; o < numOutputs; ++o) {
    if (!argumentUsed_[numInputs_ + o])
      continue;
    const NestOperand &output = nest_.outputs[o];
    line(std::string("const ") + valueType(output.dtype) + " " +
         name(body_.arguments[numInputs_ + o]) + " = " +
         load(output.dtype, "r" + std::to_string(o),
              offsetOf(output, "", true)) +
         ";");
  }
  bodyStatus_ = emitBodyOps();
  for (size_t o = 0; o < numOutputs; ++o)
    line(store(nest_.outputs[o].dtype, "r" + std::to_string(o),
               offsetOf(nest_.outputs[o], "", true), name(body_.yield[o])));
  for (size_t d = 0; d < numLoops; ++d)
    close();
}

StatusOr<GeneratedKernel> KernelWriter::run() {
  ZERO_RETURN_IF_ERROR(scanBody());
  GeneratedKernel kernel;
  kernel.name = "zero_structured";
  kernel.scalars = scalars_;
  kernel.tensors = tensors_;
  kernel.extractSites = sites_;
  kernel.numThreads = nest_.numThreads();
  kernel.numInputs = nest_.inputs.size();
  kernel.numOutputs = nest_.outputs.size();

  kernel.pointThreads = nest_.pointThreads;
  kernel.pointsPerBlock = nest_.pointsPerBlock;
  kernel.vectorWidth = nest_.vectorWidth;
  kernel.numPoints = nest_.numPoints();
  kernel.sequential = nest_.sequential;

  out_ << getKernelPrelude();
  if (nest_.pointsPerBlock > 0)
    out_ << "\n// column reduction, blocks of " << nest_.pointsPerBlock
         << " points by " << nest_.pointThreads << " slices, loops [";
  else if (nest_.pointThreads == kWarpThreads)
    out_ << "\n// cooperative reduction, a warp per point, loops [";
  else if (nest_.pointThreads > kWarpThreads)
    out_ << "\n// cooperative reduction, a block of " << nest_.pointThreads
         << " threads per point, loops [";
  else
    out_ << "\n// " << (nest_.sequential ? "sequential" : "parallel")
         << " nest, loops [";
  for (size_t d = 0; d < nest_.loopSizes.size(); ++d)
    out_ << (d ? ", " : "") << nest_.loopSizes[d]
         << (nest_.sequential    ? ""
             : nest_.inThread[d] ? " in-thread"
                                 : "");
  out_ << "]";
  if (nest_.vectorWidth > 1) {
    out_ << ", vectors of " << nest_.vectorWidth << " along loop";
    if (nest_.vectorLoopsFrom < nest_.vectorLoop)
      out_ << "s " << nest_.vectorLoopsFrom << "-" << nest_.vectorLoop;
    else
      out_ << " " << nest_.vectorLoop;
  }
  out_ << "\n";

  // Parameters (GeneratedKernel's order).
  std::vector<std::string> params;
  for (size_t o = 0; o < nest_.outputs.size(); ++o) {
    const char *type = elementType(nest_.outputs[o].dtype);
    params.push_back(std::string(type) + " *r" + std::to_string(o));
    params.push_back(std::string("const ") + type + " *d" + std::to_string(o));
  }
  for (size_t i = 0; i < nest_.inputs.size(); ++i)
    params.push_back(std::string("const ") +
                     elementType(nest_.inputs[i].dtype) +
                     (options_.restrictInputs ? " *__restrict__ a" : " *a") +
                     std::to_string(i));
  for (size_t s = 0; s < scalars_.size(); ++s)
    params.push_back(std::string("const ") +
                     registerType(dtypeOf(scalars_[s])) + " *s" +
                     std::to_string(s));
  for (size_t t = 0; t < tensors_.size(); ++t)
    params.push_back(std::string("const ") + elementType(dtypeOf(tensors_[t])) +
                     " *t" + std::to_string(t));
  if (!sites_.empty()) {
    params.push_back("ZkError *err");
    params.push_back("int site0");
    params.push_back("long long step");
  }

  out_ << "extern \"C\" __global__ void __launch_bounds__("
       << options_.maxBlockSize << ")\n"
       << kernel.name << "(";
  for (size_t i = 0; i < params.size(); ++i)
    out_ << (i ? ",\n    " : "") << params[i];
  out_ << ") {\n";
  indent_ = 1;

  // Loop invariants: scalars from outside (read once per thread) and
  // constants (already in their type's canonical form).
  for (size_t s = 0; s < scalars_.size(); ++s)
    line(std::string("const ") + valueType(dtypeOf(scalars_[s])) + " " +
         name(scalars_[s]) + " = *s" + std::to_string(s) + ";");
  for (size_t i = 0; i < body_.ops.size(); ++i) {
    const OpRecord &op = body_.ops[i];
    if (op.code() != OpCode::Constant)
      continue;
    line(std::string("const ") + valueType(dtypeOf(op.results[0])) + " " +
         name(op.results[0]) + " = " +
         bodyConstantLiteral(nest_.program.regionOps[i]) + ";");
  }

  if (nest_.sequential)
    emitSequential();
  else if (nest_.pointsPerBlock > 0)
    emitColumns();
  else if (nest_.pointThreads > 1)
    emitCooperative();
  else if (nest_.vectorWidth > 1)
    emitVector();
  else
    emitParallel();
  ZERO_RETURN_IF_ERROR(bodyStatus_);
  out_ << "}\n";
  kernel.source = out_.str();
  return kernel;
}

} // namespace

int64_t LoopNest::numPoints() const {
  if (sequential)
    return 1;
  int64_t n = 1;
  for (size_t d = 0; d < loopSizes.size(); ++d)
    if (!inThread[d])
      n *= loopSizes[d];
  return n;
}

int64_t LoopNest::numElements() const {
  int64_t n = 1;
  for (size_t d = 0; d < loopSizes.size(); ++d)
    if (inThread[d])
      n *= loopSizes[d];
  return n;
}

namespace {

/// The associative and commutative ops a cooperative reduction combines
/// with (float ones up to rounding).
bool isCombineOp(OpCode code) {
  switch (code) {
  case OpCode::AddF:
  case OpCode::MulF:
  case OpCode::MaximumF:
  case OpCode::MinimumF:
  case OpCode::AddI:
  case OpCode::MulI:
  case OpCode::MaxSI:
  case OpCode::MinSI:
  case OpCode::AndI:
  case OpCode::OrI:
  case OpCode::XOrI:
    return true;
  default:
    return false;
  }
}

} // namespace

void planCooperative(LoopNest &nest) {
  nest.pointThreads = 1;
  nest.pointsPerBlock = 0;
  nest.combineOps.clear();
  nest.accumulatorOperand.clear();
  if (nest.sequential || !nest.body)
    return;
  const RegionBody &body = *nest.body;
  const size_t numInputs = nest.inputs.size();
  const size_t numOutputs = nest.outputs.size();
  const size_t numLoops = nest.loopSizes.size();
  if (body.arguments.size() != numInputs + numOutputs ||
      body.yield.size() != numOutputs)
    return;
  // A row reduction's lanes walk the innermost loop, reduced; a column
  // reduction's adjacent points are adjacent along it, parallel. Either
  // way the points combine enough elements.
  size_t innermost = numLoops;
  for (size_t d = 0; d < numLoops; ++d)
    if (nest.loopSizes[d] != 1)
      innermost = d;
  if (innermost == numLoops ||
      nest.numElements() < kMinCooperativeElements)
    return;
  const bool columns = !nest.inThread[innermost];
  if (columns && (nest.numPoints() > kMaxColumnPoints ||
                  numOutputs > kMaxColumnOutputs))
    return;

  // Each output yields combine(its accumulator, f).
  std::map<int64_t, size_t> definedBy;
  for (size_t i = 0; i < body.ops.size(); ++i) {
    if (body.ops[i].results.size() != 1)
      return;
    definedBy[body.ops[i].results[0]] = i;
  }
  std::vector<size_t> combineOps(numOutputs), accumulatorOperand(numOutputs);
  std::vector<int> combinedOutput(body.ops.size(), -1);
  for (size_t o = 0; o < numOutputs; ++o) {
    auto found = definedBy.find(body.yield[o]);
    if (found == definedBy.end())
      return;
    const OpRecord &op = body.ops[found->second];
    const int64_t acc = body.arguments[numInputs + o];
    if (!isCombineOp(op.code()) || op.operands.size() != 2 ||
        combinedOutput[found->second] >= 0)
      return;
    if (op.operands[0] == acc && op.operands[1] != acc)
      accumulatorOperand[o] = 0;
    else if (op.operands[1] == acc && op.operands[0] != acc)
      accumulatorOperand[o] = 1;
    else
      return;
    combineOps[o] = found->second;
    combinedOutput[found->second] = static_cast<int>(o);
  }
  // Nothing else reads an accumulator, directly or through a combine.
  std::set<int64_t> dependent(body.arguments.begin() + numInputs,
                              body.arguments.end());
  std::set<int64_t> used;
  for (size_t i = 0; i < body.ops.size(); ++i) {
    const OpRecord &op = body.ops[i];
    for (size_t k = 0; k < op.operands.size(); ++k) {
      if (combinedOutput[i] >= 0 && k == accumulatorOperand[combinedOutput[i]])
        continue;
      if (dependent.count(op.operands[k]))
        return;
      used.insert(op.operands[k]);
    }
    if (combinedOutput[i] >= 0)
      dependent.insert(op.results[0]);
  }
  // The inputs read along the innermost loop are contiguous there (and a
  // column reduction's outputs too).
  int64_t narrowest = 8;
  for (size_t i = 0; i < numInputs; ++i) {
    const int64_t stride = nest.inputs[i].strides[innermost];
    if (!used.count(body.arguments[i]))
      continue;
    if (stride != 0 && stride != 1)
      return;
    if (stride == 1)
      narrowest = std::min<int64_t>(narrowest,
                                    getDTypeWidth(nest.inputs[i].dtype));
  }
  if (columns) {
    for (const NestOperand &output : nest.outputs)
      if (output.strides[innermost] != 1)
        return;
    // A block's points read whole 32-byte sectors of the narrowest input.
    nest.pointsPerBlock = static_cast<int>(std::clamp<int64_t>(
        kSectorBytes / narrowest, kMinColumnPoints, kWarpThreads));
    nest.pointThreads = kBlockReductionThreads / nest.pointsPerBlock;
  } else {
    nest.pointThreads = nest.numElements() > kMaxWarpElements
                            ? kBlockReductionThreads
                            : kWarpThreads;
  }
  nest.combineOps = std::move(combineOps);
  nest.accumulatorOperand = std::move(accumulatorOperand);
}

void planVector(LoopNest &nest) {
  nest.vectorWidth = 1;
  if (nest.sequential || nest.pointThreads > 1 || nest.pointsPerBlock > 0 ||
      nest.numElements() != 1)
    return;
  for (const OpRecord &op : nest.body->ops)
    if (op.code() == OpCode::Index || op.code() == OpCode::Extract)
      return;
  // The innermost loop that is not a single point.
  size_t loop = nest.loopSizes.size();
  for (size_t d = nest.loopSizes.size(); d-- > 0;)
    if (nest.loopSizes[d] > 1) {
      loop = d;
      break;
    }
  if (loop == nest.loopSizes.size())
    return;
  // The loops outside it that every operand steps through as if they were
  // one longer loop (a row-major [8192, 50257] map is one run of 411.7M):
  // V then only has to divide the run, and the V points of a thread may
  // cross a row.
  std::vector<NestOperand> operands = nest.inputs;
  operands.insert(operands.end(), nest.outputs.begin(), nest.outputs.end());
  size_t first = loop;
  int64_t run = nest.loopSizes[loop];
  for (size_t d = loop; d-- > 0;) {
    if (nest.loopSizes[d] == 1)
      continue;
    bool linear = true;
    for (const NestOperand &operand : operands)
      linear &= operand.strides[d] == operand.strides[loop] * run;
    if (!linear)
      break;
    first = d;
    run *= nest.loopSizes[d];
  }
  auto otherStridesDivide = [&](const NestOperand &operand, int width) {
    for (size_t d = 0; d < first; ++d)
      if (nest.loopSizes[d] > 1 && operand.strides[d] % width)
        return false;
    return true;
  };
  auto fits = [&](const NestOperand &operand, int width) {
    return width * getDTypeWidth(operand.dtype) <= kMaxVectorBytes;
  };
  for (int width = kMaxVectorWidth; width >= 2; width /= 2) {
    if (run % width)
      continue;
    bool ok = true;
    for (const NestOperand &output : nest.outputs)
      ok &= output.strides[loop] == 1 && otherStridesDivide(output, width) &&
            fits(output, width);
    for (const NestOperand &input : nest.inputs)
      ok &= input.strides[loop] != 1 || fits(input, width);
    if (ok) {
      nest.vectorWidth = width;
      nest.vectorLoop = loop;
      nest.vectorLoopsFrom = first;
      return;
    }
  }
}

std::vector<KernelArgument> getKernelArguments(const LoopNest &nest,
                                               const GeneratedKernel &kernel) {
  std::vector<KernelArgument> arguments;
  for (size_t o = 0; o < nest.outputs.size(); ++o) {
    arguments.push_back({nest.results[o], false});
    arguments.push_back({nest.outputs[o].value, false});
  }
  for (const NestOperand &input : nest.inputs)
    arguments.push_back({input.value, false});
  for (int64_t id : kernel.scalars)
    arguments.push_back({id, true});
  for (int64_t id : kernel.tensors)
    arguments.push_back({id, false});
  return arguments;
}

LaunchShape getLaunchShape(const GeneratedKernel &kernel, int multiProcessors,
                           int residentThreads) {
  // Whole blocks of the largest size, at least one.
  const int64_t resident =
      std::max<int64_t>(std::min(residentThreads, kThreadsPerMultiprocessor) /
                            kMaxBlockSize * kMaxBlockSize,
                        kMaxBlockSize);
  LaunchShape shape;
  if (kernel.numThreads == 0)
    return shape; // nothing to compute: every output is empty
  if (kernel.sequential) {
    shape.blocks = 1;
    return shape;
  }
  const int64_t sms = std::max(1, multiProcessors);
  if (kernel.pointsPerBlock > 0) {
    shape.threads = kBlockReductionThreads;
    shape.blocks = std::min((kernel.numPoints + kernel.pointsPerBlock - 1) /
                                kernel.pointsPerBlock,
                            sms * (resident / kBlockReductionThreads));
    return shape;
  }
  if (kernel.pointThreads == kBlockReductionThreads) {
    shape.threads = kBlockReductionThreads;
    shape.blocks =
        std::min(kernel.numPoints, sms * (resident / kBlockReductionThreads));
    return shape;
  }
  // Smaller blocks when the threads are few, so that every multiprocessor
  // gets some; whole warps (a warp reduction's lanes share a block).
  int blockSize = kMaxBlockSize;
  while (blockSize > kWarpThreads && kernel.numThreads < blockSize * sms)
    blockSize /= 2;
  shape.threads = blockSize;
  shape.blocks = std::min((kernel.numThreads + blockSize - 1) / blockSize,
                          sms * (resident / blockSize));
  return shape;
}

StatusOr<LoopNest> buildLoopNest(const Instruction &inst,
                                 const ValueTable &values,
                                 const ops::BodyProgram &program) {
  if (!inst.fields.has(Field::Body))
    return internalError(inst.op + " has no body");
  if (inst.code() != OpCode::Map && inst.code() != OpCode::Reduce &&
      inst.code() != OpCode::Generic)
    return internalError("'" + inst.op +
                         "' is not linalg.map, linalg.reduce "
                         "or linalg.generic");
  const size_t numOutputs = inst.results.size();
  if (numOutputs == 0 || numOutputs > inst.operands.size())
    return internalError(inst.op + " has " + std::to_string(numOutputs) +
                         " results for " +
                         std::to_string(inst.operands.size()) + " operands");
  // The loops and strides are the host's (the instruction is checked).
  ops::LoopSpace space = ops::lowerToLoopSpace(inst, values);
  LoopNest nest;
  nest.body = &inst.fields.getBody(Field::Body);
  nest.program = program;
  nest.results = inst.results;
  nest.loopSizes = std::move(space.loopSizes);
  nest.inputs = std::move(space.inputs);
  nest.outputs = std::move(space.outputs);
  classifyLoops(nest);
  planCooperative(nest);
  planVector(nest);
  return nest;
}

StatusOr<GeneratedKernel> generateKernel(const LoopNest &nest,
                                         const ValueTable &values,
                                         const CodegenOptions &options) {
  if (!nest.body)
    return internalError("the loop nest has no body");
  return KernelWriter(nest, values, options).run();
}

const std::string &getKernelPrelude() {
  static const std::string prelude =
      std::string(
          R"ZK(// Generated by zero-opt's CUDA backend (runtime/src/cuda/Codegen.cpp).
// Values are f32, bf16 and f16 in float, f64 in double, rounded to their
// dtype after every op; integers as long long, wrapped to their width. The
// arithmetic of each op is runtime/src/ops/ElementMath.h's, which follows.
)ZK") +
#include "KernelElementMath.inc"
      +R"ZK(
namespace zk = zero::runtime::ops;

// N elements loaded or stored at once (Codegen.h, "Vectors").
template <typename T, int N> struct alignas(sizeof(T) * N) ZkVector {
  T v[N];
};

// The device's error record (DeviceErrorRecord in CudaOps.h).
struct ZkError {
  unsigned long long flag;
  int site;
  int dim;
  long long value;
  long long step;
};

// Records the first tensor.extract index outside its tensor.
__device__ __noinline__ void zk_fail(ZkError *e, int site, int dim,
                                     long long index, long long step) {
  if (atomicCAS(&e->flag, 0ull, 1ull) == 0ull) {
    e->site = site;
    e->dim = dim;
    e->value = index;
    e->step = step;
  }
}
)ZK";
  return prelude;
}

std::string formatDoubleLiteral(double value) {
  if (!std::isfinite(value)) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    char text[64];
    std::snprintf(text, sizeof(text), "zk::doubleOfBits(0x%016llxULL)",
                  static_cast<unsigned long long>(bits));
    return text;
  }
  // The shortest decimal that reads back as `value`.
  char text[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  std::string literal = text;
  if (literal.find_first_of(".en") == std::string::npos)
    literal += ".0";
  return literal;
}

} // namespace zero::runtime::cuda
