//===- Dataflow.cpp - the loader's proof of a schedule's dataflow ---------===//
//
// Happens-before over the streams is a vector clock per instruction: entry t
// of instruction I's clock counts the instructions of stream t that happen
// before I or are I. Program order orders a stream; a wait takes on the clock
// of its event's record. The streams are run symbolically once (checkEvents
// has proved that they finish), so the clocks cost O(instructions x streams).
//
// A loop is analyzed unrolled: its body twice (once for a loop of one
// iteration), with the copies of the carried values as instructions of the
// compute stream (unrollStream). A value of the body has a version per
// iteration, which a reader of that iteration (or, after the loop, of the
// last) reads; the carried value has the versions the copies write. Two
// iterations are enough: happens-before never leads from an iteration back
// to an earlier one (a wait takes the record of its own iteration), so an
// instruction unordered with one of a later iteration is unordered with its
// instance of the next iteration already, and the body repeats the same
// orderings in every iteration.
//
//===----------------------------------------------------------------------===//

#include "Dataflow.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace zero::runtime {
namespace {

/// An instruction: its stream and its index in the stream.
struct Ref {
  int32_t stream = -1;
  int32_t index = -1;
  bool valid() const { return stream >= 0; }
  bool operator==(const Ref &o) const {
    return stream == o.stream && index == o.index;
  }
};

/// Bytes an instruction reads or writes.
struct Access {
  MemorySpace space;
  int64_t begin, end;
  bool write;
  int64_t value; // -1: the staging region of a collective
};

constexpr uint32_t kNever = std::numeric_limits<uint32_t>::max();

/// An instruction of the unrolled program.
struct Node {
  const Instruction *inst;
  int iteration; // 0 outside the loop
  bool afterLoop;
};

std::string inIteration(int iteration) {
  return iteration > 0
             ? " in iteration " + std::to_string(iteration) + " of the loop"
             : std::string();
}

/// Ops whose last `results.size()` operands are destinations (`outs`): a
/// destination may be a `tensor.empty`, which no instruction writes.
bool hasDestinations(OpCode code) {
  switch (code) {
  case OpCode::Matmul:
  case OpCode::BatchMatmul:
  case OpCode::Transpose:
  case OpCode::Broadcast:
  case OpCode::Fill:
  case OpCode::Copy:
  case OpCode::Map:
  case OpCode::Reduce:
  case OpCode::Generic:
  case OpCode::InsertSlice:
    return true;
  default:
    return false;
  }
}

const RegionBody *getBody(const Instruction &inst) {
  if (inst.kind != Instruction::Kind::Compute || !inst.fields.has(Field::Body))
    return nullptr;
  return &inst.fields.getBody(Field::Body);
}

class DataflowChecker {
public:
  explicit DataflowChecker(const Schedule &schedule)
      : s(schedule), streams(schedule.streams()),
        numStreams(schedule.streams().size()),
        iterations(getAnalyzedIterations(schedule)) {}

  Status run() {
    unroll();
    ZERO_RETURN_IF_ERROR(findWriters());
    computeClocks();
    ZERO_RETURN_IF_ERROR(checkReads());
    ZERO_RETURN_IF_ERROR(checkResults());
    return checkRaces();
  }

private:
  Status error(const std::string &path, const std::string &message) const {
    return ZERO_ERROR(kInvalidArgument,
                      (s.name().empty() ? "" : s.name() + ": ") + path + ": " +
                          message);
  }
  const Instruction &at(Ref r) const {
    return *program[r.stream][r.index].inst;
  }
  int iterationOf(Ref r) const { return program[r.stream][r.index].iteration; }
  /// "instructions.comm[3] (all_gather at m.mlir:1:2) in iteration 2 of the
  /// loop".
  std::string describe(Ref r) const {
    return at(r).describe() + inIteration(iterationOf(r));
  }
  /// The instance of stream `stream`'s instruction `index` in `iteration`
  /// (ignored outside the body).
  Ref instance(size_t stream, size_t index, int iteration) const {
    size_t position = firstInstance[stream][index];
    if (loop && loop->inBody(stream, index))
      position += (iteration - 1) * stride[stream];
    return {static_cast<int32_t>(stream), static_cast<int32_t>(position)};
  }
  /// The iteration whose version of a value of the body `reader` reads: its
  /// own, the last after the loop, the first before it (which fails).
  int versionFor(Ref reader) const {
    const Node &node = program[reader.stream][reader.index];
    if (node.iteration > 0)
      return node.iteration;
    return node.afterLoop ? iterations : 1;
  }
  /// The instance that writes the version of `id` that `reader` reads.
  Ref writerFor(int64_t id, Ref reader) const;
  size_t flat(Ref r) const { return firstOfStream[r.stream] + r.index; }
  uint32_t clock(Ref r, size_t t) const {
    return clocks[flat(r) * numStreams + t];
  }
  /// Whether `a` happens before `b` (strictly).
  bool happensBefore(Ref a, Ref b) const {
    if (a.stream == b.stream)
      return a.index < b.index;
    return static_cast<uint32_t>(a.index) < clock(b, a.stream);
  }

