// DLPack export (__dlpack__, __dlpack_device__), next to __array__: numpy.from_dlpack,
// torch.from_dlpack and others take a Maroon tensor without a copy. The layout is Debian's
// dlpack.h (libdlpack-dev, DLPack 0.6); the bytes are the realized buffer numpy() also exposes,
// kept alive by the capsule until the consumer's deleter runs.
#include <dlpack/dlpack.h>

#include "bind.h"

namespace maroon::py_bind {

namespace {

// DLPack's code for a dtype; bool has none in DLPack 0.6 (kDLBool came later).
DLDataType dl_dtype(DType d) {
  uint8_t bits = static_cast<uint8_t>(itemsize(d) * 8);
  if (d == DType::BFloat16) return {kDLBfloat, 16, 1};
  if (is_float(d)) return {kDLFloat, bits, 1};
  if (d == DType::Bool) throw DTypeError("[__dlpack__] bool tensors have no DLPack 0.6 type code; cast them first");
  return {static_cast<uint8_t>(is_unsigned(d) ? kDLUInt : kDLInt), bits, 1};
}

// What the capsule owns: the DLPack header, its shape, and the numpy array holding the bytes.
struct Export {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  py::object owner;
};

void release(DLManagedTensor* m) {
  py::gil_scoped_acquire gil;
  delete static_cast<Export*>(m->manager_ctx);
}

// A capsule named "dltensor"; a consumer renames it "used_dltensor" and calls the deleter. One
// never consumed frees itself when collected.
void capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    m->deleter(m);
  }
}

py::capsule to_dlpack(const Tensor& x, const py::object& stream) {
  if (!stream.is_none()) throw py::buffer_error("[__dlpack__] a CPU tensor takes no stream");
  DLDataType type = dl_dtype(x.dtype());
  // Realizes; C-contiguous. numpy has no bfloat16 (numpy() widens it to float32), so its bits
  // travel as uint16.
  py::array a = to_numpy(x.dtype() == DType::BFloat16 ? x.bitcast(DType::UInt16) : x);
  auto* e = new Export;
  e->owner = a;
  e->shape.assign(a.shape(), a.shape() + a.ndim());
  DLTensor& t = e->managed.dl_tensor;
  t.data = const_cast<void*>(a.data());
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(a.ndim());
  t.dtype = type;
  t.shape = e->shape.data();
  t.strides = nullptr;  // compact row-major
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = release;
  return py::capsule(&e->managed, "dltensor", capsule_destructor);
}

}  // namespace

void bind_dlpack(py::class_<Tensor>& t) {
  t.def("__dlpack__", &to_dlpack, py::arg("stream") = py::none());
  t.def("__dlpack_device__", [](const Tensor&) { return py::make_tuple(static_cast<int>(kDLCPU), 0); });
}

}  // namespace maroon::py_bind
