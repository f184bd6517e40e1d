//===- OptimizerBench.cpp - throughput of the host zero.adam kernel -------===//
//
// Times the host kernel of zero.adam (prepared with prepareComputeOp from a
// hand-made instruction, run on a frame of four f32 arrays, in place as the
// compiler's schedules run it) on N elements, and, on the same arrays and
// thread count, a STREAM-like copy (a = b) and triad (a = b + s * c), so that
// the kernel's effective bandwidth can be read against the machine's. Then
// the executor's entry host::runAdamStep with the bf16 copy of the updated
// parameter written in the same pass (zero.adam+bf16), and, for comparison,
// without it followed by a separate conversion pass (zero.adam;bf16). Prints
// one JSON object per measurement; benchmarks/optimizer.py adds PyTorch and
// the table.
//
// Bytes per element, STREAM's convention (no write-allocate traffic):
// copy 8, triad 12, Adam 28 (reads param, grad, m, v; writes param, m, v),
// Adam with the bf16 copy 30 (the same, and writes 2 bytes).
//
//===----------------------------------------------------------------------===//

#include "host/Elements.h"
#include "host/HostOp.h"
#include "host/OptimizerKernels.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Schedule.h"
#include "zero/runtime/host/Threads.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace zero::runtime;

namespace {

/// The four f32 tensors of one Adam step and its two scalars (step, lr);
/// values 6-8 are the results, in place over param, m and v.
class AdamFrame : public host::Frame {
public:
  explicit AdamFrame(int64_t n) : n_(n), shape_{n} {
    for (std::vector<float> &array : arrays_)
      array.resize(n);
    const char *names[] = {"%param",      "%grad",        "%exp_avg",
                           "%exp_avg_sq", "%step",        "%lr",
                           "%param_new",  "%exp_avg_new", "%exp_avg_sq_new"};
    for (int64_t id = 0; id < 9; ++id) {
      ValueInfo info;
      info.id = id;
      info.name = names[id];
      info.isTensor = id != 4 && id != 5;
      info.dtype = id == 4 ? DType::I64 : DType::F32;
      if (info.isTensor) {
        info.shape = shape_;
        info.numel = n;
        info.buffer = id;
      }
      values.values.push_back(info);
    }
  }

  float *array(int k) { return arrays_[k].data(); }

  TensorRef tensor(int64_t id) override {
    static const int kArrayOf[9] = {0, 1, 2, 3, -1, -1, 0, 2, 3};
    return {arrays_[kArrayOf[id]].data(), DType::F32, &shape_, n_};
  }
  Scalar &scalar(int64_t id) override { return scalars_[id]; }
  int rank() const override { return 0; }
  int worldSize() const override { return 1; }

  ValueTable values;

private:
  int64_t n_;
  std::vector<int64_t> shape_;
  std::vector<float> arrays_[4];
  Scalar scalars_[9] = {};
};

/// Runs fn(begin, end) on `threads` contiguous parts of [0, n).
void parallelFor(int64_t n, int threads,
                 const std::function<void(int64_t, int64_t)> &fn) {
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t)
    workers.emplace_back(fn, t * n / threads, (t + 1) * n / threads);
  fn(0, n / threads);
  for (std::thread &worker : workers)
    worker.join();
}

/// STREAM's triad on [begin, end), in the CPU's widest vectors as STREAM
/// built with -march=native would run it.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
triad(float *__restrict a, const float *__restrict b, const float *__restrict c,
      int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    a[i] = b[i] + 3.0f * c[i];
}