  void unroll();
  Status define(int64_t id, const std::string &path);
  Status findWriters();
  void computeClocks();
  Status checkRead(Ref reader, int64_t id, const std::string &path,
                   bool destination) const;
  Status checkReads() const;
  Status checkResults() const;
  void collectAccesses(const Instruction &inst, std::vector<Access> &out) const;
  std::string describeAccess(const Access &a) const;
  Status checkRaces() const;

  const Schedule &s;
  const std::vector<Stream> &streams;
  size_t numStreams;
  int iterations; // of the loop, as analyzed; 0 without one
  const LoopInfo *loop = nullptr;
  // The unrolled program (the schedule's without a loop), per stream.
  std::vector<std::vector<Node>> program;
  // Per stream, per instruction: the index in `program` of its first
  // instance; per stream, the instances an iteration adds.
  std::vector<std::vector<size_t>> firstInstance;
  std::vector<size_t> stride;
  // The carried values' copies, as instructions that read the inits (or the
  // nexts) and write the carried values; where they stand on stream 0.
  Instruction entryCopy, endCopy;
  size_t entryCopyAt = 0;
  std::vector<size_t> endCopyAt;     // per iteration, 1-based
  std::vector<bool> isCarried;       // per value
  std::vector<bool> inBody;          // per value: its writer is in the body
  std::vector<bool> recordInBody;    // per event
  std::vector<size_t> firstOfStream; // flat index of each stream's first
  std::vector<uint32_t> clocks;      // numStreams entries per instruction
  std::vector<Ref> writer;           // per value: the instruction writing it
  std::vector<bool> isArgument;      // per value
  // Values of a body: the instruction that holds it and its position, -1
  // for the body's arguments, j for a result of body op j.
  std::vector<const Instruction *> bodyOwner;
  std::vector<int32_t> bodyPosition;
  // Per buffer: written before the step (an argument's), and the first
  // instruction of each stream writing a value that names it.
  std::vector<bool> writtenAtStart;
  std::vector<uint32_t> firstWrite; // numStreams entries per buffer
};

void DataflowChecker::unroll() {
  if (s.loop())
    loop = &*s.loop();
  // Free: of the kinds, the one whose operands are all read (none is a
  // destination) and that has no kernel nor body.
  entryCopy.kind = endCopy.kind = Instruction::Kind::Free;
  entryCopy.op = "entry copy of the carried values";
  endCopy.op = "end-of-iteration copy of the carried values";
  entryCopy.path = endCopy.path = "loops[0].carried";
  isCarried.assign(s.values().values.size(), false);
  if (loop)
    for (const CarriedValue &carried : loop->carried) {
      entryCopy.operands.push_back(carried.init);
      endCopy.operands.push_back(carried.next);
      entryCopy.results.push_back(carried.value);
      endCopy.results.push_back(carried.value);
      isCarried[carried.value] = true;
    }
  endCopyAt.assign(iterations + 1, 0);
  for (size_t si = 0; si < numStreams; ++si) {
    std::vector<Node> &nodes = program.emplace_back();
    std::vector<size_t> &first =
        firstInstance.emplace_back(streams[si].instructions.size(), 0);
    for (const Instance &instance : unrollStream(s, si, /*withCopies=*/true)) {
      if (instance.index == kEntryCopy) {
        entryCopyAt = nodes.size();
        nodes.push_back({&entryCopy, instance.iteration, false});
        continue;
      }
      if (instance.index == kEndCopy) {
        endCopyAt[instance.iteration] = nodes.size();
        nodes.push_back({&endCopy, instance.iteration, false});
        continue;
      }
      if (instance.iteration <= 1)
        first[instance.index] = nodes.size();
      bool after = loop && instance.index >= loop->bodyEnd[si];
      nodes.push_back({&streams[si].instructions[instance.index],
                       instance.iteration, after});
    }
    size_t bodyLength = loop ? loop->bodyEnd[si] - loop->bodyBegin[si] : 0;
    stride.push_back(bodyLength + (si == 0 && loop ? 1 : 0));
  }
  recordInBody.assign(s.numEvents(), false);
  for (size_t si = 0; si < numStreams && loop; ++si)
    for (size_t i = loop->bodyBegin[si]; i < loop->bodyEnd[si]; ++i) {
      const Instruction &inst = streams[si].instructions[i];
      if (inst.kind == Instruction::Kind::Record)
        recordInBody[inst.event] = true;
    }
}

Ref DataflowChecker::writerFor(int64_t id, Ref reader) const {
  if (isCarried[id]) {
    // The entry copy before the first iteration, the end copy of the
    // previous one after.
    int version = versionFor(reader);
    const Node &node = program[reader.stream][reader.index];
    if (node.afterLoop)
      return {0, static_cast<int32_t>(endCopyAt[iterations])};
    return {0, static_cast<int32_t>(version == 1 ? entryCopyAt
                                                 : endCopyAt[version - 1])};
  }
  Ref w = writer[id];
  if (!w.valid() || !inBody[id])
    return w;
  return {w.stream, static_cast<int32_t>(w.index + (versionFor(reader) - 1) *
                                                       stride[w.stream])};
}

Status DataflowChecker::define(int64_t id, const std::string &path) {
  if (isArgument[id])
    return error(path, "writes " + s.describeValue(id) +
                           ", an argument, which is written before the step: "
                           "a value has one writer");
  if (writer[id].valid() || bodyOwner[id])
    return error(path, "writes " + s.describeValue(id) + ", which " +
                           (writer[id].valid() ? at(writer[id]).describe()
                                               : bodyOwner[id]->describe()) +
                           " already writes: a value has one writer");
  return Status::ok();
}

Status DataflowChecker::findWriters() {
  size_t numValues = s.values().values.size();
  writer.assign(numValues, Ref{});
  inBody.assign(numValues, false);
  isArgument.assign(numValues, false);
  bodyOwner.assign(numValues, nullptr);
  bodyPosition.assign(numValues, 0);
  writtenAtStart.assign(s.buffers().size(), false);
  firstWrite.assign(s.buffers().size() * numStreams, kNever);
  for (const ArgumentInfo &arg : s.arguments()) {
    isArgument[arg.value] = true;
    writtenAtStart[s.values().values[arg.value].buffer] = true;
  }
  size_t total = 0;
  for (const std::vector<Node> &nodes : program) {
    firstOfStream.push_back(total);
    total += nodes.size();
  }
  // The first write of each buffer, per stream, in the unrolled program.
  for (size_t si = 0; si < numStreams; ++si)
    for (size_t i = 0; i < program[si].size(); ++i)
      for (int64_t id : program[si][i].inst->results) {
        const ValueInfo &value = s.values().values[id];
        if (value.isTensor) {
          uint32_t &first = firstWrite[value.buffer * numStreams + si];
          first = std::min(first, static_cast<uint32_t>(i));
        }
      }
  for (size_t si = 0; si < numStreams; ++si) {
    const auto &list = streams[si].instructions;
    for (size_t i = 0; i < list.size(); ++i) {
      const Instruction &inst = list[i];
      for (size_t k = 0; k < inst.results.size(); ++k) {
        int64_t id = inst.results[k];
        ZERO_RETURN_IF_ERROR(
            define(id, inst.path + ".results[" + std::to_string(k) + "]"));
        writer[id] = instance(si, i, 1);
        inBody[id] = loop && loop->inBody(si, i);
      }
      const RegionBody *body = getBody(inst);
      if (!body)
        continue;
      std::string path = inst.path + ".body";
      for (size_t k = 0; k < body->arguments.size(); ++k) {
        int64_t id = body->arguments[k];
        ZERO_RETURN_IF_ERROR(
            define(id, path + ".arguments[" + std::to_string(k) + "]"));
        bodyOwner[id] = &inst;
        bodyPosition[id] = -1;
      }
      for (size_t j = 0; j < body->ops.size(); ++j)
        for (size_t k = 0; k < body->ops[j].results.size(); ++k) {
          int64_t id = body->ops[j].results[k];
          ZERO_RETURN_IF_ERROR(define(id, body->ops[j].path + ".results[" +
                                              std::to_string(k) + "]"));
          bodyOwner[id] = &inst;
          bodyPosition[id] = static_cast<int32_t>(j);
        }
    }
  }
  return Status::ok();
}

void DataflowChecker::computeClocks() {
  size_t total =
      firstOfStream.empty() ? 0 : firstOfStream.back() + program.back().size();
  clocks.assign(total * numStreams, 0);
  std::vector<std::vector<uint32_t>> current(
      numStreams, std::vector<uint32_t>(numStreams, 0));
  // Per event, per iteration (0: a record outside the body): the clock of
  // its record.
  std::vector<std::vector<std::vector<uint32_t>>> atRecord(
      s.numEvents(), std::vector<std::vector<uint32_t>>(iterations + 1));
  std::vector<size_t> position(numStreams, 0);
  // checkEvents proved that this run reaches the end of every stream.
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t si = 0; si < numStreams; ++si) {
      const std::vector<Node> &nodes = program[si];
      std::vector<uint32_t> &clock = current[si];
      for (size_t &pos = position[si]; pos < nodes.size(); ++pos) {
        const Instruction &inst = *nodes[pos].inst;
        if (inst.kind == Instruction::Kind::Wait) {
          int slot = !recordInBody[inst.event]  ? 0
                     : nodes[pos].iteration > 0 ? nodes[pos].iteration
                                                : iterations;
          const std::vector<uint32_t> &recorded = atRecord[inst.event][slot];
          if (recorded.empty())
            break;
          for (size_t t = 0; t < numStreams; ++t)
            clock[t] = std::max(clock[t], recorded[t]);
        }
        clock[si] = static_cast<uint32_t>(pos + 1);
        std::copy(clock.begin(), clock.end(),
                  clocks.begin() + (firstOfStream[si] + pos) * numStreams);
        if (inst.kind == Instruction::Kind::Record)
          atRecord[inst.event][nodes[pos].iteration] = clock;
        progress = true;
      }
    }
  }
}

