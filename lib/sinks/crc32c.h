// CRC-32C (Castagnoli), as TFRecord framing uses it: TensorBoard event files carry a masked
// CRC-32C of each record's length and of its data.
// Hand-written: 30 lines, and Debian's Abseil (20220623) has no public CRC32C.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuprobe::sinks {

// CRC-32C of `data`: reflected polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF.
std::uint32_t crc32c(std::string_view data) noexcept;

// The LevelDB/TFRecord mask, so that a CRC of data that itself holds CRCs stays well spread.
constexpr std::uint32_t mask_crc(std::uint32_t crc) noexcept {
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

}  // namespace gpuprobe::sinks
