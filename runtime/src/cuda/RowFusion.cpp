//===- RowFusion.cpp - softmax, layer norm: row programs as one kernel ----===//
//
// See RowFusion.h for the design.
//
//===----------------------------------------------------------------------===//

#include "RowFusion.h"

#include "Codegen.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace zero::runtime::cuda {

//===----------------------------------------------------------------------===//
// Uses
//===----------------------------------------------------------------------===//

ValueUses::ValueUses(const Schedule &schedule) {
  const size_t numValues = schedule.values().values.size();
  uses_.resize(numValues);
  isResult_.assign(numValues, false);
  for (const ResultInfo &result : schedule.results())
    if (result.value >= 0 && static_cast<size_t>(result.value) < numValues)
      isResult_[result.value] = true;
  // The loop's copies read the inits and nexts of its carried values: a row
  // program must store them.
  if (const std::optional<LoopInfo> &loop = schedule.loop())
    for (const CarriedValue &carried : loop->carried)
      for (int64_t id : {carried.init, carried.next})
        if (id >= 0 && static_cast<size_t>(id) < numValues)
          isResult_[id] = true;
  for (size_t s = 0; s < schedule.streams().size(); ++s) {
    const std::vector<Instruction> &list = schedule.streams()[s].instructions;
    for (size_t i = 0; i < list.size(); ++i) {
      auto use = [&](int64_t id) {
        if (id >= 0 && static_cast<size_t>(id) < numValues)
          uses_[id].push_back({s, i});
      };
      const Instruction &inst = list[i];
      for (int64_t id : inst.operands)
        use(id);
      for (int64_t id : inst.values)
        use(id);
      if (!inst.fields.has(Field::Body))
        continue;
      const RegionBody &body = inst.fields.getBody(Field::Body);
      for (const OpRecord &op : body.ops)
        for (int64_t id : op.operands)
          use(id);
      for (int64_t id : body.yield)
        use(id);
    }
  }
}

bool ValueUses::usedOnlyWithin(int64_t id, size_t stream, size_t begin,
                               size_t end) const {
  if (id < 0 || static_cast<size_t>(id) >= uses_.size() || isResult_[id] ||
      uses_[id].empty())
    return false;
  return std::all_of(uses_[id].begin(), uses_[id].end(), [&](const Use &u) {
    return u.stream == stream && u.index >= begin && u.index < end;
  });
}

//===----------------------------------------------------------------------===//
// Finding a program
//===----------------------------------------------------------------------===//

std::vector<int64_t> RowProgram::outputs() const {
  std::vector<int64_t> ids;
  for (const RowStep &step : steps)
    if (step.store)
      ids.push_back(step.inst->results[0]);
  return ids;
}

namespace {

/// Region bodies a row program computes per element: no tensor.extract
/// (its error sites) and no linalg.index.
bool isElementwiseBody(const RegionBody &body) {
  return std::none_of(body.ops.begin(), body.ops.end(), [](const OpRecord &op) {
    return op.code() == OpCode::Extract || op.code() == OpCode::Index;
  });
}

/// Classifies the instructions of a candidate program against its shapes.
class RowPlanner {
public:
  RowPlanner(const ValueTable &values, const ops::CheckedSchedule &checked,
             std::vector<int64_t> rowShape, int threads)
      : values_(values), checked_(checked), rowShape_(std::move(rowShape)),
        threads_(threads) {
    pointShape_.assign(rowShape_.begin(), rowShape_.end() - 1);
  }

  /// The step of `inst`, or none when it does not belong to the program.
  std::optional<RowStep> classify(const Instruction &inst) {
    RowStep step;
    step.inst = &inst;
    step.checked = checked_.find(inst);
    if (!step.checked)
      return std::nullopt;
    std::optional<RowStep> result;
    switch (inst.code()) {
    case OpCode::Constant:
      step.kind = RowStep::Kind::Constant;
      result = step;
      break;
    case OpCode::Fill:
      result = classifyFill(step);
      break;
    case OpCode::Reduce:
      result = classifyReduce(step);
      break;
    case OpCode::Broadcast:
      result = classifyBroadcast(step);
      break;
    case OpCode::Map:
      result = classifyMap(step);
      break;
    default:
      break;
    }
    if (result && result->kind != RowStep::Kind::Constant)
      defined_[inst.results[0]] = result->shape;
    return result;
  }

