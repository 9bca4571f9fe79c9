// The Tensor handle and tinygrad's Tensor API on it.
//
// A Tensor is a node of a lazy graph: building ops computes nothing; realize() (or reading the
// data) runs the graph. Every method decomposes into the primitive builders of
// maroon/primitives.h (namespace maroon::prim, one graph node each) exactly as tinygrad's does.
// Movement ops are views of their source's buffer, never copies. Binary and ternary ops
// broadcast (numpy's right-aligned rule) and promote dtypes (tinygrad's lattice; C++ scalars are
// weak like Python's, so `int8_tensor * 300` stays int8). Every float op rounds in the mode
// current when it is built (see maroon/round.h); the node keeps that mode.
//
// Bad input throws maroon::Error (ShapeError, DTypeError, IndexError) naming the op and shapes.
#pragma once
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "maroon/dtype.h"
#include "maroon/error.h"
#include "maroon/reduce.h"
#include "maroon/round.h"

namespace maroon {

struct Node;
using Shape = std::vector<int64_t>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// A C++ scalar operand: weak like a Python literal (bool is not weak: it is dtype bool).
struct Scalar {
  enum class Kind { Bool, Int, Float } kind;
  int64_t i = 0;
  double f = 0;
  Scalar(bool v) : kind(Kind::Bool), i(v) {}
  Scalar(double v) : kind(Kind::Float), f(v) {}
  Scalar(float v) : kind(Kind::Float), f(v) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind(Kind::Int), i(static_cast<int64_t>(v)) {}
  DType weak_dtype() const;
};

std::string shape_str(const Shape& s);  // "(3,4)", "(5,)", "()"

// The C++ type whose bits a dtype's elements have (uint16_t for float16 and bfloat16).
template <class T> constexpr DType dtype_of();

// What a Tensor handle refers to. Copies of a Tensor share one state, as Python references to
// one tinygrad Tensor do: assign() swaps the node for every copy, and backward() fills `grad`
// where every copy sees it.
struct TensorState {
  std::shared_ptr<Node> node;
  std::shared_ptr<TensorState> grad;  // null until backward() reaches this tensor
};

// An axis argument: none (every axis), one axis, or a list (tinygrad's `axis=None|int|tuple`).
struct Axis {
  bool all = true;
  std::vector<int64_t> axes;
  Axis() = default;
  Axis(int64_t a) : all(false), axes{a} {}
  Axis(int a) : all(false), axes{a} {}
  Axis(std::initializer_list<int64_t> a) : all(false), axes(a) {}
  Axis(std::vector<int64_t> a) : all(false), axes(std::move(a)) {}
};

// One entry of an index expression (tinygrad's __getitem__): an int, a slice, None (new axis),
// an ellipsis, or an integer index tensor.
struct Slice {
  std::optional<int64_t> start, stop, step;
};
class Tensor;
struct Index {
  enum class Kind { Int, Slice, NewAxis, Ellipsis, Tensor } kind;
  int64_t i = 0;
  Slice s;
  std::shared_ptr<Tensor> t;
  Index(int64_t v) : kind(Kind::Int), i(v) {}
  Index(int v) : kind(Kind::Int), i(v) {}
  Index(Slice v) : kind(Kind::Slice), s(v) {}
  Index(const Tensor& v);
  static Index none() { return Index(Kind::NewAxis); }
  static Index ellipsis() { return Index(Kind::Ellipsis); }

 private:
  explicit Index(Kind k) : kind(k) {}
};
inline Slice slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
                   std::optional<int64_t> step = std::nullopt) {
  return Slice{start, stop, step};
}

// The losses' `reduction` argument, and its name as tinygrad spells it ("mean", "sum", "none";
// ShapeError for anything else).
enum class Reduction { Mean, Sum, None };
Reduction reduction_from_name(const std::string& name);

class Tensor {
 public:
  explicit Tensor(std::shared_ptr<Node> node);

  // ---- creation ----
  // Copies `nbytes` bytes of little-endian elements; nbytes must be numel(shape) * itemsize.
  static Tensor from_bytes(const void* data, size_t nbytes, const Shape& shape, DType dtype);
  template <class T>
  static Tensor from_vector(const std::vector<T>& v, const Shape& shape, DType dtype = dtype_of<T>()) {
    return from_bytes(v.data(), v.size() * sizeof(T), shape, dtype);
  }
  // A constant: one element broadcast to `shape` (no buffer of that size is ever made). Float
  // scalars convert to `dtype` rounding to nearest-even, integers wrap, as literals do.
  static Tensor full(const Shape& shape, Scalar value, DType dtype);
  static Tensor full(const Shape& shape, Scalar value);  // dtype from the scalar's weak dtype

