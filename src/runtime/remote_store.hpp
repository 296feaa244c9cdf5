// remote_store.hpp — the Redis layer of the fleet-wide cache (TMAGEMM_REMOTE_CACHE=redis://HOST[:PORT][/DB]): one
// connection per process, values in a signed envelope, and what happens when the server is in trouble. The tuner
// keeps winners there (tune/remote_cache.hpp), the JIT cubins (jit/remote.cpp); both sit under the local caches and
// are asked only on a local miss.
//
// Contract:
// - Configuration is the caller's responsibility: a malformed TMAGEMM_REMOTE_CACHE, TMAGEMM_REMOTE_CACHE_TIMEOUT_MS
//   or TMAGEMM_REMOTE_CACHE_KEY throws Error(invalid_argument) naming the variable and the rule (settings()).
// - The server's trouble never fails a call: a connect, write or read that fails or waits longer than the timeout
//   (default 50 ms, each), a protocol error or an error reply makes fetch() answer nothing and publish() do nothing.
//   One line goes to stderr per outage; the server is then left alone for kRetrySeconds (the local caches answer
//   at once) and tried again; a request that succeeds after an outage re-arms the report. Nothing here throws for
//   the server's sake, and a dead connection never raises SIGPIPE in the calling process.
// - A value that is not what the entry should be (not an envelope, too large, unsigned or signed with another key
//   while a key is set) is ignored like a miss and reported once per key on stderr; callers that find the body
//   itself wrong (reject()) do the same.
// - Signatures: with TMAGEMM_REMOTE_CACHE_KEY set, publish() signs every value (HMAC-SHA256 with OpenSSL over the
//   entry's Redis key and body: a signed body is valid under its own key only) and fetch() returns only values whose
//   signature verifies. Without a key values go unsigned and fetch() returns any well-formed envelope: its body is
//   then untrusted data, which is why cubins, code that runs on the GPU, are shared only with a key (jit/remote.cpp).
// - Thread-safe: requests are serialised on the one connection. A forked child opens its own.
// A build without hiredis or libcrypto (CMake: TMAGEMM_REMOTE_CACHE OFF) still checks the variables; a set
// TMAGEMM_REMOTE_CACHE then gives one line on stderr ("built without hiredis") and the local caches alone.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace tmagemm::runtime::remote {

// Seconds an unavailable server is left alone before it is tried again.
inline constexpr int kRetrySeconds = 30;
// Defaults and limits of TMAGEMM_REMOTE_CACHE_TIMEOUT_MS, and the shortest TMAGEMM_REMOTE_CACHE_KEY.
inline constexpr int kDefaultTimeoutMs = 50;
inline constexpr int kMaxTimeoutMs = 60000;
inline constexpr std::size_t kMinKeyBytes = 16;

struct Settings {
  std::string url;   // TMAGEMM_REMOTE_CACHE as given (messages); empty: no remote cache
  std::string host;  // a name or an address; IPv6 addresses are written in brackets in the URL
  int port = 6379;
  int db = 0;
  int timeout_ms = kDefaultTimeoutMs;  // TMAGEMM_REMOTE_CACHE_TIMEOUT_MS: connect, each write, each read
  std::string key;                     // TMAGEMM_REMOTE_CACHE_KEY: the HMAC key; empty: values go unsigned
  bool enabled() const { return !url.empty(); }
  bool operator==(const Settings&) const = default;
};

// The settings the environment gives now (re-read when a variable changes). Throws Error(invalid_argument) naming
// the variable and the rule: TMAGEMM_REMOTE_CACHE is redis://HOST[:PORT][/DB] (PORT 1-65535, default 6379; DB an
// integer >= 0, default 0); TMAGEMM_REMOTE_CACHE_TIMEOUT_MS an integer 1..60000; TMAGEMM_REMOTE_CACHE_KEY at least
// 16 bytes.
Settings settings();
// Parses a URL as TMAGEMM_REMOTE_CACHE takes it into `s` (host, port, db); throws like settings().
void parse_url(const std::string& url, Settings& s);
// Throws like settings() when one of the variables is malformed; one getenv when TMAGEMM_REMOTE_CACHE is unset.
// Options() calls it, so that a malformed setting fails the call like any other TMAGEMM_* variable.
void check_environment();

// The library was built with hiredis and libcrypto.
bool built_in();
// The remote cache is configured (and built in) and values are signed and checked: a key is set.
bool signing();

// The body of the value at `key` when there is one this process accepts (see the contract), at most `max_bytes`
// long; nothing on a miss, a rejected value, an unconfigured cache or any trouble with the server.
std::optional<std::string> fetch(const std::string& key, std::size_t max_bytes);
// Stores `body` at `key` (signed when a key is set), replacing what was there. False when nothing was stored.
bool publish(const std::string& key, const std::string& body);
// A caller found the body of `key` unusable: reported once per key on stderr ("ignored ...: why"), counted.
void reject(const std::string& key, const std::string& why);

// Counts since the process started (tests, `tmagemm info`).
struct Stats {
  std::uint64_t fetches = 0;    // fetch() calls that asked the server
  std::uint64_t hits = 0;       // values returned
  std::uint64_t misses = 0;     // no value at the key
  std::uint64_t rejected = 0;   // values ignored (envelope, size, signature, or reject())
  std::uint64_t published = 0;  // publish() calls that stored a value
  std::uint64_t failures = 0;   // requests that failed (server down, timeout, error reply)
  std::uint64_t skipped = 0;    // requests not sent because the server was in an outage
};
Stats stats();

namespace detail {
// The stored form of a body: "tmagemm-remote-v1\n" <64 hex digits of HMAC-SHA256, or "-" unsigned> "\n" <body>.
// The HMAC covers "tmagemm-remote-v1" NUL <Redis key> NUL <body>.
std::string seal(const std::string& key, const std::string& body, const std::string& hmac_key);
// The body of a stored value when it is a well-formed envelope and, with a non-empty hmac_key, its signature is
// that key's for `key`; otherwise nothing, with the reason in `why`.
std::optional<std::string> open(const std::string& key, const std::string& value, const std::string& hmac_key,
                                std::string& why);
// Tests: the value at `key` exactly as stored (no envelope checks), and a raw store or removal. Through the same
// connection and outage rules as fetch()/publish().
std::optional<std::string> raw_get(const std::string& key);
bool raw_set(const std::string& key, const std::string& value);
// Tests: forget the connection, the outage state and the keys already reported (the counts stay).
void reset_for_testing();
// Tests: seconds an outage lasts (default kRetrySeconds); an outage in progress ends no later than that from now.
void set_retry_seconds_for_testing(int seconds);
}  // namespace detail

}  // namespace tmagemm::runtime::remote
