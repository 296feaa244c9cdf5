// options.cpp — Options defaults and the TMAGEMM_* environment variables that override them. A variable that
// is unset or empty keeps the default; a malformed one throws Error(invalid_argument) naming the variable and
// the values it accepts. The backends' on/off variables come from choices::backend_switches().
#include "tmagemm/options.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <regex>
#include <string>

#include "choices/choice.hpp"
#include "runtime/remote_store.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm {

const char* to_string(Tuning tuning) noexcept {
  switch (tuning) {
    case Tuning::benchmark: return "benchmark";
    case Tuning::heuristic: return "heuristic";
    case Tuning::cached_only: return "cached_only";
  }
  return "?";
}

namespace {

std::string trim(std::string s) {
  auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), space));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), space).base(), s.end());
  return s;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The variable's value, trimmed; nullopt when unset or empty.
std::optional<std::string> env(const char* name) {
  const char* raw = std::getenv(name);
  if (raw == nullptr) return std::nullopt;
  std::string value = trim(raw);
  if (value.empty()) return std::nullopt;
  return value;
}

[[noreturn]] void malformed(const char* name, const std::string& value, const char* accepted) {
  throw Error(ErrorCode::invalid_argument, std::string(name) + "='" + value + "' is not valid: expected " + accepted);
}

void read_bool(const char* name, bool& field) {
  const auto value = env(name);
  if (!value) return;
  const std::string v = lower(*value);
  if (v == "1" || v == "true" || v == "on")
    field = true;
  else if (v == "0" || v == "false" || v == "off")
    field = false;
  else
    malformed(name, *value, "0, 1, true, false, on or off");
}

void read_tuning(const char* name, Tuning& field) {
  const auto value = env(name);
  if (!value) return;
  const std::string v = lower(*value);
  if (v == "benchmark")
    field = Tuning::benchmark;
  else if (v == "heuristic")
    field = Tuning::heuristic;
  else if (v == "cached_only")
    field = Tuning::cached_only;
  else
    malformed(name, *value, "benchmark, heuristic or cached_only");
}

void read_non_negative_int(const char* name, int& field) {
  const auto value = env(name);
  if (!value) return;
  int parsed = 0;
  const char* begin = value->data();
  const char* end = begin + value->size();
  const auto [ptr, ec] = std::from_chars(begin, end, parsed);
  if (ec != std::errc() || ptr != end || parsed < 0) malformed(name, *value, "an integer >= 0");
  field = parsed;
}

// Options() runs on every call that takes default options, so a regex that compiled once is not compiled again.
void read_regex(const char* name, std::string& field) {
  const char* raw = std::getenv(name);
  if (raw == nullptr || *raw == '\0') return;
  static std::mutex mutex;
  static std::string last_valid;
  const std::string value = raw;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (value == last_valid) {
      field = value;
      return;
    }
  }
  try {
    std::regex compiled(value, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw Error(ErrorCode::invalid_argument, std::string(name) + "='" + value +
                                                 "' is not valid: expected an ECMAScript regular expression (" +
                                                 e.what() + ")");
  }
  std::lock_guard<std::mutex> lock(mutex);
  last_valid = value;
  field = value;
}

}  // namespace

Options::Options() {
  read_tuning("TMAGEMM_TUNING", tuning);
  // Each backend's on/off variable, from the one table that also names them in messages and keys.
  for (const choices::BackendSwitch& s : choices::backend_switches()) read_bool(s.env, this->*s.field);
  read_bool("TMAGEMM_ALLOW_REDUCED_PRECISION_REDUCTION", allow_reduced_precision_reduction);
  read_regex("TMAGEMM_CHOICE_REGEX", choice_regex);
  read_non_negative_int("TMAGEMM_SM_CARVEOUT", sm_carveout);
  read_bool("TMAGEMM_M_BUCKETS", m_buckets);
  read_bool("TMAGEMM_LIBRARY_RANKS_PER_M", library_ranks_per_m);
  read_bool("TMAGEMM_SUSTAINED_TUNING", sustained_tuning);
  // The remote cache's variables are the process's, not fields, but a malformed one fails a call like the others.
  runtime::remote::check_environment();
}

Options Options::defaults_only() { return Options(NoEnv{}); }

}  // namespace tmagemm
