// remote_cache_test.cpp — the fleet-wide cache on Redis (runtime/remote_store.hpp, tune/remote_cache.hpp,
// jit/remote.cpp) against a real redis-server on a free local port: two processes with separate local caches (one
// publishes a winner and its cubin as the tuner does after tuning, the other gets both from Redis without compiling);
// without a key only winners are shared; a tampered cubin, one signed with another key and an unsigned one are
// rejected and compiled locally; corrupted values are ignored; a killed or stalled server never fails a call and is
// reported once. Also the settings' rules, the envelope and the winner value, which need no server. CPU test: the
// tuner runs in cached_only mode on a fake H200 and NVRTC compiles the kernels. Without redis-server the server
// tests skip with the reason (CI installs it: scripts/install-deps.sh).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cpu/test_support.hpp"
#include "jit/jit.hpp"
#include "remote_test_support.hpp"
#include "runtime/remote_store.hpp"
#include "tmagemm/error.hpp"
#include "tmagemm/version.hpp"
#include "tune/remote_cache.hpp"
#include "tune/tuner.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm {
namespace {

namespace fs = std::filesystem;
namespace remote = runtime::remote;
using test_support::EnvGuard;
using test_support::TempDir;

constexpr const char* kHelperEnv = "TMAGEMM_REMOTE_TEST_HELPER";
constexpr const char* kWinnerEnv = "TMAGEMM_REMOTE_TEST_WINNER";
constexpr const char* kArch = "sm_90a";
const std::string kKey = "0123456789abcdef0123456789abcdef";
const std::string kOtherKey = "fedcba9876543210fedcba9876543210";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

Options cached_only() {
  Options o = Options::defaults_only();
  o.tuning = Tuning::cached_only;
  return o;
}

// A usable persistent-TMA choice of `p` that the heuristic would not pick: a winner that can only come from a cache.
choices::ChoicePtr non_heuristic_winner(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev) {
  const auto cands = tune::enumerate(p, o, dev);
  const choices::ChoicePtr heuristic = tune::heuristic_choice(p, cands, dev);
  for (const auto& c : cands)
    if (c.reason.empty() && std::string(c.choice->backend()) == "persistent_tma" && c.choice != heuristic)
      return c.choice;
  return nullptr;
}

choices::ChoicePtr find_choice(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev,
                               const std::string& name) {
  for (const auto& c : tune::enumerate(p, o, dev))
    if (c.choice->name() == name) return c.choice;
  return nullptr;
}

// ---- settings, envelope and winner value (no server) ----

TEST(RemoteSettings, ParsesUrls) {
  remote::Settings s;
  remote::parse_url("redis://127.0.0.1:6390", s);
  EXPECT_EQ(s.host, "127.0.0.1");
  EXPECT_EQ(s.port, 6390);
  EXPECT_EQ(s.db, 0);
  s = {};
  remote::parse_url("redis://cache-1.example.org/3", s);
  EXPECT_EQ(s.host, "cache-1.example.org");
  EXPECT_EQ(s.port, 6379);
  EXPECT_EQ(s.db, 3);
  s = {};
  remote::parse_url("redis://[::1]:7000/1", s);
  EXPECT_EQ(s.host, "::1");
  EXPECT_EQ(s.port, 7000);
  EXPECT_EQ(s.db, 1);
}

TEST(RemoteSettings, MalformedUrlsNameTheVariableAndTheRule) {
  for (const char* url : {"http://h:1", "redis://", "redis://h:0", "redis://h:70000", "redis://h:x", "redis://h:",
                          "redis://h:1/", "redis://h:1/db", "redis://user:pw@h:1", "redis://[::1", "redis://[::1]x",
                          "redis://a b:1", "REDIS://h:1"}) {
    EnvGuard env("TMAGEMM_REMOTE_CACHE", std::string(url));
    try {
      (void)remote::settings();
      ADD_FAILURE() << url << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << url;
      EXPECT_NE(std::string(e.what()).find(std::string("TMAGEMM_REMOTE_CACHE='") + url + "'"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("redis://HOST[:PORT][/DB]"), std::string::npos) << e.what();
    }
    // A default Options reads the environment: a malformed setting fails the call like any TMAGEMM_* variable.
    EXPECT_THROW(Options(), Error) << url;
  }
}

TEST(RemoteSettings, TimeoutAndKeyRules) {
  EnvGuard url("TMAGEMM_REMOTE_CACHE", std::string("redis://127.0.0.1:6390"));
  {
    EnvGuard timeout("TMAGEMM_REMOTE_CACHE_TIMEOUT_MS", std::nullopt);
    EnvGuard key("TMAGEMM_REMOTE_CACHE_KEY", std::nullopt);
    EXPECT_EQ(remote::settings().timeout_ms, 50);
    EXPECT_TRUE(remote::settings().key.empty());
    EXPECT_FALSE(remote::signing());
  }
  for (const char* bad : {"0", "-5", "abc", "60001", "1.5"}) {
    EnvGuard timeout("TMAGEMM_REMOTE_CACHE_TIMEOUT_MS", std::string(bad));
    try {
      (void)remote::settings();
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("TMAGEMM_REMOTE_CACHE_TIMEOUT_MS='"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("from 1 to 60000"), std::string::npos) << e.what();
    }
  }
  {
    EnvGuard timeout("TMAGEMM_REMOTE_CACHE_TIMEOUT_MS", std::string("200"));
    EXPECT_EQ(remote::settings().timeout_ms, 200);
  }
  {
    EnvGuard key("TMAGEMM_REMOTE_CACHE_KEY", std::string("short-secret"));
    try {
      (void)remote::settings();
      ADD_FAILURE() << "a 12-byte key was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("TMAGEMM_REMOTE_CACHE_KEY"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("at least 16 bytes"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("short-secret"), std::string::npos) << "the secret is echoed: " << e.what();
    }
  }
  {
    EnvGuard key("TMAGEMM_REMOTE_CACHE_KEY", kKey);
    EXPECT_EQ(remote::settings().key, kKey);
    EXPECT_EQ(remote::signing(), remote::built_in());
  }
}

TEST(RemoteEnvelope, SignaturesBindKeyAndBody) {
  if (!remote::built_in()) GTEST_SKIP() << "built without the remote cache (hiredis, libcrypto)";
  const std::string body("cubin\0bytes\xff", 12);
  const std::string value = remote::detail::seal("k1", body, kKey);
  std::string why;
  EXPECT_EQ(remote::detail::open("k1", value, kKey, why), body) << why;
  EXPECT_EQ(remote::detail::open("k1", value, "", why), body) << "without a key any envelope is read";

  EXPECT_FALSE(remote::detail::open("k1", value, kOtherKey, why));
  EXPECT_NE(why.find("does not verify"), std::string::npos) << why;
  EXPECT_FALSE(remote::detail::open("k2", value, kKey, why)) << "a signed body is valid under its own key only";
  std::string tampered = value;
  tampered.back() = static_cast<char>(tampered.back() ^ 1);
  EXPECT_FALSE(remote::detail::open("k1", tampered, kKey, why));
  EXPECT_FALSE(remote::detail::open("k1", remote::detail::seal("k1", body, ""), kKey, why));
  EXPECT_NE(why.find("unsigned"), std::string::npos) << why;
  EXPECT_FALSE(remote::detail::open("k1", "garbage", "", why));
  EXPECT_NE(why.find("not a tmagemm entry"), std::string::npos) << why;
  EXPECT_FALSE(remote::detail::open("k1", "tmagemm-remote-v1\nxyz\nbody", "", why));
}

TEST(RemoteWinnerValue, CarriesAndChecksTheDeviceFacts) {
  const runtime::DeviceInfo dev = test_support::fake_h200();
  const tune::TuningRecord record{"persistent_tma_x", {{"persistent_tma_x", 0.5}, {"cublaslt_algo0", INFINITY}},
                                  "2026-12-02T00:00:00Z"};
  const std::string value = tune::winner_value("the-key", record, dev);
  std::string why;
  const auto back = tune::read_winner_value(value, "the-key", dev, why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->winner, "persistent_tma_x");
  EXPECT_EQ(back->tuned_at, "2026-12-02T00:00:00Z");
  ASSERT_EQ(back->timings.size(), 2u);
  EXPECT_TRUE(std::isinf(back->timings[1].ms));

  EXPECT_FALSE(tune::read_winner_value(value, "another-key", dev, why));
  EXPECT_NE(why.find("not the key"), std::string::npos) << why;
  runtime::DeviceInfo h100 = dev;
  h100.name = "NVIDIA H100 80GB HBM3";
  EXPECT_FALSE(tune::read_winner_value(value, "the-key", h100, why));
  EXPECT_NE(why.find("made on NVIDIA H200"), std::string::npos) << why;
  runtime::DeviceInfo newer_driver = dev;
  newer_driver.driver_version += 10;
  EXPECT_FALSE(tune::read_winner_value(value, "the-key", newer_driver, why));
  runtime::DeviceInfo fewer_sms = dev;
  fewer_sms.sm_count = 114;
  EXPECT_FALSE(tune::read_winner_value(value, "the-key", fewer_sms, why));
  std::string other_library = value;
  other_library.replace(other_library.find(std::string("\"library\":\"") + version()), 11 + std::strlen(version()),
                        "\"library\":\"0.0.0-other");
  EXPECT_FALSE(tune::read_winner_value(other_library, "the-key", dev, why));
  EXPECT_NE(why.find("made by tmagemm 0.0.0-other"), std::string::npos) << why;
  EXPECT_FALSE(tune::read_winner_value("{\"key\": \"the-key\"", "the-key", dev, why));
  EXPECT_EQ(why, "not JSON");
}

// A server that does not speak Redis (here: answers every connection with an HTTP error) is an outage like a dead
// one: nothing returned, no exception, one line.
TEST(RemoteStore, AServerAnsweringGarbageIsAnOutage) {
  if (!remote::built_in()) GTEST_SKIP() << "built without the remote cache (hiredis, libcrypto)";
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::thread server([listener] {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    char buf[4096];
    (void)::recv(fd, buf, sizeof buf, 0);
    const char reply[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
    (void)::send(fd, reply, sizeof reply - 1, MSG_NOSIGNAL);
    ::close(fd);
  });
  {
    EnvGuard url("TMAGEMM_REMOTE_CACHE", "redis://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)));
    EnvGuard key("TMAGEMM_REMOTE_CACHE_KEY", std::nullopt);
    remote::detail::reset_for_testing();
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(remote::fetch("tmagemm:test:any", 1024));
    EXPECT_FALSE(remote::fetch("tmagemm:test:any", 1024));
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(count(err, "tmagemm: remote cache redis://"), 1u) << err;
    EXPECT_NE(err.find("GETRANGE: Protocol error"), std::string::npos) << err;
  }
  server.join();
  ::close(listener);
  remote::detail::reset_for_testing();
}

// ---- against a real redis-server ----

class RemoteCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!remote::built_in()) GTEST_SKIP() << "built without the remote cache (hiredis, libcrypto)";
    const std::string binary = remote_test::find_redis_server();
    if (binary.empty()) GTEST_SKIP() << remote_test::kNoRedisMessage;
    fs::create_directories(dir_.path() / "redis");
    server_ = std::make_unique<remote_test::RedisServer>(binary, dir_.path() / "redis");
    ASSERT_TRUE(server_->running()) << "redis-server did not start:\n" << server_->log();
    url_.emplace("TMAGEMM_REMOTE_CACHE", server_->url());
    key_.emplace("TMAGEMM_REMOTE_CACHE_KEY", std::nullopt);
    timeout_.emplace("TMAGEMM_REMOTE_CACHE_TIMEOUT_MS", std::nullopt);
    fresh_local_cache();
  }
  void TearDown() override {
    remote::detail::set_retry_seconds_for_testing(remote::kRetrySeconds);
    remote::detail::reset_for_testing();
    tune::forget_in_memory();
  }

  // A new local cache dir and no in-memory winners: as a new process on another machine sees the caches.
  void fresh_local_cache() {
    const fs::path local = dir_.path() / ("local" + std::to_string(++locals_));
    cache_.reset();
    cache_.emplace("TMAGEMM_CACHE_DIR", local.string());
    tune::forget_in_memory();
  }
  void set_key(std::optional<std::string> key) {
    key_.reset();
    key_.emplace("TMAGEMM_REMOTE_CACHE_KEY", std::move(key));
  }

  TempDir dir_{"tmagemm-remote-test"};
  std::unique_ptr<remote_test::RedisServer> server_;
  std::optional<EnvGuard> url_, key_, timeout_, cache_;
  int locals_ = 0;
};

// Process 1 of TwoProcessesShareWinnerAndCubin: what the tuner does after tuning (store the winner locally, publish
// it with its cubin), without a GPU.
TEST(RemoteCacheHelper, Publish) {
  if (std::getenv(kHelperEnv) == nullptr) GTEST_SKIP() << "helper of RemoteCache.TwoProcesses* (needs " << kHelperEnv << ")";
  const GemmProblem p = test_support::fake_mm_problem(512, 768, 256);
  const runtime::DeviceInfo dev = test_support::fake_h200();
  const Options o = cached_only();
  const choices::ChoicePtr winner = find_choice(p, o, dev, std::getenv(kWinnerEnv));
  ASSERT_TRUE(winner);
  const std::string key = tune::database_key(p, o, dev);
  const tune::TuningRecord record{winner->name(), {{winner->name(), 0.0123}, {"cublaslt_algo0", 0.0150}},
                                  tune::now_iso8601_utc()};
  tune::TuningDb(tune::TuningDb::default_path()).put(key, record);
  ASSERT_TRUE(tune::publish_winner(p, key, record, *winner, dev));
  EXPECT_EQ(remote::stats().published, 2u) << "the winner and its one cubin";
  EXPECT_EQ(jit::nvrtc_compile_count(), 1u) << "the winner's kernel, compiled here";
}

// Process 2: an empty local cache; the winner through choose() in cached_only mode, its cubin through the JIT cache.
TEST(RemoteCacheHelper, Resolve) {
  if (std::getenv(kHelperEnv) == nullptr) GTEST_SKIP() << "helper of RemoteCache.TwoProcesses* (needs " << kHelperEnv << ")";
  const GemmProblem p = test_support::fake_mm_problem(512, 768, 256);
  const runtime::DeviceInfo dev = test_support::fake_h200();
  const Options o = cached_only();
  const std::string expected = std::getenv(kWinnerEnv);
  ASSERT_FALSE(fs::exists(tune::TuningDb::default_path())) << "the local cache is not empty";

  const choices::ChoicePtr chosen = tune::choose(p, o, dev);
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->name(), expected);
  const auto kept = tune::TuningDb(tune::TuningDb::default_path()).get(tune::database_key(p, o, dev));
  ASSERT_TRUE(kept) << "the remote winner is kept in the local tuning DB";
  EXPECT_EQ(kept->winner, expected);
  ASSERT_EQ(kept->timings.size(), 2u);
  EXPECT_DOUBLE_EQ(kept->timings[0].ms, 0.0123);

