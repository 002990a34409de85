// NumPy .npy header parsing and writing.
//
// Layout (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
//   "\x93NUMPY" | u8 major | u8 minor | header length (u16 LE for 1.x, u32 LE
//   for 2.x/3.x) | header text | data.
// The header text is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1000, 128), }
// padded with spaces and ending in '\n'; 3.0 differs from 2.0 only in allowing
// UTF-8 in the text. We accept 2-D C-order little-endian arrays of float32,
// float16, uint8 and int8.
#ifndef STRATA_DATASET_NPY_H_
#define STRATA_DATASET_NPY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/result.h"
#include "strata/types.h"

namespace strata::dataset_internal {

class InputFile;

// The fields of a parsed header that we need.
struct NpyHeader {
  int major = 0;
  int minor = 0;
  std::string descr;  // e.g. "<f4"
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;  // as written; may have any length
  std::uint64_t data_offset = 0;     // preamble + header text length
};

// Reads and parses the header of `file`. Corruption for a bad magic, a
// truncated or malformed header; NotSupported for an unknown major version.
// Does not judge descr/order/shape (see NpyElementType and the layout probe).
Result<NpyHeader> ReadNpyHeader(const InputFile& file);

// Parses the dict text alone (exposed for tests). `path` names errors.
Result<NpyHeader> ParseNpyDict(std::string_view path, std::string_view text);

// Maps a descr to an element type: '<f4' float32, '<f2' float16, '|u1'
// uint8, '|i1' int8 ('<', '=' and '|' accepted for one-byte types).
// NotSupported naming the dtype for big-endian and other dtypes.
Result<ElementType> NpyElementType(std::string_view path, std::string_view descr);

// The descr we write for `type` ("<f4", "<f2", "|u1", "|i1"); empty for
// types .npy cannot hold here (bfloat16).
std::string_view NpyDescr(ElementType type);

// Bytes reserved for the version 1.0 header we write (a multiple of 64, as
// numpy requires for alignment); the shape is filled in at Finish().
inline constexpr std::size_t kNpyWriteHeaderBytes = 128;

// The complete version 1.0 header (preamble + padded dict + '\n') for a C-order
// rows x dim array of `type`, exactly kNpyWriteHeaderBytes long.
std::string FormatNpyHeader(ElementType type, std::uint64_t rows, std::uint32_t dim);

}  // namespace strata::dataset_internal

#endif  // STRATA_DATASET_NPY_H_
