// tuning_db.cpp — the SQLite tuning database: opening (WAL, busy timeout, corruption check and recovery),
// prepared statements for get/put/list/size/clear, retry of SQLITE_BUSY, and JSON export/import.
#include "tune/tuning_db.hpp"

#include <fmt/core.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "jit/jit.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::tune {

namespace {

using json = nlohmann::ordered_json;  // keeps the documented key order in exports

constexpr int kOpenAttempts = 3;       // open + corruption recovery rounds

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS tuning ("
    "key TEXT PRIMARY KEY, winner TEXT NOT NULL, timings TEXT NOT NULL, tuned_at TEXT)";

// A failed SQLite call, inside this file; turned into tmagemm::Error at the public boundary.
struct SqliteError {
  int code;             // extended result code
  std::string message;  // sqlite3_errmsg
  std::string what;     // the operation
};

// The file is not a database, or quick_check found damage (only while opening).
struct CorruptDatabase {
  std::string reason;
};

bool is_busy(int code) { return (code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED; }
bool is_corrupt(int code) { return (code & 0xff) == SQLITE_NOTADB || (code & 0xff) == SQLITE_CORRUPT; }

[[noreturn]] void fail(sqlite3* db, int code, const std::string& what) {
  throw SqliteError{code, db ? sqlite3_errmsg(db) : sqlite3_errstr(code), what};
}

void exec(sqlite3* db, const char* sql, const std::string& what) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw SqliteError{rc, text, what};
  }
}

// Runs f(); on SQLITE_BUSY/LOCKED rolls back any open transaction, waits a little and runs it again (the busy
// timeout already waited inside SQLite; this covers the cases where SQLite answers BUSY at once, e.g.
// SQLITE_BUSY_SNAPSHOT or a WAL recovery in progress). Other failures propagate.
template <typename F>
auto with_busy_retry(sqlite3* db, int retries, F&& f) -> decltype(f()) {
  static thread_local std::minstd_rand rng{std::random_device{}()};
  for (int attempt = 0;; ++attempt) {
    try {
      return f();
    } catch (const SqliteError& e) {
      if (db && sqlite3_get_autocommit(db) == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      if (!is_busy(e.code) || attempt >= retries) throw;
      std::uniform_int_distribution<int> jitter(1, 10 << attempt);
      std::this_thread::sleep_for(std::chrono::milliseconds(jitter(rng)));
    }
  }
}

// A prepared statement, finalized on destruction.
class Statement {
 public:
  Statement() = default;
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void prepare(sqlite3* db, const char* sql) {
    finalize();
    const int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
    if (rc != SQLITE_OK) fail(db, rc, std::string("prepare ") + sql);
  }
  void finalize() {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// Resets a statement (and its bindings) when leaving a scope, so that it can run again after any outcome.
class ResetGuard {
 public:
  explicit ResetGuard(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~ResetGuard() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  ResetGuard(const ResetGuard&) = delete;
  ResetGuard& operator=(const ResetGuard&) = delete;

 private:
  sqlite3_stmt* stmt_;
};

// SQLITE_ROW -> true, SQLITE_DONE -> false, anything else throws.
bool step(sqlite3* db, sqlite3_stmt* stmt, const std::string& what) {
  const int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db, rc, what);
}

void bind_text(sqlite3* db, sqlite3_stmt* stmt, int index, const std::string& text, const std::string& what) {
  const int rc = sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) fail(db, rc, what);
}

std::string column_text(sqlite3_stmt* stmt, int column) {
  const unsigned char* text = sqlite3_column_text(stmt, column);
  if (!text) return {};
  const auto bytes = static_cast<std::size_t>(sqlite3_column_bytes(stmt, column));
  return std::string(reinterpret_cast<const char*>(text), bytes);
}

// ---- JSON ----

json timings_to_json(const std::vector<Timing>& timings) {
  json array = json::array();
  for (const Timing& t : timings) {
    json item = {{"choice", t.choice}};
    if (std::isfinite(t.ms))
      item["ms"] = t.ms;
    else
      item["ms"] = nullptr;
    array.push_back(std::move(item));
  }
  return array;
}

std::string dump(const json& j, int indent = -1) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);  // invalid UTF-8 becomes U+FFFD
}

// Throws std::invalid_argument naming what is wrong.
std::vector<Timing> timings_from_json(const json& array) {
  if (!array.is_array()) throw std::invalid_argument("\"timings\" is not an array");
  std::vector<Timing> timings;
  timings.reserve(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) {
    const json& item = array[i];
    const std::string where = fmt::format("timings[{}]", i);
    if (!item.is_object()) throw std::invalid_argument(where + " is not an object");
    const auto choice = item.find("choice");
    if (choice == item.end() || !choice->is_string())
      throw std::invalid_argument(where + ".choice is not a string");
    const auto ms = item.find("ms");
    if (ms == item.end() || !(ms->is_number() || ms->is_null()))
      throw std::invalid_argument(where + ".ms is not a number or null");
    timings.push_back({choice->get<std::string>(),
                       ms->is_null() ? std::numeric_limits<double>::infinity() : ms->get<double>()});
  }
  return timings;
}

std::pair<std::string, TuningRecord> entry_from_json(const json& entry) {
  if (!entry.is_object()) throw std::invalid_argument("is not an object");
  const auto key = entry.find("key");
  if (key == entry.end() || !key->is_string() || key->get_ref<const std::string&>().empty())
    throw std::invalid_argument("\"key\" is not a non-empty string");
  const auto winner = entry.find("winner");
  if (winner == entry.end() || !winner->is_string()) throw std::invalid_argument("\"winner\" is not a string");
  const auto timings = entry.find("timings");
  if (timings == entry.end()) throw std::invalid_argument("\"timings\" is missing");
  TuningRecord record;
  record.winner = winner->get<std::string>();
  record.timings = timings_from_json(*timings);
  if (const auto tuned_at = entry.find("tuned_at"); tuned_at != entry.end() && !tuned_at->is_null()) {
    if (!tuned_at->is_string()) throw std::invalid_argument("\"tuned_at\" is not a string");
    record.tuned_at = tuned_at->get<std::string>();
  }
  return {key->get<std::string>(), std::move(record)};
}

std::string error_text(const std::string& path, const SqliteError& e) {
  return fmt::format("tuning database {}: {} ({})", path, e.message, e.what);
}

}  // namespace

