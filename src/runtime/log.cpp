// log.cpp — TMAGEMM_LOG topic lookup.
#include "runtime/log.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

namespace tmagemm::runtime {

namespace {

std::mutex g_mutex;
std::string* g_override = nullptr;  // set by tests
std::atomic<bool> g_has_override{false};

const std::string& environment_topics() {
  static const std::string value = [] {
    const char* v = std::getenv("TMAGEMM_LOG");
    return std::string(v ? v : "");
  }();
  return value;
}

bool names(const std::string& value, const char* topic) {
  if (value.empty()) return false;
  if (value.find("all") != std::string::npos) return true;
  return value.find(topic) != std::string::npos;
}

}  // namespace

bool log_enabled(const char* topic) {
  if (g_has_override.load(std::memory_order_acquire)) {  // tests only
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_override) return names(*g_override, topic);
  }
  return names(environment_topics(), topic);
}

void set_log_topics_for_testing(const std::string* topics) {
  std::lock_guard<std::mutex> lock(g_mutex);
  delete g_override;
  g_override = topics ? new std::string(*topics) : nullptr;
  g_has_override.store(g_override != nullptr, std::memory_order_release);
}

}  // namespace tmagemm::runtime
