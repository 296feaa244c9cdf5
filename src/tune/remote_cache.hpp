// remote_cache.hpp — tuning winners in the fleet-wide cache (TMAGEMM_REMOTE_CACHE; the store and its contract on
// trouble are runtime/remote_store.hpp). A second level under the local tuning database: choose() asks it on a local
// miss (and keeps what it finds in the local database), and publishes every new winner there after storing it
// locally, with the winner's cubins when TMAGEMM_REMOTE_CACHE_KEY is set (jit/remote.cpp). So another process —
// another machine with the same GPU, driver and library — runs a tuned problem without tuning or compiling.
//
// An entry is JSON at "tmagemm:v1:winner:<database key>": the key itself, the device name, SM count, compute
// capability, driver and library version it was tuned with, the winner, the timings and tuned_at. The database key
// already holds the device facts; the value must repeat them and match this process's, so a value copied under
// another key, or made on another GPU, is ignored. A winner the process cannot run (another regex, a backend off)
// is not used: choose() tunes as if there were none.
#pragma once
#include <optional>
#include <string>

#include "choices/choice.hpp"
#include "problem/problem.hpp"
#include "runtime/device.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm::tune {

// The Redis key of a database key's winner.
std::string remote_winner_key(const std::string& database_key);

// The record of `database_key` from the remote cache when there is an acceptable one (see the file comment):
// nothing on a miss, a rejected value (reported once on stderr), an unconfigured cache or trouble with the server.
// Throws only Error(invalid_argument) for malformed TMAGEMM_REMOTE_CACHE* variables.
std::optional<TuningRecord> remote_winner(const std::string& database_key, const runtime::DeviceInfo& device);

// Publishes a new winner: its record, then (with a key) the cubins of the winner's kernels for `problem`, and of
// `top`'s where given: the choice the bucket's largest M runs instead of the winner (tune::top_m_choice), which a
// reader derives from the record's timings and would otherwise compile. Never throws for the server's sake; false
// when the record was not stored.
bool publish_winner(const GemmProblem& problem, const std::string& database_key, const TuningRecord& record,
                    const choices::Choice& winner, const runtime::DeviceInfo& device,
                    const choices::Choice* top = nullptr);

// The JSON value of a winner as it is stored (without the envelope), and its checked reading: the record when
// `value` is a winner entry for `database_key` made on `device` with this library version, else nothing with the
// reason in `why`.
std::string winner_value(const std::string& database_key, const TuningRecord& record,
                         const runtime::DeviceInfo& device);
std::optional<TuningRecord> read_winner_value(const std::string& value, const std::string& database_key,
                                              const runtime::DeviceInfo& device, std::string& why);

}  // namespace tmagemm::tune