  const std::vector<int64_t> &pointShape() const { return pointShape_; }

private:
  const ValueInfo &value(int64_t id) const { return values_.values[id]; }
  bool isDefined(int64_t id) const { return defined_.count(id) != 0; }
  /// The class of a tensor by its shape (none when it has neither shape).
  std::optional<RowShape> shapeOf(int64_t id) const {
    const ValueInfo &v = value(id);
    if (!v.isTensor)
      return std::nullopt;
    if (v.shape == rowShape_)
      return RowShape::Row;
    if (v.shape == pointShape_)
      return RowShape::Point;
    return std::nullopt;
  }

  std::optional<RowStep> classifyFill(RowStep step) const {
    const Instruction &inst = *step.inst;
    if (inst.operands.size() != 2 || inst.results.size() != 1)
      return std::nullopt;
    const ValueInfo &fillValue = value(inst.operands[0]);
    std::optional<RowShape> shape = shapeOf(inst.results[0]);
    if (fillValue.isTensor || !shape ||
        fillValue.dtype != value(inst.results[0]).dtype)
      return std::nullopt;
    step.kind = RowStep::Kind::Fill;
    step.shape = *shape;
    return step;
  }

  std::optional<RowStep> classifyReduce(RowStep step) const {
    const Instruction &inst = *step.inst;
    if (inst.operands.size() != 2 || inst.results.size() != 1)
      return std::nullopt;
    const int64_t rank = static_cast<int64_t>(rowShape_.size());
    if (inst.fields.getIntList(Field::Dimensions) !=
            std::vector<int64_t>{rank - 1} ||
        shapeOf(inst.operands[0]) != RowShape::Row ||
        shapeOf(inst.operands[1]) != RowShape::Point ||
        !isElementwiseBody(inst.fields.getBody(Field::Body)))
      return std::nullopt;
    // The same cooperative reduction as the instruction alone.
    StatusOr<LoopNest> nest = buildLoopNest(inst, values_, step.checked->body);
    if (!nest.isOk() || nest->pointThreads != threads_ ||
        nest->pointsPerBlock != 0 || nest->combineOps.size() != 1)
      return std::nullopt;
    step.kind = RowStep::Kind::Reduce;
    step.shape = RowShape::Point;
    return step;
  }

  std::optional<RowStep> classifyBroadcast(RowStep step) const {
    const Instruction &inst = *step.inst;
    if (inst.operands.size() != 2 || inst.results.size() != 1 ||
        shapeOf(inst.results[0]) != RowShape::Row)
      return std::nullopt;
    const ValueInfo &input = value(inst.operands[0]);
    if (input.dtype != value(inst.results[0]).dtype)
      return std::nullopt;
    const std::vector<int64_t> &dims =
        inst.fields.getIntList(Field::Dimensions);
    const int64_t rank = static_cast<int64_t>(rowShape_.size());
    step.shape = RowShape::Row;
    if (input.shape == pointShape_ && dims == std::vector<int64_t>{rank - 1}) {
      step.kind = RowStep::Kind::BroadcastPoint;
      return step;
    }
    std::vector<int64_t> leading(static_cast<size_t>(rank - 1));
    for (int64_t d = 0; d < rank - 1; ++d)
      leading[d] = d;
    if (input.shape == std::vector<int64_t>{rowShape_.back()} &&
        dims == leading && !isDefined(input.id)) {
      step.kind = RowStep::Kind::BroadcastVector;
      return step;
    }
    return std::nullopt;
  }

