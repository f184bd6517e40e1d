//===- MemoryTimeline.cpp - a picture of the memory plan ------------------===//
//
// One panel per memory space in use: the bytes live at each program point
// as a step chart stacked by category (getLiveBytesByPoint, the numbers of
// the report's max_live and peaks), the phases as bands behind it, the
// budget as a dashed line, the peak marked with the op that reaches it and
// the largest tensors live there. Long steps are drawn in at most
// kMaxColumns columns, each showing its point of most live bytes, so that no
// peak is lost. The elements carry their numbers as data-* attributes, which
// the tests compare with the report.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/MemoryTimeline.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::zero;

using Category = BufferCategory;

std::optional<TimelineFormat> zero::getTimelineFormat(StringRef path) {
  StringRef extension = path.rsplit('.').second;
  if (path.contains('.') && extension.equals_insensitive("svg"))
    return TimelineFormat::Svg;
  if (path.contains('.') && (extension.equals_insensitive("html") ||
                             extension.equals_insensitive("htm")))
    return TimelineFormat::Html;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Phases
//===----------------------------------------------------------------------===//

/// The loss that the forward pass computes: the result marked zero.loss, or
/// in the micro-step loop the value the loop's body yields for it (the
/// running sum of the micro-steps' losses).
static Value getForwardLoss(func::FuncOp func) {
  Operation *terminator = func.getBody().front().getTerminator();
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    if (!func.getResultAttr(i, ZeroDialect::getLossAttrName()))
      continue;
    Value loss = terminator->getOperand(i);
    if (auto loop = loss.getDefiningOp<scf::ForOp>())
      return loop.getBody()->getTerminator()->getOperand(
          cast<OpResult>(loss).getResultNumber());
    return loss;
  }
  return {};
}

/// The last program point of an op in `loss`'s block that `loss` depends on.
static int64_t getLastForwardPoint(const StepLiveness &liveness, Value loss) {
  Operation *def = loss.getDefiningOp();
  if (!def)
    return -1;
  Block *block = def->getBlock();
  SmallVector<Operation *> worklist = {def};
  llvm::DenseSet<Operation *> seen = {def};
  int64_t last = -1;
  auto visit = [&](Value value) {
    Operation *input = value.getDefiningOp();
    if (input && input->getBlock() == block && seen.insert(input).second)
      worklist.push_back(input);
  };
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (Operation *programOp = liveness.getProgramOp(*op))
      last = std::max(last, liveness.getPoint(programOp));
    // Operands, and the values its regions read from above.
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        visit(operand);
    });
  }
  return last;
}

SmallVector<TimelinePhase> zero::getTimelinePhases(const MemoryPlan &plan) {
  Value loss = getForwardLoss(plan.getFunction());
  if (!loss)
    return {};
  int64_t lastForward = getLastForwardPoint(plan.getLiveness(), loss);
  if (lastForward < 0)
    return {};
  int64_t numPoints = plan.getNumPoints();
  int64_t firstOptimizer = numPoints;
  for (auto [point, op] : llvm::enumerate(plan.getProgram()))
    if (isa<AdamOp, SgdOp>(op)) {
      firstOptimizer = std::max<int64_t>(point, lastForward + 1);
      break;
    }
  SmallVector<TimelinePhase> phases = {{"forward", 0, lastForward}};
  if (firstOptimizer > lastForward + 1)
    phases.push_back({"backward", lastForward + 1, firstOptimizer - 1});
  if (firstOptimizer < numPoints)
    phases.push_back({"optimizer", firstOptimizer, numPoints - 1});
  return phases;
}

//===----------------------------------------------------------------------===//
// Drawing
//===----------------------------------------------------------------------===//

