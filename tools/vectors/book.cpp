// The Book: tensors per file (inputs by name, outputs by content), entries, and the writer.
#include <cstdio>

#include "data/json.h"
#include "io/files.h"
#include "maroon/digest.h"
#include "maroon/safetensors.h"
#include "vectors.h"

namespace maroon::vectors {

Tensor from_bits(const std::vector<uint64_t>& bits, const Shape& shape, DType d) {
  const size_t k = itemsize(d);
  std::vector<uint8_t> b(bits.size() * k);
  for (size_t i = 0; i < bits.size(); ++i)
    for (size_t j = 0; j < k; ++j) b[i * k + j] = static_cast<uint8_t>(bits[i] >> (8 * j));
  return Tensor::from_bytes(b.data(), b.size(), shape, d);
}

std::string dn(DType d) { return std::string(dtype_name(d)); }

std::string rn(Round r) {
  switch (r) {
    case Round::NearestEven: return "nearest";
    case Round::TowardZero: return "toward_zero";
    case Round::Up: return "up";
    case Round::Down: return "down";
  }
  return "nearest";
}

std::string shape_json(const Shape& s) {
  std::string j = "[";
  for (size_t i = 0; i < s.size(); ++i) j += (i ? ", " : "") + std::to_string(s[i]);
  return j + "]";
}

std::string Book::input(const std::string& file, const std::string& name, const Tensor& t) {
  auto& f = files_[file];
  std::vector<uint8_t> bytes = t.bytes();
  auto it = f.find(name);
  if (it != f.end() && (it->second.bytes != bytes || it->second.t.shape() != t.shape()))
    throw Error("[vectors] input '" + name + "' added twice with different contents");
  if (it == f.end()) f.emplace(name, Stored{Tensor::from_bytes(bytes.data(), bytes.size(), t.shape(), t.dtype()), bytes});
  return file + ":" + name;
}

std::string Book::output(const std::string& file, const Tensor& t) {
  std::string name = "o/" + tensors_digest("maroon-vectors/output", {t}).substr(0, 16);
  return input(file, name, t);
}

void Book::add(Entry e) {
  for (const Entry& x : entries_)
    if (x.id == e.id) throw Error("[vectors] duplicate vector id '" + e.id + "'");
  entries_.push_back(std::move(e));
}

bool Book::has_op(const std::string& op) const {
  for (const Entry& e : entries_)
    if (e.op == op) return true;
  return false;
}

void Book::write(const std::string& dir) const {
  const std::string who = "[vectors]";
  auto q = [&](const std::string& s) { return json::quote(s, who); };
  std::string files;
  for (auto& [file, tensors] : files_) {
    nn::StateDict sd;
    for (auto& [name, s] : tensors) sd.push_back({name, s.t});
    std::string bytes = nn::safe_save_bytes(sd);
    io::write_file_atomic(dir + "/" + file, bytes, who);
    files += std::string(files.empty() ? "" : ",\n") + "    " + q(file) + ": " + q(sha256_hex(bytes));
  }
  std::string j = "{\n  \"format\": \"maroon-vectors/1\",\n";
  j += "  \"spec\": [\"docs/spec.md\", \"docs/spec-model.md\"],\n";
  j += "  \"files\": {\n" + files + "\n  },\n  \"vectors\": [\n";
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    auto list = [&](const std::vector<std::string>& v) {
      std::string s = "[";
      for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + q(v[k]);
      return s + "]";
    };
    j += "    {\"id\": " + q(e.id) + ", \"op\": " + q(e.op) + ", \"dtype\": " + q(e.dtype) + ", \"round\": " +
         q(e.round) + ", \"args\": " + e.args + ", \"inputs\": " + list(e.inputs) + ", \"outputs\": " +
         list(e.outputs) + "}" + (i + 1 < entries_.size() ? "," : "") + "\n";
  }
  j += "  ]\n}\n";
  io::write_file_atomic(dir + "/manifest.json", j, who);
}

}  // namespace maroon::vectors