  std::optional<RowStep> classifyMap(RowStep step) const {
    const Instruction &inst = *step.inst;
    if (inst.operands.size() < 2 || inst.results.size() != 1)
      return std::nullopt;
    std::optional<RowShape> shape = shapeOf(inst.results[0]);
    if (!shape)
      return std::nullopt;
    const size_t numInputs = inst.operands.size() - 1;
    for (size_t i = 0; i < numInputs; ++i)
      if (shapeOf(inst.operands[i]) != shape)
        return std::nullopt;
    const RegionBody &body = inst.fields.getBody(Field::Body);
    if (body.arguments.size() != numInputs + 1 || body.yield.size() != 1 ||
        !isElementwiseBody(body))
      return std::nullopt;
    // The destination's elements are not read.
    const int64_t destination = body.arguments[numInputs];
    for (const OpRecord &op : body.ops)
      if (std::count(op.operands.begin(), op.operands.end(), destination))
        return std::nullopt;
    if (body.yield[0] == destination)
      return std::nullopt;
    step.kind = RowStep::Kind::Map;
    step.shape = *shape;
    return step;
  }

  const ValueTable &values_;
  const ops::CheckedSchedule &checked_;
  std::vector<int64_t> rowShape_, pointShape_;
  int threads_;
  std::map<int64_t, RowShape> defined_;
};

bool isCandidate(const Instruction &inst, const ValueTable &values) {
  if (inst.kind != Instruction::Kind::Compute)
    return false;
  switch (inst.code()) {
  case OpCode::Constant:
    return inst.results.size() == 1 && !values.values[inst.results[0]].isTensor;
  case OpCode::Fill:
  case OpCode::Reduce:
  case OpCode::Broadcast:
  case OpCode::Map:
    return true;
  default:
    return false;
  }
}

/// The tensors a step reads (not the destinations it only overwrites),
/// with the class each is read as.
std::vector<RowInput> readTensors(const RowStep &step) {
  const Instruction &inst = *step.inst;
  switch (step.kind) {
  case RowStep::Kind::Reduce:
    return {{inst.operands[0], RowShape::Row},
            {inst.operands[1], RowShape::Point}};
  case RowStep::Kind::BroadcastPoint:
    return {{inst.operands[0], RowShape::Point}};
  case RowStep::Kind::BroadcastVector:
    return {{inst.operands[0], RowShape::Vector}};
  case RowStep::Kind::Map: {
    std::vector<RowInput> read;
    for (size_t i = 0; i + 1 < inst.operands.size(); ++i)
      read.push_back({inst.operands[i], step.shape});
    return read;
  }
  default:
    return {};
  }
}

/// The scalar registers a step reads: a fill's value, a body's scalars from
/// outside.
std::vector<int64_t> readScalars(const RowStep &step,
                                 const ValueTable &values) {
  const Instruction &inst = *step.inst;
  if (step.kind == RowStep::Kind::Fill)
    return {inst.operands[0]};
  if (step.kind != RowStep::Kind::Reduce && step.kind != RowStep::Kind::Map)
    return {};
  const RegionBody &body = inst.fields.getBody(Field::Body);
  std::set<int64_t> inBody(body.arguments.begin(), body.arguments.end());
  for (const OpRecord &op : body.ops)
    inBody.insert(op.results.begin(), op.results.end());
  std::vector<int64_t> scalars;
  auto use = [&](int64_t id) {
    if (!inBody.count(id) && !values.values[id].isTensor)
      scalars.push_back(id);
  };
  for (const OpRecord &op : body.ops)
    for (int64_t id : op.operands)
      use(id);
  for (int64_t id : body.yield)
    use(id);
  return scalars;
}

} // namespace

