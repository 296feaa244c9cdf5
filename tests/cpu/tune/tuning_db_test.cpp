// tuning_db_test.cpp — the SQLite tuning database (no GPU needed): round trip, JSON export/import, bad
// imports, eight processes writing one file at once, recovery from a garbage or truncated file, and the
// default path under TMAGEMM_CACHE_DIR. Every test works in its own temporary directory.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tmagemm/error.hpp"
#include "tune/tuning_db.hpp"
#include "cpu/test_support.hpp"


namespace fs = std::filesystem;
using tmagemm::Error;
using tmagemm::ErrorCode;
using tmagemm::tune::Timing;
using tmagemm::tune::TuningDb;
using tmagemm::tune::TuningRecord;

using tmagemm::test_support::EnvGuard;
using tmagemm::test_support::TempDir;
using tmagemm::test_support::read_all;
using tmagemm::test_support::write_all;

namespace {

// The files next to `db` whose names start with "<db name>.corrupt-".
std::vector<fs::path> corrupt_copies(const fs::path& db) {
  std::vector<fs::path> found;
  const std::string prefix = db.filename().string() + ".corrupt-";
  for (const auto& entry : fs::directory_iterator(db.parent_path()))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) found.push_back(entry.path());
  return found;
}

TuningRecord record(const std::string& winner, double best_ms,
                    const std::string& tuned_at = "2025-01-02T03:04:05Z") {
  return TuningRecord{winner, {{winner, best_ms}, {"cublaslt_algo0", best_ms * 1.25}}, tuned_at};
}

void expect_same(const TuningRecord& a, const TuningRecord& b) {
  EXPECT_EQ(a.winner, b.winner);
  EXPECT_EQ(a.tuned_at, b.tuned_at);
  ASSERT_EQ(a.timings.size(), b.timings.size());
  for (std::size_t i = 0; i < a.timings.size(); ++i) {
    EXPECT_EQ(a.timings[i].choice, b.timings[i].choice) << i;
    if (std::isinf(a.timings[i].ms))
      EXPECT_TRUE(std::isinf(b.timings[i].ms)) << i;
    else
      EXPECT_DOUBLE_EQ(a.timings[i].ms, b.timings[i].ms) << i;
  }
}

// A fresh temporary directory for every test; the database is <dir>/tuning.sqlite.
class TuningDbTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "tmagemm-tuning-db-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string db_path() const { return (dir_ / "tuning.sqlite").string(); }
  fs::path dir_;
};

using TuningDbBasic = TuningDbTestBase;
using TuningDbJson = TuningDbTestBase;
using TuningDbConcurrency = TuningDbTestBase;
using TuningDbRecovery = TuningDbTestBase;
using TuningDbPath = TuningDbTestBase;

}  // namespace

TEST_F(TuningDbBasic, RoundTripPutGetListSizeClear) {
  TuningDb db(db_path());
  EXPECT_EQ(db.path(), db_path());
  EXPECT_EQ(db.size(), 0u);
  EXPECT_FALSE(db.get("missing").has_value());

  const TuningRecord b = record("persistent_tma_128x256x64_s3_c2", 0.6235);
  const TuningRecord a = record("persistent_tma_128x128x64_s4_c1", 0.125);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  TuningRecord c{"cublaslt_algo3", {{"cublaslt_algo3", 1.5}, {"broken_choice", nan}, {"slow", inf}}, ""};
  db.put("key/b", b);
  db.put("key/a", a);
  db.put("key/c", c);
  EXPECT_EQ(db.size(), 3u);

  auto got = db.get("key/a");
  ASSERT_TRUE(got.has_value());
  expect_same(a, *got);
  got = db.get("key/c");
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(std::isinf(got->timings[1].ms));  // non-finite times come back as +infinity
  EXPECT_GT(got->timings[1].ms, 0);
  EXPECT_TRUE(std::isinf(got->timings[2].ms));
  EXPECT_EQ(got->tuned_at, "");

  const auto all = db.list();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].first, "key/a");
  EXPECT_EQ(all[1].first, "key/b");
  EXPECT_EQ(all[2].first, "key/c");
  expect_same(b, all[1].second);

  // Overwriting keeps one row per key.
  const TuningRecord b2 = record("cublaslt_algo0", 0.5, "2025-02-03T00:00:00Z");
  db.put("key/b", b2);
  EXPECT_EQ(db.size(), 3u);
  got = db.get("key/b");
  ASSERT_TRUE(got.has_value());
  expect_same(b2, *got);
  EXPECT_TRUE(fs::exists(db_path() + "-wal"));  // WAL mode
  EXPECT_TRUE(db.integrity_ok());

  db.clear();
  EXPECT_EQ(db.size(), 0u);
  EXPECT_TRUE(db.list().empty());
  EXPECT_FALSE(db.get("key/a").has_value());
}