  // ---- properties ----
  const Shape& shape() const;
  DType dtype() const;
  int64_t ndim() const;
  int64_t numel() const;
  const std::shared_ptr<Node>& node() const { return st_->node; }
  const std::shared_ptr<TensorState>& state() const { return st_; }

  // ---- running and reading ----
  Tensor& realize();
  // The elements in row-major order as raw little-endian bytes (realizes).
  std::vector<uint8_t> bytes() const;
  // Element bits, zero-extended (realizes).
  std::vector<uint64_t> bits() const;
  template <class T>
  std::vector<T> to_vector() const {
    if (itemsize(dtype()) != sizeof(T))
      throw DTypeError("[to_vector] element size " + std::to_string(sizeof(T)) +
                       " does not match dtype " + std::string(dtype_name(dtype())));
    std::vector<uint8_t> b = bytes();
    std::vector<T> out(b.size() / sizeof(T));
    if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
    return out;
  }
  // The weak scalar `s` as this tensor's binary ops see it: a 0-d constant of the dtype the
  // promotion lattice gives the pair (an int8 tensor and 300: int8; and 1.5: float32).
  Tensor scalar_operand(Scalar s) const;
  // Whether this tensor reads the same buffer as `other` (movement ops are views).
  bool shares_buffer_with(const Tensor& other) const;

  // ---- tinygrad's methods that are one primitive each (prim::exp2(x) etc.) ----
  Tensor exp2() const;
  Tensor log2() const;
  Tensor sin() const;
  Tensor sqrt() const;
  Tensor reciprocal() const;
  Tensor trunc() const;
  Tensor cast(DType to) const;
  Tensor bitcast(DType to) const;  // same itemsize; bits unchanged

  // REDUCE over `axes`, keeping them as size 1 (prim::reduce).
  Tensor reduce(ReduceOp op, std::vector<int64_t> axes) const;

  // ---- movement (views) ----
  Tensor reshape(const Shape& shape) const;  // one -1 entry is inferred
  Tensor expand(const Shape& shape) const;   // same rank; size-1 axes grow
  Tensor permute(const std::vector<int64_t>& order) const;
  Tensor pad(const Pairs& before_after) const;   // zero padding
  Tensor shrink(const Pairs& begin_end) const;
  Tensor flip(const std::vector<int64_t>& axes) const;

  // ======== The rest of tinygrad's Tensor API (src/api/*.cpp). Each method decomposes into
  // primitives exactly as tinygrad's does, so its bits are a function of tinygrad's recipe. ========

