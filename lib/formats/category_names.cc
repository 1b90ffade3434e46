#include "formats/category_names.h"

#include "formats/kineto.h"

namespace gpuprobe::formats {

std::string_view default_category_name(Category category) {
  static constexpr std::string_view kBuiltin[] = {"app",     "step", "python", "torch",
                                                  "compile", "gc",   "alloc",  "cuda"};
  static constexpr std::string_view kUser[] = {"user0", "user1", "user2", "user3",
                                               "user4", "user5", "user6", "user7"};
  const unsigned i = static_cast<unsigned>(category);
  if (i < 8) return kBuiltin[i];
  const unsigned user = static_cast<unsigned>(Category::kUser0);
  if (i >= user && i < user + 8) return kUser[i - user];
  return {};
}

std::string_view category_name(Category category, const std::vector<std::string>& names) {
  const unsigned i = static_cast<unsigned>(category);
  if (i < names.size() && !names[i].empty()) return names[i];
  return default_category_name(category);
}

std::string_view chrome_category(Category category, const std::vector<std::string>& names) {
  return category == Category::kApp ? "user_annotation" : category_name(category, names);
}

std::optional<Category> category_from_trace_name(std::string_view name,
                                                 const std::vector<std::string>& names) {
  // Kineto's names, every version's (formats/kineto.h); GPU work and API calls are no category.
  if (const KinetoCategory* kineto = find_kineto_category(name)) {
    if (!kineto->gpu) return kineto->category;
  }
  for (unsigned i = 0; i < 32; ++i) {
    const auto category = static_cast<Category>(i);
    if (category_exists(category) && category_name(category, names) == name) return category;
  }
  return std::nullopt;
}

}  // namespace gpuprobe::formats