  const auto specs = chosen->kernel_specs(p);
  ASSERT_EQ(specs.size(), 1u);
  const jit::Cubin cubin = jit::compile(specs[0], kArch);
  EXPECT_TRUE(cubin.from_remote);
  EXPECT_TRUE(fs::exists(jit::cache_file(jit::cache_key(specs[0], kArch)))) << "kept in the local kernel cache";
  EXPECT_TRUE(jit::compile(specs[0], kArch).from_cache);
  EXPECT_EQ(jit::nvrtc_compile_count(), 0u) << "nothing was compiled";
  EXPECT_EQ(remote::stats().hits, 2u);
  EXPECT_EQ(remote::stats().rejected, 0u);
}

TEST_F(RemoteCache, TwoProcessesShareWinnerAndCubin) {
  const GemmProblem p = test_support::fake_mm_problem(512, 768, 256);
  const runtime::DeviceInfo dev = test_support::fake_h200();
  const choices::ChoicePtr winner = non_heuristic_winner(p, cached_only(), dev);
  ASSERT_TRUE(winner) << "no persistent-TMA choice other than the heuristic's";
  set_key(kKey);
  EnvGuard helper(kHelperEnv, std::string("1"));
  EnvGuard name(kWinnerEnv, winner->name());

  const fs::path a = dir_.path() / "process1", b = dir_.path() / "process2";
  struct Child {
    const char* filter;
    fs::path cache;
  };
  for (const Child& child : {Child{"RemoteCacheHelper.Publish", a}, Child{"RemoteCacheHelper.Resolve", b}}) {
    EnvGuard cache("TMAGEMM_CACHE_DIR", child.cache.string());
    const fs::path log = dir_.path() / (std::string(child.filter) + ".log");
    const int status = remote_test::run_helper(TMAGEMM_TEST_HELPER, child.filter, log.string());
    const std::string out = remote_test::read_file(log);
    EXPECT_TRUE(remote_test::exited_ok(status)) << child.filter << " failed:\n" << out;
    EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << child.filter << ":\n" << out;
    EXPECT_EQ(out.find("SKIPPED"), std::string::npos) << child.filter << ":\n" << out;
  }
  // The second process's cubin is the first one's, byte for byte.
  const std::string file = fs::path(jit::cache_file(jit::cache_key(winner->kernel_specs(p)[0], kArch))).filename();
  const std::string first = remote_test::read_file(a / "kernels" / file);
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(remote_test::read_file(b / "kernels" / file), first);
}

