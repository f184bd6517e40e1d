//===- KernelCache.cpp - NVRTC compilation and a disk cache ---------------===//

#include "KernelCache.h"

#include "CudaContext.h"

#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <unistd.h>

namespace zero::runtime::cuda {

namespace {

/// Lines of NVRTC's log kept in an error.
constexpr int kLogLines = 20;

Status nvrtcFailure(nvrtcResult result, const std::string &what) {
  return ZERO_ERROR(kInternal, "NVRTC " + what +
                                   " failed: " + nvrtcGetErrorString(result));
}

std::vector<int> getSupportedArchs() {
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0)
    return {};
  std::vector<int> archs(count);
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS)
    return {};
  std::sort(archs.begin(), archs.end());
  return archs;
}

std::string firstLines(const std::string &text, int count) {
  std::string result;
  std::istringstream in(text);
  std::string line;
  int kept = 0, total = 0;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    ++total;
    if (kept < count) {
      result += "\n  " + line;
      ++kept;
    }
  }
  if (total > kept)
    result += "\n  ... (" + std::to_string(total - kept) + " more lines)";
  return result;
}

uint64_t fnv1a(const std::string &text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

/// Destroys an NVRTC program on every path.
struct ProgramGuard {
  nvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program)
      nvrtcDestroyProgram(&program);
  }
};

constexpr const char *kCacheMagic = "zero-kernel-cache 1";

} // namespace

std::string getNvrtcVersion() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

const std::vector<std::string> &getKernelCompileOptions() {
  static const std::vector<std::string> options = {
      "-std=c++17", "--fmad=false", "--prec-div=true", "--prec-sqrt=true",
      "--ftz=false"};
  return options;
}

StatusOr<std::string> chooseKernelTarget(int major, int minor) {
  const int arch = major * 10 + minor;
  const std::vector<int> archs = getSupportedArchs();
  if (archs.empty())
    return ZERO_ERROR(kFailedPrecondition,
                      "NVRTC " + getNvrtcVersion() +
                          " reports no supported GPU architecture");
  if (std::find(archs.begin(), archs.end(), arch) != archs.end())
    return "sm_" + std::to_string(arch);
  int best = -1;
  for (int known : archs)
    if (known < arch)
      best = known;
  if (best < 0)
    return ZERO_ERROR(kFailedPrecondition,
                      "the GPU's compute capability " + std::to_string(major) +
                          "." + std::to_string(minor) +
                          " is older than every architecture NVRTC " +
                          getNvrtcVersion() + " compiles for (the oldest is " +
                          std::to_string(archs.front() / 10) + "." +
                          std::to_string(archs.front() % 10) + ")");
  // PTX for the newest architecture NVRTC knows; the driver compiles it for
  // the device.
  return "compute_" + std::to_string(best);
}