  // ---- autograd (src/api/autograd.cpp) ----
  // The gradient, filled by backward(); nullopt before.
  std::optional<Tensor> grad() const;
  void set_grad(std::optional<Tensor> g);
  // d(this)/d(targets); `gradient` defaults to ones for a scalar. Gradients are graph nodes, so
  // they can be differentiated again.
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets,
                               std::optional<Tensor> gradient = std::nullopt) const;
  // Fills .grad of every live float tensor in this graph (accumulating into an existing grad).
  Tensor& backward(std::optional<Tensor> gradient = std::nullopt);
  Tensor detach() const;               // gradient stops here
  Tensor contiguous() const;           // values unchanged (every node here owns its buffer)
  Tensor contiguous_backward() const;  // values unchanged; the backward gradient is contiguous
  // Makes every copy of this handle refer to `x`'s (realized) value; the history is dropped.
  Tensor& assign(const Tensor& x);
  // Realizes, then cuts the graph: a leaf holding the same buffer.
  Tensor realized_leaf() const;
  bool is_floating_point() const;
  // The element values converted to double (realizes).
  std::vector<double> tolist() const;
  double item() const;

  // ---- creation (src/api/creation.cpp) ----
  static Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
  static Tensor ones(const Shape& shape, DType dtype = DType::Float32);
  static Tensor empty(const Shape& shape, DType dtype = DType::Float32);
  // Python scalars' types matter: any float argument makes the default dtype float32.
  static Tensor arange(Scalar start, Scalar stop, Scalar step = 1,
                       std::optional<DType> dtype = std::nullopt);
  static Tensor arange(int64_t stop, std::optional<DType> dtype = std::nullopt);
  static Tensor linspace(double start, double stop, int64_t steps, DType dtype = DType::Float32);
  static Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, DType dtype = DType::Float32);
  Tensor zeros_like(std::optional<DType> dtype = std::nullopt) const;
  Tensor ones_like(std::optional<DType> dtype = std::nullopt) const;
  Tensor full_like(Scalar v, std::optional<DType> dtype = std::nullopt) const;
  Tensor const_like(Scalar v) const;  // a 0-d-broadcast constant of this shape and dtype
  static Tensor const_(Scalar v, std::optional<DType> dtype = std::nullopt);  // tinygrad's Tensor.const
  Tensor clone() const;  // a copy in the graph: gradients flow through it (.grad cloned too)
  const Shape& max_shape() const { return shape(); }  // no symbolic shapes here
  int64_t max_numel() const { return numel(); }
  // Folds with + (| for bool) / * (& for bool), tinygrad's usum / uprod.
  static Tensor usum(const std::vector<Tensor>& ts);
  static Tensor uprod(const std::vector<Tensor>& ts);
  Tensor triu(int64_t diagonal = 0) const;
  Tensor tril(int64_t diagonal = 0) const;

  // ---- random (src/api/random.cpp): tinygrad's Threefry-2x32 stream ----
  static void manual_seed(uint64_t seed = 0);
  // The stream's position: the seed and how many words have been drawn. A run's checkpoints save
  // it (src/verify); restoring it continues the stream exactly (an unseeded stream is seed 0).
  struct RandomState {
    uint64_t seed = 0, counter = 0;
  };
  static RandomState random_state();
  static void set_random_state(const RandomState& s);
  static Tensor rand(const Shape& shape, DType dtype = DType::Float32);
  static Tensor randn(const Shape& shape, DType dtype = DType::Float32);
  static Tensor uniform(const Shape& shape, double low = 0.0, double high = 1.0,
                        DType dtype = DType::Float32);
  static Tensor randint(const Shape& shape, int64_t low = 0, int64_t high = 10,
                        DType dtype = DType::Int32);
  static Tensor normal(const Shape& shape, double mean = 0.0, double std = 1.0,
                       DType dtype = DType::Float32);
  static Tensor scaled_uniform(const Shape& shape, DType dtype = DType::Float32);
  static Tensor glorot_uniform(const Shape& shape, DType dtype = DType::Float32);
  static Tensor kaiming_uniform(const Shape& shape, double a = 0.01, DType dtype = DType::Float32);
  static Tensor kaiming_normal(const Shape& shape, double a = 0.01, DType dtype = DType::Float32);
  Tensor rand_like(std::optional<DType> dtype = std::nullopt) const;
  Tensor randn_like(std::optional<DType> dtype = std::nullopt) const;
  Tensor dropout(double p = 0.5) const;  // only while Tensor::training() is true
  static Tensor randperm(int64_t n, DType dtype = DType::Int32);
  // Samples indices with probability proportional to each row of this (1-D or 2-D) tensor.
  Tensor multinomial(int64_t num_samples = 1, bool replacement = false) const;
  // tinygrad's random_bits: `num` uint32 words from Threefry under key (2,) and counter (2,).
  static Tensor random_bits(const Tensor& key, const Tensor& counter, int64_t num);
  // THREEFRY on uint64 data with a uint64 key (computed on the host; integer-exact).
  Tensor threefry(const Tensor& key) const;
  static bool training();
  static void set_training(bool on);

  // ---- elementwise (src/api/elementwise.cpp) ----
  Tensor neg() const;
  Tensor add(const Tensor& x) const;
  Tensor add(Scalar x) const;
  Tensor sub(const Tensor& x) const;
  Tensor sub(Scalar x) const;
  Tensor mul(const Tensor& x) const;
  Tensor mul(Scalar x) const;
  // rounding_mode: "" (true division), "trunc" or "floor".
  Tensor div(const Tensor& x, const std::string& rounding_mode = "") const;
  Tensor div(Scalar x, const std::string& rounding_mode = "") const;
  Tensor mod(const Tensor& x) const;
  Tensor fmod(const Tensor& x) const;
  Tensor pow(const Tensor& x) const;
  Tensor pow(Scalar x) const;
  Tensor maximum(const Tensor& x) const;
  Tensor maximum(Scalar x) const;
  Tensor minimum(const Tensor& x) const;
  Tensor minimum(Scalar x) const;
  Tensor where(const Tensor& x, const Tensor& y) const;  // this is the condition
  Tensor where(const Tensor& x, Scalar y) const;
  Tensor where(Scalar x, const Tensor& y) const;
  Tensor where(Scalar x, Scalar y) const;
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  Tensor lt(const Tensor& x) const;
  Tensor lt(Scalar x) const;
  Tensor gt(const Tensor& x) const;
  Tensor gt(Scalar x) const;
  Tensor le(const Tensor& x) const;
  Tensor le(Scalar x) const;
  Tensor ge(const Tensor& x) const;
  Tensor ge(Scalar x) const;
  Tensor eq(const Tensor& x) const;
  Tensor eq(Scalar x) const;
  Tensor ne(const Tensor& x) const;
  Tensor ne(Scalar x) const;
  Tensor logical_not() const;
  Tensor bitwise_and(const Tensor& x) const;
  Tensor bitwise_or(const Tensor& x) const;
  Tensor bitwise_xor(const Tensor& x) const;
  Tensor bitwise_not() const;
  Tensor lshift(const Tensor& x) const;
  Tensor lshift(Scalar x) const;
  Tensor rshift(const Tensor& x) const;
  Tensor rshift(Scalar x) const;
  Tensor exp() const;
  Tensor log() const;
  Tensor log10() const;
  Tensor rsqrt() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor square() const;
  Tensor sign() const;
  Tensor abs() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  // Bounds are weak scalars: an int tensor clamped by ints stays int.
  Tensor clamp(std::optional<Scalar> min_ = std::nullopt, std::optional<Scalar> max_ = std::nullopt) const;
  Tensor clip(std::optional<Scalar> min_ = std::nullopt, std::optional<Scalar> max_ = std::nullopt) const;
  Tensor relu() const;
  Tensor relu6() const;
  Tensor leaky_relu(double neg_slope = 0.01) const;
  Tensor elu(double alpha = 1.0) const;
  Tensor celu(double alpha = 1.0) const;
  Tensor selu(double alpha = 1.67326, double gamma = 1.0507) const;
  Tensor sigmoid() const;
  Tensor hardsigmoid(double alpha = 1.0 / 6, double beta = 0.5) const;
  Tensor logsigmoid() const;
  Tensor tanh() const;
  Tensor hardtanh(double min_val = -1, double max_val = 1) const;
  Tensor gelu(const std::string& approximate = "tanh") const;
  Tensor quick_gelu() const;
  Tensor swish() const;
  Tensor silu() const;
  Tensor hardswish() const;
  Tensor softplus(double beta = 1.0) const;
  Tensor mish() const;
  Tensor softsign() const;
  Tensor erf() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor atanh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor logaddexp(const Tensor& x) const;
  Tensor logaddexp(Scalar x) const;
  Tensor copysign(const Tensor& x) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor lerp(const Tensor& end, Scalar weight) const;
  Tensor isnan() const;
  Tensor isinf(bool detect_positive = true, bool detect_negative = true) const;
  Tensor isfinite() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  Tensor allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  // dtype shorthands (float/int/bool are C++ keywords: trailing underscore)
  Tensor float_() const { return cast(DType::Float32); }
  Tensor double_() const { return cast(DType::Float64); }
  Tensor half() const { return cast(DType::Float16); }
  Tensor bfloat16() const { return cast(DType::BFloat16); }
  Tensor int_() const { return cast(DType::Int32); }
  Tensor long_() const { return cast(DType::Int64); }
  Tensor short_() const { return cast(DType::Int16); }
  Tensor bool_() const { return cast(DType::Bool); }
  const Shape& size() const { return shape(); }
  int64_t size(int64_t dim) const;
  int64_t element_size() const { return static_cast<int64_t>(itemsize(dtype())); }
  int64_t nbytes() const { return numel() * element_size(); }
  Tensor empty_like(std::optional<DType> dtype = std::nullopt) const { return zeros_like(dtype); }
  // Applies each function in turn (tinygrad's sequential).
  template <class F>
  Tensor sequential(const std::vector<F>& fs) const {
    Tensor x = *this;
    for (const auto& f : fs) x = f(x);
    return x;
  }

  // ---- reductions (src/api/reduce.cpp); keepdim as tinygrad ----
  Tensor sum(Axis axis = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor prod(Axis axis = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor max(Axis axis = {}, bool keepdim = false) const;
  Tensor min(Axis axis = {}, bool keepdim = false) const;
  Tensor mean(Axis axis = {}, bool keepdim = false) const;
  Tensor var(Axis axis = {}, bool keepdim = false, double correction = 1) const;
  Tensor std(Axis axis = {}, bool keepdim = false, double correction = 1) const;
  Tensor any(Axis axis = {}, bool keepdim = false) const;
  Tensor all(Axis axis = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor logsumexp(Axis axis = {}, bool keepdim = false) const;
  Tensor softmax(int64_t axis = -1, std::optional<DType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t axis = -1, std::optional<DType> dtype = std::nullopt) const;
  Tensor softmin(int64_t axis = -1) const;
  Tensor cumsum(int64_t axis = 0) const;
  Tensor cumprod(int64_t axis) const;
  Tensor cummax(int64_t axis = 0) const;  // values; cummax_indices for the indices
  Tensor cummax_indices(int64_t axis = 0) const;
  Tensor cummin(int64_t axis = 0) const;
  Tensor logcumsumexp(int64_t axis = 0) const;
  std::pair<Tensor, Tensor> var_mean(Axis axis = {}, bool keepdim = false, double correction = 1) const;
  std::pair<Tensor, Tensor> std_mean(Axis axis = {}, bool keepdim = false, double correction = 1) const;
  // Bitonic sort along `dim` (tinygrad's network): values and int32 indices (stable for ties).
  std::pair<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::pair<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true) const;
  Tensor normalize(double p = 2.0, int64_t dim = 1, double eps = 1e-12) const;

  // ---- movement (src/api/movement.cpp) ----
  Tensor expand_to(const Shape& shape) const;  // tinygrad's expand: new leading axes, -1 keeps
  Tensor transpose(int64_t dim0 = 1, int64_t dim1 = 0) const;
  Tensor T() const { return transpose(); }
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, const Shape& sizes) const;
  Tensor squeeze(std::optional<int64_t> dim = std::nullopt) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor view(const Shape& shape) const { return reshape(shape); }
  // tinygrad's pad: (before, after) per axis, negative entries shrink; mode "constant",
  // "reflect", "replicate" or "circular".
  Tensor pad(const Pairs& padding, const std::string& mode, Scalar value = 0.0) const;
  Tensor pad_value(const Pairs& padding, Scalar value) const;
  Tensor pad_to(const Shape& shape) const;
  Tensor shrink_to(const Shape& shape) const;
  Tensor repeat(const Shape& repeats) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;
  std::vector<Tensor> split(int64_t size, int64_t dim = 0) const;
  std::vector<Tensor> split(const std::vector<int64_t>& sizes, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor cat(const std::vector<Tensor>& others, int64_t dim = 0) const;
  static Tensor cat_all(const std::vector<Tensor>& tensors, int64_t dim = 0);
  Tensor stack(const std::vector<Tensor>& others, int64_t dim = 0) const;
  static Tensor stack_all(const std::vector<Tensor>& tensors, int64_t dim = 0);
  Tensor roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) const;
  Tensor diag() const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;
  std::vector<Tensor> meshgrid(const std::vector<Tensor>& others, const std::string& indexing = "ij") const;
  // einops-style "b c (h w) -> b (c h) w"; sizes for the axes split on the left.
  Tensor rearrange(const std::string& formula, const std::vector<std::pair<std::string, int64_t>>& sizes = {}) const;
  Tensor pool(const Shape& kernel, const std::vector<int64_t>& stride,
              const std::vector<int64_t>& dilation) const;  // tinygrad's _pool

  // ---- indexing (src/api/indexing.cpp) ----
  // One integer index tensor (negatives wrapped) is one GATHER, a copy of the chosen elements
  // (docs/spec.md §15); several keep tinygrad's one-hot formulation.
  Tensor operator[](const std::vector<Index>& idx) const;
  Tensor operator[](int64_t i) const { return (*this)[std::vector<Index>{Index(i)}]; }
  // torch's gather, one GATHER: an index outside [0, size) (negatives included) gives zero bits.
  Tensor gather(int64_t dim, const Tensor& index) const;
  // Data-dependent sizes: these realize to count the selected elements, as tinygrad's .item().
  Tensor masked_select(const Tensor& mask) const;
  Tensor nonzero() const;
  Tensor one_hot(int64_t num_classes) const;
  Tensor one_hot_along_dim(int64_t num_classes, int64_t dim = -1) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  // reduce: "" (replace), "add" or "multiply" (tinygrad's scatter with reduce=).
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce) const;
  Tensor scatter(int64_t dim, const Tensor& index, Scalar src, const std::string& reduce = "") const;
  // reduce: "sum", "prod", "mean", "amax" or "amin".
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                        bool include_self = true) const;
  // mode: "linear", "nearest" or "nearest-exact", over the last size.size() axes.
  Tensor interpolate(const Shape& size, const std::string& mode = "linear", bool align_corners = false) const;

  // ---- linear algebra (src/api/linalg.cpp) ----
  // fused: true sums each output as a chain of fused multiply-adds (REDUCE_MULACC, docs/spec.md
  // §14), false as rounded products then sums (MUL, REDUCE ADD); unset follows FusedScope (off by
  // default). Integer operands have nothing to fuse and ignore it.
  Tensor dot(const Tensor& w, std::optional<DType> dtype = std::nullopt,
             std::optional<bool> fused = std::nullopt) const;
  Tensor matmul(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                std::optional<bool> fused = std::nullopt) const;
  Tensor linear(const Tensor& weight, std::optional<Tensor> bias = std::nullopt,
                std::optional<bool> fused = std::nullopt) const;
  static Tensor einsum(const std::string& formula, const std::vector<Tensor>& operands);
  // Keccak over the bytes of each last-axis row: "sha3_224", "sha3_256" or "shake_128" (16-byte
  // output), built from uint64 Tensor ops as tinygrad's is. Returns uint8 (..., digest bytes).
  Tensor keccak(const std::string& cfg = "sha3_256") const;
  // tinygrad's content hash: shake_128 over 4 KiB pieces of each 1 MiB chunk, then over those
  // digests (repeated while more than one chunk remains). 16 uint8 bytes.
  Tensor hash() const;
  // Householder QR of the last two axes (tinygrad's loop): {Q, R}.
  std::pair<Tensor, Tensor> qr() const;
  // One-sided Jacobi SVD after a QR (tinygrad's recipe): {U, S, V^T}, S descending.
  std::tuple<Tensor, Tensor, Tensor> svd(bool full_matrices = true) const;
  // Orthogonalisation by `steps` Newton-Schulz iterations with polynomial coefficients `params`.
  Tensor newton_schulz(int64_t steps, const std::vector<double>& params, double eps = 1e-7) const;
  // softmax(q k^T / sqrt(d) + mask) v; a bool mask keeps where true.
  Tensor scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                      std::optional<Tensor> attn_mask = std::nullopt, double dropout_p = 0.0,
                                      bool is_causal = false) const;

  // ---- convolution, pooling, normalization (src/api/conv.cpp) ----
  // padding: one int for all sides, 2 ints (per spatial axis) or 4 (left,right,top,bottom)
  // as tinygrad's resolve_pool_pads.
  // fused: as dot's (the sum over cin, kh, kw becomes one REDUCE_MULACC).
  Tensor conv2d(const Tensor& weight, std::optional<Tensor> bias = std::nullopt, int64_t groups = 1,
                std::vector<int64_t> stride = {1}, std::vector<int64_t> dilation = {1},
                std::vector<int64_t> padding = {0}, std::optional<bool> fused = std::nullopt) const;
  Tensor conv_transpose2d(const Tensor& weight, std::optional<Tensor> bias = std::nullopt,
                          int64_t groups = 1, std::vector<int64_t> stride = {1},
                          std::vector<int64_t> dilation = {1}, std::vector<int64_t> padding = {0},
                          std::vector<int64_t> output_padding = {0}) const;
  Tensor max_pool2d(std::vector<int64_t> kernel_size = {2, 2}, std::vector<int64_t> stride = {},
                    std::vector<int64_t> dilation = {1}, std::vector<int64_t> padding = {0}) const;
  // max_pool2d's values and the flat spatial index of each maximum (first on ties).
  std::pair<Tensor, Tensor> max_pool2d_with_indices(std::vector<int64_t> kernel_size = {2, 2},
                                                    std::vector<int64_t> stride = {},
                                                    std::vector<int64_t> dilation = {1},
                                                    std::vector<int64_t> padding = {0}) const;
  Tensor avg_pool2d(std::vector<int64_t> kernel_size = {2, 2}, std::vector<int64_t> stride = {},
                    std::vector<int64_t> dilation = {1}, std::vector<int64_t> padding = {0},
                    bool count_include_pad = true) const;
  Tensor max_unpool2d(const Tensor& indices, std::vector<int64_t> kernel_size = {2, 2},
                      std::vector<int64_t> stride = {}, std::vector<int64_t> dilation = {1},
                      std::vector<int64_t> padding = {0}, std::optional<Shape> output_size = std::nullopt) const;
  Tensor batchnorm(std::optional<Tensor> weight, std::optional<Tensor> bias, const Tensor& mean,
                   const Tensor& invstd, Axis axis = 1) const;
  Tensor layernorm(Axis axis = -1, double eps = 1e-5) const;

  // ---- losses (src/api/loss.cpp) ----
  Tensor sparse_categorical_crossentropy(const Tensor& Y, int64_t ignore_index = -1,
                                         double label_smoothing = 0.0,
                                         Reduction reduction = Reduction::Mean) const;
  Tensor cross_entropy(const Tensor& Y, Reduction reduction = Reduction::Mean,
                       double label_smoothing = 0.0) const;
  Tensor nll_loss(const Tensor& Y, std::optional<Tensor> weight = std::nullopt,
                  std::optional<int64_t> ignore_index = std::nullopt,
                  Reduction reduction = Reduction::Mean) const;
  Tensor binary_crossentropy(const Tensor& Y, Reduction reduction = Reduction::Mean) const;
  Tensor binary_crossentropy_logits(const Tensor& Y, Reduction reduction = Reduction::Mean,
                                    std::optional<Tensor> pos_weight = std::nullopt) const;
  Tensor mse(const Tensor& Y, Reduction reduction = Reduction::Mean) const;
  Tensor do_reduction(Reduction reduction) const;

 private:
  std::shared_ptr<TensorState> st_;
};