// A bucket's largest M may run another choice than the bucket's winner (tune::top_m_choice, derived from the
// record's timings by every reader): its cubins are published with the winner's, so that no reader compiles it.
TEST_F(RemoteCache, TheLargestMsOwnChoiceIsPublishedWithItsCubins) {
  const GemmProblem p = test_support::fake_mm_problem(512, 768, 256);
  const runtime::DeviceInfo dev = test_support::fake_h200();
  const Options o = cached_only();
  std::vector<choices::ChoicePtr> tma;
  for (const auto& c : tune::enumerate(p, o, dev))
    if (c.reason.empty() && std::string(c.choice->backend()) == "persistent_tma") tma.push_back(c.choice);
  ASSERT_GE(tma.size(), 2u);
  const choices::ChoicePtr winner = tma[0], top = tma[1];
  ASSERT_EQ(winner->kernel_specs(p).size(), 1u);
  ASSERT_EQ(top->kernel_specs(p).size(), 1u);
  set_key(kKey);
  const std::string key = tune::database_key(p, o, dev);
  const tune::TuningRecord record{winner->name(), {{winner->name(), 0.02}, {top->name(), 0.03}}, "now"};
  const auto before = remote::stats();
  ASSERT_TRUE(tune::publish_winner(p, key, record, *winner, dev, top.get()));
  EXPECT_EQ(remote::stats().published, before.published + 3) << "the record and one cubin each";
  for (const auto& c : {winner, top})
    EXPECT_TRUE(remote::detail::raw_get(jit::remote_cubin_key(jit::cache_key(c->kernel_specs(p)[0], kArch))))
        << c->name();
  // The same choice as winner and top publishes its cubin once.
  const auto again = remote::stats();
  ASSERT_TRUE(tune::publish_winner(p, key, record, *winner, dev, winner.get()));
  EXPECT_EQ(remote::stats().published, again.published + 2);
}