namespace {

// The canvas, in SVG user units (pixels).
constexpr int kWidth = 1200;
constexpr int kPlotLeft = 80;
constexpr int kPlotWidth = 780;
constexpr int kLegendLeft = kPlotLeft + kPlotWidth + 30;
constexpr int kHeaderHeight = 40;
constexpr int kPanelHeight = 380;
constexpr int kPlotTop = 50;     // within a panel
constexpr int kPlotHeight = 250; // within a panel
constexpr int kMaxColumns = kPlotWidth;
/// Tensors listed at the peak: in the picture, and in the page's table.
constexpr size_t kPeakTensorsDrawn = 5;
constexpr size_t kPeakTensorsListed = 10;

constexpr const char *kCategoryColors[kNumBufferCategories] = {
    "#4e79a7", // parameters
    "#f28e2b", // gradients
    "#59a14f", // optimizer states
    "#9c755f", // inputs
    "#e15759", // activations
    "#76b7b2", // communication buffers
};

const char *getPhaseColor(StringRef phase) {
  if (phase == "forward")
    return "#e8f0fb";
  if (phase == "backward")
    return "#fdf0e2";
  return "#e9f6ea";
}

/// Calls `fn` with each character of `text` (a name from the IR: any bytes)
/// as a code point the picture may hold: U+FFFD in place of each byte that
/// does not start a valid UTF-8 sequence, and of every character XML 1.0
/// forbids or HTML reports as an error (the C0 and C1 controls, tab and
/// newline included, DEL, and the noncharacters).
void forEachCharacter(StringRef text,
                      llvm::function_ref<void(llvm::UTF32)> fn) {
  constexpr llvm::UTF32 kReplacement = 0xFFFD;
  const auto *p = reinterpret_cast<const llvm::UTF8 *>(text.begin());
  const auto *end = reinterpret_cast<const llvm::UTF8 *>(text.end());
  while (p != end) {
    llvm::UTF32 c;
    const llvm::UTF8 *next = p;
    if (llvm::convertUTF8Sequence(&next, end, &c, llvm::strictConversion) !=
        llvm::conversionOK) {
      fn(kReplacement);
      ++p;
      continue;
    }
    p = next;
    bool control = c < 0x20 || (c >= 0x7F && c < 0xA0);
    bool noncharacter = (c >= 0xFDD0 && c <= 0xFDEF) || (c & 0xFFFE) == 0xFFFE;
    fn(control || noncharacter ? kReplacement : c);
  }
}

/// Appends `c` to `out` as UTF-8.
void appendUTF8(llvm::UTF32 c, std::string &out) {
  char bytes[UNI_MAX_UTF8_BYTES_PER_CODE_POINT];
  char *end = bytes;
  if (llvm::ConvertCodePointToUTF8(c, end))
    out.append(bytes, end);
}

/// `text` as text or an attribute value of XML and HTML: the characters of
/// forEachCharacter, with the five XML specials escaped.
std::string escape(StringRef text) {
  std::string escaped;
  forEachCharacter(text, [&](llvm::UTF32 c) {
    switch (c) {
    case '&':
      escaped += "&amp;";
      break;
    case '<':
      escaped += "&lt;";
      break;
    case '>':
      escaped += "&gt;";
      break;
    case '"':
      escaped += "&quot;";
      break;
    case '\'':
      escaped += "&apos;";
      break;
    default:
      appendUTF8(c, escaped);
    }
  });
  return escaped;
}

/// `text` cut to `max` characters (code points, never inside one) with an
/// ellipsis, as the characters of forEachCharacter.
std::string shorten(StringRef text, size_t max) {
  SmallVector<llvm::UTF32> characters;
  forEachCharacter(text, [&](llvm::UTF32 c) { characters.push_back(c); });
  ArrayRef<llvm::UTF32> kept = characters;
  bool cut = kept.size() > max;
  if (cut)
    kept = kept.take_front(max - 1);
  std::string result;
  for (llvm::UTF32 c : kept)
    appendUTF8(c, result);
  if (cut)
    result += "\u2026";
  return result;
}

/// `value` with at most two decimals and no trailing zeros: "0", "0.5",
/// "1.25".
std::string formatTick(double value) {
  std::string text = llvm::formatv("{0:F2}", value).str();
  StringRef trimmed = StringRef(text).rtrim('0').rtrim('.');
  return trimmed.str();
}

/// `name` (a buffer's, or an op's description) with every "at DIR/FILE:L:C"
/// cut to "at FILE:L:C": the picture has room for the file, not its path.
std::string dropDirectories(StringRef name) {
  std::string result;
  while (!name.empty()) {
    size_t at = name.find(" at ");
    if (at == StringRef::npos)
      break;
    result += name.take_front(at + 4).str();
    name = name.drop_front(at + 4);
    StringRef location = name.take_until([](char c) { return c == ' '; });
    size_t slash = location.rfind('/');
    if (slash != StringRef::npos) {
      name = name.drop_front(slash + 1);
    }
  }
  return result + name.str();
}

/// A tick step of about `range / 5` that reads well: 1, 2 or 5 times a power
/// of ten of `unit` (bytes: a power of 1024; points: 1).
double getTickStep(double range, double unit) {
  double raw = std::max(range / 5 / unit, 1e-9);
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double mantissa : {1.0, 2.0, 5.0})
    if (mantissa * power >= raw)
      return mantissa * power * unit;
  return 10 * power * unit;
}

