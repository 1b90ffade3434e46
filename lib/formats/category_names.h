// What categories are called in traces: gpuprobe's own names ("app", "gc", "user3", or a name
// given with name_category(), which a trace carries in TraceInfo::category_names) and Kineto's,
// which gpuprobe writes for application ranges and reads in torch.profiler's traces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuprobe/call_site.hpp"

namespace gpuprobe::formats {

// Every category that exists, as a bit mask (built-ins and kUser0..kUser7).
inline constexpr std::uint32_t kAllCategories = 0xFF0000FFu;

// True if `category` is one of kAllCategories.
inline bool category_exists(Category category) {
  return static_cast<unsigned>(category) < 32 &&
         ((kAllCategories >> static_cast<unsigned>(category)) & 1u);
}

// gpuprobe's built-in name of `category`: "app", "step", "python", "torch", "compile", "gc",
// "alloc", "cuda", "user0".."user7"; empty for a value that is no category.
std::string_view default_category_name(Category category);

// The name of `category` in a trace whose TraceInfo::category_names is `names`: its entry there
// when it has a non-empty one, else the built-in name.
std::string_view category_name(Category category, const std::vector<std::string>& names);

// The `cat` the Chrome writer gives `category`: Kineto's "user_annotation" for kApp (HTA and the
// TensorBoard plugin key on it), else category_name().
std::string_view chrome_category(Category category, const std::vector<std::string>& names);

// The category a trace's `cat` names: one of Kineto's CPU categories (formats/kineto.h:
// "user_annotation" and an empty name are app, "cpu_op" torch, "python_function" python,
// "gpu_user_annotation" cuda, ...), or a name category_name() gives; nullopt for any other name.
std::optional<Category> category_from_trace_name(std::string_view name,
                                                 const std::vector<std::string>& names);

}  // namespace gpuprobe::formats