TEST_F(RemoteCache, WithoutAKeyOnlyWinnersAreShared) {
  const GemmProblem p = test_support::fake_mm_problem(384, 640, 512);
  const runtime::DeviceInfo dev = test_support::fake_h200();
  const Options o = cached_only();
  const choices::ChoicePtr winner = non_heuristic_winner(p, o, dev);
  ASSERT_TRUE(winner);
  const std::string key = tune::database_key(p, o, dev);
  const tune::TuningRecord record{winner->name(), {{winner->name(), 0.02}}, tune::now_iso8601_utc()};
  const auto before = remote::stats();
  const std::uint64_t compiles = jit::nvrtc_compile_count();
  ASSERT_TRUE(tune::publish_winner(p, key, record, *winner, dev));
  EXPECT_EQ(remote::stats().published, before.published + 1) << "the winner only, no cubin";
  EXPECT_EQ(jit::nvrtc_compile_count(), compiles);
  const std::string cubin_key = jit::remote_cubin_key(jit::cache_key(winner->kernel_specs(p)[0], kArch));
  EXPECT_FALSE(remote::detail::raw_get(cubin_key));
  EXPECT_TRUE(remote::detail::raw_get(tune::remote_winner_key(key)));

  fresh_local_cache();
  EXPECT_EQ(tune::choose(p, o, dev)->name(), winner->name()) << "an unsigned winner is shared";

  // A signed cubin in the server is not even asked for without a key: kernels compile locally.
  set_key(kKey);
  ASSERT_TRUE(jit::publish_cubin(jit::probe_spec(), kArch));
  set_key(std::nullopt);
  fresh_local_cache();
  const auto fetches = remote::stats().fetches;
  const jit::Cubin local = jit::compile(jit::probe_spec(), kArch);
  EXPECT_FALSE(local.from_remote);
  EXPECT_FALSE(local.from_cache);
  EXPECT_EQ(remote::stats().fetches, fetches);
}