/// The binary unit to label byte ticks up to `bytes` with.
std::pair<double, StringRef> getByteUnit(double bytes) {
  static const std::pair<double, StringRef> units[] = {
      {1024.0 * 1024 * 1024 * 1024, "TiB"},
      {1024.0 * 1024 * 1024, "GiB"},
      {1024.0 * 1024, "MiB"},
      {1024.0, "KiB"}};
  for (const auto &unit : units)
    if (bytes >= unit.first)
      return unit;
  return {1.0, "B"};
}

class TimelineWriter {
public:
  TimelineWriter(llvm::raw_ostream &os, const MemoryPlan &plan, int64_t stage,
                 int64_t worldSize)
      : os(os), plan(plan), stage(stage), worldSize(worldSize),
        numPoints(std::max<int64_t>(plan.getNumPoints(), 1)),
        phases(getTimelinePhases(plan)) {
    for (MemorySpace space : kMemorySpaces)
      if (space == MemorySpace::Device || plan.getArenaSize(space) > 0)
        spaces.push_back(space);
  }

  /// `titled`: the picture's first line names the step (the page has its
  /// own heading instead).
  void writeSvg(bool titled = true);
  void writeHtml();

private:
  std::string getTitle() const {
    return llvm::formatv("Memory plan of @{0}: ZeRO stage {1}, {2} rank{3}, "
                         "{4} program points",
                         plan.getFunction().getSymName(), stage, worldSize,
                         worldSize == 1 ? "" : "s", plan.getNumPoints())
        .str();
  }
  double getPointX(double point) const {
    return kPlotLeft + point * kPlotWidth / numPoints;
  }
  void writePanel(MemorySpace space, int top);
  void writeAxes(int top, double yMax);
  /// The peak of the panel at `top`, computed once by writePanel.
  void writePeak(MemoryPlan::Peak peak, int top, double yMax);
  /// The categories' peaks (from `series`, the panel's bytes by category
  /// and point) and the largest tensors at the space's `peak`.
  void writeLegend(MemorySpace space, int top, MemoryPlan::Peak peak,
                   ArrayRef<SmallVector<int64_t>> series);

  llvm::raw_ostream &os;
  const MemoryPlan &plan;
  int64_t stage;
  int64_t worldSize;
  int64_t numPoints;
  SmallVector<TimelinePhase> phases;
  SmallVector<MemorySpace> spaces;
};

} // namespace

void TimelineWriter::writeSvg(bool titled) {
  int header = titled ? kHeaderHeight : 0;
  int height = header + kPanelHeight * spaces.size();
  os << llvm::formatv(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
      "height=\"{1}\" viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" "
      "font-size=\"12\" data-num-points=\"{2}\">\n",
      kWidth, height, plan.getNumPoints());
  os << llvm::formatv("<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
                      kWidth, height);
  if (titled)
    os << llvm::formatv("<text x=\"{0}\" y=\"26\" font-size=\"16\" "
                        "font-weight=\"bold\">{1}</text>\n",
                        kPlotLeft, escape(getTitle()));
  for (auto [i, space] : llvm::enumerate(spaces))
    writePanel(space, header + kPanelHeight * i);
  os << "</svg>\n";
}

