// Data types and tinygrad's promotion lattice.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace maroon {

// Concrete dtypes (what a buffer holds) plus tinygrad's two weak dtypes, which only exist
// during promotion: a Python-style scalar is weak, so `int8_tensor * 300` stays int8.
enum class DType : uint8_t {
  Bool, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64,
  Float16, BFloat16, Float32, Float64,
  WeakInt, WeakFloat,
};

constexpr DType kConcreteDTypes[] = {
    DType::Bool,  DType::Int8,   DType::UInt8,   DType::Int16,    DType::UInt16,
    DType::Int32, DType::UInt32, DType::Int64,   DType::UInt64,   DType::Float16,
    DType::BFloat16, DType::Float32, DType::Float64};

std::string_view dtype_name(DType d);
// Parses tinygrad-style names ("float32", "bfloat16", "uint8", ...). Throws maroon::Error.
DType dtype_from_name(std::string_view name);

size_t itemsize(DType d);      // bytes; weak dtypes report their default's size
int bitwidth(DType d);
bool is_float(DType d);        // float16/bfloat16/float32/float64/weakfloat
bool is_int(DType d);          // signed or unsigned integer (weakint included), not bool
bool is_unsigned(DType d);
bool is_weak(DType d);

// The dtype a weak dtype materializes as (tinygrad's default_int / default_float).
DType concrete(DType d);

// tinygrad's least_upper_dtype: the smallest dtype both promote to in the lattice
//   bool -> weakint -> {int8, uint8}; int8 -> int16 -> int32 -> int64 -> weakfloat;
//   uint8 -> {int16, uint16}; uint16 -> {int32, uint32}; uint32 -> {int64, uint64};
//   uint64 -> weakfloat; weakfloat -> {float16, bfloat16} -> float32 -> float64.
DType least_upper_dtype(DType a, DType b);

// tinygrad's sum_acc_dtype: the accumulator dtype of sum().
DType sum_acc_dtype(DType d);

}  // namespace maroon