TEST_F(RemoteCache, TamperedCubinIsRejectedAndCompiledLocally) {
  set_key(kKey);
  ASSERT_TRUE(jit::publish_cubin(jit::probe_spec(), kArch));
  const std::string key = jit::remote_cubin_key(jit::cache_key(jit::probe_spec(), kArch));

  fresh_local_cache();  // control: the untouched entry is used
  std::uint64_t compiles = jit::nvrtc_compile_count();
  const jit::Cubin shared = jit::compile(jit::probe_spec(), kArch);
  EXPECT_TRUE(shared.from_remote);
  EXPECT_EQ(jit::nvrtc_compile_count(), compiles);

  std::string value = remote::detail::raw_get(key).value_or("");
  ASSERT_GT(value.size(), 1000u);
  value[value.size() - 200] = static_cast<char>(value[value.size() - 200] ^ 0x10);  // one bit of the image
  ASSERT_TRUE(remote::detail::raw_set(key, value));
  fresh_local_cache();
  compiles = jit::nvrtc_compile_count();
  ::testing::internal::CaptureStderr();
  const jit::Cubin local = jit::compile(jit::probe_spec(), kArch);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(local.from_remote);
  EXPECT_FALSE(local.from_cache);
  EXPECT_EQ(jit::nvrtc_compile_count(), compiles + 1) << "compiled locally";
  EXPECT_EQ(count(err, "ignored " + key), 1u) << err;
  EXPECT_NE(err.find("does not verify"), std::string::npos) << err;
}

