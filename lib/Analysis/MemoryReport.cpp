//===- MemoryReport.cpp - the plan's report and budget check --------------===//
//
// What a user reads before a run: the JSON report of docs/passes/
// plan-memory.md (model states as ZeRO's formulas count them, peaks per
// category and space, bytes moved) and the error when the device arena
// exceeds the budget, naming what dominates the peak.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/CommunicationVolume.h"
#include "zero/Analysis/ComputeVolume.h"
#include "zero/Analysis/MemoryPlan.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::zero;

/// The parameter arguments of `func` (not their optimizer states).
static SmallVector<BlockArgument> getParameterArguments(func::FuncOp func) {
  SmallVector<BlockArgument> params;
  if (func.isExternal())
    return params;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (func.getArgAttr(i, ZeroDialect::getParamAttrName()) &&
        !func.getArgAttr(i, ZeroDialect::getStateAttrName()))
      params.push_back(arg);
  }
  return params;
}

/// Elements of the full parameter of argument `arg`, or nothing if they do
/// not fit int64.
static std::optional<int64_t> getFullNumel(func::FuncOp func,
                                           BlockArgument arg) {
  if (auto layout = func.getArgAttrOfType<LayoutAttr>(
          arg.getArgNumber(), ZeroDialect::getLayoutAttrName()))
    return layout.getNumel();
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return getCheckedNumElements(type.getShape());
}

std::optional<int64_t> zero::countParameters(func::FuncOp func) {
  std::optional<int64_t> count = 0;
  for (BlockArgument arg : getParameterArguments(func)) {
    std::optional<int64_t> numel = getFullNumel(func, arg);
    count = numel && count ? llvm::checkedAdd(*count, *numel) : std::nullopt;
  }
  return count;
}

/// Bytes of the full model's parameters in their own element types, or
/// nothing if they do not fit int64.
static std::optional<int64_t> getFullParameterBytes(func::FuncOp func) {
  std::optional<int64_t> bytes = 0;
  for (BlockArgument arg : getParameterArguments(func)) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    FailureOr<int64_t> width = getElementByteWidth(type.getElementType());
    if (failed(width))
      continue;
    std::optional<int64_t> numel = getFullNumel(func, arg);
    if (!numel)
      return std::nullopt;
    addCheckedProduct(bytes, *numel, *width);
  }
  return bytes;
}

/// Bytes of the full (unreduced) gradient of every parameter that a gradient
/// reduction names, once per parameter: what stages 0-1 hold whole until the
/// accumulation boundary. Nothing if they do not fit int64.
static std::optional<int64_t> getFullGradientBytes(func::FuncOp func) {
  llvm::StringMap<int64_t> bytesByName;
  bool overflow = false;
  func.walk([&](Operation *start) {
    if (!isa<ReduceScatterStartOp, AllReduceStartOp>(start))
      return;
    auto names =
        start->getAttrOfType<ArrayAttr>(ZeroDialect::getGradsAttrName());
    if (!names)
      return;
    for (auto [name, operand] :
         llvm::zip(names.getAsValueRange<StringAttr>(), start->getOperands())) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || !type.hasStaticShape() ||
          failed(getElementByteWidth(type.getElementType())))
        continue;
      FailureOr<int64_t> size = getTensorByteSize(type);
      overflow |= failed(size);
      int64_t &bytes = bytesByName[name];
      bytes = std::max(bytes, size.value_or(0));
    }
  });
  if (overflow)
    return std::nullopt;
  std::optional<int64_t> total = 0;
  for (const auto &entry : bytesByName)
    addCheckedProduct(total, entry.getValue());
  return total;
}