Status DataflowChecker::checkRead(Ref reader, int64_t id,
                                  const std::string &path,
                                  bool destination) const {
  std::string what = s.describeValue(id) + inIteration(iterationOf(reader));
  if (bodyOwner[id])
    return error(path, "reads " + what + ", a value of the body of " +
                           bodyOwner[id]->describe());
  if (Ref w = writerFor(id, reader); w.valid()) {
    if (happensBefore(w, reader))
      return Status::ok();
    if (w == reader)
      return error(path, "reads " + what + ", which it writes itself");
    if (w.stream == reader.stream)
      return error(path, "reads " + what +
                             " before it is written: " + describe(w) +
                             " writes it later on the same stream");
    return error(path, "reads " + what + ", which " + describe(w) +
                           " writes on stream '" + streams[w.stream].name +
                           "', without waiting on an event recorded after "
                           "that write");
  }
  if (isArgument[id])
    return Status::ok();
  const ValueInfo &value = s.values().values[id];
  if (!value.isTensor)
    return error(path, "reads " + what + ", which no instruction writes");
  if (destination)
    return Status::ok(); // a tensor.empty
  // A view or the destination of an in-place op: no instruction names the
  // value, but one must have written its buffer before.
  if (writtenAtStart[value.buffer])
    return Status::ok();
  std::string later;
  for (size_t t = 0; t < numStreams; ++t) {
    uint32_t first = firstWrite[value.buffer * numStreams + t];
    if (first == kNever)
      continue;
    Ref w{static_cast<int32_t>(t), static_cast<int32_t>(first)};
    if (happensBefore(w, reader))
      return Status::ok();
    if (later.empty())
      later = " (" + describe(w) + " writes it, but not before)";
  }
  const BufferInfo &buffer = s.buffers()[value.buffer];
  return error(path, "reads " + what +
                         ", which nothing writes before it: it is neither an "
                         "instruction's result nor an argument, and no "
                         "earlier instruction writes its buffer " +
                         std::to_string(buffer.id) + " '" + buffer.name + "'" +
                         later);
}

