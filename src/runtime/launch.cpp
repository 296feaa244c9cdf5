// launch.cpp — launch_kernel and its test observer (see launch.hpp).
#include "runtime/launch.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>

#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"

namespace tmagemm::runtime {

namespace {

using Observer = std::function<void(const CUlaunchConfig&)>;

std::mutex g_observer_mutex;
std::shared_ptr<const Observer> g_observer;  // null when none is installed
std::atomic<bool> g_has_observer{false};     // lets launches skip the mutex when no test is watching

std::shared_ptr<const Observer> current_observer() {
  if (!g_has_observer.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard<std::mutex> lock(g_observer_mutex);
  return g_observer;
}

}  // namespace

void launch_kernel(const CUlaunchConfig& cfg, CUfunction fn, void** params, const char* what) {
  // A copy, called outside the lock: the observer may be replaced or removed while it runs.
  if (const auto observer = current_observer()) (*observer)(cfg);
  check_cu(driver().launch_kernel_ex(&cfg, fn, params, nullptr), what);
}

void set_launch_observer_for_testing(std::function<void(const CUlaunchConfig&)> observer) {
  std::lock_guard<std::mutex> lock(g_observer_mutex);
  g_observer = observer ? std::make_shared<const Observer>(std::move(observer)) : nullptr;
  g_has_observer.store(g_observer != nullptr, std::memory_order_release);
}

bool programmatic_launch() {
  static const bool on = [] {
    const char* v = std::getenv("TMAGEMM_PDL");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return on;
}

}  // namespace tmagemm::runtime