FailureOr<int64_t> zero::parseByteSize(StringRef text) {
  StringRef rest = text.trim();
  StringRef whole = rest.take_while(llvm::isDigit);
  rest = rest.drop_front(whole.size());
  StringRef fraction;
  if (rest.consume_front(".")) {
    fraction = rest.take_while(llvm::isDigit);
    rest = rest.drop_front(fraction.size());
  }
  if (whole.empty() && fraction.empty())
    return failure();
  rest = rest.ltrim();
  static const std::pair<StringRef, unsigned __int128> units[] = {
      {"", 1},
      {"b", 1},
      {"kb", 1000},
      {"mb", 1000ull * 1000},
      {"gb", 1000ull * 1000 * 1000},
      {"tb", 1000ull * 1000 * 1000 * 1000},
      {"kib", 1ull << 10},
      {"mib", 1ull << 20},
      {"gib", 1ull << 30},
      {"tib", 1ull << 40}};
  std::string unit = rest.lower();
  const auto *found = llvm::find_if(
      units, [&](const auto &entry) { return entry.first == unit; });
  if (found == std::end(units))
    return failure();
  // Exact decimal arithmetic: 1.5GB is 1500000000 bytes.
  if (whole.size() > 19 || fraction.size() > 18)
    return failure();
  unsigned __int128 integer = 0, numerator = 0, denominator = 1;
  for (char c : whole)
    integer = integer * 10 + (c - '0');
  for (char c : fraction) {
    numerator = numerator * 10 + (c - '0');
    denominator *= 10;
  }
  unsigned __int128 bytes =
      integer * found->second + numerator * found->second / denominator;
  if (bytes > static_cast<unsigned __int128>(INT64_MAX))
    return failure();
  return static_cast<int64_t>(bytes);
}

/// "512 bytes", "1.50 KiB".
std::string zero::formatShortByteSize(int64_t bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes == 1)
    return "1 byte";
  if (bytes < 1024)
    return llvm::formatv("{0} bytes", bytes).str();
  double scaled = bytes;
  unsigned unit = 0;
  for (scaled /= 1024; scaled >= 1024 && unit + 1 < std::size(units); ++unit)
    scaled /= 1024;
  return llvm::formatv("{0:F2} {1}", scaled, units[unit]).str();
}

std::string zero::formatByteSize(int64_t bytes) {
  if (bytes < 1024)
    return formatShortByteSize(bytes);
  return llvm::formatv("{0} ({1} bytes)", formatShortByteSize(bytes), bytes)
      .str();
}

/// The `recompute` section: what zero-checkpoint-activations recorded.
static void writeRecompute(llvm::json::OStream &json, DictionaryAttr attr) {
  auto getInt = [&](StringRef key) -> int64_t {
    auto value = attr.getAs<IntegerAttr>(key);
    return value ? value.getInt() : 0;
  };
  if (auto choice = attr.getAs<StringAttr>("choice"))
    json.attribute("choice", choice.getValue());
  json.attributeArray("segments", [&] {
    if (auto ids = attr.getAs<DenseI64ArrayAttr>("segments"))
      for (int64_t id : ids.asArrayRef())
        json.value(id);
  });
  json.attribute("num_segments", getInt("num_segments"));
  int64_t stepFlops = getInt("step_flops");
  int64_t recomputeFlops = getInt("recompute_flops");
  json.attribute("step_flops", stepFlops);
  json.attribute("recompute_flops", recomputeFlops);
  json.attribute("fraction",
                 stepFlops > 0 ? static_cast<double>(recomputeFlops) / stepFlops
                               : 0.0);
  if (attr.get("trial_plans")) {
    json.attribute("trial_plans", getInt("trial_plans"));
    auto fits = attr.getAs<BoolAttr>("fits");
    json.attribute("fits", fits && fits.getValue());
  }
}

