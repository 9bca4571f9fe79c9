// The .npy format (numpy's NEP 1, versions 1.0 to 3.0): the magic "\x93NUMPY", a version, a
// little-endian header length, a Python dict literal {'descr': ..., 'fortran_order': ...,
// 'shape': (...)} padded with spaces to a multiple of 16 bytes, then the elements row-major.
#pragma once
#include <string>
#include <string_view>

#include "maroon/idx.h"

namespace maroon::data {

// An array read from a .npy file has the same parts as one read from an IDX file: a dtype, a
// shape and the elements as little-endian bytes.
using NpyArray = IdxArray;

// Accepts the descrs of Maroon's dtypes ('|b1', 'i1'..'i8', 'u1'..'u8', 'f2', 'f4', 'f8') in
// either byte order ('<', '>', '|', '='; big-endian elements are byte-swapped) and C order only.
// Throws maroon::FormatError naming the file and the problem: bad magic or version, a header
// that is not such a dict, an unsupported descr, fortran_order True, a shape that overflows, a
// data size that does not match the shape (truncated or trailing bytes).
NpyArray parse_npy(std::string_view bytes, const std::string& name = "<memory>");
NpyArray load_npy(const std::string& path);

// A version 1.0 .npy file holding `a` (little-endian descr): numpy.load reads it back.
std::string npy_bytes(const NpyArray& a);

}  // namespace maroon::data
