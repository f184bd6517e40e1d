//===- CostModel.cpp - the CUDA backend's plan, priced on a named GPU -----===//
//
// Walks a schedule's streams as the executor prepares them on a CUDA device,
// in the groups the device prepares (ComputePlan.h: row programs,
// multi-tensor optimizer runs, host functions),
// and for every launch the backend would make, its launch shape (the
// generated kernels' getLaunchShape, the fixed grids of the copy, fill and
// optimizer kernels), the bytes it moves and the arithmetic it does; then
// prices each launch with the GPU's figures (DeviceModels.def). Needs no
// GPU: nothing here calls CUDA.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/CostModel.h"
#include "zero/runtime/StateAccess.h"

#include "Codegen.h"
#include "ComputePlan.h"
#include "CudaOps.h"
#include "ops/CopyShape.h"

#include "Gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>

namespace zero::runtime {

namespace {

/// A GPU's figures (DeviceModels.def, which documents them). Counts are
/// held as doubles, as every figure may be set (--explain-set).
struct DeviceModel {
  std::string name;
  double sms, threadsPerSm;
  double copyGbs, latencyNs, launchUs;
  double gemmF32, gemmTf32, gemmBf16, gemmF16, gemmF64; // TFLOP/s
  double batchedScale;
  double f64Tflops, hostGbs, linkGbs, pcieGbs;
  double loopLoads;
  double generatedEfficiency, vectorEfficiency;
  double optimizerEfficiency, optimizerVectorEfficiency;
  double transposeEfficiency;
};

const DeviceModel kDeviceModels[] = {
#define ZERO_DEVICE_MODEL(name, sms, threads, copy, latency, launch, f32,      \
                          tf32, bf16, f16, f64, batched, f64math, host, link,  \
                          pcie, loopLoads, generated, vector, optimizer,       \
                          optimizerVector, transpose)                          \
  {name,     sms,  threads,   copy,      latency, launch,    f32,              \
   tf32,     bf16, f16,       f64,       batched, f64math,   host,             \
   link,     pcie, loopLoads, generated, vector,  optimizer, optimizerVector,  \
   transpose},
#include "DeviceModels.def"
};

/// One of a DeviceModel's figures.
using Figure = double DeviceModel::*;

/// What values a figure takes.
enum class FigureRange { Count, Positive, Efficiency };

/// The figures by their names in DeviceModels.def, in its order.
struct FigureField {
  const char *name;
  Figure member;
  FigureRange range;
};

constexpr FigureField kFigureFields[] = {
    {"sms", &DeviceModel::sms, FigureRange::Count},
    {"threads_per_sm", &DeviceModel::threadsPerSm, FigureRange::Count},
    {"copy_gbs", &DeviceModel::copyGbs, FigureRange::Positive},
    {"latency_ns", &DeviceModel::latencyNs, FigureRange::Positive},
    {"launch_us", &DeviceModel::launchUs, FigureRange::Positive},
    {"gemm_f32_tflops", &DeviceModel::gemmF32, FigureRange::Positive},
    {"gemm_tf32_tflops", &DeviceModel::gemmTf32, FigureRange::Positive},
    {"gemm_bf16_tflops", &DeviceModel::gemmBf16, FigureRange::Positive},
    {"gemm_f16_tflops", &DeviceModel::gemmF16, FigureRange::Positive},
    {"gemm_f64_tflops", &DeviceModel::gemmF64, FigureRange::Positive},
    {"batched_scale", &DeviceModel::batchedScale, FigureRange::Positive},
    {"f64_tflops", &DeviceModel::f64Tflops, FigureRange::Positive},
    {"host_gbs", &DeviceModel::hostGbs, FigureRange::Positive},
    {"link_gbs", &DeviceModel::linkGbs, FigureRange::Positive},
    {"pcie_gbs", &DeviceModel::pcieGbs, FigureRange::Positive},
    {"loop_loads", &DeviceModel::loopLoads, FigureRange::Count},
    {"generated_eff", &DeviceModel::generatedEfficiency,
     FigureRange::Efficiency},
    {"vector_eff", &DeviceModel::vectorEfficiency, FigureRange::Efficiency},
    {"optimizer_eff", &DeviceModel::optimizerEfficiency,
     FigureRange::Efficiency},
    {"optimizer_vector_eff", &DeviceModel::optimizerVectorEfficiency,
     FigureRange::Efficiency},
    {"transpose_eff", &DeviceModel::transposeEfficiency,
     FigureRange::Efficiency},
};

// Every figure of DeviceModel is in the table, once.
static_assert(sizeof(DeviceModel) ==
                  sizeof(std::string) +
                      std::size(kFigureFields) * sizeof(double),
              "a DeviceModel figure is missing from kFigureFields");
constexpr bool figuresAreDistinct() {
  for (size_t i = 0; i < std::size(kFigureFields); ++i)
    for (size_t j = 0; j < i; ++j)
      if (kFigureFields[i].member == kFigureFields[j].member)
        return false;
  return true;
}
static_assert(figuresAreDistinct(), "a figure is in kFigureFields twice");

/// The most a count figure may be (sms, threads_per_sm, loop_loads): well
/// inside an int.
constexpr double kMaxCount = 1 << 20;

/// The name DeviceModels.def gives `figure`.
const char *nameOf(Figure figure) {
  for (const FigureField &field : kFigureFields)
    if (field.member == figure)
      return field.name;
  return "";
}

/// Puts `setting` in place of `model`'s figure of its name.
Status applyFigure(DeviceModel &model, const DeviceFigure &setting) {
  std::vector<std::string> names;
  for (const FigureField &field : kFigureFields) {
    names.push_back(field.name);
    if (setting.name != field.name)
      continue;
    const double value = setting.value;
    const bool inRange = std::isfinite(value) && value > 0 &&
                         (field.range != FigureRange::Count ||
                          (value == std::floor(value) && value <= kMaxCount)) &&
                         (field.range != FigureRange::Efficiency || value <= 1);
    if (!inRange) {
      const std::string wanted =
          field.range == FigureRange::Count
              ? "a whole number from 1 to " +
                    std::to_string(static_cast<int64_t>(kMaxCount))
          : field.range == FigureRange::Efficiency ? "a fraction in (0, 1]"
                                                   : "a positive number";
      char given[32];
      std::snprintf(given, sizeof(given), "%g", value);
      return ZERO_ERROR(kInvalidArgument, "figure " + setting.name + ": " +
                                              given + " is not " + wanted);
    }
    model.*field.member = value;
    return Status::ok();
  }
  const std::string closest = findClosestName(setting.name, names);
  return ZERO_ERROR(kInvalidArgument,
                    "the cost model has no figure '" + setting.name + "'" +
                        (closest.empty()
                             ? std::string()
                             : " (did you mean '" + closest + "'?)") +
                        "; its figures are those of DeviceModels.def");
}

/// Bytes in flight that no launch draws short of the copy bandwidth.
constexpr double kUnbounded = 1e12;

/// The fixed costs of a host function (cudaLaunchHostFunc's round trip)
/// and of a collective among several ranks (its latency).
constexpr double kHostFunctionSeconds = 10e-6;
constexpr double kCollectiveSeconds = 10e-6;

/// What one launch does, before it is priced.
struct Launch {
  std::string category;
  double flops = 0;
  double bytes = 0;
  /// Threads launched, the bytes one iteration of a thread loads, and the
  /// iterations of a loop that only loads (an in-thread reduction), whose
  /// next loads the compiler issues before the last arrive. A loop that
  /// stores every iteration (grid-stride, the optimizer's chunks) keeps one
  /// iteration's loads in flight: its stores may alias the next loads.
  double threads = 0;
  double bytesInFlight = 4;
  double loadOnlyIterations = 1;
  /// The fraction of the bandwidth its access pattern reaches, and the
  /// figure it is (copy_gbs itself for a streaming kernel).
  double efficiency = 1;
  Figure efficiencyFigure = &DeviceModel::copyGbs;
  /// The rate of its arithmetic, FLOP/s (0: none to speak of), and the
  /// figure that sets it.
  double flopRate = 0;
  Figure rateFigure = nullptr;
  /// A plain launch costs the GPU's launch_us; a host function or a copy
  /// engine transfer costs its own.
  double fixedSeconds = -1;
  /// For the host's, the link's and PCIe's work: the figure of its bytes
  /// per second.
  Figure bandwidthFigure = nullptr;
  /// Launches it takes: 0 for a reshape that is a view of its operand.
  int64_t count = 1;
};

class Planner {
public:
  Planner(const Schedule &schedule, const cuda::ComputePlan &plan,
          const DeviceModel &gpu)
      : schedule_(schedule), values_(schedule.values()), plan_(plan),
        gpu_(gpu) {}