LogicalResult MemoryPlan::writeReport(raw_ostream &os, int64_t stage,
                                      int64_t worldSize) const {
  using Category = BufferCategory;
  // Sums of buffers fit int64 (checkArenaBounds); the full-model sizes and
  // the communication volume are checked here.
  int64_t parameters = getResidentBytes(Category::Parameter);
  // Stages 0-1 hold each full gradient until the accumulation boundary (the
  // plan counts it as a buffer in flight to its reduction); stages 2-3 keep
  // only the reduced shard. The model states count what ZeRO's formulas
  // count: 2 bytes per element of a 16-bit gradient, whole or sharded.
  std::optional<int64_t> gradients = stage <= 1
                                         ? getFullGradientBytes(func)
                                         : getResidentBytes(Category::Gradient);
  int64_t states = getResidentBytes(Category::OptimizerState);
  Peak devicePeak = getMaxLive(MemorySpace::Device);
  FailureOr<CommunicationVolume> volume =
      computeCommunicationVolume(func, worldSize);
  if (failed(volume))
    return failure();
  FailureOr<ComputeVolume> compute = computeComputeVolume(func);
  if (failed(compute))
    return failure();
  // What leaves and enters a node: every local rank's crossing bytes.
  std::optional<int64_t> interNodeSentPerNode = 0, interNodeReceivedPerNode = 0;
  for (const CommunicationVolume::Crossing &crossing :
       volume->interNodeByLocalRank) {
    addCheckedProduct(interNodeSentPerNode, crossing.allGather);
    addCheckedProduct(interNodeSentPerNode, crossing.reduceScatter);
    addCheckedProduct(interNodeSentPerNode, crossing.allReduce);
    addCheckedProduct(interNodeReceivedPerNode, crossing.received);
  }
  if (!interNodeSentPerNode || !interNodeReceivedPerNode)
    return func.emitError("the inter-node bytes of a node per step do not "
                          "fit int64");
  std::optional<int64_t> fullParameterBytes = getFullParameterBytes(func);
  std::optional<int64_t> numParameters = countParameters(func);
  std::optional<int64_t> modelStates = parameters;
  if (gradients)
    addCheckedProduct(modelStates, *gradients);
  addCheckedProduct(modelStates, states);
  if (!gradients || !fullParameterBytes || !numParameters || !modelStates)
    return func.emitError("the model's size for the memory report does not "
                          "fit int64 bytes");

  llvm::json::OStream json(os, /*IndentSize=*/2);
  auto writePoint = [&](int64_t point) {
    Operation *op = getProgram()[point];
    json.attribute("point", point);
    json.attribute("op", op->getName().getStringRef());
    json.attribute("loc", formatLocation(op->getLoc()));
  };
  json.object([&] {
    json.attribute("stage", stage);
    json.attribute("world_size", worldSize);
    json.attribute("num_parameters", *numParameters);
    json.attributeObject("per_rank_bytes", [&] {
      json.attribute("parameters", parameters);
      json.attribute("gradients", *gradients);
      json.attribute("optimizer_states", states);
      json.attribute("model_states", *modelStates);
      json.attribute("inputs", getResidentBytes(Category::Input));
      json.attribute("activations_peak",
                     getMaxLive(std::nullopt, Category::Activation).bytes);
      json.attribute("communication_buffers_peak",
                     getMaxLive(std::nullopt, Category::Communication).bytes);
      // hpZ's secondary partition: every shard, each live from its
      // parameter's first gather to its last.
      if (int64_t secondary = getRoleBytes("secondary"))
        json.attribute("secondary_partition", secondary);
      json.attribute("max_live", devicePeak.bytes);
      json.attribute("peak", getArenaSize(MemorySpace::Device));
      for (MemorySpace space : kMemorySpaces)
        json.attribute(getMemorySpaceName(space), getArenaSize(space));
    });
    json.attributeObject("communication_bytes_per_step", [&] {
      json.attribute("all_gather", volume->allGather);
      json.attribute("reduce_scatter", volume->reduceScatter);
      json.attribute("all_reduce", volume->allReduce);
      json.attribute("total", volume->getCollectiveTotal());
      json.attribute("sent", volume->sent);
      json.attribute("received", volume->received);
      json.attribute("full_parameter_bytes", *fullParameterBytes);
      if (*fullParameterBytes > 0)
        json.attribute("ratio_to_parameter_bytes",
                       static_cast<double>(volume->getCollectiveTotal()) /
                           *fullParameterBytes);
      json.attribute("host_to_device", volume->hostToDevice);
      json.attribute("device_to_host", volume->deviceToHost);
      json.attribute("nvme_read", volume->nvmeRead);
      json.attribute("nvme_write", volume->nvmeWrite);
      // On several nodes, the ring bytes by where they go, per local rank
      // (the same on every node), and what leaves and enters one node.
      json.attribute("ranks_per_node", volume->ranksPerNode);
      if (volume->ranksPerNode == worldSize)
        return;
      // Every rank sends each collective's ring bytes; what of them goes to
      // or comes from another node depends on the rank's place in its node.
      using Crossing = CommunicationVolume::Crossing;
      auto writeSplit = [&](const char *key, bool inter) {
        json.attributeObject(key, [&] {
          auto perLocalRank = [&](const char *name, int64_t total,
                                  int64_t (*across)(const Crossing &)) {
            json.attributeArray(name, [&] {
              for (const Crossing &crossing : volume->interNodeByLocalRank)
                json.value(inter ? across(crossing) : total - across(crossing));
            });
          };
          perLocalRank("all_gather", volume->sentAllGather,
                       [](const Crossing &c) { return c.allGather; });
          perLocalRank("reduce_scatter", volume->sentReduceScatter,
                       [](const Crossing &c) { return c.reduceScatter; });
          perLocalRank("all_reduce", volume->sentAllReduce,
                       [](const Crossing &c) { return c.allReduce; });
          perLocalRank("sent", volume->sent,
                       [](const Crossing &c) { return c.getSent(); });
          perLocalRank("received", volume->received,
                       [](const Crossing &c) { return c.received; });
        });
      };
      writeSplit("intra_node", false);
      writeSplit("inter_node", true);
      json.attributeObject("inter_node_per_node", [&] {
        json.attribute("sent", *interNodeSentPerNode);
        json.attribute("received", *interNodeReceivedPerNode);
      });
    });
    json.attributeObject("compute", [&] {
      json.attributeObject("gemm_flops", [&] {
        json.attribute("f32", compute->gemmFlopsF32);
        json.attribute("tf32", compute->gemmFlopsTf32);
        json.attribute("bf16", compute->gemmFlopsBf16);
        json.attribute("f16", compute->gemmFlopsF16);
        json.attribute("f64", compute->gemmFlopsF64);
      });
      json.attribute("gemms", compute->gemms);
      json.attribute("transposes_feeding_gemm",
                     compute->transposesFeedingGemm);
    });
    json.attributeObject("memory_spaces", [&] {
      for (MemorySpace space : kMemorySpaces) {
        json.attributeObject(getMemorySpaceName(space), [&] {
          json.attribute("arena", getArenaSize(space));
          json.attribute("parameters",
                         getResidentBytes(Category::Parameter, space));
          json.attribute("gradients",
                         getResidentBytes(Category::Gradient, space));
          json.attribute("optimizer_states",
                         getResidentBytes(Category::OptimizerState, space));
          json.attribute("inputs", getResidentBytes(Category::Input, space));
          json.attribute("activations_peak",
                         getMaxLive(space, Category::Activation).bytes);
          json.attribute("communication_buffers_peak",
                         getMaxLive(space, Category::Communication).bytes);
          json.attribute("max_live", getMaxLive(space).bytes);
        });
      }
    });
    json.attributeObject("peak_at", [&] { writePoint(devicePeak.point); });
    json.attributeArray("live_at_peak", [&] {
      SmallVector<unsigned> live =
          getLiveBuffers(MemorySpace::Device, devicePeak.point);
      for (unsigned index : ArrayRef(live).take_front(10)) {
        const PlannedBuffer &buffer = buffers[index];
        json.object([&] {
          json.attribute("name", buffer.name);
          json.attribute("category", getBufferCategoryName(buffer.category));
          if (!buffer.role.empty())
            json.attribute("role", buffer.role);
          json.attribute("bytes", buffer.size);
          json.attribute("offset", buffer.offset);
        });
      }
    });
    json.attributeArray("contiguous_gradient_buckets", [&] {
      for (const GradientRegion &region : regions) {
        json.object([&] {
          json.attribute("op", describeOp(region.startOp));
          json.attribute("space", getMemorySpaceName(region.space));
          json.attribute("offset", region.offset);
          json.attribute("bytes", region.size);
          json.attribute("first_point", region.start);
          json.attribute("last_point", region.end);
        });
      }
    });
    json.attributeObject("options", [&] {
      json.attribute("contiguous_gradients", options.contiguousGradients);
      json.attribute("alignment", options.alignment);
      if (!options.largestFirst.empty())
        json.attributeArray("largest_first", [&] {
          for (MemorySpace space : options.largestFirst)
            json.value(getMemorySpaceName(space));
        });
    });
    if (auto recompute = func->getAttrOfType<DictionaryAttr>(
            ZeroDialect::getRecomputeAttrName()))
      json.attributeObject("recompute",
                           [&] { writeRecompute(json, recompute); });
  });
  os << "\n";
  return success();
}

