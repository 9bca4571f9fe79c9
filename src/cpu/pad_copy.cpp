// Conv's zero-padded input (src/onnx/ops_nn.cpp) is `x.pad(pads) * 1`, realized, so that the
// convolution reads one strided view and the planner runs it as a matmul in place. Through the
// tile interpreter each tile stages its positions through the masked view (copy_masked: a
// coordinate walk per image row), multiplies by 1 and stores: about 13% of the ONNX ResNet
// (0.3 ms for a (32,16,34,34) input that a row-by-row copy writes in a sixth of that). Here the
// same kernel writes each output byte once, a row or a border at a time: +0 outside the mask
// (a pad reads zero bits; +0 * 1 = +0) and the element inside, with each NaN made the canonical
// one, which is what MUL by 1 gives (docs/spec.md §3: a NaN through arithmetic is canonical;
// every other x * 1 is x exactly, in every rounding mode, -0 and subnormals included). So the
// kernel's bits, whichever path; being a kernel, it also runs in JIT replays.
#include "cpu/pad_copy.h"
#include "cpu/pad_copy_simd.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "cpu/threads.h"

namespace maroon::cpu {

namespace {

std::atomic<int64_t> g_pad_copies{0}, g_plane_pads{0};

// The scalar leaf's element is the value 1 of its dtype (bits, so -1, NaN... never match).
bool is_one(const Node& leaf, DType d) {
  // The checks first: the view stack's size before its view, the dtype before reading bytes.
  if (leaf.dtype != d || leaf.buffer->dtype != d || leaf.view.views().size() != 1) return false;
  const uint8_t* p = leaf.buffer->bytes();
  const View& v = leaf.view.views()[0];
  if (v.has_mask()) return false;
  for (int64_t s : v.strides)
    if (s != 0) return false;
  if (v.offset < 0 || v.offset >= leaf.buffer->count) return false;
  if (leaf.dtype == DType::Float32) {
    uint32_t b;
    std::memcpy(&b, p + v.offset * 4, 4);
    return b == 0x3F800000u;
  }
  uint64_t b;
  std::memcpy(&b, p + v.offset * 8, 8);
  return b == 0x3FF0000000000000ull;
}

// dst[i] = src[i * stride], each NaN replaced by the canonical NaN (bits of width T).
template <class T>
void copy_canonical(const T* src, int64_t stride, int64_t n, T* dst) {
  constexpr T abs = sizeof(T) == 4 ? T(0x7FFFFFFFu) : T(0x7FFFFFFFFFFFFFFFull);
  constexpr T inf = sizeof(T) == 4 ? T(0x7F800000u) : T(0x7FF0000000000000ull);
  constexpr T canon = sizeof(T) == 4 ? T(0x7FC00000u) : T(0x7FF8000000000000ull);
  for (int64_t i = 0; i < n; ++i) {
    const T v = src[i * stride];
    dst[i] = (v & abs) > inf ? canon : v;
  }
}

struct PadCopy {
  const View& v;
  const uint8_t* src;
  size_t sz;
  std::vector<int64_t> inner;  // output elements below each axis

  // Axis `ax` of the output block at d, whose valid elements start at buffer element `base`:
  // the leading border, the valid positions, the trailing border, each byte written once.
  void axis(size_t ax, int64_t base, uint8_t* d) const {
    if (ax + 2 == v.shape.size() && v.strides[ax + 1] == 1) {
      if (sz == 4) return plane(ax, base, reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(d));
      return plane(ax, base, reinterpret_cast<const uint64_t*>(src), reinterpret_cast<uint64_t*>(d));
    }
    const int64_t n = v.shape[ax], lo = std::clamp<int64_t>(v.mask[ax].first, 0, n),
                  hi = std::clamp<int64_t>(v.mask[ax].second, lo, n);
    const size_t ob = static_cast<size_t>(inner[ax]) * sz;
    std::memset(d, 0, static_cast<size_t>(lo) * ob);
    if (ax + 1 == v.shape.size()) {
      const int64_t at = base + lo * v.strides[ax];
      if (sz == 4)
        copy_canonical(reinterpret_cast<const uint32_t*>(src) + at, v.strides[ax], hi - lo,
                       reinterpret_cast<uint32_t*>(d + lo * ob));
      else
        copy_canonical(reinterpret_cast<const uint64_t*>(src) + at, v.strides[ax], hi - lo,
                       reinterpret_cast<uint64_t*>(d + lo * ob));
    } else {
      for (int64_t i = lo; i < hi; ++i) axis(ax + 1, base + i * v.strides[ax], d + i * ob);
    }
    std::memset(d + hi * ob, 0, static_cast<size_t>(n - hi) * ob);
  }

