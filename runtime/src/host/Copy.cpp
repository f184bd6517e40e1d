//===- Copy.cpp - strided copies and fills of tensor memory ---------------===//

#include "Copy.h"

#include "Elements.h"
#include "ops/CopyShape.h"

#include <algorithm>
#include <cstring>

namespace zero::runtime::host {

namespace {
template <typename T>
void copyLine(char *dst, int64_t dstStride, const char *src, int64_t srcStride,
              int64_t count) {
  T *d = reinterpret_cast<T *>(dst);
  const T *s = reinterpret_cast<const T *>(src);
  if (srcStride == 0 && dstStride == 1) { // a broadcast line
    std::fill(d, d + count, s[0]);
    return;
  }
  for (int64_t i = 0; i < count; ++i)
    d[i * dstStride] = s[i * srcStride];
}

/// A transpose of the two innermost dimensions (the source contiguous along
/// the outer one), in tiles so that both sides stay in cache.
template <typename T>
void copyTiles(char *dst, int64_t dstOuter, const char *src, int64_t srcInner,
               int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 32;
  T *d = reinterpret_cast<T *>(dst);
  const T *s = reinterpret_cast<const T *>(src);
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile)
      for (int64_t r = r0; r < std::min(rows, r0 + kTile); ++r)
        for (int64_t c = c0; c < std::min(cols, c0 + kTile); ++c)
          d[r * dstOuter + c] = s[r + c * srcInner];
}
} // namespace

void copyStrided(void *dst, const std::vector<int64_t> &dstStrides,
                 const void *src, const std::vector<int64_t> &srcStrides,
                 const std::vector<int64_t> &shape, int64_t width) {
  const ops::CopyShape copy = ops::simplifyCopy(shape, dstStrides, srcStrides);
  if (copy.empty)
    return;
  const std::vector<int64_t> &sizes = copy.sizes, &ds = copy.dstStrides,
                             &ss = copy.srcStrides;
  char *out = static_cast<char *>(dst);
  const char *in = static_cast<const char *>(src);
  if (sizes.empty()) {
    std::memmove(out, in, width);
    return;
  }
  // A transpose of the innermost two dimensions moves tiles.
  const size_t rank = sizes.size();
  if (copy.isInnerTranspose() && (width == 2 || width == 4 || width == 8)) {
    std::vector<int64_t> outerShape(sizes.begin(), sizes.end() - 2);
    std::vector<int64_t> outerDst(ds.begin(), ds.end() - 2);
    std::vector<int64_t> outerSrc(ss.begin(), ss.end() - 2);
    const int64_t rows = sizes[rank - 2], cols = sizes[rank - 1];
    const int64_t dstOuter = ds[rank - 2], srcInner = ss[rank - 1];
    std::vector<int64_t> index(outerShape.size(), 0);
    while (true) {
      int64_t dOff = 0, sOff = 0;
      for (size_t d = 0; d < index.size(); ++d) {
        dOff += index[d] * outerDst[d];
        sOff += index[d] * outerSrc[d];
      }
      char *d = out + dOff * width;
      const char *s = in + sOff * width;
      if (width == 2)
        copyTiles<uint16_t>(d, dstOuter, s, srcInner, rows, cols);
      else if (width == 4)
        copyTiles<uint32_t>(d, dstOuter, s, srcInner, rows, cols);
      else
        copyTiles<uint64_t>(d, dstOuter, s, srcInner, rows, cols);
      size_t dim = index.size();
      while (dim-- > 0) {
        if (++index[dim] < outerShape[dim])
          break;
        index[dim] = 0;
      }
      if (dim == static_cast<size_t>(-1))
        return;
    }
  }
  const size_t inner = rank - 1;
  const int64_t count = sizes[inner];
  const bool contiguous = ds[inner] == 1 && ss[inner] == 1;
  std::vector<int64_t> index(inner, 0);
  int64_t dOff = 0, sOff = 0;
  while (true) {
    char *d = out + dOff * width;
    const char *s = in + sOff * width;
    if (contiguous) {
      std::memmove(d, s, count * width);
    } else {
      switch (width) {
      case 1:
        copyLine<uint8_t>(d, ds[inner], s, ss[inner], count);
        break;
      case 2:
        copyLine<uint16_t>(d, ds[inner], s, ss[inner], count);
        break;
      case 4:
        copyLine<uint32_t>(d, ds[inner], s, ss[inner], count);
        break;
      default:
        copyLine<uint64_t>(d, ds[inner], s, ss[inner], count);
        break;
      }
    }
    size_t dim = inner;
    while (dim-- > 0) {
      dOff += ds[dim];
      sOff += ss[dim];
      if (++index[dim] < sizes[dim])
        break;
      dOff -= sizes[dim] * ds[dim];
      sOff -= sizes[dim] * ss[dim];
      index[dim] = 0;
    }
    if (dim == static_cast<size_t>(-1))
      return;
  }
}

void fillElements(void *data, DType dtype, int64_t numel, Scalar value) {
  if (numel <= 0)
    return;
  storeElement(data, dtype, 0, value);
  switch (getDTypeWidth(dtype)) {
  case 1: {
    uint8_t *p = static_cast<uint8_t *>(data);
    std::fill(p + 1, p + numel, p[0]);
    return;
  }
  case 2: {
    uint16_t *p = static_cast<uint16_t *>(data);
    std::fill(p + 1, p + numel, p[0]);
    return;
  }
  case 4: {
    uint32_t *p = static_cast<uint32_t *>(data);
    std::fill(p + 1, p + numel, p[0]);
    return;
  }
  default: {
    uint64_t *p = static_cast<uint64_t *>(data);
    std::fill(p + 1, p + numel, p[0]);
    return;
  }
  }
}

} // namespace zero::runtime::host

namespace zero::runtime::host {

Status StridedCopyOp::run(Frame &frame) {
  char *result = static_cast<char *>(frame.tensor(copy_.result).data);
  if (copy_.dest >= 0) {
    const void *dest = frame.tensor(copy_.dest).data;
    if (dest != result)
      std::memmove(result, dest, destBytes_);
  }
  const char *source =
      static_cast<const char *>(frame.tensor(copy_.source).data);
  copyStrided(result + copy_.dstOffset * copy_.width, copy_.dstStrides,
              source + copy_.srcOffset * copy_.width, copy_.srcStrides,
              copy_.shape, copy_.width);
  return Status::ok();
}

} // namespace zero::runtime::host