TEST_F(RemoteCache, CubinSignedWithAnotherKeyIsRejected) {
  set_key(kOtherKey);
  ASSERT_TRUE(jit::publish_cubin(jit::probe_spec(), kArch));
  set_key(kKey);
  fresh_local_cache();
  const std::uint64_t compiles = jit::nvrtc_compile_count();
  const auto rejected = remote::stats().rejected;
  ::testing::internal::CaptureStderr();
  const jit::Cubin local = jit::compile(jit::probe_spec(), kArch);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(local.from_remote);
  EXPECT_EQ(jit::nvrtc_compile_count(), compiles + 1);
  EXPECT_EQ(remote::stats().rejected, rejected + 1);
  EXPECT_NE(err.find("does not verify with TMAGEMM_REMOTE_CACHE_KEY"), std::string::npos) << err;
}

TEST_F(RemoteCache, UnsignedCubinIsRejectedWhenAKeyIsSet) {
  // Someone without the key stores a well-formed cubin record, unsigned, where the cubin belongs.
  const jit::Cubin cubin = jit::compile(jit::probe_spec(), kArch);
  const std::string key = jit::remote_cubin_key(jit::cache_key(jit::probe_spec(), kArch));
  ASSERT_TRUE(remote::detail::raw_set(key, remote::detail::seal(key, jit::detail::encode_cache_file(cubin), "")));
  set_key(kKey);
  fresh_local_cache();
  ::testing::internal::CaptureStderr();
  const jit::Cubin local = jit::compile(jit::probe_spec(), kArch);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(local.from_remote);
  EXPECT_NE(err.find("unsigned, and TMAGEMM_REMOTE_CACHE_KEY is set"), std::string::npos) << err;
}