  Status run(CostExplanation &out);

private:
  /// A launch's time, its fixed cost, and the figure that bounds it beyond
  /// that cost (launch_us where that cost is the larger part).
  struct Price {
    double seconds;
    double fixedSeconds;
    std::string bound;
  };
  Price price(const Launch &launch) const;
  /// Adds `launch`, which runs `instructions` (in stream order).
  void add(CostExplanation &out, const Launch &launch, int64_t times, bool comm,
           const std::vector<const Instruction *> &instructions) const;

  double tensorBytes(int64_t id) const {
    return static_cast<double>(values_.values[id].bytes());
  }
  double elementWidth(int64_t id) const {
    return static_cast<double>(getDTypeWidth(values_.values[id].dtype));
  }

  StatusOr<Launch> planInstruction(const Instruction &inst);
  StatusOr<Launch> planStructured(const Instruction &inst);
  Launch planMatmul(const Instruction &inst);
  Launch planFill(double bytes);
  Launch planStridedCopy(const Instruction &inst);
  Launch planRowProgram(const cuda::RowProgram &program);
  Launch planOptimizers(const std::vector<const Instruction *> &group);
  Launch planHost(const std::vector<const Instruction *> &group);
  Launch planCollective(const Instruction &inst);

  const Schedule &schedule_;
  const ValueTable &values_;
  const cuda::ComputePlan &plan_;
  const DeviceModel &gpu_;
};

/// Whether Matmul.cu multiplies these types with cuBLAS (its getBlasTypes):
/// same-typed f32, f64, bf16 or f16 operands, into their type or (16-bit)
/// f32.
bool usesCublas(DType a, DType b, DType c) {
  if (a != b)
    return false;
  switch (a) {
  case DType::F32:
  case DType::F64:
    return c == a;
  case DType::BF16:
  case DType::F16:
    return c == a || c == DType::F32;
  default:
    return false;
  }
}

/// Optimizers.cu's multi-tensor apply (the optimizer steps and the overflow
/// check): a block of 256 threads per chunk of 64K elements, at least one
/// per tensor.
constexpr double kOptimizerThreads = 256;
double getOptimizerBlocks(double numel) {
  return std::max(1.0, std::ceil(numel / 65536));
}

std::string categoryOf(OpCode code) {
  switch (code) {
  case OpCode::Map:
    return "map";
  case OpCode::Reduce:
  case OpCode::AnyNonFinite:
    return "reduce";
  case OpCode::Generic:
    return "generic";
  case OpCode::Transpose:
    return "transpose";
  case OpCode::Adam:
  case OpCode::Sgd:
    return "optimizer";
  case OpCode::Fill:
  case OpCode::Splat:
    return "fill";
  default:
    return "copy";
  }
}

Planner::Price Planner::price(const Launch &launch) const {
  if (launch.bandwidthFigure) {
    const double fixed = std::max(launch.fixedSeconds, 0.0);
    const double bandwidth = gpu_.*launch.bandwidthFigure * 1e9;
    return {fixed + launch.bytes / bandwidth, fixed,
            nameOf(launch.bandwidthFigure)};
  }
  const double fixed =
      launch.fixedSeconds >= 0 ? launch.fixedSeconds : gpu_.launchUs * 1e-6;
  // Little's law: the bandwidth a launch can draw is bounded by the loads
  // its resident threads keep in flight.
  const double resident =
      std::min(launch.threads, gpu_.sms * gpu_.threadsPerSm);
  const double inFlight =
      launch.bytesInFlight * std::min(launch.loadOnlyIterations,
                                      gpu_.loopLoads);
  const double drawn = resident * inFlight / (gpu_.latencyNs * 1e-9);
  const double streamed = gpu_.copyGbs * 1e9 * launch.efficiency;
  const double bandwidth = std::min(streamed, drawn);
  const double memory = bandwidth > 0 ? launch.bytes / bandwidth : 0;
  const double math = launch.flopRate > 0 ? launch.flops / launch.flopRate : 0;
  const double variable = std::max(memory, math);
  Figure bound = math > memory      ? launch.rateFigure
                 : drawn < streamed ? &DeviceModel::latencyNs
                                    : launch.efficiencyFigure;
  if (fixed >= variable && launch.fixedSeconds < 0)
    bound = &DeviceModel::launchUs;
  return {fixed + variable, fixed, nameOf(bound)};
}

void Planner::add(CostExplanation &out, const Launch &launch, int64_t times,
                  bool comm,
                  const std::vector<const Instruction *> &instructions) const {
  if (launch.count == 0)
    return;
  CostCategory &c = out.categories[launch.category];
  const Price priced = price(launch);
  const double ms = priced.seconds * 1e3 * static_cast<double>(times);
  const double bytes = launch.bytes * static_cast<double>(times);
  c.launches += times;
  c.flops += launch.flops * static_cast<double>(times);
  c.bytes += bytes;
  c.ms += ms;
  (comm ? out.commMs : out.computeMs) += ms;
  out.launches += times;
  const Instruction &first = *instructions.front();
  CostLaunch entry;
  entry.category = launch.category;
  entry.path = first.path;
  entry.op = first.op;
  entry.loc = first.loc;
  for (const Instruction *inst : instructions)
    entry.points.push_back(inst->point);
  entry.times = times;
  entry.bytes = bytes;
  entry.ms = ms;
  entry.fixedMs = priced.fixedSeconds * 1e3 * static_cast<double>(times);
  entry.bound = priced.bound;
  out.plan.push_back(std::move(entry));
}

Launch Planner::planMatmul(const Instruction &inst) {
  // ins(A [b,] m x k, B [b,] k x n) outs(C [b,] m x n): cuBLAS reads C
  // (beta = 1) and writes it.
  const ValueInfo &a = values_.values[inst.operands[0]];
  const ValueInfo &c = values_.values[inst.operands[2]];
  const double k = static_cast<double>(getGemmShape(inst, values_).k);
  const double mn = static_cast<double>(c.numel); // batch * m * n
  Launch launch;
  const bool batched = inst.code() == OpCode::BatchMatmul;
  std::string type = getDTypeName(a.dtype);
  Figure rate = &DeviceModel::gemmF32;
  if (StatusOr<bool> tf32 = roundsOperandsToTf32(inst); tf32.isOk() && *tf32) {
    type = "tf32";
    rate = &DeviceModel::gemmTf32;
  }
  switch (a.dtype) {
  case DType::F64:
    rate = &DeviceModel::gemmF64;
    break;
  case DType::BF16:
    rate = &DeviceModel::gemmBf16;
    break;
  case DType::F16:
    rate = &DeviceModel::gemmF16;
    break;
  default:
    break;
  }
  launch.category = (batched ? "batched_gemm_" : "gemm_") + type;
  launch.flops = 2 * mn * k;
  // A zero init is not read (beta = 0).
  launch.bytes = tensorBytes(inst.operands[0]) +
                 tensorBytes(inst.operands[1]) +
                 (inst.zeroInit ? 1 : 2) * tensorBytes(c.id);
  const ValueInfo &b = values_.values[inst.operands[1]];
  if (!usesCublas(a.dtype, b.dtype, c.dtype)) {
    // Matmul.cu's fallback kernel: a thread per output element, its k loop
    // in double.
    launch.category = "gemm_fallback";
    launch.threads = mn;
    launch.bytesInFlight = elementWidth(a.id) + elementWidth(b.id);
    launch.loadOnlyIterations = k;
    launch.flopRate = gpu_.f64Tflops * 1e12;
    launch.rateFigure = &DeviceModel::f64Tflops;
    return launch;
  }
  launch.flopRate = gpu_.*rate * 1e12 * (batched ? gpu_.batchedScale : 1.0);
  // The plain GEMMs set the type's rate; the batched ones, given it, their
  // scale.
  launch.rateFigure = batched ? &DeviceModel::batchedScale : rate;
  // cuBLAS keeps the memory system busy: its bytes go at copy bandwidth.
  launch.threads = gpu_.sms * gpu_.threadsPerSm;
  launch.bytesInFlight = kUnbounded;
  return launch;
}

StatusOr<Launch> Planner::planStructured(const Instruction &inst) {
  const ops::CheckedOp *checked = plan_.getCheck(inst);
  if (!checked)
    return ZERO_ERROR(kInternal, inst.path + ": not checked");
  StatusOr<cuda::LoopNest> nest =
      cuda::buildLoopNest(inst, values_, checked->body);
  if (!nest.isOk())
    return nest.status();
  StatusOr<cuda::GeneratedKernel> kernel =
      cuda::generateKernel(*nest, values_);
  if (!kernel.isOk())
    return kernel.status();
  const cuda::LaunchShape shape = cuda::getLaunchShape(
      *kernel, static_cast<int>(gpu_.sms), static_cast<int>(gpu_.threadsPerSm));
  Launch launch;
  launch.category = categoryOf(inst.code());
  const bool reduces = nest->numElements() > 1;
  // On the vector path (Codegen.h, "Vectors") each thread has its V
  // elements of every input in flight at once, a broadcast one's single
  // element aside.
  double inFlight = 0;
  for (const cuda::NestOperand &in : nest->inputs) {
    launch.bytes += tensorBytes(in.value);
    const bool broadcast = in.strides[nest->vectorLoop] == 0;
    inFlight += elementWidth(in.value) * (broadcast ? 1 : nest->vectorWidth);
  }
  for (size_t i = 0; i < nest->outputs.size(); ++i) {
    // A reduction starts from its destination; every result is written.
    if (reduces)
      launch.bytes += tensorBytes(nest->outputs[i].value);
    launch.bytes += tensorBytes(nest->results[i]);
  }
  // Every body op is one operation per iteration point, priced at the
  // double rate (f32 values compute in float, which is faster: the maps
  // are bound by their bytes either way).
  const double points = static_cast<double>(nest->numPoints()) *
                        static_cast<double>(nest->numElements());
  launch.flops = points * static_cast<double>(nest->body->ops.size());
  launch.flopRate = gpu_.f64Tflops * 1e12;
  launch.rateFigure = &DeviceModel::f64Tflops;
  launch.threads = static_cast<double>(shape.blocks) * shape.threads;
  if (nest->sequential)
    launch.threads = 1;
  launch.bytesInFlight = std::max(inFlight, 1.0);
  launch.loadOnlyIterations = static_cast<double>(nest->numElements()) /
                              static_cast<double>(nest->pointThreads);
  // The vector path takes the arena's alignment for granted (buffer
  // offsets are multiples of the schedule's memory.alignment, 64 from
  // zero-opt).
  launch.efficiencyFigure = nest->vectorWidth > 1
                                ? &DeviceModel::vectorEfficiency
                                : &DeviceModel::generatedEfficiency;
  launch.efficiency = gpu_.*launch.efficiencyFigure;
  return launch;
}

Launch Planner::planRowProgram(const cuda::RowProgram &program) {
  // One kernel, named (as the trace names it) by its first instruction.
  Launch launch;
  const Instruction *first = nullptr;
  for (const cuda::RowStep &step : program.steps)
    if (step.inst) {
      first = step.inst;
      break;
    }
  launch.category = first ? categoryOf(first->code()) : "map";
  double inFlight = 0;
  for (const cuda::RowInput &in : program.inputs) {
    launch.bytes += tensorBytes(in.value);
    if (in.shape == cuda::RowShape::Row)
      inFlight += elementWidth(in.value);
  }
  for (int64_t id : program.outputs())
    launch.bytes += tensorBytes(id);
  // Each thread loads its elements of the row into registers at once.
  launch.threads = static_cast<double>(program.numPoints) * program.threads;
  launch.bytesInFlight =
      std::max(inFlight, 1.0) *
      static_cast<double>(program.elementsPerThread());
  launch.efficiencyFigure = &DeviceModel::generatedEfficiency;
  launch.efficiency = gpu_.generatedEfficiency;
  return launch;
}

Launch Planner::planOptimizers(const std::vector<const Instruction *> &group) {
  // Optimizers.cu: one launch for the group, one block of 256 threads per
  // chunk of 64K elements. A step whose tensors all allow the vector path
  // updates four elements per thread and iteration with vector loads, at
  // optimizer_vector_eff, bounded by the loads in flight. The others go
  // one element at a time at optimizer_eff, that kernel's measured rate as
  // it launches (its grid included).
  Launch launch;
  launch.category = "optimizer";
  double blocks = 0, vectorBytes = 0, loadBytes = 0;
  for (const cuda::OptimizerStep &step : cuda::getOptimizerSteps(group)) {
    const Instruction &inst = *step.update;
    // Reads the grad (operand 1); reads and writes the param and states
    // (the tensor results); writes the cast.
    std::vector<int64_t> tensors = {inst.operands[1]};
    double elementBytes = elementWidth(inst.operands[1]);
    double elementLoads = elementBytes;
    for (int64_t id : inst.results)
      if (values_.values[id].isTensor) {
        tensors.push_back(id);
        elementBytes += 2 * elementWidth(id);
        elementLoads += elementWidth(id);
      }
    if (step.cast) {
      tensors.push_back(step.cast->results[0]);
      elementBytes += elementWidth(step.cast->results[0]);
    }
    // (An f64 parameter, among the tensors, takes the one-element path.)
    bool vector = true;
    for (int64_t id : tensors)
      vector = vector &&
               cuda::isVectorOptimizerTensor(
                   values_.values[id].dtype,
                   static_cast<uint64_t>(schedule_.bufferOf(id).offset));
    const double numel =
        static_cast<double>(values_.values[inst.results[0]].numel);
    launch.bytes += elementBytes * numel;
    if (vector) {
      vectorBytes += elementBytes * numel;
      loadBytes = std::max(loadBytes, 4 * elementLoads);
    }
    blocks += getOptimizerBlocks(numel);
  }
  launch.threads = blocks * kOptimizerThreads;
  // The bytes of each path at its efficiency: one weighted efficiency for
  // the launch.
  const double vectorShare = launch.bytes > 0 ? vectorBytes / launch.bytes : 0;
  launch.efficiency = 1 / (vectorShare / gpu_.optimizerVectorEfficiency +
                           (1 - vectorShare) / gpu_.optimizerEfficiency);
  launch.efficiencyFigure = vectorShare >= 0.5
                                ? &DeviceModel::optimizerVectorEfficiency
                                : &DeviceModel::optimizerEfficiency;
  launch.bytesInFlight = vectorShare > 0 ? loadBytes : kUnbounded;
  return launch;
}

Launch Planner::planHost(const std::vector<const Instruction *> &group) {
  // One host function on the stream: the CPU's kernels over host memory.
  Launch launch;
  launch.category = "host";
  for (const Instruction *inst : group) {
    for (int64_t id : inst->operands)
      if (values_.values[id].isTensor)
        launch.bytes += tensorBytes(id);
    for (int64_t id : inst->results)
      if (values_.values[id].isTensor)
        launch.bytes += tensorBytes(id);
  }
  launch.fixedSeconds = kHostFunctionSeconds;
  launch.bandwidthFigure = &DeviceModel::hostGbs;
  return launch;
}

Launch Planner::planCollective(const Instruction &inst) {
  // A ring moves (n - 1) / n of the buffer per rank, twice for all-reduce.
  const double world = static_cast<double>(schedule_.worldSize());
  // A quantized collective moves its packed blocks.
  const double rankBytes =
      inst.quantize ? static_cast<double>(inst.quantize->packedBytes)
                    : static_cast<double>(inst.bucketNumel) *
                          static_cast<double>(getDTypeWidth(inst.dtype));
  const double group =
      inst.gridAxes.empty()
          ? world
          : static_cast<double>(schedule_.groupSize(inst.gridAxes));
  Launch launch;
  launch.category = "collective";
  double moved = 0;
  if (inst.kind == Instruction::Kind::AllReduce)
    moved = 2 * rankBytes * (group - 1) / group;
  else
    moved = rankBytes * (group - 1);
  launch.bytes = moved;
  launch.fixedSeconds = group > 1 ? kCollectiveSeconds : 0;
  launch.bandwidthFigure = &DeviceModel::linkGbs;
  return launch;
}

Launch Planner::planFill(double bytes) {
  // TensorOps.cu: 16-byte stores, one per thread.
  Launch launch;
  launch.category = "fill";
  launch.bytes = bytes;
  launch.threads = std::min(std::ceil(bytes / 16), 65536.0 * 256);
  launch.bytesInFlight = 16;
  return launch;
}

Launch Planner::planStridedCopy(const Instruction &inst) {
  // DataMovement.cu's plan of the copy ops::describeStridedCopy makes of the
  // op (chooseCopyKind): one cudaMemcpyAsync, 32 x 32 tiles (blocks of
  // 32 x 8 threads, four elements each), or the strided copy of elements
  // widened as far as the arena offsets allow, one per thread and
  // iteration.
  const ops::StridedCopy copy = ops::describeStridedCopy(inst, values_);
  ops::CopyShape shape =
      ops::simplifyCopy(copy.shape, copy.dstStrides, copy.srcStrides);
  Launch launch;
  launch.category = inst.code() == OpCode::Transpose ? "transpose" : "copy";
  // Reads the copied elements (a broadcast its source once), writes them.
  double numel = 1;
  for (int64_t size : copy.shape)
    numel *= static_cast<double>(size);
  const double written = numel * static_cast<double>(copy.width);
  launch.bytes = std::min(written, tensorBytes(copy.source)) + written;
  switch (cuda::chooseCopyKind(shape, copy.width)) {
  case cuda::CopyKind::Empty:
    launch.count = 0;
    return launch;
  case cuda::CopyKind::Memcpy:
    launch.threads = gpu_.sms * gpu_.threadsPerSm;
    launch.bytesInFlight = kUnbounded;
    return launch;
  case cuda::CopyKind::Transpose:
    launch.threads = std::min(numel / 4, 65535.0 * 32 * 32 * 8);
    launch.bytesInFlight = 4.0 * static_cast<double>(copy.width);
    launch.efficiencyFigure = &DeviceModel::transposeEfficiency;
    launch.efficiency = gpu_.transposeEfficiency;
    return launch;
  case cuda::CopyKind::Generic:
    break;
  }
  // The arenas start 256-byte aligned: an element's alignment is its
  // buffer offset's.
  const uint64_t dstAddress = static_cast<uint64_t>(
      schedule_.bufferOf(copy.result).offset + copy.dstOffset * copy.width);
  const uint64_t srcAddress = static_cast<uint64_t>(
      schedule_.bufferOf(copy.source).offset + copy.srcOffset * copy.width);
  const int64_t width =
      ops::widenCopyElements(shape, copy.width, dstAddress, srcAddress);
  launch.threads =
      std::min(written / static_cast<double>(width), 65536.0 * 256);
  launch.bytesInFlight = static_cast<double>(width);
  return launch;
}

StatusOr<Launch> Planner::planInstruction(const Instruction &inst) {
  Launch launch;
  switch (inst.code()) {
  case OpCode::Matmul:
  case OpCode::BatchMatmul:
    return planMatmul(inst);
  case OpCode::Map:
  case OpCode::Reduce:
  case OpCode::Generic:
    return planStructured(inst);
  case OpCode::Adam:
  case OpCode::Sgd:
    return planOptimizers({&inst});
  case OpCode::AnyNonFinite: {
    // Optimizers.cu: one launch over every input, chunked as the optimizer
    // is, one element per thread and iteration.
    launch.category = "reduce";
    double blocks = 0, width = 0;
    for (int64_t id : inst.operands) {
      launch.bytes += tensorBytes(id);
      blocks +=
          getOptimizerBlocks(static_cast<double>(values_.values[id].numel));
      width = std::max(width, elementWidth(id));
    }
    launch.threads = blocks * kOptimizerThreads;
    launch.bytesInFlight = width;
    return launch;
  }
  case OpCode::Transpose:
  case OpCode::Broadcast:
  case OpCode::ExtractSlice:
  case OpCode::InsertSlice:
    return planStridedCopy(inst);
  case OpCode::Fill:
  case OpCode::Splat:
    return planFill(tensorBytes(inst.results[0]));
  case OpCode::Copy:
  case OpCode::CollapseShape:
  case OpCode::ExpandShape:
  case OpCode::LocalShard: {
    // A copy, one element per thread (a view of the same memory, which
    // reshapes usually are, moves nothing).
    const ValueInfo &out = values_.values[inst.results[0]];
    const BufferInfo &to = schedule_.bufferOf(out.id);
    const BufferInfo &from = schedule_.bufferOf(inst.operands[0]);
    if ((inst.code() == OpCode::CollapseShape ||
         inst.code() == OpCode::ExpandShape) &&
        to.space == from.space && to.offset == from.offset)
    {
      launch.category = "copy";
      launch.count = 0;
      return launch;
    }
    launch.category = "copy";
    const double read = inst.code() == OpCode::InsertSlice
                            ? tensorBytes(inst.operands[0])
                            : std::min(tensorBytes(inst.operands[0]),
                                       tensorBytes(out.id));
    launch.bytes = read + tensorBytes(out.id);
    launch.threads =
        std::min(static_cast<double>(out.numel), 65536.0 * 256);
    launch.bytesInFlight = elementWidth(out.id);
    return launch;
  }
  default:
    // Scalar ops, tensor.extract, tensor.from_elements: one small kernel
    // each. A scalar constant's register is written at load (no launch).
    if ((inst.code() == OpCode::Constant ||
         inst.code() == OpCode::FromElements) &&
        values_.values[inst.results[0]].isTensor)
      return planFill(tensorBytes(inst.results[0]));
    launch.category = "scalar";
    if (inst.code() == OpCode::Constant)
      launch.count = 0;
    return launch;
  }
}

Status Planner::run(CostExplanation &out) {
  const std::optional<LoopInfo> &loop = schedule_.loop();
  for (size_t si = 0; si < schedule_.streams().size(); ++si) {
    const std::vector<Instruction> &list = schedule_.streams()[si].instructions;
    // An instruction of the loop's body runs loop->count times a step.
    auto times = [&](size_t i) -> int64_t {
      return loop && loop->inBody(si, i) ? loop->count : 1;
    };
    for (size_t i = 0; i < list.size(); ++i) {
      const Instruction &inst = list[i];
      if (inst.isCollective()) {
        add(out, planCollective(inst), times(i), /*comm=*/true, {&inst});
        continue;
      }
      if (inst.kind == Instruction::Kind::Swap) {
        Launch swap;
        swap.category = "swap";
        for (int64_t id : inst.operands)
          swap.bytes += tensorBytes(id);
        swap.fixedSeconds = 0;
        swap.bandwidthFigure = &DeviceModel::pcieGbs;
        add(out, swap, times(i), /*comm=*/true, {&inst});
        continue;
      }
      // The groups the device prepares.
      const cuda::PlannedGroup *group = plan_.getGroup(si, i);
      if (!group)
        continue;
      const std::vector<const Instruction *> instructions =
          plan_.getInstructions(*group);
      const int64_t repeats = times(i); // no group crosses the loop's bounds
      i += group->count - 1;
      switch (group->kind) {
      case cuda::PlannedGroup::Kind::Host:
        add(out, planHost(instructions), repeats, false, instructions);
        continue;
      case cuda::PlannedGroup::Kind::Optimizers:
        add(out, planOptimizers(instructions), repeats, false, instructions);
        continue;
      case cuda::PlannedGroup::Kind::Rows:
        add(out, planRowProgram(*group->rows), repeats, false, instructions);
        continue;
      case cuda::PlannedGroup::Kind::Single:
        break;
      }
      // Its GEMM does not read what it fills (Instruction::zeroInit).
      if (inst.skippedZeroFill)
        continue;
      StatusOr<Launch> launch = planInstruction(inst);
      if (!launch.isOk())
        return launch.status();
      add(out, *launch, repeats, false, {&inst});
    }
  }
  out.totalMs = std::max(out.computeMs, out.commMs);
  return Status::ok();
}

} // namespace