/// Seconds of each of `repeat` runs of fn after two warm-up runs.
std::vector<double> timeRuns(int repeat, const std::function<void()> &fn) {
  std::vector<double> seconds;
  for (int r = 0; r < repeat + 2; ++r) {
    auto start = std::chrono::steady_clock::now();
    fn();
    auto stop = std::chrono::steady_clock::now();
    if (r >= 2)
      seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
  return seconds;
}

void report(const char *kernel, int64_t n, int threads, int bytesPerElement,
            std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  std::printf("{\"kernel\": \"%s\", \"elements\": %lld, \"threads\": %d, "
              "\"isa\": \"%s\", \"bytes_per_element\": %d, \"runs\": %zu, "
              "\"median_s\": %.6e, \"min_s\": %.6e, \"elements_per_s\": %.6e, "
              "\"gb_per_s\": %.4f}\n",
              kernel, static_cast<long long>(n), threads,
              host::getKernelIsaName(host::getKernelIsa()), bytesPerElement,
              seconds.size(), median, seconds.front(), n / median,
              n * static_cast<double>(bytesPerElement) / median / 1e9);
  std::fflush(stdout);
}

int usage(const char *message) {
  std::fprintf(stderr,
               "zero-bench-optimizer: %s\nusage: zero-bench-optimizer "
               "[--elements N[,N...]] [--threads T] [--repeat R]\n"
               "                            [--isa scalar|avx2|avx512]\n",
               message);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes = {int64_t(1) << 22, int64_t(1) << 24};
  int threads = 1, repeat = 20;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      return usage(("missing value after " + arg).c_str());
    std::string value = argv[++i];
    char *end = nullptr;
    if (arg == "--elements") {
      sizes.clear();
      for (const char *p = value.c_str(); *p; p = *end ? end + 1 : end) {
        long long n = std::strtoll(p, &end, 10);
        if (end == p || n < 1 || (*end && *end != ','))
          return usage(("--elements: bad size list '" + value + "'").c_str());
        sizes.push_back(n);
      }
    } else if (arg == "--isa") {
      const host::KernelIsa isas[] = {host::KernelIsa::Scalar,
                                      host::KernelIsa::Avx2,
                                      host::KernelIsa::Avx512};
      bool known = false;
      for (host::KernelIsa isa : isas)
        if (value == host::getKernelIsaName(isa)) {
          if (isa > host::getSupportedKernelIsa())
            return usage(("--isa: this CPU lacks " + value).c_str());
          host::setKernelIsa(isa);
          known = true;
        }
      if (!known)
        return usage(("--isa: unknown form '" + value + "'").c_str());
    } else if (arg == "--threads" || arg == "--repeat") {
      long count = std::strtol(value.c_str(), &end, 10);
      if (*end || count < 1)
        return usage(
            (arg + ": expected a positive integer, got '" + value + "'")
                .c_str());
      (arg == "--threads" ? threads : repeat) = static_cast<int>(count);
    } else {
      return usage(("unknown argument '" + arg + "'").c_str());
    }
  }
  setHostThreads(threads);

  for (int64_t n : sizes) {
    AdamFrame frame(n);
    // First touch by the threads that will use each part.
    parallelFor(n, threads, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        frame.array(0)[i] = 0.01f * static_cast<float>(i % 1000 - 500);
        frame.array(1)[i] = 0.001f * static_cast<float>(i % 777 - 388);
        frame.array(2)[i] = 0.0f;
        frame.array(3)[i] = 0.0f;
      }
    });

    float *a = frame.array(2), *b = frame.array(0), *c = frame.array(1);
    report("copy", n, threads, 8, timeRuns(repeat, [&] {
             parallelFor(n, threads, [&](int64_t begin, int64_t end) {
               std::memcpy(a + begin, b + begin, (end - begin) * 4);
             });
           }));
    report("triad", n, threads, 12, timeRuns(repeat, [&] {
             parallelFor(n, threads, [&](int64_t begin, int64_t end) {
               triad(a, b, c, begin, end);
             });
           }));
    std::fill(a, a + n, 0.0f);

    StatusOr<Instruction> op = decodeInstruction(
        R"({"op": "zero.adam", "point": 0, "loc": "bench:1:1",
            "operands": [0, 1, 2, 3, 4, 5], "results": [6, 7, 8],
            "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01,
            "mode": "adamw", "bias_correction": true, "amsgrad": false})",
        "instructions.compute[0]", frame.values);
    StatusOr<std::unique_ptr<host::ComputeOp>> adam =
        op.isOk() ? host::prepareComputeOp(*op, "bench", frame.values)
                  : StatusOr<std::unique_ptr<host::ComputeOp>>(op.status());
    if (!adam.isOk()) {
      std::fprintf(stderr, "zero-bench-optimizer: %s\n",
                   adam.status().toString().c_str());
      return 1;
    }
    frame.scalar(5).f = static_cast<double>(1e-3f);
    int64_t step = 0;
    Status status = Status::ok();
    report("zero.adam", n, threads, 28, timeRuns(repeat, [&] {
             frame.scalar(4).i = ++step;
             if (status.isOk())
               status = (*adam)->run(frame);
           }));
    if (!status.isOk()) {
      std::fprintf(stderr, "zero-bench-optimizer: %s\n",
                   status.toString().c_str());
      return 1;
    }

    // The executor's entry, with the bf16 copy in the same pass and after it.
    std::vector<uint16_t> param16(n);
    parallelFor(n, threads, [&](int64_t begin, int64_t end) {
      std::memset(param16.data() + begin, 0, (end - begin) * 2);
    });
    // The instruction's hyperparameters.
    host::AdamHyperparameters h;
    h.lr = frame.scalar(5).f;
    h.beta1 = 0.9;
    h.beta2 = 0.999;
    h.eps = 1e-8;
    h.weightDecay = 0.01;
    h.adamw = true;
    h.biasCorrection = true;
    h.amsgrad = false;
    report("zero.adam+bf16", n, threads, 30, timeRuns(repeat, [&] {
             h.step = ++step;
             host::runAdamStep(h, n, frame.array(0), frame.array(1), DType::F32,
                               frame.array(2), frame.array(3), nullptr,
                               param16.data(), DType::BF16);
           }));
    report("zero.adam;bf16", n, threads, 30, timeRuns(repeat, [&] {
             h.step = ++step;
             host::runAdamStep(h, n, frame.array(0), frame.array(1), DType::F32,
                               frame.array(2), frame.array(3), nullptr);
             parallelFor(n, threads, [&](int64_t begin, int64_t end) {
               host::storeFloats(param16.data(), DType::BF16, begin,
                                 end - begin, frame.array(0) + begin);
             });
           }));

    // Keeps the arrays observable; also a sanity check of the update.
    if (!std::isfinite(frame.array(0)[n - 1])) {
      std::fprintf(stderr, "zero-bench-optimizer: zero.adam produced a "
                           "non-finite parameter\n");
      return 1;
    }
  }
  return 0;
}
