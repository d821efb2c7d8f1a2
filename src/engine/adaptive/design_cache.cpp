// The adaptive filter's design cache (design_cache.h): a small, thread-safe list of the most
// recent designs.
#include "engine/adaptive/design_cache.h"

#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace ndconv::detail {

namespace {

// The most recent designs, at most kCapacity (the oldest dropped first), shared by every thread: a
// second adaptive filter with the same parameters (the bench's timed runs after the warm-up, an
// ITK pipeline updating again, the command line's early check of the parameters) reuses them.
class DesignCache {
 public:
  std::optional<std::vector<DesignedFilter>> find(const DesignKey& key) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [k, filters] : entries_)
      if (k == key)
        return filters;
    return std::nullopt;
  }
  void store(const DesignKey& key, const std::vector<DesignedFilter>& filters) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& entry : entries_)
      if (entry.first == key)
        return;
    if (entries_.size() == kCapacity)
      entries_.pop_front();
    entries_.emplace_back(key, filters);
  }

 private:
  // A 4D design of 11^4 taps holds about 0.7 MB; of 15^4, about 2.3 MB.
  static constexpr size_t kCapacity = 8;
  std::mutex mutex_;
  std::deque<std::pair<DesignKey, std::vector<DesignedFilter>>> entries_;
};

DesignCache& design_cache() {
  static DesignCache cache;
  return cache;
}

}  // namespace

std::vector<DesignedFilter> cached_design(
    const DesignKey& key, const DesignMethod& method,
    const std::function<std::vector<DesignedFilter>()>& design) {
  if (!method.cached)
    return design();
  if (std::optional<std::vector<DesignedFilter>> found = design_cache().find(key))
    return *std::move(found);
  std::vector<DesignedFilter> filters = design();
  design_cache().store(key, filters);
  return filters;
}

}  // namespace ndconv::detail
