// The inference C ABI (maroon/infer.h): converts arguments, calls the C++ API
// (maroon/inference.h) and turns every exception into a status code and a message.
#include "maroon/infer.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "maroon/digest.h"
#include "maroon/inference.h"

struct maroon_infer_model {
  maroon::infer::Model m;
  std::string kind;
};

namespace {

using namespace maroon;

struct ArgError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int fail(maroon_infer_error* err, int code, const char* msg) {
  if (err) {
    err->code = code;
    std::snprintf(err->message, sizeof err->message, "%s", msg);
  }
  return code;
}

template <class Fn>
int guarded(maroon_infer_error* err, Fn&& fn) {
  try {
    fn();
    if (err) {
      err->code = MAROON_INFER_OK;
      err->message[0] = 0;
    }
    return MAROON_INFER_OK;
  } catch (const ArgError& e) {
    return fail(err, MAROON_INFER_EARG, e.what());
  } catch (const Error& e) {
    return fail(err, MAROON_INFER_EINPUT, e.what());
  } catch (const std::bad_alloc&) {
    return fail(err, MAROON_INFER_EINTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return fail(err, MAROON_INFER_EINTERNAL, e.what());
  } catch (...) {
    return fail(err, MAROON_INFER_EINTERNAL, "unknown error");
  }
}

template <class T>
T* copy_out(const void* src, size_t n) {
  T* p = static_cast<T*>(std::malloc(n ? n * sizeof(T) : 1));
  if (!p) throw std::bad_alloc();
  if (n) std::memcpy(p, src, n * sizeof(T));
  return p;
}

void fill(maroon_infer_result* out, const infer::Model& m, const infer::Inputs& in, const infer::Result& r) {
  maroon_infer_result res{};
  std::snprintf(res.digest, sizeof res.digest, "%s", r.digest.c_str());
  res.n = r.classes.size();
  std::vector<int32_t> classes(r.classes.begin(), r.classes.end());
  std::vector<uint8_t> logits = r.outputs.at(0).bytes();
  std::string json = infer::to_json(m, in, r);
  try {
    res.n_outputs = r.outputs.size();
    res.classes = copy_out<int32_t>(classes.data(), classes.size());
    res.logits = copy_out<float>(logits.data(), logits.size() / sizeof(float));
    res.json = copy_out<char>(json.c_str(), json.size() + 1);
  } catch (...) {
    maroon_infer_result_free(&res);
    throw;
  }
  *out = res;
}

void need(const void* p, const char* what) {
  if (!p) throw ArgError(std::string("[infer] ") + what + " is NULL");
}

}  // namespace

extern "C" {

int maroon_infer_model_load(const char* path, maroon_infer_model** out, maroon_infer_error* err) {
  return guarded(err, [&] {
    need(path, "path");
    need(out, "out");
    auto* m = new maroon_infer_model{infer::load_model(path), ""};
    m->kind = m->m.net->kind();
    *out = m;
  });
}

void maroon_infer_model_free(maroon_infer_model* model) { delete model; }

const char* maroon_infer_model_kind(const maroon_infer_model* model) { return model ? model->kind.c_str() : ""; }

int maroon_infer_run_file(const maroon_infer_model* model, const char* input_path, const char* format, int64_t start,
                          int64_t count, maroon_infer_result* out, maroon_infer_error* err) {
  return guarded(err, [&] {
    need(model, "model");
    need(input_path, "input path");
    need(out, "out");
    infer::Format f = infer::Format::Auto;
    try {
      f = infer::parse_format(format ? format : "auto");
    } catch (const Error& e) {
      throw ArgError(e.what());
    }
    infer::Inputs in = infer::load_inputs(input_path, f, start, count);
    fill(out, model->m, in, infer::run(*model->m.net, in.x));
  });
}

int maroon_infer_run_pixels(const maroon_infer_model* model, const uint8_t* pixels, size_t n,
                            maroon_infer_result* out, maroon_infer_error* err) {
  return guarded(err, [&] {
    need(model, "model");
    need(pixels, "pixels");
    need(out, "out");
    // At most 2^40 images, and (32-bit builds) no more than a size_t can count the bytes of:
    // `size_t{1} << 40` was a shift past a 32-bit size_t's width, and n * 784 could wrap.
    constexpr uint64_t kMaxImages = std::min<uint64_t>(uint64_t{1} << 40, SIZE_MAX / 784);
    if (n == 0 || n > kMaxImages)
      throw ArgError(kMaxImages == uint64_t{1} << 40 ? "[infer] n must be between 1 and 2^40 images"
                                                     : "[infer] n must be between 1 and " +
                                                           std::to_string(kMaxImages) + " images");
    std::string_view bytes(reinterpret_cast<const char*>(pixels), n * 784);
    infer::Inputs in = infer::parse_inputs(bytes, infer::Format::Raw, "<pixels>");
    fill(out, model->m, in, infer::run(*model->m.net, in.x));
  });
}

void maroon_infer_result_free(maroon_infer_result* result) {
  if (!result) return;
  std::free(result->classes);
  std::free(result->logits);
  std::free(result->json);
  result->classes = nullptr;
  result->logits = nullptr;
  result->json = nullptr;
}

int maroon_infer_digest(const maroon_infer_tensor* tensors, size_t n, char digest[65], maroon_infer_error* err) {
  return guarded(err, [&] {
    need(digest, "digest");
    if (n) need(tensors, "tensors");
    std::vector<Tensor> ts;
    for (size_t i = 0; i < n; ++i) {
      const maroon_infer_tensor& t = tensors[i];
      need(t.dtype, "a tensor's dtype");
      if (t.rank && !t.shape) throw ArgError("[infer] a tensor's shape is NULL");
      if (t.rank > 64) throw ArgError("[infer] a tensor's rank is above 64");
      DType d;
      try {
        d = dtype_from_name(t.dtype);
      } catch (const Error& e) {
        throw ArgError(e.what());
      }
      if (is_weak(d)) throw ArgError("[infer] dtype '" + std::string(t.dtype) + "' is not a buffer dtype");
      if (t.nbytes && !t.data) throw ArgError("[infer] a tensor's data is NULL");
      Shape s(t.shape, t.shape + t.rank);
      ts.push_back(Tensor::from_bytes(t.data ? t.data : "", t.nbytes, s, d));
    }
    std::snprintf(digest, 65, "%s", tensors_digest(kInferenceTag, ts).c_str());
  });
}

}  // extern "C"