StatusOr<CompiledKernel> compileKernelSource(const std::string &source,
                                             const std::string &target) {
  ProgramGuard guard;
  nvrtcResult result = nvrtcCreateProgram(
      &guard.program, source.c_str(), "zero_kernel.cu", 0, nullptr, nullptr);
  if (result != NVRTC_SUCCESS)
    return nvrtcFailure(result, "nvrtcCreateProgram");
  std::vector<std::string> options = getKernelCompileOptions();
  options.push_back("--gpu-architecture=" + target);
  std::vector<const char *> pointers;
  for (const std::string &option : options)
    pointers.push_back(option.c_str());
  result = nvrtcCompileProgram(guard.program, static_cast<int>(pointers.size()),
                               pointers.data());
  std::string log;
  size_t logSize = 0;
  if (nvrtcGetProgramLogSize(guard.program, &logSize) == NVRTC_SUCCESS &&
      logSize > 1) {
    log.resize(logSize);
    if (nvrtcGetProgramLog(guard.program, log.data()) != NVRTC_SUCCESS)
      log.clear();
    while (!log.empty() && log.back() == '\0')
      log.pop_back();
  }
  if (result != NVRTC_SUCCESS)
    return ZERO_ERROR(kInternal, std::string("NVRTC ") + getNvrtcVersion() +
                                     " could not compile a generated kernel "
                                     "for " +
                                     target + " (" +
                                     nvrtcGetErrorString(result) +
                                     "):" + firstLines(log, kLogLines));
  CompiledKernel kernel;
  kernel.target = target;
  kernel.isPtx = target.rfind("compute_", 0) == 0;
  size_t size = 0;
  if (kernel.isPtx) {
    result = nvrtcGetPTXSize(guard.program, &size);
    if (result != NVRTC_SUCCESS)
      return nvrtcFailure(result, "nvrtcGetPTXSize");
    kernel.image.resize(size); // with the terminating NUL
    result = nvrtcGetPTX(guard.program, kernel.image.data());
    if (result != NVRTC_SUCCESS)
      return nvrtcFailure(result, "nvrtcGetPTX");
  } else {
    result = nvrtcGetCUBINSize(guard.program, &size);
    if (result != NVRTC_SUCCESS)
      return nvrtcFailure(result, "nvrtcGetCUBINSize");
    kernel.image.resize(size);
    result = nvrtcGetCUBIN(guard.program, kernel.image.data());
    if (result != NVRTC_SUCCESS)
      return nvrtcFailure(result, "nvrtcGetCUBIN");
  }
  return kernel;
}

std::string getDefaultKernelCacheDirectory() {
  if (const char *env = std::getenv("ZERO_KERNEL_CACHE"); env && *env) {
    const std::string value = env;
    if (value == "off" || value == "0" || value == "none")
      return "";
    return value;
  }
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/zero-opt/kernels";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/zero-opt/kernels";
  return "";
}

KernelCache::KernelCache(int ordinal, std::string directory)
    : ordinal_(ordinal), directory_(std::move(directory)) {}

KernelCache::~KernelCache() {
  // Errors are ignored: at process exit the runtime may be gone already.
  for (cudaLibrary_t library : libraries_)
    (void)cudaLibraryUnload(library);
}

Status KernelCache::initialize() {
  if (initialized_)
    return Status::ok();
  ZERO_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  ZERO_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(
      &major_, cudaDevAttrComputeCapabilityMajor, ordinal_));
  ZERO_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(
      &minor_, cudaDevAttrComputeCapabilityMinor, ordinal_));
  ZERO_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(
      &multiProcessors_, cudaDevAttrMultiProcessorCount, ordinal_));
  StatusOr<std::string> target = chooseKernelTarget(major_, minor_);
  if (!target.isOk())
    return target.status();
  target_ = *target;
  initialized_ = true;
  return Status::ok();
}

StatusOr<int> KernelCache::multiProcessorCount() {
  std::lock_guard<std::mutex> lock(mutex_);
  ZERO_RETURN_IF_ERROR(initialize());
  return multiProcessors_;
}

KernelCache::Stats KernelCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::string getKernelCacheKey(const std::string &source,
                              const std::string &name,
                              const std::string &target) {
  std::string key = std::string(kCacheMagic) + "\nnvrtc " + getNvrtcVersion() +
                    "\ntarget " + target + "\noptions";
  for (const std::string &option : getKernelCompileOptions())
    key += " " + option;
  key += "\nkernel " + name + "\n" + source;
  return key;
}

namespace {
std::string cachePath(const std::string &directory, const std::string &key) {
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx",
                static_cast<unsigned long long>(fnv1a(key)));
  return directory + "/" + name + ".bin";
}
} // namespace

