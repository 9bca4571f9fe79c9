// maroon-vectors: the conformance vectors of docs/spec-model.md (spec/vectors/). Each group
// (primitives, composites, random, mnist) adds input and output tensors and manifest entries to
// a Book, which writes one .safetensors file per group and manifest.json.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "maroon/maroon.h"

namespace maroon::vectors {

// One vector: an op or function applied to named inputs, with its expected outputs.
struct Entry {
  std::string id;                    // unique, e.g. "ADD/float32/nearest"
  std::string op;                    // the primitive or composite's name
  std::string dtype;                 // the dtype it runs in ("" when not one)
  std::string round = "nearest";     // the rounding mode the nodes were built in
  std::string args = "{}";           // a JSON object with the op's arguments
  std::vector<std::string> inputs;   // tensor references "file:name"
  std::vector<std::string> outputs;  // tensor references "file:name"
};

class Book {
 public:
  // An input tensor stored under a readable name (the same name twice must be the same bytes).
  std::string input(const std::string& file, const std::string& name, const Tensor& t);
  // An output tensor, stored once per content: its name is "o/" + 16 hex digits of the digest
  // of its dtype, shape and bytes, so equal results (a mode that changes nothing) share it.
  std::string output(const std::string& file, const Tensor& t);
  void add(Entry e);
  // Whether some vector has this op (the coverage check of main.cpp).
  bool has_op(const std::string& op) const;
  // Writes every file and manifest.json into `dir` (atomically, file by file).
  void write(const std::string& dir) const;
  size_t size() const { return entries_.size(); }

 private:
  struct Stored {
    Tensor t;
    std::vector<uint8_t> bytes;
  };
  std::map<std::string, std::map<std::string, Stored>> files_;
  std::vector<Entry> entries_;
};

// Tensors from raw element bits (low bits of each uint64 used), row-major.
Tensor from_bits(const std::vector<uint64_t>& bits, const Shape& shape, DType d);
std::string dn(DType d);  // dtype name
std::string rn(Round r);  // "nearest", "toward_zero", "up", "down"
std::string shape_json(const Shape& s);

// A dtype's special values (bits) the primitives' vectors use: zeros of both signs, subnormals,
// infinities, NaNs (one with a sign and payload), extremes; integer minima, maxima, shift counts.
std::vector<uint64_t> special_values(DType d);

// The groups. `data_dir` holds MNIST (IDX files) for the training run.
void add_primitives(Book& b);
void add_gather(Book& b);
void add_composites(Book& b);
void add_random(Book& b);
void add_mnist(Book& b, const std::string& data_dir);

}  // namespace maroon::vectors