std::string now_iso8601_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

struct TuningDb::Impl {
  std::string path;
  Waits waits;
  std::mutex mutex;
  sqlite3* db = nullptr;
  Statement get_stmt, put_stmt, list_stmt, size_stmt, clear_stmt;

  Impl(std::string p, Waits w) : path(std::move(p)), waits(w) {
    namespace fs = std::filesystem;
    if (path.empty()) throw Error(ErrorCode::invalid_argument, "tuning database: the path is empty");
    std::error_code ec;
    if (const fs::path parent = fs::path(path).parent_path(); !parent.empty()) fs::create_directories(parent, ec);

    for (int attempt = 1;; ++attempt) {
      open_connection();
      struct stat opened {};
      const bool have_inode = ::stat(path.c_str(), &opened) == 0;  // the file SQLite just opened
      std::string reason;
      try {
        with_busy_retry(db, waits.busy_retries, [&] { configure(); });
        prepare_statements();
        return;
      } catch (const SqliteError& e) {
        if (!is_corrupt(e.code) || attempt >= kOpenAttempts) {
          close();
          throw Error(ErrorCode::unsupported, error_text(path, e));
        }
        reason = e.message;
      } catch (const CorruptDatabase& e) {
        if (attempt >= kOpenAttempts) {
          close();
          throw Error(ErrorCode::unsupported, fmt::format("tuning database {}: still corrupt after {} attempts "
                                                          "to replace it ({})", path, attempt, e.reason));
        }
        reason = e.reason;
      } catch (...) {
        close();
        throw;
      }
      close();
      move_aside(reason, have_inode ? &opened : nullptr);
    }
  }

  ~Impl() { close(); }

  void open_connection() {
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
    const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    if (rc != SQLITE_OK) {
      const std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
      close();
      throw Error(ErrorCode::unsupported, fmt::format("tuning database {}: {} (open)", path, message));
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, waits.busy_timeout_ms);
  }

  void close() {
    for (Statement* s : {&get_stmt, &put_stmt, &list_stmt, &size_stmt, &clear_stmt}) s->finalize();
    if (db) sqlite3_close_v2(db);
    db = nullptr;
  }

  // Journal mode, integrity, schema. Throws SqliteError, or CorruptDatabase when quick_check finds damage.
  void configure() {
    // The first statement reads the header: a file that is not a database fails here with SQLITE_NOTADB.
    // WAL lets readers and one writer work at once; synchronous=NORMAL is safe from corruption in WAL mode
    // (a power cut may lose the last commits, which a cache can afford) and avoids an fsync per commit.
    exec(db, "PRAGMA journal_mode=WAL", "journal_mode=WAL");
    exec(db, "PRAGMA synchronous=NORMAL", "synchronous=NORMAL");
    {
      Statement check;
      check.prepare(db, "PRAGMA quick_check(1)");
      if (!step(db, check.get(), "quick_check")) throw CorruptDatabase{"quick_check returned nothing"};
      std::string result = column_text(check.get(), 0);
      if (result != "ok") {  // e.g. "*** in database main ***\nPage 21: btreeInitPage() returns error code 11"
        std::replace(result.begin(), result.end(), '\n', ' ');
        if (result.size() > 200) result = result.substr(0, 200) + "...";
        throw CorruptDatabase{"quick_check: " + result};
      }
    }
    exec(db, kSchema, "create table");
  }