void TimelineWriter::writePanel(MemorySpace space, int top) {
  SmallVector<SmallVector<int64_t>> series;
  SmallVector<int64_t> total(plan.getNumPoints(), 0);
  for (unsigned c = 0; c < kNumBufferCategories; ++c) {
    series.push_back(plan.getLiveBytesByPoint(space, static_cast<Category>(c)));
    for (auto [point, bytes] : llvm::enumerate(series.back()))
      total[point] += bytes;
  }
  MemoryPlan::Peak peak = plan.getMaxLive(space);
  std::optional<int64_t> budget =
      plan.getOptions().budgets[static_cast<unsigned>(space)];
  double yMax = std::max<double>({1.0, static_cast<double>(peak.bytes),
                                  budget ? static_cast<double>(*budget) : 0.0});
  yMax *= 1.12; // room for the peak's label

  StringRef spaceName = getMemorySpaceName(space);
  os << llvm::formatv("<g class=\"panel\" data-space=\"{0}\" "
                      "data-max-live=\"{1}\" data-peak-point=\"{2}\" "
                      "data-arena=\"{3}\"",
                      spaceName, peak.bytes, peak.point,
                      plan.getArenaSize(space));
  if (budget)
    os << llvm::formatv(" data-budget=\"{0}\"", *budget);
  os << ">\n";
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"14\" "
                      "font-weight=\"bold\">{2} memory: max live {3}, arena "
                      "{4}</text>\n",
                      kPlotLeft, top + 30, spaceName,
                      escape(formatShortByteSize(peak.bytes)),
                      escape(formatShortByteSize(plan.getArenaSize(space))));

  // The phases behind everything.
  int plotTop = top + kPlotTop;
  for (const TimelinePhase &phase : phases) {
    double left = getPointX(phase.first), right = getPointX(phase.last + 1);
    os << llvm::formatv(
        "<rect class=\"phase\" data-phase=\"{0}\" data-first=\"{1}\" "
        "data-last=\"{2}\" x=\"{3:F1}\" y=\"{4}\" width=\"{5:F1}\" "
        "height=\"{6}\" fill=\"{7}\"/>\n",
        phase.name, phase.first, phase.last, left, plotTop, right - left,
        kPlotHeight, getPhaseColor(phase.name));
    // Labelled above the plot, where no peak label goes.
    if (right - left >= 40)
      os << llvm::formatv("<text x=\"{0:F1}\" y=\"{1}\" fill=\"#555\" "
                          "text-anchor=\"middle\">{2}</text>\n",
                          (left + right) / 2, plotTop - 4, phase.name);
  }

  // Each column shows its point of most live bytes.
  int64_t numColumns = std::min<int64_t>(plan.getNumPoints(), kMaxColumns);
  SmallVector<int64_t> shown;
  for (int64_t column = 0; column < numColumns; ++column) {
    int64_t first = column * plan.getNumPoints() / numColumns;
    int64_t end = (column + 1) * plan.getNumPoints() / numColumns;
    int64_t best = first;
    for (int64_t point = first; point < end; ++point)
      if (total[point] > total[best])
        best = point;
    shown.push_back(best);
  }
  auto y = [&](double bytes) {
    return plotTop + kPlotHeight - bytes / yMax * kPlotHeight;
  };
  SmallVector<int64_t> below(numColumns, 0);
  for (unsigned c = 0; c < kNumBufferCategories; ++c) {
    if (llvm::all_of(series[c], [](int64_t bytes) { return bytes == 0; }))
      continue;
    // The upper edge left to right, then the lower one back.
    std::string points;
    llvm::raw_string_ostream outline(points);
    auto columnX = [&](int64_t column) {
      return kPlotLeft + double(column) * kPlotWidth / numColumns;
    };
    for (int64_t column = 0; column < numColumns; ++column)
      outline << llvm::formatv("{0:F1},{1:F1} {2:F1},{1:F1} ", columnX(column),
                               y(below[column] + series[c][shown[column]]),
                               columnX(column + 1));
    for (int64_t column = numColumns - 1; column >= 0; --column)
      outline << llvm::formatv("{0:F1},{1:F1} {2:F1},{1:F1} ",
                               columnX(column + 1), y(below[column]),
                               columnX(column));
    StringRef name = getBufferCategoryName(static_cast<Category>(c));
    os << llvm::formatv("<polygon class=\"area\" data-category=\"{0}\" "
                        "fill=\"{1}\" fill-opacity=\"0.85\" points=\"{2}\">"
                        "<title>{0}</title></polygon>\n",
                        name, kCategoryColors[c], StringRef(points).rtrim());
    for (int64_t column = 0; column < numColumns; ++column)
      below[column] += series[c][shown[column]];
  }

  writeAxes(top, yMax);
  if (budget) {
    double at = y(*budget);
    os << llvm::formatv("<line class=\"budget\" x1=\"{0}\" y1=\"{1:F1}\" "
                        "x2=\"{2}\" y2=\"{1:F1}\" stroke=\"#c00\" "
                        "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
                        kPlotLeft, at, kPlotLeft + kPlotWidth);
    os << llvm::formatv("<text x=\"{0}\" y=\"{1:F1}\" fill=\"#c00\" "
                        "text-anchor=\"end\">budget {2}</text>\n",
                        kPlotLeft + kPlotWidth - 4, at - 4,
                        escape(formatShortByteSize(*budget)));
  }
  if (peak.bytes > 0)
    writePeak(peak, top, yMax);
  writeLegend(space, top, peak, series);
  os << "</g>\n";
}

