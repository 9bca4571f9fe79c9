// interpolate (tinygrad's mixin/op.py): per axis, gather the neighbours and lerp.
#include "api/internal.h"
#include "core/fpenv.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

Tensor Tensor::interpolate(const Shape& size, const std::string& mode, bool align_corners) const {
  if (size.empty() || static_cast<int64_t>(size.size()) > ndim())
    throw ShapeError("[interpolate] invalid size " + shape_str(size) + " for shape " + shape_str(shape()));
  if (mode != "linear" && mode != "nearest" && mode != "nearest-exact")
    throw ShapeError("[interpolate] mode '" + mode + "' is not supported");
  if (align_corners && mode != "linear")
    throw ShapeError("[interpolate] align_corners needs mode 'linear'");
  Tensor x = *this;
  Shape expand = shape();
  const int64_t n = static_cast<int64_t>(size.size());
  for (int64_t i = -1; i >= -n; --i) {
    int64_t ax = ndim() + i, out = size[size.size() + i], in_sz = shape()[ax];
    Shape reshape(ndim(), 1);
    reshape[ax] = out;
    expand[ax] = out;
    if (mode == "linear") {
      Tensor arr = arange(out);
      Tensor num = align_corners ? arr * (in_sz - 1) : (arr * 2 + 1) * in_sz - out;
      int64_t den = align_corners ? out - 1 : out * 2;
      num = num.clip(Scalar(0), Scalar((in_sz - 1) * den));
      Tensor den_t = Tensor::full({}, den, DType::Int32);
      Tensor low = num.div(den_t, "floor").reshape(reshape).expand(expand);
      Tensor high = (num + (den - 1)).div(den_t, "floor").reshape(reshape).expand(expand);
      Tensor perc = num.mod(den_t).cast(DType::Float32).div(den).reshape(reshape).expand(expand);
      x = x.gather(ax, low).lerp(x.gather(ax, high), perc);
    } else {
      double scale = in_ieee_env([&] { return static_cast<double>(in_sz) / static_cast<double>(out); });
      Tensor arr = arange(out, DType::Float32);
      Tensor pos = mode == "nearest-exact" ? prim::mul(scale, arr + 0.5) : prim::mul(scale, arr);
      x = x.gather(ax, pos.cast(DType::Int32).reshape(reshape).expand(expand));
    }
  }
  return x.cast(dtype());
}

}  // namespace maroon
