// The canonical tensor-list serialisation and its digest (maroon/digest.h).
#include "maroon/digest.h"

namespace maroon {

namespace {

template <class Sink>
void put_u64(Sink& sink, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  sink(b, 8);
}

// One tensor's record, fed to `sink` piece by piece (the digest never holds a second copy).
template <class Sink>
void put_record(Sink& sink, const Tensor& t) {
  std::string_view name = dtype_name(t.dtype());
  put_u64(sink, name.size());
  sink(name.data(), name.size());
  put_u64(sink, t.shape().size());
  for (int64_t d : t.shape()) put_u64(sink, static_cast<uint64_t>(d));
  std::vector<uint8_t> bytes = t.bytes();
  put_u64(sink, bytes.size());
  sink(bytes.data(), bytes.size());
}

template <class Sink>
void put_list(Sink& sink, std::string_view tag, const std::vector<Tensor>& tensors) {
  sink(tag.data(), tag.size());
  put_u64(sink, tensors.size());
  for (const Tensor& t : tensors) put_record(sink, t);
}

}  // namespace

void hash_tensor(Sha256& h, const Tensor& t) {
  auto sink = [&](const void* p, size_t n) { h.update(p, n); };
  put_record(sink, t);
}

std::string tensors_digest(std::string_view tag, const std::vector<Tensor>& tensors) {
  Sha256 h;
  auto sink = [&](const void* p, size_t n) { h.update(p, n); };
  put_list(sink, tag, tensors);
  return h.finish_hex();
}

std::string tensors_serialization(std::string_view tag, const std::vector<Tensor>& tensors) {
  std::string out;
  auto sink = [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  put_list(sink, tag, tensors);
  return out;
}

}  // namespace maroon