  void prepare_statements() {
    try {
      get_stmt.prepare(db, "SELECT winner, timings, tuned_at FROM tuning WHERE key = ?1");
      put_stmt.prepare(db,
                       "INSERT INTO tuning (key, winner, timings, tuned_at) VALUES (?1, ?2, ?3, ?4) "
                       "ON CONFLICT(key) DO UPDATE SET winner = excluded.winner, timings = excluded.timings, "
                       "tuned_at = excluded.tuned_at");
      list_stmt.prepare(db, "SELECT key, winner, timings, tuned_at FROM tuning ORDER BY key");
      size_stmt.prepare(db, "SELECT count(*) FROM tuning");
      clear_stmt.prepare(db, "DELETE FROM tuning");
    } catch (const SqliteError& e) {
      close();
      throw Error(ErrorCode::unsupported, error_text(path, e));
    }
  }

  // Renames the corrupt file (and its -wal/-shm) out of the way. `opened` is the inode that was checked: when
  // another process has already replaced the file, there is nothing to move.
  void move_aside(const std::string& reason, const struct stat* opened) {
    namespace fs = std::filesystem;
    struct stat now {};
    if (::stat(path.c_str(), &now) != 0) return;  // already moved by someone else
    if (opened && (now.st_dev != opened->st_dev || now.st_ino != opened->st_ino)) return;  // already replaced

    const std::string base = fmt::format("{}.corrupt-{}", path, static_cast<long long>(std::time(nullptr)));
    std::string target = base;
    std::error_code ec;
    for (int n = 1; fs::exists(target, ec) || fs::exists(target + "-wal", ec); ++n)
      target = fmt::format("{}.{}", base, n);

    fs::rename(path, target, ec);
    if (ec) {
      if (!fs::exists(path)) return;  // lost a race with another process doing the same
      throw Error(ErrorCode::unsupported, fmt::format("tuning database {} is corrupt ({}) and could not be "
                                                      "renamed to {}: {}", path, reason, target, ec.message()));
    }
    for (const char* suffix : {"-wal", "-shm"}) {
      if (fs::exists(path + suffix, ec)) fs::rename(path + suffix, target + suffix, ec);
    }
    std::fprintf(stderr,
                 "tmagemm: warning: tuning database %s is corrupt (%s); moved it to %s and started a new one\n",
                 path.c_str(), reason.c_str(), target.c_str());
  }

  // Locks, runs f with busy retries, and turns SQLite failures into tmagemm::Error.
  template <typename F>
  auto run(F&& f) -> decltype(f()) {
    std::lock_guard<std::mutex> lock(mutex);
    try {
      return with_busy_retry(db, waits.busy_retries, f);
    } catch (const SqliteError& e) {
      throw Error(ErrorCode::unsupported, error_text(path, e));
    }
  }