TEST_F(TuningDbBasic, EntriesPersistAcrossOpensAndMoves) {
  {
    TuningDb db(db_path());
    db.put("k1", record("w1", 1.0));
  }
  TuningDb first(db_path());
  TuningDb moved(std::move(first));
  ASSERT_TRUE(moved.get("k1").has_value());
  EXPECT_EQ(moved.get("k1")->winner, "w1");
  EXPECT_EQ(moved.path(), db_path());
  EXPECT_THROW(first.size(), Error);  // NOLINT(bugprone-use-after-move): a moved-from object refuses
}

TEST_F(TuningDbBasic, EmptyKeyIsInvalid) {
  TuningDb db(db_path());
  try {
    db.put("", record("w", 1.0));
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
}

TEST_F(TuningDbBasic, ThreadsShareOneObject) {
  TuningDb db(db_path());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&db, t] {
      for (int i = 0; i < 50; ++i) db.put("t" + std::to_string(t) + "/" + std::to_string(i), record("w", i));
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(db.size(), 200u);
}

TEST_F(TuningDbBasic, UnopenablePathThrowsWithThePath) {
  fs::create_directories(dir_ / "a_directory");
  const std::string path = (dir_ / "a_directory").string();
  try {
    TuningDb db(path);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST_F(TuningDbJson, ExportClearImportRestoresTheEntries) {
  TuningDb db(db_path());
  db.put("m=4096,n=4096,k=4096", record("persistent_tma_128x256x64_s3_c2", 0.6235));
  db.put("m=1,n=4096,k=4096", record("cublaslt_algo0", 0.01, "2024-12-31T23:59:59Z"));
  db.put("failed", TuningRecord{"x", {{"x", 2.0}, {"y", std::numeric_limits<double>::infinity()}}, ""});
  const auto before = db.list();
  const std::string text = db.export_json();

  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc.at("version"), 1);
  ASSERT_EQ(doc.at("entries").size(), 3u);
  const auto& first = doc.at("entries")[0];  // ordered by key: "failed" first
  EXPECT_EQ(first.at("key"), "failed");
  EXPECT_EQ(first.at("winner"), "x");
  EXPECT_EQ(first.at("timings")[0].at("choice"), "x");
  EXPECT_EQ(first.at("timings")[0].at("ms"), 2.0);
  EXPECT_TRUE(first.at("timings")[1].at("ms").is_null());
  EXPECT_EQ(first.at("tuned_at"), "");

  db.clear();
  ASSERT_EQ(db.size(), 0u);
  EXPECT_EQ(db.import_json(text), 3u);
  const auto after = db.list();
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].first, before[i].first);
    expect_same(before[i].second, after[i].second);
  }
  EXPECT_EQ(db.export_json(), text);

  // Importing into another database, and importing twice (upsert), gives the same entries.
  TuningDb other((dir_ / "other.sqlite").string());
  EXPECT_EQ(other.import_json(text), 3u);
  EXPECT_EQ(other.import_json(text), 3u);
  EXPECT_EQ(other.size(), 3u);
  EXPECT_EQ(other.export_json(), text);
}

TEST_F(TuningDbJson, ImportWithoutTunedAtIsAccepted) {
  TuningDb db(db_path());
  EXPECT_EQ(db.import_json(R"({"version":1,"entries":[{"key":"k","winner":"w","timings":[]}]})"), 1u);
  ASSERT_TRUE(db.get("k").has_value());
  EXPECT_EQ(db.get("k")->tuned_at, "");
  EXPECT_EQ(db.import_json(R"({"version":1,"entries":[]})"), 0u);
}