// ---- operators, as tinygrad's dunder methods (weak C++ scalars on either side) ----
Tensor operator-(const Tensor& a);
Tensor operator~(const Tensor& a);
#define MAROON_OPERATOR(sym)                              \
  Tensor operator sym(const Tensor& a, const Tensor& b);  \
  Tensor operator sym(const Tensor& a, Scalar b);         \
  Tensor operator sym(Scalar a, const Tensor& b);
MAROON_OPERATOR(+)
MAROON_OPERATOR(-)
MAROON_OPERATOR(*)
MAROON_OPERATOR(/)
MAROON_OPERATOR(%)
MAROON_OPERATOR(&)
MAROON_OPERATOR(|)
MAROON_OPERATOR(^)
MAROON_OPERATOR(<)
MAROON_OPERATOR(>)
MAROON_OPERATOR(<=)
MAROON_OPERATOR(>=)
MAROON_OPERATOR(==)
MAROON_OPERATOR(!=)
#undef MAROON_OPERATOR
Tensor operator<<(const Tensor& a, Scalar b);
Tensor operator>>(const Tensor& a, Scalar b);

// RAII: Tensor::training() is `on` inside the scope (tinygrad's Context(TRAINING=1)).
class TrainingScope {
 public:
  explicit TrainingScope(bool on = true) : saved_(Tensor::training()) { Tensor::set_training(on); }
  ~TrainingScope() { Tensor::set_training(saved_); }
  TrainingScope(const TrainingScope&) = delete;
  TrainingScope& operator=(const TrainingScope&) = delete;

 private:
  bool saved_;
};

// Whether dot/matmul/linear/conv2d called without an explicit `fused` argument fuse on this
// thread (default false): model code opts in with FusedScope; the engine never does by itself.
bool current_fused();
void set_current_fused(bool on);

// RAII: matmuls and convolutions built inside the scope are fused (REDUCE_MULACC) unless their
// call says otherwise; nn::Linear and nn::Conv2d follow it.
class FusedScope {
 public:
  explicit FusedScope(bool on = true) : saved_(current_fused()) { set_current_fused(on); }
  ~FusedScope() { set_current_fused(saved_); }
  FusedScope(const FusedScope&) = delete;
  FusedScope& operator=(const FusedScope&) = delete;

 private:
  bool saved_;
};

template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::Int16; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::UInt16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::UInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::UInt64; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }

}  // namespace maroon
