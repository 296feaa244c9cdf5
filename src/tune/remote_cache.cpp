// remote_cache.cpp — tuning winners in the fleet-wide cache (see remote_cache.hpp): the JSON value with its device
// facts, its checked reading, and the publishing of a winner with its cubins.
#include "tune/remote_cache.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "jit/jit.hpp"
#include "runtime/remote_store.hpp"
#include "tmagemm/version.hpp"

namespace tmagemm::tune {

namespace {

using json = nlohmann::ordered_json;

// A winner's record is a few KiB (one timing per benchmarked choice).
constexpr std::size_t kMaxWinnerBytes = std::size_t{1} << 20;

std::string cc_of(const runtime::DeviceInfo& d) { return fmt::format("{}.{}", d.cc_major, d.cc_minor); }

// The string member `name` of `j`, or nothing.
std::optional<std::string> string_member(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace

std::string remote_winner_key(const std::string& database_key) { return "tmagemm:v1:winner:" + database_key; }

std::string winner_value(const std::string& database_key, const TuningRecord& record,
                         const runtime::DeviceInfo& device) {
  json timings = json::array();
  for (const Timing& t : record.timings) {
    json item = {{"choice", t.choice}};
    if (std::isfinite(t.ms))
      item["ms"] = t.ms;
    else
      item["ms"] = nullptr;
    timings.push_back(std::move(item));
  }
  const json value = {{"key", database_key},          {"device", device.name},
                      {"sm_count", device.sm_count},  {"cc", cc_of(device)},
                      {"driver", device.driver_version}, {"library", version()},
                      {"winner", record.winner},      {"timings", std::move(timings)},
                      {"tuned_at", record.tuned_at}};
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<TuningRecord> read_winner_value(const std::string& value, const std::string& database_key,
                                              const runtime::DeviceInfo& device, std::string& why) {
  json j;
  try {
    j = json::parse(value);
  } catch (const json::exception&) {
    why = "not JSON";
    return std::nullopt;
  }
  if (!j.is_object()) {
    why = "not a JSON object";
    return std::nullopt;
  }
  // The value must say what the key says: the same key, made on this GPU, driver and library version.
  if (string_member(j, "key") != database_key) {
    why = "its \"key\" is not the key it is stored under";
    return std::nullopt;
  }
  const auto sm = j.find("sm_count");
  const auto driver = j.find("driver");
  if (string_member(j, "device") != device.name || sm == j.end() || !sm->is_number_integer() ||
      sm->get<long long>() != device.sm_count || string_member(j, "cc") != cc_of(device) || driver == j.end() ||
      !driver->is_number_integer() || driver->get<long long>() != device.driver_version) {
    const auto number = [&](json::const_iterator it) {
      return it != j.end() && it->is_number_integer() ? std::to_string(it->get<long long>()) : std::string("?");
    };
    why = fmt::format("made on {} ({} SMs, cc {}, driver {}), not on this {} ({} SMs, cc {}, driver {})",
                      string_member(j, "device").value_or("?"), number(sm), string_member(j, "cc").value_or("?"),
                      number(driver), device.name, device.sm_count, cc_of(device), device.driver_version);
    return std::nullopt;
  }
  if (string_member(j, "library") != std::string(version())) {
    why = fmt::format("made by tmagemm {}, not {}", string_member(j, "library").value_or("?"), version());
    return std::nullopt;
  }
  TuningRecord record;
  const auto winner = string_member(j, "winner");
  if (!winner || winner->empty()) {
    why = "no \"winner\"";
    return std::nullopt;
  }
  record.winner = *winner;
  record.tuned_at = string_member(j, "tuned_at").value_or("");
  const auto timings = j.find("timings");
  if (timings == j.end() || !timings->is_array()) {
    why = "\"timings\" is not an array";
    return std::nullopt;
  }
  for (const json& t : *timings) {
    const auto choice = t.is_object() ? string_member(t, "choice") : std::nullopt;
    const auto ms = t.is_object() ? t.find("ms") : t.end();
    if (!choice || ms == t.end() || !(ms->is_number() || ms->is_null())) {
      why = "a malformed timing";
      return std::nullopt;
    }
    record.timings.push_back({*choice, ms->is_null() ? std::numeric_limits<double>::infinity() : ms->get<double>()});
  }
  return record;
}

std::optional<TuningRecord> remote_winner(const std::string& database_key, const runtime::DeviceInfo& device) {
  const std::string key = remote_winner_key(database_key);
  const std::optional<std::string> value = runtime::remote::fetch(key, kMaxWinnerBytes);
  if (!value) return std::nullopt;
  std::string why;
  std::optional<TuningRecord> record = read_winner_value(*value, database_key, device, why);
  if (!record) runtime::remote::reject(key, why);
  return record;
}

bool publish_winner(const GemmProblem& problem, const std::string& database_key, const TuningRecord& record,
                    const choices::Choice& winner, const runtime::DeviceInfo& device, const choices::Choice* top) {
  if (!runtime::remote::settings().enabled()) return false;
  if (!runtime::remote::publish(remote_winner_key(database_key), winner_value(database_key, record, device)))
    return false;
  if (runtime::remote::signing()) {
    for (const jit::KernelSpec& spec : winner.kernel_specs(problem)) jit::publish_cubin(spec, device.arch());
    if (top != nullptr && top->name() != winner.name())
      for (const jit::KernelSpec& spec : top->kernel_specs(problem)) jit::publish_cubin(spec, device.arch());
  }
  return true;
}

}  // namespace tmagemm::tune