LogicalResult MemoryPlan::checkBudget(MemorySpace space, int64_t budget) const {
  int64_t needed = getArenaSize(space);
  if (needed <= budget)
    return success();
  Peak peak = getMaxLive(space);
  Operation *peakOp = getProgram()[peak.point];

  // The category with the most bytes live at the peak.
  int64_t byCategory[kNumBufferCategories] = {};
  SmallVector<unsigned> live = getLiveBuffers(space, peak.point);
  for (unsigned index : live)
    byCategory[static_cast<unsigned>(buffers[index].category)] +=
        buffers[index].size;
  unsigned dominant = 0;
  for (unsigned c = 1; c < kNumBufferCategories; ++c)
    if (byCategory[c] > byCategory[dominant])
      dominant = c;

  std::string contributors;
  llvm::raw_string_ostream list(contributors);
  llvm::interleaveComma(ArrayRef(live).take_front(5), list, [&](unsigned i) {
    list << buffers[i].name << " " << formatShortByteSize(buffers[i].size);
  });
  if (live.size() > 5)
    list << ", and " << live.size() - 5 << " more";

  // Reported at the peak op: the step's signature, the function's own line,
  // can be tens of kilobytes long.
  InFlightDiagnostic diag =
      peakOp->emitError()
      << "the plan needs " << formatByteSize(needed) << " of "
      << getMemorySpaceName(space) << " memory, "
      << formatByteSize(needed - budget) << " more than the budget of "
      << formatByteSize(budget) << "; the peak (at '" << peakOp->getName()
      << "' " << formatLocation(peakOp->getLoc()) << ") is dominated by "
      << getBufferCategoryName(static_cast<BufferCategory>(dominant)) << " ("
      << formatShortByteSize(byCategory[dominant]) << " of "
      << formatShortByteSize(peak.bytes) << " live): " << contributors;
  diag.attachNote() << "in the training step '@" << func.getSymName() << "'";
  // What recomputation was tried: the automatic choice ends here with every
  // segment recomputed when no choice fits.
  auto recompute =
      func->getAttrOfType<DictionaryAttr>(ZeroDialect::getRecomputeAttrName());
  auto ids = recompute ? recompute.getAs<DenseI64ArrayAttr>("segments")
                       : DenseI64ArrayAttr();
  auto numSegments =
      recompute ? recompute.getAs<IntegerAttr>("num_segments") : IntegerAttr();
  auto choice =
      recompute ? recompute.getAs<StringAttr>("choice") : StringAttr();
  auto fits = recompute ? recompute.getAs<BoolAttr>("fits") : BoolAttr();
  if (space == MemorySpace::Device && !recompute) {
    bool segmented = false;
    func.walk([&](Operation *op) {
      if (!op->hasAttr(ZeroDialect::getSegmentAttrName()))
        return WalkResult::advance();
      segmented = true;
      return WalkResult::interrupt();
    });
    if (segmented)
      diag.attachNote() << "the step has checkpointing segments and keeps "
                           "all their activations: "
                           "--zero-checkpoint-activations=auto recomputes the "
                           "fewest segments that fit the budget";
  }
  if (space == MemorySpace::Device && ids && numSegments && choice) {
    auto trials = recompute.getAs<IntegerAttr>("trial_plans");
    if (choice.getValue() == "auto" && fits && !fits.getValue() && trials)
      diag.attachNote() << "activation checkpointing (auto) recomputes every "
                           "segment that keeps activations ("
                        << ids.size() << " of " << numSegments.getInt()
                        << ") and the step still does not fit; no number of "
                           "them did in "
                        << trials.getInt() << " trial plans";
    else
      diag.attachNote() << "activation checkpointing recomputes " << ids.size()
                        << " of " << numSegments.getInt() << " segments";
  }
  return failure();
}