TEST_F(TuningDbJson, BadImportThrowsInvalidArgumentAndWritesNothing) {
  TuningDb db(db_path());
  db.put("kept", record("w", 1.0));
  const std::vector<std::string> bad = {
      "",
      "not json",
      R"({"version":1,"entries":[)",
      "[]",
      R"({"entries":[]})",
      R"({"version":2,"entries":[]})",
      R"({"version":"1","entries":[]})",
      R"({"version":1})",
      R"({"version":1,"entries":{}})",
      R"({"version":1,"entries":[42]})",
      R"({"version":1,"entries":[{"winner":"w","timings":[]}]})",
      R"({"version":1,"entries":[{"key":"","winner":"w","timings":[]}]})",
      R"({"version":1,"entries":[{"key":"k","timings":[]}]})",
      R"({"version":1,"entries":[{"key":"k","winner":"w"}]})",
      R"({"version":1,"entries":[{"key":"k","winner":"w","timings":{}}]})",
      R"({"version":1,"entries":[{"key":"k","winner":"w","timings":[{"choice":"c"}]}]})",
      R"({"version":1,"entries":[{"key":"k","winner":"w","timings":[{"choice":"c","ms":"1"}]}]})",
      R"({"version":1,"entries":[{"key":"k","winner":"w","timings":[{"ms":1}]}]})",
      R"({"version":1,"entries":[{"key":"k","winner":"w","timings":[],"tuned_at":5}]})",
      // The first entry is fine, the second is not: nothing at all is imported.
      R"({"version":1,"entries":[{"key":"new","winner":"w","timings":[]},{"key":"k"}]})",
  };
  for (const std::string& text : bad) {
    try {
      db.import_json(text);
      ADD_FAILURE() << "no exception for: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << text << ": " << e.what();
    }
  }
  EXPECT_EQ(db.size(), 1u);
  EXPECT_TRUE(db.get("kept").has_value());
  EXPECT_FALSE(db.get("new").has_value());
}

