#pragma once
#include <cstdint>

namespace maroon {

// The combining op of a REDUCE: a left fold in index order from the identity (+0, 1, -inf).
enum class ReduceOp : uint8_t { ADD, MUL, MAX };

}  // namespace maroon