  // BEGIN IMMEDIATE ... COMMIT around f (with_busy_retry rolls back on failure).
  template <typename F>
  void write_transaction(F&& f) {
    exec(db, "BEGIN IMMEDIATE", "begin immediate");
    try {
      f();
      exec(db, "COMMIT", "commit");
    } catch (...) {
      if (sqlite3_get_autocommit(db) == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  void put_row(const std::string& key, const TuningRecord& record) {
    sqlite3_stmt* s = put_stmt.get();
    ResetGuard reset(s);
    bind_text(db, s, 1, key, "put");
    bind_text(db, s, 2, record.winner, "put");
    bind_text(db, s, 3, dump(timings_to_json(record.timings)), "put");
    bind_text(db, s, 4, record.tuned_at, "put");
    step(db, s, "put");
  }

  TuningRecord read_record(sqlite3_stmt* s, int first_column, const std::string& key) {
    TuningRecord record;
    record.winner = column_text(s, first_column);
    const std::string timings = column_text(s, first_column + 1);
    record.tuned_at = column_text(s, first_column + 2);
    try {
      record.timings = timings_from_json(json::parse(timings));
    } catch (const std::exception& e) {
      throw Error(ErrorCode::unsupported,
                  fmt::format("tuning database {}: entry {}: malformed timings ({})", path, key, e.what()));
    }
    return record;
  }
};

TuningDb::TuningDb(std::string path) : TuningDb(std::move(path), Waits{}) {}
TuningDb::TuningDb(std::string path, Waits waits) : impl_(std::make_unique<Impl>(std::move(path), waits)) {}
TuningDb::~TuningDb() = default;
TuningDb::TuningDb(TuningDb&&) noexcept = default;
TuningDb& TuningDb::operator=(TuningDb&&) noexcept = default;

std::string TuningDb::default_path() {
  return (std::filesystem::path(jit::cache_dir()) / "tuning.sqlite").string();
}

const std::string& TuningDb::path() const {
  static const std::string empty;
  return impl_ ? impl_->path : empty;
}

TuningDb::Impl& TuningDb::impl() {
  if (!impl_) throw Error(ErrorCode::invalid_argument, "tuning database: use of a moved-from TuningDb");
  return *impl_;
}

std::optional<TuningRecord> TuningDb::get(const std::string& key) {
  Impl& d = impl();
  return d.run([&]() -> std::optional<TuningRecord> {
    sqlite3_stmt* s = d.get_stmt.get();
    ResetGuard reset(s);
    bind_text(d.db, s, 1, key, "get");
    if (!step(d.db, s, "get")) return std::nullopt;
    return d.read_record(s, 0, key);
  });
}

void TuningDb::put(const std::string& key, const TuningRecord& record) {
  if (key.empty()) throw Error(ErrorCode::invalid_argument, "tuning database: put: the key is empty");
  Impl& d = impl();
  d.run([&] { d.write_transaction([&] { d.put_row(key, record); }); });
}

std::vector<std::pair<std::string, TuningRecord>> TuningDb::list() {
  Impl& d = impl();
  return d.run([&] {
    std::vector<std::pair<std::string, TuningRecord>> entries;
    sqlite3_stmt* s = d.list_stmt.get();
    ResetGuard reset(s);
    while (step(d.db, s, "list")) {
      std::string key = column_text(s, 0);
      TuningRecord record = d.read_record(s, 1, key);
      entries.emplace_back(std::move(key), std::move(record));
    }
    return entries;
  });
}

std::size_t TuningDb::size() {
  Impl& d = impl();
  return d.run([&] {
    sqlite3_stmt* s = d.size_stmt.get();
    ResetGuard reset(s);
    if (!step(d.db, s, "size")) return std::size_t{0};
    return static_cast<std::size_t>(sqlite3_column_int64(s, 0));
  });
}

void TuningDb::clear() {
  Impl& d = impl();
  d.run([&] {
    d.write_transaction([&] {
      sqlite3_stmt* s = d.clear_stmt.get();
      ResetGuard reset(s);
      step(d.db, s, "clear");
    });
  });
}

std::string TuningDb::export_json() {
  json entries = json::array();
  for (const auto& [key, record] : list()) {
    entries.push_back({{"key", key},
                       {"winner", record.winner},
                       {"timings", timings_to_json(record.timings)},
                       {"tuned_at", record.tuned_at}});
  }
  const json doc = {{"version", 1}, {"entries", std::move(entries)}};
  return dump(doc, 2) + "\n";
}

std::size_t TuningDb::import_json(const std::string& text) {
  Impl& d = impl();
  auto invalid = [&](const std::string& why) {
    return Error(ErrorCode::invalid_argument, fmt::format("tuning database {}: import: {}", d.path, why));
  };
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw invalid(fmt::format("not valid JSON ({})", e.what()));
  }
  if (!doc.is_object()) throw invalid("the document is not a JSON object");
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || version->get<long long>() != 1)
    throw invalid("\"version\" is not 1 (the only format this build reads)");
  const auto array = doc.find("entries");
  if (array == doc.end() || !array->is_array()) throw invalid("\"entries\" is not an array");

  std::vector<std::pair<std::string, TuningRecord>> entries;
  entries.reserve(array->size());
  for (std::size_t i = 0; i < array->size(); ++i) {
    try {
      entries.push_back(entry_from_json((*array)[i]));
    } catch (const std::exception& e) {
      throw invalid(fmt::format("entries[{}]: {}", i, e.what()));
    }
  }
  d.run([&] {
    d.write_transaction([&] {
      for (const auto& [key, record] : entries) d.put_row(key, record);
    });
  });
  return entries.size();
}

bool TuningDb::integrity_ok() {
  Impl& d = impl();
  std::lock_guard<std::mutex> lock(d.mutex);
  try {
    return with_busy_retry(d.db, d.waits.busy_retries, [&] {
      Statement check;
      check.prepare(d.db, "PRAGMA integrity_check");
      if (!step(d.db, check.get(), "integrity_check")) return false;
      return column_text(check.get(), 0) == "ok";
    });
  } catch (const SqliteError& e) {
    if (is_corrupt(e.code)) return false;  // damage is an answer, not a failure
    throw Error(ErrorCode::unsupported, error_text(d.path, e));
  }
}

}  // namespace tmagemm::tune