Status DataflowChecker::checkReads() const {
  for (size_t si = 0; si < numStreams; ++si) {
    for (size_t i = 0; i < program[si].size(); ++i) {
      const Instruction &inst = *program[si][i].inst;
      Ref ref{static_cast<int32_t>(si), static_cast<int32_t>(i)};
      size_t firstDestination =
          inst.kind == Instruction::Kind::Compute &&
                  hasDestinations(inst.code()) &&
                  inst.results.size() <= inst.operands.size()
              ? inst.operands.size() - inst.results.size()
              : inst.operands.size();
      // The copies of the carried values name them by their entries.
      bool copy = &inst == &entryCopy || &inst == &endCopy;
      for (size_t k = 0; k < inst.operands.size(); ++k)
        ZERO_RETURN_IF_ERROR(
            checkRead(ref, inst.operands[k],
                      copy ? inst.path + "[" + std::to_string(k) + "]." +
                                 (&inst == &entryCopy ? "init" : "next")
                           : inst.path + ".operands[" + std::to_string(k) + "]",
                      k >= firstDestination));
      const RegionBody *body = getBody(inst);
      if (!body)
        continue;
      // A body reads its own values in order, and values of the program
      // (scalars, tensors for tensor.extract) like an operand.
      auto readInBody = [&](int64_t id, int32_t position,
                            const std::string &path) -> Status {
        if (bodyOwner[id] != &inst)
          return checkRead(ref, id, path, false);
        if (bodyPosition[id] < position)
          return Status::ok();
        return error(
            path, "reads " + s.describeValue(id) + " before it is defined: " +
                      body->ops[bodyPosition[id]].path + " defines it");
      };
      for (size_t j = 0; j < body->ops.size(); ++j) {
        const OpRecord &op = body->ops[j];
        for (size_t k = 0; k < op.operands.size(); ++k)
          ZERO_RETURN_IF_ERROR(
              readInBody(op.operands[k], static_cast<int32_t>(j),
                         op.path + ".operands[" + std::to_string(k) + "]"));
      }
      for (size_t k = 0; k < body->yield.size(); ++k)
        ZERO_RETURN_IF_ERROR(
            readInBody(body->yield[k], static_cast<int32_t>(body->ops.size()),
                       inst.path + ".body.yield[" + std::to_string(k) + "]"));
    }
  }
  return Status::ok();
}

