// GATHER (docs/spec.md section 15) on every dtype's special values, in their own file
// (gather.safetensors) so that the other files keep their bytes: along both axes of a (3, n)
// matrix, with every integer index dtype, indices at and past both ends of the axis and the
// index dtype's extremes (they select nothing: zero bits), and a size-1 index axis that
// stretches. The specials include -0 and a NaN with a sign and payload, which GATHER copies
// unchanged (where the one-hot formulation gives +0 and the canonical NaN).
#include "vectors.h"

namespace maroon::vectors {

namespace {

const std::string kFile = "gather.safetensors";

uint64_t mask(DType d) { return bitwidth(d) == 64 ? ~uint64_t{0} : (uint64_t{1} << bitwidth(d)) - 1; }

// The rows of x: the specials, then the same rotated by one and by two places.
Tensor matrix_of(DType d) {
  std::vector<uint64_t> s = special_values(d), bits;
  const size_t n = s.size();
  for (size_t r = 0; r < 3; ++r)
    for (size_t i = 0; i < n; ++i) bits.push_back(s[(i + r) % n]);
  return from_bits(bits, {3, static_cast<int64_t>(n)}, d);
}

// Index values for an axis of `size` in dtype `id`: every position, then -1, size, size + 5 and
// the dtype's minimum and maximum (-1 is the maximum when unsigned) (as bits; narrow dtypes wrap the values they cannot hold), to
// `count` values, cycled.
std::vector<uint64_t> index_values(DType id, int64_t size, size_t count, size_t start) {
  const uint64_t m = mask(id), top = is_unsigned(id) ? m : m >> 1;
  std::vector<uint64_t> pool;
  for (int64_t i = 0; i < size; ++i) pool.push_back(static_cast<uint64_t>(i) & m);
  for (uint64_t v : {m, static_cast<uint64_t>(size) & m, static_cast<uint64_t>(size + 5) & m, (top + 1) & m, top})
    pool.push_back(v);
  std::vector<uint64_t> out;
  for (size_t i = 0; i < count; ++i) out.push_back(pool[(start + i) % pool.size()]);
  return out;
}

void gather_vectors(Book& book, DType d, DType id) {
  Tensor x = matrix_of(d);
  const int64_t n = x.shape()[1];
  std::string rx = book.input(kFile, dn(d) + "/matrix", x);
  struct Case {
    std::string name;
    Shape shape;
    int64_t axis;
  };
  const std::vector<Case> cases = {
      {"along", {3, n + 5}, 1},   // each row: every column, then the out-of-range ones
      {"across", {8, n}, 0},      // each column: rows 0..2 and the out-of-range ones, shifted
      {"stretched", {1, n + 5}, 1},  // one index row for all three rows (EXPAND)
  };
  for (const Case& c : cases) {
    const int64_t size = x.shape()[static_cast<size_t>(c.axis)];
    std::vector<uint64_t> bits;
    for (int64_t r = 0; r < c.shape[0]; ++r) {
      std::vector<uint64_t> row = index_values(id, size, static_cast<size_t>(c.shape[1]), static_cast<size_t>(r));
      bits.insert(bits.end(), row.begin(), row.end());
    }
    Tensor idx = from_bits(bits, c.shape, id);
    std::string ri = book.input(kFile, dn(id) + "/" + c.name + "_" + std::to_string(n), idx);
    const std::string ax = std::to_string(c.axis);
    book.add({"GATHER/" + dn(d) + "/" + dn(id) + "/" + c.name, "GATHER", dn(d), "nearest", "{\"axis\": " + ax + "}",
              {rx, ri}, {book.output(kFile, prim::gather(x, idx, c.axis))}});
  }
}

}  // namespace

void add_gather(Book& book) {
  // Every value dtype with int32 and int64 indices; float32 with every index dtype.
  for (DType d : kConcreteDTypes)
    for (DType id : {DType::Int32, DType::Int64}) gather_vectors(book, d, id);
  for (DType id : kConcreteDTypes)
    if (is_int(id) && id != DType::Int32 && id != DType::Int64) gather_vectors(book, DType::Float32, id);
}

}  // namespace maroon::vectors