std::vector<std::string> getCostModelDevices() {
  std::vector<std::string> names;
  for (const DeviceModel &model : kDeviceModels)
    names.push_back(model.name);
  return names;
}

StatusOr<CostExplanation>
explainSchedule(const Schedule &schedule, const std::string &device,
                const std::vector<DeviceFigure> &settings) {
  const DeviceModel *found = nullptr;
  std::string known;
  for (const DeviceModel &m : kDeviceModels) {
    known += (known.empty() ? "" : ", ") + m.name;
    if (device == m.name)
      found = &m;
  }
  if (!found)
    return ZERO_ERROR(kInvalidArgument, "the cost model knows no GPU '" +
                                            device + "' (it knows " + known +
                                            ")");
  DeviceModel model = *found;
  for (size_t i = 0; i < settings.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (settings[j].name == settings[i].name)
        return ZERO_ERROR(kInvalidArgument,
                          "figure " + settings[i].name + " is set twice");
    ZERO_RETURN_IF_ERROR(applyFigure(model, settings[i]));
  }
  CostExplanation explanation;
  explanation.device = device;
  explanation.settings = settings;
  for (const FigureField &field : kFigureFields)
    explanation.figures.push_back({field.name, model.*field.member});
  // The device's groups and checks, with the switches a run here would
  // have.
  StatusOr<cuda::ComputePlanOptions> options = cuda::getComputePlanOptions();
  if (!options.isOk())
    return options.status();
  StatusOr<cuda::ComputePlan> plan =
      cuda::ComputePlan::create(schedule, *options);
  if (!plan.isOk())
    return plan.status();
  Planner planner(schedule, *plan, model);
  ZERO_RETURN_IF_ERROR(planner.run(explanation));
  return explanation;
}

} // namespace zero::runtime