Status DataflowChecker::checkResults() const {
  // The step ends when every stream has, so any write will do.
  for (size_t i = 0; i < s.results().size(); ++i) {
    const ResultInfo &result = s.results()[i];
    int64_t id = result.value;
    if (writer[id].valid() || isCarried[id])
      continue;
    if (result.kind == ResultInfo::Kind::Update) {
      // The argument's new value: an instruction's result, on any stream.
      // Its buffer's bytes do not do: the argument's buffer holds the old
      // value from the start, so without the writer nothing would change.
      const ArgumentInfo &arg = s.arguments()[result.argument];
      if (arg.value == id)
        continue; // the argument itself: it keeps its value
      // A view (an expand_shape of the updated weight) has no writer of its
      // own: an instruction's write of its buffer counts, the bytes there
      // at the start do not.
      const ValueInfo &value = s.values().values[id];
      bool bufferWritten = false;
      for (size_t t = 0; t < numStreams && value.isTensor; ++t)
        bufferWritten |= firstWrite[value.buffer * numStreams + t] != kNever;
      if (bufferWritten)
        continue;
      return error("results[" + std::to_string(i) + "].value",
                   s.describeValue(id) + ", the new value of arguments[" +
                       std::to_string(result.argument) + "]" +
                       (!arg.name.empty()  ? " ('" + arg.name + "')"
                        : !arg.state.empty() ? " (state '" + arg.state + "')"
                                             : std::string()) +
                       ", is written by no instruction");
    }
    if (isArgument[id])
      continue;
    const ValueInfo &value = s.values().values[id];
    bool viewOfWritten = value.isTensor && writtenAtStart[value.buffer];
    for (size_t t = 0; t < numStreams && value.isTensor; ++t)
      viewOfWritten |= firstWrite[value.buffer * numStreams + t] != kNever;
    if (!viewOfWritten)
      return error("results[" + std::to_string(i) + "].value",
                   s.describeValue(id) + " is never written");
  }
  return Status::ok();
}