// Eight processes, each with its own TuningDb on the same (not yet existing) file, write 100 keys each at the
// same time (they wait on a pipe so that they start together).
TEST_F(TuningDbConcurrency, EightProcessesWriteOneDatabase) {
  constexpr int kProcesses = 8;
  constexpr int kKeys = 100;
  const std::string path = db_path();
  int start[2];
  ASSERT_EQ(::pipe(start), 0);

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      ::close(start[1]);
      char c;
      while (::read(start[0], &c, 1) > 0) {
      }  // EOF: the parent has started everyone
      int code = 0;
      try {
        TuningDb db(path);
        for (int i = 0; i < kKeys; ++i) {
          const std::string key = "p" + std::to_string(p) + "/k" + std::to_string(i);
          db.put(key, record("winner-" + std::to_string(p) + "-" + std::to_string(i), 0.001 * (i + 1)));
          if (i % 10 == 0 && !db.get(key)) code = 1;
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", p, e.what());
        code = 1;
      } catch (...) {
        code = 1;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  ::close(start[0]);
  ::close(start[1]);  // go

  for (std::size_t i = 0; i < children.size(); ++i) {
    int status = 0;
    ASSERT_EQ(::waitpid(children[i], &status, 0), children[i]);
    ASSERT_TRUE(WIFEXITED(status)) << "child " << i << " status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << i;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[ tuning   ] " << kProcesses << " processes x " << kKeys << " puts: " << seconds << " s\n";
  EXPECT_LT(seconds, 10.0);

  TuningDb db(path);
  EXPECT_EQ(db.size(), static_cast<std::size_t>(kProcesses * kKeys));
  for (int p = 0; p < kProcesses; ++p)
    for (int i = 0; i < kKeys; ++i) {
      const auto got = db.get("p" + std::to_string(p) + "/k" + std::to_string(i));
      ASSERT_TRUE(got.has_value()) << p << "/" << i;
      EXPECT_EQ(got->winner, "winner-" + std::to_string(p) + "-" + std::to_string(i));
    }
  EXPECT_TRUE(db.integrity_ok());
  EXPECT_TRUE(corrupt_copies(path).empty());
}

TEST_F(TuningDbRecovery, GarbageFileIsMovedAsideAndReplaced) {
  const std::string path = db_path();
  std::string garbage;
  for (int i = 0; i < 5000; ++i) garbage.push_back(static_cast<char>((i * 7919 + 13) % 251));
  write_all(path, garbage);

  testing::internal::CaptureStderr();
  std::optional<TuningDb> db;
  ASSERT_NO_THROW(db.emplace(path));
  const std::string warning = testing::internal::GetCapturedStderr();

  EXPECT_EQ(db->size(), 0u);
  db->put("k", record("w", 1.0));
  EXPECT_EQ(db->size(), 1u);
  EXPECT_TRUE(db->integrity_ok());

  const auto copies = corrupt_copies(path);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(read_all(copies[0]), garbage);
  EXPECT_NE(warning.find(path), std::string::npos) << warning;
  EXPECT_NE(warning.find(copies[0].string()), std::string::npos) << warning;
}

TEST_F(TuningDbRecovery, TruncatedDatabaseIsMovedAsideAndReplaced) {
  const std::string path = db_path();
  {
    TuningDb db(path);
    for (int i = 0; i < 2000; ++i)
      db.put("key-" + std::to_string(i) + std::string(40, 'x'), record("winner-" + std::to_string(i), i));
  }  // the last connection checkpoints and removes the WAL
  ASSERT_FALSE(fs::exists(path + "-wal"));
  const auto full = fs::file_size(path);
  ASSERT_GT(full, 64u * 1024);

  for (const std::uintmax_t size : {full / 2, std::uintmax_t{4096}, std::uintmax_t{50}}) {
    SCOPED_TRACE("truncated to " + std::to_string(size) + " of " + std::to_string(full) + " bytes");
    for (const auto& copy : corrupt_copies(path)) fs::remove(copy);
    {
      TuningDb db(path);  // refill (the previous round left a fresh, empty database)
      for (int i = 0; i < 2000; ++i)
        db.put("key-" + std::to_string(i) + std::string(40, 'x'), record("winner-" + std::to_string(i), i));
    }
    fs::resize_file(path, size);

    testing::internal::CaptureStderr();
    std::optional<TuningDb> db;
    ASSERT_NO_THROW(db.emplace(path));
    const std::string warning = testing::internal::GetCapturedStderr();
    EXPECT_EQ(db->size(), 0u);
    EXPECT_TRUE(db->integrity_ok());
    db->put("k", record("w", 1.0));
    EXPECT_EQ(db->size(), 1u);
    EXPECT_EQ(corrupt_copies(path).size(), 1u);
    EXPECT_NE(warning.find("corrupt"), std::string::npos) << warning;
  }
}

// The header is fine but a page in the middle is overwritten: PRAGMA quick_check (or the first read) notices.
TEST_F(TuningDbRecovery, DamagedPageIsMovedAsideAndReplaced) {
  const std::string path = db_path();
  {
    TuningDb db(path);
    for (int i = 0; i < 2000; ++i)
      db.put("key-" + std::to_string(i) + std::string(40, 'x'), record("winner-" + std::to_string(i), i));
  }
  ASSERT_GT(fs::file_size(path), 30u * 4096);
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(20 * 4096 + 100);
    std::string junk;
    for (int i = 0; i < 2000; ++i) junk.push_back(static_cast<char>((i * 37) % 256));
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  testing::internal::CaptureStderr();
  std::optional<TuningDb> db;
  ASSERT_NO_THROW(db.emplace(path));
  const std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_EQ(db->size(), 0u);
  EXPECT_TRUE(db->integrity_ok());
  EXPECT_EQ(corrupt_copies(path).size(), 1u);
  EXPECT_NE(warning.find("corrupt"), std::string::npos) << warning;
  EXPECT_EQ(warning.find('\n'), warning.size() - 1) << "one line: " << warning;
}

TEST_F(TuningDbPath, DefaultPathFollowsTmagemmCacheDir) {
  const fs::path cache = dir_ / "cache-root";
  EnvGuard guard("TMAGEMM_CACHE_DIR", cache.string());
  EXPECT_EQ(fs::path(TuningDb::default_path()), cache / "tuning.sqlite");
  TuningDb db(TuningDb::default_path());
  db.put("k", record("w", 1.0));
  EXPECT_TRUE(fs::exists(cache / "tuning.sqlite"));

  const fs::path other = dir_ / "elsewhere";
  EnvGuard guard2("TMAGEMM_CACHE_DIR", other.string());
  EXPECT_EQ(fs::path(TuningDb::default_path()), other / "tuning.sqlite");
}