  // The last two axes (an image plane) when the last is contiguous in the source: the border
  // rows as one fill each, every other row as its borders and a unit-stride copy, without a
  // call per row (the rows are 8 to 32 elements; the recursion, a memset call per border and a
  // strided copy per row were 0.22 ms of a (32,64,10,10) pad, several times its bytes' worth).
  // Vectorized per SIMD target (pad_copy_simd.cpp).
  template <class T>
  void plane(size_t ax, int64_t base, const T* s, T* d) const {
    const int64_t n1 = v.shape[ax], lo1 = std::clamp<int64_t>(v.mask[ax].first, 0, n1),
                  hi1 = std::clamp<int64_t>(v.mask[ax].second, lo1, n1);
    const int64_t n2 = v.shape[ax + 1], lo2 = std::clamp<int64_t>(v.mask[ax + 1].first, 0, n2),
                  hi2 = std::clamp<int64_t>(v.mask[ax + 1].second, lo2, n2);
    // Row i's element j at s + base + i * stride + j: offsets formed for valid rows only.
    const PadPlane p{n1, lo1, hi1, n2, lo2, hi2, v.strides[ax]};
    pad_plane(p, s + base, d);
  }
};

// The leaf read through one masked view, if prog is MUL of it and a broadcast 1.
const Node* padded_leaf(const Program& prog) {
  if (prog.code.size() != 1 || prog.leaves.size() != 2) return nullptr;
  const Instr& ins = prog.code[0];
  if (ins.op != Op::MUL || ins.in != ins.out || (ins.in != DType::Float32 && ins.in != DType::Float64)) return nullptr;
  const int L = static_cast<int>(prog.leaves.size());
  if (prog.result != L || ins.src[0] == ins.src[1] || ins.src[0] >= L || ins.src[1] >= L) return nullptr;
  const Node* a = prog.leaves[ins.src[0]];
  const Node* one = prog.leaves[ins.src[1]];
  if (!is_one(*one, ins.in)) std::swap(a, one);
  if (!is_one(*one, ins.in) || a->dtype != ins.in || a->buffer->dtype != ins.in) return nullptr;
  if (a->view.views().size() != 1 || !a->view.views()[0].has_mask()) return nullptr;
  return a;
}

}  // namespace

void write_padded(const View& v, const uint8_t* src, size_t sz, uint8_t* dst) {
  const Shape& shape = v.shape;
  const size_t nd = shape.size();
  if (nd == 0) return;
  PadCopy pc{v, src, sz, std::vector<int64_t>(nd, 1)};
  for (size_t d = nd - 1; d-- > 0;) pc.inner[d] = pc.inner[d + 1] * shape[d + 1];
  if (nd == 1) return pc.axis(0, v.offset, dst);
  // Tasks of kPlanes positions of the first axis (a conv's images): a copy, so the split cannot
  // change a bit; fixed-size, as every split here. (Integer work only: the mode is moot.)
  const int64_t n0 = shape[0];
  constexpr int64_t kPlanes = 4;
  const size_t ob = static_cast<size_t>(pc.inner[0]) * pc.sz;
  const int64_t lo = std::clamp<int64_t>(v.mask[0].first, 0, n0), hi = std::clamp<int64_t>(v.mask[0].second, lo, n0);
  parallel_for((n0 + kPlanes - 1) / kPlanes, [&](int64_t t) {
    for (int64_t i = t * kPlanes; i < std::min(n0, (t + 1) * kPlanes); ++i) {
      if (i < lo || i >= hi) std::memset(dst + i * ob, 0, ob);
      else pc.axis(1, v.offset + i * v.strides[0], dst + i * ob);
    }
  }, Round::NearestEven);
}

bool try_pad_copy(Node& out, const Program& prog) {
  const Node* leaf = padded_leaf(prog);
  if (!leaf || leaf->view.shape() != out.shape || out.shape.empty()) return false;
  const View& v = leaf->view.views()[0];
  auto buf = std::make_shared<Buffer>(out.dtype, numel(out.shape));
  write_padded(v, leaf->buffer->bytes(), itemsize(out.dtype), buf->bytes());
  out.buffer = buf;
  out.view.set_contiguous(out.shape);
  g_pad_copies.fetch_add(1, std::memory_order_relaxed);
  const size_t nd = out.shape.size();
  if (nd >= 3 && v.strides[nd - 1] == 1) g_plane_pads.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int64_t pad_copies() { return g_pad_copies.load(std::memory_order_relaxed); }
int64_t pad_plane_copies() { return g_plane_pads.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
