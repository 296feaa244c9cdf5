// log.cpp — TMAGEMM_LOG topic lookup.
#include "runtime/log.hpp"

#include <cstdlib>
#include <string>

namespace tmagemm::runtime {

bool log_enabled(const char* topic) {
  static const std::string value = [] {
    const char* v = std::getenv("TMAGEMM_LOG");
    return std::string(v ? v : "");
  }();
  if (value.empty()) return false;
  if (value.find("all") != std::string::npos) return true;
  return value.find(topic) != std::string::npos;
}

}  // namespace tmagemm::runtime
