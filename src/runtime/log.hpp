// log.hpp — TMAGEMM_LOG topics: a comma/space separated list (e.g. "launch,jit", "all") read once.
#pragma once
#include <string>

namespace tmagemm::runtime {

// True when TMAGEMM_LOG names `topic` or "all".
bool log_enabled(const char* topic);

// Test hook: topics to use instead of TMAGEMM_LOG (nullptr: back to the environment's).
void set_log_topics_for_testing(const std::string* topics);

}  // namespace tmagemm::runtime
