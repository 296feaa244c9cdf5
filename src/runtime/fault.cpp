// fault.cpp — fault injection for tests (see fault.hpp).
#include "runtime/fault.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <regex>
#include <string_view>

#include "tmagemm/error.hpp"

namespace tmagemm::runtime {

namespace {

struct Compiled {
  std::optional<std::regex> compile, launch, oom;
};

std::mutex g_mutex;
Compiled g_faults;
std::atomic<bool> g_active{false};

std::optional<std::regex> compile_regex(const std::string& pattern, const char* part) {
  if (pattern.empty()) return std::nullopt;
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw Error(ErrorCode::invalid_argument,
                std::string("TMAGEMM_FAULT_INJECT: the ") + part + " pattern '" + pattern + "' is not valid: " + e.what());
  }
}

void install(const Faults& f) {
  Compiled c{compile_regex(f.compile_regex, "compile"), compile_regex(f.launch_regex, "launch"),
             compile_regex(f.oom_regex, "oom")};
  std::lock_guard<std::mutex> lock(g_mutex);
  g_faults = std::move(c);
  g_active.store(g_faults.compile || g_faults.launch || g_faults.oom, std::memory_order_relaxed);
}

// Parses TMAGEMM_FAULT_INJECT once, at the first check.
void read_environment_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* raw = std::getenv("TMAGEMM_FAULT_INJECT");
    if (raw == nullptr || *raw == '\0') return;
    Faults f;
    std::string_view rest(raw);
    while (!rest.empty()) {
      const auto semi = rest.find(';');
      const std::string_view part = rest.substr(0, semi);
      rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
      if (part.starts_with("compile="))
        f.compile_regex = std::string(part.substr(8));
      else if (part.starts_with("launch="))
        f.launch_regex = std::string(part.substr(7));
      else if (part.starts_with("oom="))
        f.oom_regex = std::string(part.substr(4));
      else if (!part.empty())
        throw Error(ErrorCode::invalid_argument, "TMAGEMM_FAULT_INJECT='" + std::string(raw) +
                                                     "' is not valid: expected compile=REGEX;launch=REGEX;oom=REGEX");
    }
    install(f);
  });
}

bool matches(const std::optional<std::regex> Compiled::*which, const std::string& name) {
  read_environment_once();
  if (!g_active.load(std::memory_order_relaxed)) return false;
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto& re = g_faults.*which;
  return re && std::regex_search(name, *re);
}

}  // namespace

void set_faults_for_testing(const Faults& faults) {
  read_environment_once();  // so that a later first check does not overwrite the test's faults
  install(faults);
}

void inject_compile_fault(const std::string& kernel_name) {
  if (matches(&Compiled::compile, kernel_name))
    throw Error(ErrorCode::compile_error, "injected compile failure for " + kernel_name + " (TMAGEMM_FAULT_INJECT)");
}

void inject_launch_fault(const std::string& choice_name) {
  if (matches(&Compiled::launch, choice_name))
    throw Error(ErrorCode::cuda_error, "injected launch failure for " + choice_name + " (TMAGEMM_FAULT_INJECT)");
  if (matches(&Compiled::oom, choice_name))
    throw Error(ErrorCode::out_of_memory,
                "injected out-of-memory failure for " + choice_name + " (TMAGEMM_FAULT_INJECT)");
}

void inject_allocation_fault(const std::string& what) {
  if (matches(&Compiled::oom, what))
    throw Error(ErrorCode::out_of_memory, "injected out-of-memory failure for " + what + " (TMAGEMM_FAULT_INJECT)");
}

}  // namespace tmagemm::runtime
