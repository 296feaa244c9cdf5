// tuning_db.hpp — the persistent tuning database: which choice won for a problem key, with the median time of
// every choice that was benchmarked. One SQLite file (WAL, busy timeout) shared by every process that uses the
// cache directory; a corrupt file is moved aside and replaced by a fresh one.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tmagemm::tune {

struct Timing {
  std::string choice;  // choice name, e.g. "persistent_tma_128x256x64_s3_c2"
  double ms = 0.0;     // median time; a non-finite value (a choice that failed) is stored as JSON null and
                       // read back as +infinity
};

struct TuningRecord {
  std::string winner;           // the chosen choice's name
  std::vector<Timing> timings;  // every choice benchmarked, in the order given
  std::string tuned_at;         // ISO-8601 UTC, e.g. "2025-01-31T12:34:56Z" (see now_iso8601_utc())
};

// The current time as ISO-8601 UTC with second precision: "YYYY-MM-DDTHH:MM:SSZ".
std::string now_iso8601_utc();

// Every SQLite failure throws tmagemm::Error(unsupported, "tuning database <path>: <sqlite message> (<what>)").
// Bad input (empty key, invalid import document) throws tmagemm::Error(invalid_argument, ...).
// SQLITE_BUSY does not reach callers under ordinary contention: a 10 s busy timeout, and BEGIN IMMEDIATE /
// COMMIT / reads are retried a few times on top of it. Thread-safe: one connection per object behind a mutex.
class TuningDb {
 public:
  // How long an operation waits for another connection's lock: SQLite's busy timeout, then whole retries of the
  // operation (each waiting the timeout again). The defaults suit the CLI; the tuner's calls wait less and bypass
  // a locked database instead (src/tune/tuner.cpp).
  struct Waits {
    int busy_timeout_ms = 10000;
    int busy_retries = 4;
  };

  // Opens (creating it and its directory) the SQLite file at `path`: journal_mode=WAL, synchronous=NORMAL,
  // busy_timeout 10 s, table tuning(key TEXT PRIMARY KEY, winner TEXT NOT NULL, timings TEXT NOT NULL (JSON
  // array of {choice, ms}), tuned_at TEXT). A file that is not a database or fails PRAGMA quick_check is
  // renamed to "<path>.corrupt-<unix time>" (its -wal/-shm to that name + "-wal"/"-shm"), a warning naming
  // both paths goes to stderr, and a fresh database is created.
  explicit TuningDb(std::string path);
  TuningDb(std::string path, Waits waits);
  ~TuningDb();
  TuningDb(TuningDb&&) noexcept;
  TuningDb& operator=(TuningDb&&) noexcept;
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  // <tmagemm::jit::cache_dir()>/tuning.sqlite (follows $TMAGEMM_CACHE_DIR).
  static std::string default_path();
  const std::string& path() const;

  std::optional<TuningRecord> get(const std::string& key);
  void put(const std::string& key, const TuningRecord& record);  // upsert in one BEGIN IMMEDIATE transaction
  std::vector<std::pair<std::string, TuningRecord>> list();      // ordered by key
  std::size_t size();
  void clear();  // deletes every entry (one transaction)

  // {"version":1,"entries":[{"key":..,"winner":..,"timings":[{"choice":..,"ms":..}],"tuned_at":..}]}, by key.
  std::string export_json();
  // Upserts every entry of a document in export_json()'s format, all in one transaction, and returns how many.
  // The whole document is checked first: bad JSON, another version, or a malformed entry throws
  // Error(invalid_argument) and writes nothing. "tuned_at" may be missing (stored as "").
  std::size_t import_json(const std::string& text);
  // PRAGMA integrity_check answers "ok". False (not an exception) when SQLite reports corruption.
  bool integrity_ok();

 private:
  struct Impl;
  Impl& impl();  // throws Error(invalid_argument) on a moved-from object
  std::unique_ptr<Impl> impl_;
};

}  // namespace tmagemm::tune