void DataflowChecker::collectAccesses(const Instruction &inst,
                                      std::vector<Access> &out) const {
  auto add = [&](int64_t id, bool write) {
    const ValueInfo &value = s.values().values[id];
    if (!value.isTensor)
      return;
    const BufferInfo &buffer = s.buffers()[value.buffer];
    int64_t bytes = value.bytes();
    if (bytes > 0)
      out.push_back(
          {buffer.space, buffer.offset, buffer.offset + bytes, write, id});
  };
  for (int64_t id : inst.operands)
    add(id, false);
  for (int64_t id : inst.results)
    add(id, true);
  if (const RegionBody *body = getBody(inst))
    for (const OpRecord &op : body->ops)
      for (int64_t id : op.operands)
        add(id, false);
  if (inst.staging && inst.staging->bytes > 0)
    out.push_back({inst.staging->space, inst.staging->offset,
                   inst.staging->offset + inst.staging->bytes, true, -1});
}

std::string DataflowChecker::describeAccess(const Access &a) const {
  return (a.value < 0 ? std::string("its staging region")
                      : s.describeValue(a.value)) +
         " (bytes [" + std::to_string(a.begin) + ", " + std::to_string(a.end) +
         ") of the " + getMemorySpaceName(a.space) + " arena)";
}

Status DataflowChecker::checkRaces() const {
  std::vector<std::vector<std::vector<Access>>> accesses(numStreams);
  for (size_t si = 0; si < numStreams; ++si)
    for (const Node &node : program[si])
      collectAccesses(*node.inst, accesses[si].emplace_back());
  // For each instruction J of stream t, the instructions of an earlier
  // stream s that are unordered with it form one window [lo, hi): those
  // below lo happen before J, and J happens before those from hi on.
  for (size_t t = 1; t < numStreams; ++t)
    for (size_t j = 0; j < program[t].size(); ++j) {
      if (accesses[t][j].empty())
        continue;
      Ref other{static_cast<int32_t>(t), static_cast<int32_t>(j)};
      for (size_t si = 0; si < t; ++si) {
        size_t count = program[si].size();
        size_t lo = clock(other, si);
        size_t hi = lo;
        size_t step = count - lo;
        // The first instruction of s whose clock has seen J: clocks only
        // grow along a stream, so a binary search finds it.
        while (step > 0) {
          size_t half = step / 2;
          Ref mid{static_cast<int32_t>(si), static_cast<int32_t>(hi + half)};
          if (clock(mid, t) <= j) {
            hi += half + 1;
            step -= half + 1;
          } else {
            step = half;
          }
        }
        for (size_t i = lo; i < hi; ++i)
          for (const Access &a : accesses[si][i])
            for (const Access &b : accesses[t][j]) {
              if (a.space != b.space || !(a.write || b.write) ||
                  a.end <= b.begin || b.end <= a.begin)
                continue;
              Ref ref{static_cast<int32_t>(si), static_cast<int32_t>(i)};
              return error(at(ref).path,
                           std::string(a.write ? "writes " : "reads ") +
                               describeAccess(a) +
                               inIteration(iterationOf(ref)) + " while " +
                               describe(other) + " on stream '" +
                               streams[t].name + "' may " +
                               (b.write ? "write " : "read ") +
                               describeAccess(b) + ": no event orders the two");
            }
      }
    }
  return Status::ok();
}

} // namespace

int getAnalyzedIterations(const Schedule &schedule) {
  if (!schedule.loop())
    return 0;
  return static_cast<int>(std::min<int64_t>(schedule.loop()->count, 2));
}

std::vector<Instance> unrollStream(const Schedule &schedule, size_t stream,
                                   bool withCopies) {
  const size_t size = schedule.streams()[stream].instructions.size();
  std::vector<Instance> run;
  const std::optional<LoopInfo> &loop = schedule.loop();
  if (!loop) {
    for (size_t i = 0; i < size; ++i)
      run.push_back({i, 0});
    return run;
  }
  const size_t begin = loop->bodyBegin[stream], end = loop->bodyEnd[stream];
  const bool copies = withCopies && stream == 0;
  for (size_t i = 0; i < begin; ++i)
    run.push_back({i, 0});
  if (copies)
    run.push_back({kEntryCopy, 1});
  const int iterations = getAnalyzedIterations(schedule);
  for (int iteration = 1; iteration <= iterations; ++iteration) {
    for (size_t i = begin; i < end; ++i)
      run.push_back({i, iteration});
    if (copies)
      run.push_back({kEndCopy, iteration});
  }
  for (size_t i = end; i < size; ++i)
    run.push_back({i, 0});
  return run;
}

Status checkDataflow(const Schedule &schedule) {
  return DataflowChecker(schedule).run();
}

} // namespace zero::runtime