std::optional<RowProgram> findRowProgram(const Schedule &schedule,
                                         const ops::CheckedSchedule &checked,
                                         const ValueUses &uses, size_t stream,
                                         size_t first) {
  const std::vector<Instruction> &list =
      schedule.streams()[stream].instructions;
  const ValueTable &values = schedule.values();
  size_t end = first;
  while (end < list.size() && isCandidate(list[end], values))
    ++end;

  // The row shape and the threads per row: the first reduction's.
  const Instruction *firstReduce = nullptr;
  for (size_t i = first; i < end && !firstReduce; ++i)
    if (list[i].code() == OpCode::Reduce)
      firstReduce = &list[i];
  const ops::CheckedOp *reduceCheck =
      firstReduce ? checked.find(*firstReduce) : nullptr;
  if (!reduceCheck || firstReduce->operands.empty())
    return std::nullopt;
  const std::vector<int64_t> &rowShape =
      values.values[firstReduce->operands[0]].shape;
  StatusOr<LoopNest> nest =
      buildLoopNest(*firstReduce, values, reduceCheck->body);
  if (rowShape.empty() || !nest.isOk() || nest->pointThreads <= 1 ||
      nest->pointsPerBlock != 0)
    return std::nullopt;

  RowProgram program;
  program.stream = stream;
  program.first = first;
  program.threads = nest->pointThreads;
  program.rowLength = rowShape.back();
  program.numPoints = 1;
  for (size_t d = 0; d + 1 < rowShape.size(); ++d)
    program.numPoints *= rowShape[d];
  if (program.numPoints < 1 ||
      program.elementsPerThread() > kMaxRowElementsPerThread)
    return std::nullopt;

  RowPlanner planner(values, checked, rowShape, program.threads);
  for (size_t i = first; i < end; ++i) {
    std::optional<RowStep> step = planner.classify(list[i]);
    if (!step)
      break;
    program.steps.push_back(*step);
  }
  // It ends at its last computation, and needs a map after a reduction.
  while (!program.steps.empty() &&
         (program.steps.back().kind == RowStep::Kind::Constant ||
          program.steps.back().kind == RowStep::Kind::Fill))
    program.steps.pop_back();
  bool reduced = false, mapAfterReduce = false;
  for (const RowStep &step : program.steps) {
    reduced |= step.kind == RowStep::Kind::Reduce;
    mapAfterReduce |= reduced && step.kind == RowStep::Kind::Map;
  }
  if (!mapAfterReduce)
    return std::nullopt;

  const size_t last = first + program.steps.size();
  std::set<int64_t> defined, seenInputs, seenScalars;
  for (RowStep &step : program.steps) {
    for (const RowInput &input : readTensors(step))
      if (!defined.count(input.value) && seenInputs.insert(input.value).second)
        program.inputs.push_back(input);
    for (int64_t id : readScalars(step, values))
      if (seenScalars.insert(id).second)
        program.scalars.push_back(id);
    if (step.kind == RowStep::Kind::Constant)
      continue;
    const int64_t result = step.inst->results[0];
    defined.insert(result);
    step.store = !uses.usedOnlyWithin(result, stream, first, last);
  }
  return program;
}