// A cache file: "zero-kernel-cache 1 <key bytes> <image bytes> <ptx>\n",
// then the key, then the image.
bool readCachedKernel(const std::string &directory, const std::string &key,
                      CompiledKernel &kernel) {
  if (directory.empty())
    return false;
  std::ifstream in(cachePath(directory, key), std::ios::binary);
  if (!in)
    return false;
  std::string header;
  if (!std::getline(in, header))
    return false;
  std::istringstream fields(header);
  std::string magic, version;
  size_t keySize = 0, imageSize = 0;
  int isPtx = 0;
  if (!(fields >> magic >> version >> keySize >> imageSize >> isPtx) ||
      magic + " " + version != kCacheMagic || keySize != key.size() ||
      imageSize == 0 || imageSize > (size_t(1) << 30))
    return false;
  std::string storedKey(keySize, '\0');
  if (!in.read(storedKey.data(), static_cast<std::streamsize>(keySize)) ||
      storedKey != key)
    return false;
  std::string image(imageSize, '\0');
  if (!in.read(image.data(), static_cast<std::streamsize>(imageSize)) ||
      in.peek() != std::char_traits<char>::eof())
    return false;
  kernel.image = std::move(image);
  kernel.isPtx = isPtx != 0;
  return true;
}

void writeCachedKernel(const std::string &directory, const std::string &key,
                       const CompiledKernel &kernel) {
  if (directory.empty())
    return;
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error)
    return;
  static std::atomic<uint64_t> counter{0};
  const std::string path = cachePath(directory, key);
  const std::string temporary = path + ".tmp." + std::to_string(getpid()) +
                                "." + std::to_string(++counter);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out)
      return;
    out << kCacheMagic << " " << key.size() << " " << kernel.image.size() << " "
        << (kernel.isPtx ? 1 : 0) << "\n";
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    out.write(kernel.image.data(),
              static_cast<std::streamsize>(kernel.image.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(temporary, error);
      return;
    }
  }
  std::filesystem::rename(temporary, path, error);
  if (error)
    std::filesystem::remove(temporary, error);
}

StatusOr<cudaKernel_t> KernelCache::load(const CompiledKernel &kernel,
                                         const std::string &name) {
  cudaLibrary_t library = nullptr;
  ZERO_CUDA_RETURN_IF_ERROR(cudaLibraryLoadData(
      &library, kernel.image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t handle = nullptr;
  cudaError_t code = cudaLibraryGetKernel(&handle, library, name.c_str());
  // Loads the kernel into the current context now rather than at its first
  // launch, so that an image the device cannot run fails here.
  cudaFuncAttributes attributes;
  if (code == cudaSuccess)
    code = cudaFuncGetAttributes(&attributes,
                                 reinterpret_cast<const void *>(handle));
  if (code != cudaSuccess) {
    (void)cudaLibraryUnload(library);
    return ::zero::runtime::cuda::cudaError(code, "loading a generated kernel",
                                            __FILE__, __LINE__);
  }
  libraries_.push_back(library);
  return handle;
}

StatusOr<cudaKernel_t> KernelCache::getKernel(const std::string &source,
                                              const std::string &name) {
  std::lock_guard<std::mutex> lock(mutex_);
  ZERO_RETURN_IF_ERROR(initialize());
  ZERO_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  std::string memoryKey = name;
  memoryKey += '\0';
  memoryKey += source;
  auto found = loaded_.find(memoryKey);
  if (found != loaded_.end()) {
    ++stats_.memoryHits;
    return found->second;
  }
  const std::string key = getKernelCacheKey(source, name, target_);
  CompiledKernel cached;
  if (readCachedKernel(directory_, key, cached)) {
    cached.target = target_;
    StatusOr<cudaKernel_t> handle = load(cached, name);
    if (handle.isOk()) {
      ++stats_.diskHits;
      loaded_.emplace(std::move(memoryKey), *handle);
      return handle;
    }
    // An image that does not load (a driver change the key does not see):
    // compile it again and replace it.
  }
  StatusOr<CompiledKernel> compiled = compileKernelSource(source, target_);
  if (!compiled.isOk())
    return compiled.status();
  ++stats_.compiled;
  StatusOr<cudaKernel_t> handle = load(*compiled, name);
  if (!handle.isOk())
    return handle.status();
  writeCachedKernel(directory_, key, *compiled);
  loaded_.emplace(std::move(memoryKey), *handle);
  return handle;
}

} // namespace zero::runtime::cuda
