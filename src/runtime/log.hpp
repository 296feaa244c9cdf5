// log.hpp — TMAGEMM_LOG topics: a comma/space separated list (e.g. "launch,jit", "all") read once.
#pragma once

namespace tmagemm::runtime {

// True when TMAGEMM_LOG names `topic` or "all".
bool log_enabled(const char* topic);

}  // namespace tmagemm::runtime