void TimelineWriter::writeAxes(int top, double yMax) {
  int plotTop = top + kPlotTop, plotBottom = plotTop + kPlotHeight;
  os << llvm::formatv("<g class=\"axes\" stroke=\"#333\">"
                      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
                      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\"/>"
                      "</g>\n",
                      kPlotLeft, plotTop, plotBottom, kPlotLeft + kPlotWidth);
  // Bytes, in the unit of the largest tick.
  auto [unit, unitName] = getByteUnit(yMax);
  double step = getTickStep(yMax, unit);
  for (double tick = 0; tick <= yMax; tick += step) {
    double at = plotBottom - tick / yMax * kPlotHeight;
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1:F1}\" x2=\"{2}\" "
                        "y2=\"{1:F1}\" stroke=\"#ddd\"/>"
                        "<text x=\"{3}\" y=\"{4:F1}\" text-anchor=\"end\">"
                        "{5} {6}</text>\n",
                        kPlotLeft, at, kPlotLeft + kPlotWidth, kPlotLeft - 6,
                        at + 4, formatTick(tick / unit), unitName);
  }
  double pointStep = getTickStep(numPoints, 1);
  for (double tick = 0; tick < numPoints; tick += pointStep) {
    double at = getPointX(tick + 0.5);
    os << llvm::formatv("<line x1=\"{0:F1}\" y1=\"{1}\" x2=\"{0:F1}\" "
                        "y2=\"{2}\" stroke=\"#333\"/>"
                        "<text x=\"{0:F1}\" y=\"{3}\" "
                        "text-anchor=\"middle\">{4}</text>\n",
                        at, plotBottom, plotBottom + 4, plotBottom + 18,
                        formatTick(tick));
  }
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" "
                      "fill=\"#555\">program point (forward, backward, "
                      "optimizer)</text>\n",
                      kPlotLeft + kPlotWidth / 2, plotBottom + 36);
}

void TimelineWriter::writePeak(MemoryPlan::Peak peak, int top, double yMax) {
  int plotTop = top + kPlotTop, plotBottom = plotTop + kPlotHeight;
  double x = getPointX(peak.point + 0.5);
  double y = plotBottom - peak.bytes / yMax * kPlotHeight;
  Operation *op = plan.getProgram()[peak.point];
  os << llvm::formatv("<g class=\"peak\" data-point=\"{0}\" data-bytes=\"{1}\">"
                      "<line x1=\"{2:F1}\" y1=\"{3}\" x2=\"{2:F1}\" "
                      "y2=\"{4:F1}\" stroke=\"#000\" stroke-dasharray=\"2 2\"/>"
                      "<circle cx=\"{2:F1}\" cy=\"{4:F1}\" r=\"4\" "
                      "fill=\"#000\"/>",
                      peak.point, peak.bytes, x, plotBottom, y);
  // The label on the side with more room, inside the plot.
  bool right = x < kPlotLeft + kPlotWidth / 2.0;
  double labelY = std::max<double>(y, plotTop + 30);
  os << llvm::formatv(
      "<text x=\"{0:F1}\" y=\"{1:F1}\" text-anchor=\"{2}\" "
      "font-weight=\"bold\">peak {3} at point {4}</text>"
      "<text x=\"{0:F1}\" y=\"{5:F1}\" text-anchor=\"{2}\" "
      "fill=\"#555\">{6}</text></g>\n",
      right ? x + 8 : x - 8, labelY - 16, right ? "start" : "end",
      escape(formatShortByteSize(peak.bytes)), peak.point, labelY - 3,
      escape(shorten(dropDirectories(describeOp(op)), 60)));
}

