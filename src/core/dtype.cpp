#include "maroon/dtype.h"

#include <array>
#include <cstdint>
#include <span>

#include "maroon/error.h"

namespace maroon {

namespace {

struct DTypeInfo {
  std::string_view name;
  int bits;
  int priority;  // tinygrad's DType.priority; ties break on size, as tinygrad's ordering does
};

constexpr std::array<DTypeInfo, 15> kInfo = {{
    {"bool", 8, 0},     {"int8", 8, 1},      {"uint8", 8, 2},     {"int16", 16, 3},
    {"uint16", 16, 4},  {"int32", 32, 5},    {"uint32", 32, 6},   {"int64", 64, 7},
    {"uint64", 64, 8},  {"float16", 16, 12}, {"bfloat16", 16, 13}, {"float32", 32, 14},
    {"float64", 64, 15}, {"weakint", 800, 0}, {"weakfloat", 800, 9},
}};

const DTypeInfo& info(DType d) { return kInfo[static_cast<size_t>(d)]; }

// Direct parents in tinygrad's promotion lattice.
std::span<const DType> parents(DType d);

constexpr DType kBoolP[] = {DType::WeakInt};
constexpr DType kWeakIntP[] = {DType::Int8, DType::UInt8};
constexpr DType kInt8P[] = {DType::Int16};
constexpr DType kUInt8P[] = {DType::Int16, DType::UInt16};
constexpr DType kInt16P[] = {DType::Int32};
constexpr DType kUInt16P[] = {DType::Int32, DType::UInt32};
constexpr DType kInt32P[] = {DType::Int64};
constexpr DType kUInt32P[] = {DType::Int64, DType::UInt64};
constexpr DType kInt64P[] = {DType::WeakFloat};
constexpr DType kUInt64P[] = {DType::WeakFloat};
constexpr DType kWeakFloatP[] = {DType::Float16, DType::BFloat16};
constexpr DType kHalfP[] = {DType::Float32};
constexpr DType kFloatP[] = {DType::Float64};

std::span<const DType> parents(DType d) {
  switch (d) {
    case DType::Bool: return kBoolP;
    case DType::WeakInt: return kWeakIntP;
    case DType::Int8: return kInt8P;
    case DType::UInt8: return kUInt8P;
    case DType::Int16: return kInt16P;
    case DType::UInt16: return kUInt16P;
    case DType::Int32: return kInt32P;
    case DType::UInt32: return kUInt32P;
    case DType::Int64: return kInt64P;
    case DType::UInt64: return kUInt64P;
    case DType::WeakFloat: return kWeakFloatP;
    case DType::Float16: return kHalfP;
    case DType::BFloat16: return kHalfP;
    case DType::Float32: return kFloatP;
    case DType::Float64: return {};
  }
  return {};
}

// Bit set of d and everything it promotes to.
uint32_t ancestors(DType d) {
  uint32_t set = 1u << static_cast<int>(d);
  for (DType p : parents(d)) set |= ancestors(p);
  return set;
}

bool before(DType a, DType b) {  // tinygrad's DType.__lt__ on (priority, itemsize)
  if (info(a).priority != info(b).priority) return info(a).priority < info(b).priority;
  return info(a).bits < info(b).bits;
}

}  // namespace

std::string_view dtype_name(DType d) { return info(d).name; }

DType dtype_from_name(std::string_view name) {
  for (size_t i = 0; i < kInfo.size(); ++i)
    if (kInfo[i].name == name) return static_cast<DType>(i);
  if (name == "half") return DType::Float16;
  if (name == "float") return DType::Float32;
  if (name == "double") return DType::Float64;
  if (name == "int") return DType::Int32;
  if (name == "long") return DType::Int64;
  throw DTypeError("[dtype] unknown dtype '" + std::string(name) + "'");
}

size_t itemsize(DType d) { return static_cast<size_t>(bitwidth(concrete(d)) / 8); }
int bitwidth(DType d) { return info(concrete(d)).bits; }

bool is_float(DType d) {
  return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 ||
         d == DType::Float64 || d == DType::WeakFloat;
}
bool is_unsigned(DType d) {
  return d == DType::UInt8 || d == DType::UInt16 || d == DType::UInt32 || d == DType::UInt64;
}
bool is_int(DType d) { return !is_float(d) && d != DType::Bool; }
bool is_weak(DType d) { return d == DType::WeakInt || d == DType::WeakFloat; }

DType concrete(DType d) {
  if (d == DType::WeakInt) return DType::Int32;
  if (d == DType::WeakFloat) return DType::Float32;
  return d;
}

namespace {
DType least_upper_walk(DType a, DType b) {
  uint32_t common = ancestors(a) & ancestors(b);
  DType best = DType::Float64;
  for (int i = 0; i < 15; ++i)
    if (common & (1u << i) && before(static_cast<DType>(i), best)) best = static_cast<DType>(i);
  return best;
}
}  // namespace

DType least_upper_dtype(DType a, DType b) {
  // Every operator promotes (several times per node built): the 15 x 15 answers of the lattice
  // walk, taken once.
  static const auto table = [] {
    std::array<std::array<DType, 15>, 15> t{};
    for (int i = 0; i < 15; ++i)
      for (int j = 0; j < 15; ++j) t[i][j] = least_upper_walk(static_cast<DType>(i), static_cast<DType>(j));
    return t;
  }();
  auto i = static_cast<size_t>(a), j = static_cast<size_t>(b);
  return i < 15 && j < 15 ? table[i][j] : least_upper_walk(a, b);  // no read past the table
}

DType sum_acc_dtype(DType d) {
  d = concrete(d);
  if (is_unsigned(d)) return least_upper_dtype(d, DType::UInt32);
  if (is_int(d) || d == DType::Bool) return least_upper_dtype(d, DType::Int32);
  return least_upper_dtype(d, DType::Float32);
}

}  // namespace maroon