TEST_F(RemoteCache, CorruptedValuesAreIgnored) {
  const GemmProblem p = test_support::fake_mm_problem(256, 1024, 384);
  const runtime::DeviceInfo dev = test_support::fake_h200();
  const Options o = cached_only();
  const std::string key = tune::remote_winner_key(tune::database_key(p, o, dev));
  const choices::ChoicePtr heuristic = tune::heuristic_choice(p, tune::enumerate(p, o, dev), dev);
  const std::string h200_value = tune::winner_value(
      tune::database_key(p, o, dev), tune::TuningRecord{non_heuristic_winner(p, o, dev)->name(), {}, ""}, dev);
  runtime::DeviceInfo h100 = dev;
  h100.name = "NVIDIA H100 80GB HBM3";
  struct Case {
    std::string value, why;
  };
  const Case cases[] = {
      {std::string("\x00\xff garbage", 10), "not a tmagemm entry"},
      {remote::detail::seal(key, "{not json", ""), "not JSON"},
      {remote::detail::seal(key, "[1, 2]", ""), "not a JSON object"},
      {remote::detail::seal(key, tune::winner_value(tune::database_key(p, o, dev), {"x", {}, ""}, h100), ""),
       "made on NVIDIA H100"},
      {remote::detail::seal(key, h200_value.substr(0, h200_value.size() / 2), ""), "not JSON"},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(remote::detail::raw_set(key, c.value));
    fresh_local_cache();
    remote::detail::reset_for_testing();  // each case's line is new
    ::testing::internal::CaptureStderr();
    choices::ChoicePtr chosen;
    EXPECT_NO_THROW(chosen = tune::choose(p, o, dev)) << c.why;
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(chosen, heuristic) << c.why << ": the local path (cached_only: the heuristic)";
    EXPECT_EQ(count(err, "ignored " + key), 1u) << err;
    EXPECT_NE(err.find(c.why), std::string::npos) << err;
  }
  // The intact value is used (the cases above were rejected for their content, not for the key).
  ASSERT_TRUE(remote::detail::raw_set(key, remote::detail::seal(key, h200_value, "")));
  fresh_local_cache();
  EXPECT_NE(tune::choose(p, o, dev), heuristic);

  // A signed value whose body is not a cubin record: rejected, compiled locally.
  set_key(kKey);
  const std::string cubin_key = jit::remote_cubin_key(jit::cache_key(jit::probe_spec(), kArch));
  ASSERT_TRUE(remote::detail::raw_set(cubin_key, remote::detail::seal(cubin_key, "not a cubin", kKey)));
  fresh_local_cache();
  ::testing::internal::CaptureStderr();
  const jit::Cubin local = jit::compile(jit::probe_spec(), kArch);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(local.from_remote);
  EXPECT_NE(err.find("not a cubin record"), std::string::npos) << err;
}