void TimelineWriter::writeLegend(MemorySpace space, int top,
                                 MemoryPlan::Peak peak,
                                 ArrayRef<SmallVector<int64_t>> series) {
  int y = top + kPlotTop;
  for (unsigned c = 0; c < kNumBufferCategories; ++c) {
    int64_t categoryPeak =
        series[c].empty() ? 0 : *llvm::max_element(series[c]);
    if (categoryPeak == 0)
      continue;
    StringRef name = getBufferCategoryName(static_cast<Category>(c));
    os << llvm::formatv(
        "<g class=\"category\" data-category=\"{0}\" data-peak=\"{1}\">"
        "<rect x=\"{2}\" y=\"{3}\" width=\"12\" height=\"12\" fill=\"{4}\"/>"
        "<text x=\"{5}\" y=\"{6}\">{0}: {7}</text></g>\n",
        name, categoryPeak, kLegendLeft, y - 10, kCategoryColors[c],
        kLegendLeft + 18, y, escape(formatShortByteSize(categoryPeak)));
    y += 18;
  }
  if (peak.bytes == 0)
    return;
  y += 10;
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-weight=\"bold\">"
                      "Largest at the peak:</text>\n",
                      kLegendLeft, y);
  SmallVector<unsigned> live = plan.getLiveBuffers(space, peak.point);
  for (unsigned index : ArrayRef(live).take_front(kPeakTensorsDrawn)) {
    const PlannedBuffer &buffer = plan.getBuffers()[index];
    y += 18;
    os << llvm::formatv(
        "<text class=\"live-at-peak\" data-name=\"{0}\" data-bytes=\"{1}\" "
        "x=\"{2}\" y=\"{3}\"><title>{0} ({4})</title>{5}: {6}</text>\n",
        escape(buffer.name), buffer.size, kLegendLeft, y,
        getBufferCategoryName(buffer.category),
        escape(shorten(dropDirectories(buffer.name), 30)),
        escape(formatShortByteSize(buffer.size)));
  }
}

void TimelineWriter::writeHtml() {
  std::string title = getTitle();
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
        "charset=\"utf-8\">\n"
     << "<title>" << escape(title) << "</title>\n"
     << "<style>\n"
        "body { font-family: sans-serif; margin: 24px; color: #222; }\n"
        "table { border-collapse: collapse; margin: 8px 0 24px; }\n"
        "th, td { border: 1px solid #ccc; padding: 3px 8px; "
        "text-align: right; }\n"
        "th:first-child, td:first-child { text-align: left; }\n"
        "</style>\n</head>\n<body>\n";
  os << "<h1>" << escape(title) << "</h1>\n";
  os << "<p>Bytes reserved at each program point of one rank's step, "
        "stacked by what they hold, as zero-plan-memory placed them.</p>\n";
  writeSvg(/*titled=*/false);
  for (MemorySpace space : spaces) {
    MemoryPlan::Peak peak = plan.getMaxLive(space);
    if (peak.bytes == 0)
      continue;
    os << llvm::formatv("<h2>{0} memory: live at the peak (point {1}, {2})"
                        "</h2>\n",
                        getMemorySpaceName(space), peak.point,
                        escape(describeOp(plan.getProgram()[peak.point])));
    os << "<table class=\"live-at-peak\">\n<tr><th>tensor</th><th>category"
          "</th><th>bytes</th><th>offset</th><th>points</th></tr>\n";
    SmallVector<unsigned> live = plan.getLiveBuffers(space, peak.point);
    for (unsigned index : ArrayRef(live).take_front(kPeakTensorsListed)) {
      const PlannedBuffer &buffer = plan.getBuffers()[index];
      os << llvm::formatv("<tr><td>{0}</td><td>{1}</td><td>{2}</td>"
                          "<td>{3}</td><td>{4}-{5}</td></tr>\n",
                          escape(buffer.name),
                          getBufferCategoryName(buffer.category), buffer.size,
                          buffer.offset, buffer.start, buffer.end);
    }
    os << "</table>\n";
  }
  os << "</body>\n</html>\n";
}

void zero::writeMemoryTimeline(llvm::raw_ostream &os, const MemoryPlan &plan,
                               TimelineFormat format, int64_t stage,
                               int64_t worldSize) {
  TimelineWriter writer(os, plan, stage, worldSize);
  if (format == TimelineFormat::Svg)
    writer.writeSvg();
  else
    writer.writeHtml();
}