std::string checkRowProgramMemory(const RowProgram &program,
                                  const Schedule &schedule) {
  struct Access {
    int64_t value;
    RowShape shape;
    bool written;
    size_t step; // the defining step (written) or the last reading step
  };
  std::vector<Access> accesses;
  std::map<int64_t, size_t> lastRead;
  for (size_t j = 0; j < program.steps.size(); ++j)
    for (const RowInput &input : readTensors(program.steps[j]))
      lastRead[input.value] = j;
  for (const RowInput &input : program.inputs)
    accesses.push_back(
        {input.value, input.shape, false, lastRead[input.value]});
  for (size_t j = 0; j < program.steps.size(); ++j)
    if (program.steps[j].store)
      accesses.push_back(
          {program.steps[j].inst->results[0], program.steps[j].shape, true, j});

  for (size_t a = 0; a < accesses.size(); ++a)
    for (size_t b = a + 1; b < accesses.size(); ++b) {
      const Access &x = accesses[a], &y = accesses[b];
      if (!x.written && !y.written)
        continue;
      const BufferInfo &bx = schedule.bufferOf(x.value);
      const BufferInfo &by = schedule.bufferOf(y.value);
      const ValueInfo &vx = schedule.values().values[x.value];
      const ValueInfo &vy = schedule.values().values[y.value];
      if (bx.space != by.space || vx.bytes() == 0 || vy.bytes() == 0 ||
          bx.offset + vx.bytes() <= by.offset ||
          by.offset + vy.bytes() <= bx.offset)
        continue;
      // In place: the same row elements, each read before it is written.
      const Access &written = x.written ? x : y, &other = x.written ? y : x;
      const bool inPlace = x.shape == RowShape::Row &&
                           y.shape == RowShape::Row && bx.offset == by.offset &&
                           vx.bytes() == vy.bytes() &&
                           getDTypeWidth(vx.dtype) == getDTypeWidth(vy.dtype) &&
                           (other.written || other.step <= written.step);
      if (!inPlace)
        return schedule.describeValue(x.value) + " and " +
               schedule.describeValue(y.value) + " share memory across rows";
    }
  return "";
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

namespace {

class RowKernelWriter : public SourceWriter {
public:
  RowKernelWriter(const RowProgram &program, const ValueTable &values)
      : program_(program), values_(values) {}

  StatusOr<RowKernel> run();

private:
  DType dtypeOf(int64_t id) const { return values_.values[id].dtype; }
  std::string reg(int64_t id) const { return valueTypeName(dtypeOf(id)); }

  /// `for k` over the thread's elements of the row, with `r` the column.
  void openElements() {
    line("#pragma unroll");
    open("for (int k = 0; k < " + std::to_string(program_.elementsPerThread()) +
         "; ++k)");
    line("const long long r = t + k * " + std::to_string(program_.threads) +
         ";");
    if (program_.rowLength % program_.threads != 0)
      open("if (r < " + int64Literal(program_.rowLength) + ")");
  }
  void closeElements() {
    if (program_.rowLength % program_.threads != 0)
      close();
    close();
  }

  /// Element k of a row tensor, or the point's value of a point tensor.
  std::string rowElement(int64_t id) const;
  std::string pointValue(int64_t id) const;
  std::string input(int64_t id) const {
    return "a" + std::to_string(inputIndex_.at(id));
  }

  /// Emits `body`'s ops but `skip` (the combine of a reduction), with its
  /// arguments bound to `arguments` (empty: unused); `names` gets every
  /// body value's name.
  Status emitBody(const RegionBody &body,
                  const std::vector<ops::ScalarOp> &bodyOps,
                  const std::vector<std::string> &arguments,
                  std::optional<size_t> skip,
                  std::map<int64_t, std::string> &names);
  StatusOr<std::string> combine(const ops::ScalarOp &op, size_t accOperand,
                                const std::string &acc,
                                const std::string &value) const {
    std::vector<std::string> operands(2);
    operands[accOperand] = acc;
    operands[1 - accOperand] = value;
    return bodyOpExpression(op, operands);
  }
  void storeRow(int64_t id, const std::string &element);
  void storePoint(int64_t id, const std::string &value);

  Status emitFill(size_t j);
  Status emitReduce(size_t j);
  Status emitMap(size_t j);
  void emitBroadcastStore(size_t j);

  const RowProgram &program_;
  const ValueTable &values_;
  std::map<int64_t, size_t> inputIndex_, outputIndex_, scalarIndex_;
  std::map<int64_t, size_t> definedBy_; // value id -> step
};

std::string RowKernelWriter::rowElement(int64_t id) const {
  auto found = definedBy_.find(id);
  if (found == definedBy_.end())
    return loadExpression(dtypeOf(id), input(id), "row + r");
  const RowStep &step = program_.steps[found->second];
  const std::string j = std::to_string(found->second);
  switch (step.kind) {
  case RowStep::Kind::Map:
    return "x" + j + "[k]";
  case RowStep::Kind::Fill:
    return "q" + j;
  case RowStep::Kind::BroadcastPoint:
    return pointValue(step.inst->operands[0]);
  case RowStep::Kind::BroadcastVector:
    return loadExpression(dtypeOf(id), input(step.inst->operands[0]), "r");
  default:
    return "undefined";
  }
}

std::string RowKernelWriter::pointValue(int64_t id) const {
  auto found = definedBy_.find(id);
  if (found == definedBy_.end())
    return loadExpression(dtypeOf(id), input(id), "p");
  return "q" + std::to_string(found->second);
}

Status RowKernelWriter::emitBody(const RegionBody &body,
                                 const std::vector<ops::ScalarOp> &bodyOps,
                                 const std::vector<std::string> &arguments,
                                 std::optional<size_t> skip,
                                 std::map<int64_t, std::string> &names) {
  for (const auto &[id, index] : scalarIndex_)
    names[id] = "sc" + std::to_string(index);
  for (size_t i = 0; i < body.arguments.size(); ++i) {
    names[body.arguments[i]] = "arg" + std::to_string(i);
    if (i < arguments.size() && !arguments[i].empty())
      line("const " + reg(body.arguments[i]) + " arg" + std::to_string(i) +
           " = " + arguments[i] + ";");
  }
  for (size_t i = 0; i < body.ops.size(); ++i) {
    const OpRecord &op = body.ops[i];
    names[op.results[0]] = "v" + std::to_string(i);
    if (skip && *skip == i)
      continue;
    std::vector<std::string> operands;
    for (int64_t id : op.operands)
      operands.push_back(names.count(id) ? names[id] : "undefined");
    StatusOr<std::string> text = bodyOpExpression(bodyOps[i], operands);
    if (!text.isOk())
      return text.status();
    line("const " + reg(op.results[0]) + " v" + std::to_string(i) + " = " +
         *text + ";");
  }
  return Status::ok();
}

void RowKernelWriter::storeRow(int64_t id, const std::string &element) {
  line(storeStatement(dtypeOf(id), "o" + std::to_string(outputIndex_.at(id)),
                      "row + r", element));
}

void RowKernelWriter::storePoint(int64_t id, const std::string &value) {
  line("if (t == 0) " +
       storeStatement(dtypeOf(id), "o" + std::to_string(outputIndex_.at(id)),
                      "p", value));
}

Status RowKernelWriter::emitFill(size_t j) {
  const RowStep &step = program_.steps[j];
  const int64_t result = step.inst->results[0];
  const std::string q = "q" + std::to_string(j);
  // The scalar has the tensor's dtype: its register is the element.
  line("const " + reg(result) + " " + q + " = sc" +
       std::to_string(scalarIndex_.at(step.inst->operands[0])) + ";");
  if (!step.store)
    return Status::ok();
  if (step.shape == RowShape::Point) {
    storePoint(result, q);
    return Status::ok();
  }
  openElements();
  storeRow(result, q);
  closeElements();
  return Status::ok();
}

/// The cooperative reduction's order (Codegen.h), on registers.
Status RowKernelWriter::emitReduce(size_t j) {
  const RowStep &step = program_.steps[j];
  const Instruction &inst = *step.inst;
  StatusOr<LoopNest> nest = buildLoopNest(inst, values_, step.checked->body);
  if (!nest.isOk())
    return nest.status();
  const RegionBody &body = inst.fields.getBody(Field::Body);
  const size_t combineIndex = nest->combineOps[0];
  const size_t accOperand = nest->accumulatorOperand[0];
  const OpRecord &combineOp = body.ops[combineIndex];
  const ops::ScalarOp &combineScalarOp = nest->program.regionOps[combineIndex];
  const int64_t result = inst.results[0];
  const std::string type = reg(result);
  const std::string c = "c" + std::to_string(j), q = "q" + std::to_string(j);

  line(type + " " + c + " = " + (isFloat(dtypeOf(result)) ? "0.0;" : "0LL;"));
  openElements();
  std::map<int64_t, std::string> names;
  ZERO_RETURN_IF_ERROR(emitBody(body, nest->program.regionOps,
                                {rowElement(inst.operands[0])}, combineIndex,
                                names));
  const std::string f = names[combineOp.operands[1 - accOperand]];
  StatusOr<std::string> partial = combine(combineScalarOp, accOperand, c, f);
  if (!partial.isOk())
    return partial.status();
  line(c + " = k == 0 ? " + f + " : " + *partial + ";");
  closeElements();

  auto butterfly = [&](int from) -> Status {
    open("for (int m = " + std::to_string(from) + "; m > 0; m >>= 1)");
    line("const " + type + " o = __shfl_xor_sync(0xffffffffu, " + c + ", m);");
    StatusOr<std::string> text = combine(combineScalarOp, accOperand, c, "o");
    if (!text.isOk())
      return text.status();
    line(c + " = " + *text + ";");
    close();
    return Status::ok();
  };
  ZERO_RETURN_IF_ERROR(butterfly(kWarpThreads / 2));
  StatusOr<std::string> total =
      combine(combineScalarOp, accOperand, pointValue(inst.operands[1]), c);
  if (!total.isOk())
    return total.status();
  if (program_.threads == kWarpThreads) {
    line(type + " " + q + " = " + (isFloat(dtypeOf(result)) ? "0.0;" : "0LL;"));
    line("if (lane == 0) " + q + " = " + *total + ";");
    line(q + " = __shfl_sync(0xffffffffu, " + q + ", 0);");
  } else {
    const int warps = program_.threads / kWarpThreads;
    const std::string w = "w" + std::to_string(j), b = "b" + std::to_string(j);
    line("__shared__ " + type + " " + w + "[" + std::to_string(warps) + "];");
    line("__shared__ " + type + " " + b + ";");
    line("if (lane == 0) " + w + "[warp] = " + c + ";");
    line("__syncthreads();");
    open("if (warp == 0)");
    line(c + " = " + w + "[lane & " + std::to_string(warps - 1) + "];");
    ZERO_RETURN_IF_ERROR(butterfly(warps / 2));
    line("if (lane == 0) " + b + " = " + *total + ";");
    close();
    line("__syncthreads();");
    line("const " + type + " " + q + " = " + b + ";");
  }
  if (step.store)
    storePoint(result, q);
  return Status::ok();
}

Status RowKernelWriter::emitMap(size_t j) {
  const RowStep &step = program_.steps[j];
  const Instruction &inst = *step.inst;
  const RegionBody &body = inst.fields.getBody(Field::Body);
  const std::vector<ops::ScalarOp> &bodyOps = step.checked->body.regionOps;
  const int64_t result = inst.results[0];
  const std::string type = reg(result);
  const size_t numInputs = inst.operands.size() - 1;
  std::map<int64_t, std::string> names;
  if (step.shape == RowShape::Point) {
    const std::string q = "q" + std::to_string(j);
    line(type + " " + q + ";");
    open("");
    std::vector<std::string> arguments;
    for (size_t i = 0; i < numInputs; ++i)
      arguments.push_back(pointValue(inst.operands[i]));
    ZERO_RETURN_IF_ERROR(
        emitBody(body, bodyOps, arguments, std::nullopt, names));
    line(q + " = " + names[body.yield[0]] + ";");
    close();
    if (step.store)
      storePoint(result, q);
    return Status::ok();
  }
  const std::string x = "x" + std::to_string(j);
  line(type + " " + x + "[" + std::to_string(program_.elementsPerThread()) +
       "];");
  openElements();
  std::vector<std::string> arguments;
  for (size_t i = 0; i < numInputs; ++i)
    arguments.push_back(rowElement(inst.operands[i]));
  ZERO_RETURN_IF_ERROR(emitBody(body, bodyOps, arguments, std::nullopt, names));
  line(x + "[k] = " + names[body.yield[0]] + ";");
  if (step.store)
    storeRow(result, x + "[k]");
  closeElements();
  return Status::ok();
}

void RowKernelWriter::emitBroadcastStore(size_t j) {
  const RowStep &step = program_.steps[j];
  if (!step.store)
    return;
  const int64_t result = step.inst->results[0];
  openElements();
  storeRow(result, rowElement(result));
  closeElements();
}

StatusOr<RowKernel> RowKernelWriter::run() {
  const std::vector<int64_t> outputs = program_.outputs();
  for (size_t i = 0; i < outputs.size(); ++i)
    outputIndex_[outputs[i]] = i;
  for (size_t i = 0; i < program_.inputs.size(); ++i)
    inputIndex_[program_.inputs[i].value] = i;
  for (size_t i = 0; i < program_.scalars.size(); ++i)
    scalarIndex_[program_.scalars[i]] = i;

  RowKernel kernel;
  kernel.name = "zero_row_program";
  kernel.pointThreads = program_.threads;
  kernel.numPoints = program_.numPoints;
  const bool block = program_.threads > kWarpThreads;

  out_ << getKernelPrelude();
  out_ << "\n// row program: " << program_.steps.size() << " instructions, "
       << program_.numPoints << " rows of " << program_.rowLength << ", "
       << (block ? "a block" : "a warp") << " per row\n";
  std::vector<std::string> params;
  for (size_t i = 0; i < outputs.size(); ++i)
    params.push_back(std::string(elementTypeName(dtypeOf(outputs[i]))) + " *o" +
                     std::to_string(i));
  for (size_t i = 0; i < program_.inputs.size(); ++i)
    params.push_back(std::string("const ") +
                     elementTypeName(dtypeOf(program_.inputs[i].value)) +
                     " *a" + std::to_string(i));
  for (size_t i = 0; i < program_.scalars.size(); ++i)
    params.push_back(
        "const " + std::string(registerTypeName(dtypeOf(program_.scalars[i]))) +
        " *s" + std::to_string(i));
  out_ << "extern \"C\" __global__ void __launch_bounds__(" << kMaxBlockSize
       << ")\n"
       << kernel.name << "(";
  for (size_t i = 0; i < params.size(); ++i)
    out_ << (i ? ",\n    " : "") << params[i];
  out_ << ") {\n";
  indent_ = 1;
  for (size_t i = 0; i < program_.scalars.size(); ++i)
    line("const " + reg(program_.scalars[i]) + " sc" + std::to_string(i) +
         " = *s" + std::to_string(i) + ";");
  line("const int lane = threadIdx.x & 31;");
  if (block) {
    line("const int warp = threadIdx.x >> 5;");
    line("const int t = threadIdx.x;");
    open("for (long long p = blockIdx.x; p < " +
         int64Literal(program_.numPoints) + "; p += gridDim.x)");
  } else {
    line("const int t = lane;");
    open("for (long long p = ((long long)blockIdx.x * blockDim.x + "
         "threadIdx.x) >> 5; p < " +
         int64Literal(program_.numPoints) +
         "; p += ((long long)gridDim.x * blockDim.x) >> 5)");
  }
  line("const long long row = p * " + int64Literal(program_.rowLength) + ";");
  line("(void)row;");
  for (size_t j = 0; j < program_.steps.size(); ++j) {
    const RowStep &step = program_.steps[j];
    if (step.kind != RowStep::Kind::Constant)
      definedBy_[step.inst->results[0]] = j;
    // The op's name only: the same program in every layer is one source.
    line("// " + step.inst->op);
    switch (step.kind) {
    case RowStep::Kind::Constant:
      break; // run before the kernel; read through its register
    case RowStep::Kind::Fill:
      ZERO_RETURN_IF_ERROR(emitFill(j));
      break;
    case RowStep::Kind::Reduce:
      ZERO_RETURN_IF_ERROR(emitReduce(j));
      break;
    case RowStep::Kind::BroadcastPoint:
    case RowStep::Kind::BroadcastVector:
      emitBroadcastStore(j);
      break;
    case RowStep::Kind::Map:
      ZERO_RETURN_IF_ERROR(emitMap(j));
      break;
    }
  }
  close();
  out_ << "}\n";
  kernel.source = out_.str();
  return kernel;
}

} // namespace

StatusOr<RowKernel> generateRowKernel(const RowProgram &program,
                                      const ValueTable &values) {
  if (program.steps.empty() || program.threads <= 0)
    return ZERO_ERROR(kInternal, "CUDA kernel generator: an empty row program");
  return RowKernelWriter(program, values).run();
}

} // namespace zero::runtime::cuda