TEST_F(RemoteCache, KilledServerNeverFailsACallAndIsReportedOnce) {
  const runtime::DeviceInfo dev = test_support::fake_h200();
  const Options o = cached_only();
  const GemmProblem first = test_support::fake_mm_problem(640, 512, 256);
  const choices::ChoicePtr winner = non_heuristic_winner(first, o, dev);
  const std::string key = tune::database_key(first, o, dev);
  ASSERT_TRUE(tune::publish_winner(first, key, {winner->name(), {}, "now"}, *winner, dev));
  fresh_local_cache();
  EXPECT_EQ(tune::choose(first, o, dev), winner) << "the server answers before it is killed";

  server_->kill();
  const auto before = remote::stats();
  ::testing::internal::CaptureStderr();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) {
    const GemmProblem p = test_support::fake_mm_problem(640 + 128 * (i + 1), 512, 256);
    fresh_local_cache();
    choices::ChoicePtr chosen;
    EXPECT_NO_THROW(chosen = tune::choose(p, o, dev));
    EXPECT_EQ(chosen, tune::heuristic_choice(p, tune::enumerate(p, o, dev), dev)) << "the local path";
    EXPECT_FALSE(tune::publish_winner(p, tune::database_key(p, o, dev), {chosen->name(), {}, "now"}, *chosen, dev));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(err, "tmagemm: remote cache redis://"), 1u) << err;
  EXPECT_NE(err.find("remote cache " + server_->url() + " unavailable"), std::string::npos) << err;
  EXPECT_GE(remote::stats().failures, before.failures + 1);
  EXPECT_GE(remote::stats().skipped, before.skipped + 6) << "the outage is not asked again at every call";
  EXPECT_LT(seconds, 2.0);

  // After the outage's wait the server is tried again; still down: no second line for the same outage.
  remote::detail::set_retry_seconds_for_testing(0);
  ::testing::internal::CaptureStderr();
  fresh_local_cache();
  EXPECT_NO_THROW(tune::choose(test_support::fake_mm_problem(2048, 512, 256), o, dev));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_F(RemoteCache, ServerGoneDuringALargeWriteRaisesNoSigpipe) {
  set_key(kKey);
  ASSERT_TRUE(remote::publish("tmagemm:test:small", "x"));  // connected
  server_->kill();
  ::testing::internal::CaptureStderr();
  // Megabytes to a closed connection: the writes after the peer's reset fail with EPIPE, which raises SIGPIPE in the
  // writing thread unless it is blocked; its default action would end this test process.
  EXPECT_FALSE(remote::publish("tmagemm:test:large", std::string(std::size_t{16} << 20, 'x')));
  EXPECT_FALSE(remote::publish("tmagemm:test:large", std::string(std::size_t{16} << 20, 'y')));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(err, "tmagemm: remote cache redis://"), 1u) << err;
}

TEST_F(RemoteCache, StalledServerTimesOut) {
  timeout_.reset();
  timeout_.emplace("TMAGEMM_REMOTE_CACHE_TIMEOUT_MS", std::string("100"));
  ASSERT_TRUE(remote::publish("tmagemm:test:value", "v"));  // connected
  server_->pause();
  ::testing::internal::CaptureStderr();
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(remote::fetch("tmagemm:test:value", 1024));
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(remote::fetch("tmagemm:test:value", 1024));
  const double second_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const std::string err = ::testing::internal::GetCapturedStderr();
  server_->resume();
  EXPECT_GE(first_ms, 90.0) << "waited for the configured timeout";
  EXPECT_LT(first_ms, 1000.0);
  EXPECT_LT(second_ms, 20.0) << "an outage is not waited for again";
  EXPECT_EQ(count(err, "tmagemm: remote cache redis://"), 1u) << err;
  EXPECT_NE(err.find("GETRANGE: no answer in time; timeout 100 ms"), std::string::npos) << err;

  // The server answers again after the outage's wait: a success re-arms the report.
  remote::detail::set_retry_seconds_for_testing(0);
  EXPECT_EQ(remote::fetch("tmagemm:test:value", 1024), "v");
}

}  // namespace
}  // namespace tmagemm
