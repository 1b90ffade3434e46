// Numbers read from trace files into integer fields.
#pragma once

#include <limits>

namespace gpuprobe::formats {

// `v` as the integer type T, saturating at T's limits (NaN: 0). Numbers in files are untrusted,
// and converting an out-of-range double is undefined behaviour.
template <class T>
T saturate(double v) {
  if (!(v == v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

}  // namespace gpuprobe::formats
