// remote_store.cpp — the Redis layer of the fleet-wide cache (see remote_store.hpp for the contract): settings from
// the environment, the connection with its timeouts and outage state, the envelope and its HMAC-SHA256 (OpenSSL).
#include "runtime/remote_store.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

#include "runtime/log.hpp"
#include "tmagemm/error.hpp"

#ifdef TMAGEMM_WITH_REMOTE_CACHE
#include <hiredis/hiredis.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif

namespace tmagemm::runtime::remote {

namespace {

constexpr std::string_view kMagic = "tmagemm-remote-v1";
constexpr std::size_t kEnvelopeBytes = 128;  // room for the magic line and the signature line beyond a body

constexpr const char* kUrlVar = "TMAGEMM_REMOTE_CACHE";
constexpr const char* kTimeoutVar = "TMAGEMM_REMOTE_CACHE_TIMEOUT_MS";
constexpr const char* kKeyVar = "TMAGEMM_REMOTE_CACHE_KEY";
constexpr const char* kUrlRule =
    "redis://HOST[:PORT][/DB] (HOST a name, an IPv4 address or an [IPv6] address; PORT 1-65535, default 6379; DB an "
    "integer >= 0, default 0)";

std::string trim(std::string s) {
  auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), space));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), space).base(), s.end());
  return s;
}

std::string env_trimmed(const char* name) {
  const char* raw = std::getenv(name);
  return raw ? trim(raw) : std::string();
}

[[noreturn]] void malformed_url(const std::string& url, const std::string& why) {
  throw Error(ErrorCode::invalid_argument,
              fmt::format("{}='{}' is not valid ({}): expected {}", kUrlVar, url, why, kUrlRule));
}

// A whole decimal integer in [lo, hi], or nothing.
std::optional<long long> parse_integer(std::string_view text, long long lo, long long hi) {
  if (text.empty()) return std::nullopt;
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < lo || value > hi) return std::nullopt;
  return value;
}

bool host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_';
}

Settings parse_settings(const std::string& url, const std::string& timeout, const std::string& key) {
  Settings s;
  if (url.empty()) return s;
  parse_url(url, s);
  if (!timeout.empty()) {
    const auto ms = parse_integer(timeout, 1, kMaxTimeoutMs);
    if (!ms)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}='{}' is not valid: expected an integer number of milliseconds from 1 to {} "
                              "(default {})", kTimeoutVar, timeout, kMaxTimeoutMs, kDefaultTimeoutMs));
    s.timeout_ms = static_cast<int>(*ms);
  }
  if (!key.empty() && key.size() < kMinKeyBytes)  // the value is a secret: never echoed
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} is not valid ({} bytes): expected at least {} bytes of secret, the same in every "
                            "process that shares the cache (e.g. the output of `openssl rand -hex 32`)",
                            kKeyVar, key.size(), kMinKeyBytes));
  s.key = key;
  return s;
}

std::atomic<std::uint64_t> g_fetches{0}, g_hits{0}, g_misses{0}, g_rejected{0}, g_published{0}, g_failures{0},
    g_skipped{0};
std::atomic<int> g_retry_seconds{kRetrySeconds};

// Reports (once per key) and counts a value that is ignored.
std::mutex g_rejected_mutex;
std::set<std::string>& rejected_keys() {
  static auto* keys = new std::set<std::string>();  // leaked: used from other threads until exit
  return *keys;
}

void report_rejected(const std::string& key, const std::string& why) {
  g_rejected.fetch_add(1);
  std::lock_guard<std::mutex> lock(g_rejected_mutex);
  if (rejected_keys().insert(key).second)
    std::fprintf(stderr, "tmagemm: remote cache: ignored %s: %s; the local path answers instead\n", key.c_str(),
                 why.c_str());
}

#ifdef TMAGEMM_WITH_REMOTE_CACHE

std::string to_hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    hex[2 * i] = digits[bytes[i] >> 4];
    hex[2 * i + 1] = digits[bytes[i] & 15];
  }
  return hex;
}

std::string hmac_hex(const std::string& hmac_key, const std::string& key, const std::string& body) {
  std::string message(kMagic);
  message.push_back('\0');
  message += key;
  message.push_back('\0');
  message += body;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), hmac_key.data(), static_cast<int>(hmac_key.size()),
            reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest, &length))
    return {};  // an OpenSSL failure: nothing verifies, nothing is signed
  return to_hex(digest, length);
}

// SIGPIPE is blocked on this thread while a request runs (a write to a connection the server closed would raise
// it, and its default action ends the process); one that a request raised is taken off the thread before the mask
// is restored.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~SigpipeGuard() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{0, 0};
        while (sigtimedwait(&pipe_, nullptr, &zero) == -1 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_{}, previous_{};
  bool was_pending_ = false;
};

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

// The connection and its outage state; every member is used with `mutex` held.
struct Connection {
  std::mutex mutex;
  Settings settings;  // what `context` was opened with
  redisContext* context = nullptr;
  pid_t pid = 0;  // the process that opened it
  std::chrono::steady_clock::time_point retry_after{};
  bool reported = false;  // this outage has been reported

  void close() {
    if (context) redisFree(context);
    context = nullptr;
  }

  // The server failed a request: drop the connection, leave it alone for a while, say so once per outage.
  void failed(const std::string& what) {
    close();
    g_failures.fetch_add(1);
    const int seconds = g_retry_seconds.load();
    retry_after = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    if (!reported)
      std::fprintf(stderr,
                   "tmagemm: remote cache %s unavailable (%s; timeout %d ms); using the local caches only, trying it "
                   "again in %d s\n",
                   settings.url.c_str(), what.c_str(), settings.timeout_ms, seconds);
    reported = true;
  }

  // The context to send on, connected (and on its DB) for `s`; nullptr during an outage or when connecting fails.
  redisContext* open(const Settings& s) {
    if (!(settings == s)) {  // new settings: a new server, no outage yet
      close();
      settings = s;
      retry_after = {};
      reported = false;
    }
    if (context && pid != ::getpid()) {  // inherited through fork(): the parent's socket is not ours to use
      close();
    }
    if (context) return context;
    if (std::chrono::steady_clock::now() < retry_after) {
      g_skipped.fetch_add(1);
      return nullptr;
    }
    const timeval tv{s.timeout_ms / 1000, static_cast<suseconds_t>((s.timeout_ms % 1000) * 1000)};
    context = redisConnectWithTimeout(s.host.c_str(), s.port, tv);
    pid = ::getpid();
    if (!context) {
      failed("connect: out of memory");
      return nullptr;
    }
    if (context->err) {
      failed(fmt::format("connect: {}", context->errstr));
      return nullptr;
    }
    if (redisSetTimeout(context, tv) != REDIS_OK) {
      failed("setting the timeout failed");
      return nullptr;
    }
    if (s.db != 0) {
      const std::string db = std::to_string(s.db);
      const Reply r = command({"SELECT", db}, "SELECT");
      if (!r) return nullptr;
      if (r->type == REDIS_REPLY_ERROR) {
        failed(fmt::format("SELECT {}: {}", s.db, std::string(r->str, r->len)));
        return nullptr;
      }
    }
    return context;
  }

  // One request on the open context; nullptr (after failed()) when it could not be sent or answered.
  Reply command(std::initializer_list<std::string_view> args, const char* what) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (std::string_view a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    SigpipeGuard guard;
    void* reply = redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data());
    if (!reply) {
      std::string why = context->errstr[0] ? context->errstr : "no reply";
      if (context->err == REDIS_ERR_IO && (why == std::strerror(EAGAIN) || why == std::strerror(ETIMEDOUT)))
        why = "no answer in time";  // the socket's timeout (redisSetTimeout) ran out
      failed(fmt::format("{}: {}", what, why));
      return nullptr;
    }
    return Reply(static_cast<redisReply*>(reply));
  }

  void succeeded() { reported = false; }
};

Connection& connection() {
  static auto* c = new Connection();  // leaked: used from other threads until exit
  return *c;
}

#endif  // TMAGEMM_WITH_REMOTE_CACHE

// The settings when the remote cache is configured and built in; nothing otherwise (a configured cache in a build
// without it is reported once).
std::optional<Settings> active_settings() {
  Settings s = settings();
  if (!s.enabled()) return std::nullopt;
  if (!built_in()) {
    static std::once_flag once;
    std::call_once(once, [] {
      std::fprintf(stderr,
                   "tmagemm: %s is set, but this tmagemm was built without hiredis and OpenSSL's libcrypto (the "
                   "remote cache); only the local caches are used\n",
                   kUrlVar);
    });
    return std::nullopt;
  }
  return s;
}

}  // namespace

void parse_url(const std::string& url, Settings& s) {
  constexpr std::string_view scheme = "redis://";
  if (url.compare(0, scheme.size(), scheme) != 0) malformed_url(url, "it does not start with redis://");
  std::string_view rest(url);
  rest.remove_prefix(scheme.size());
  std::string_view authority = rest, path;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    path = rest.substr(slash + 1);
    const auto db = parse_integer(path, 0, 1 << 30);
    if (!db) malformed_url(url, "DB is not an integer >= 0");
    s.db = static_cast<int>(*db);
  }
  if (authority.find('@') != std::string_view::npos)
    malformed_url(url, "a user or password is not supported");
  std::string_view host = authority, port;
  if (!authority.empty() && authority.front() == '[') {  // [IPv6]
    const auto close = authority.find(']');
    if (close == std::string_view::npos) malformed_url(url, "an IPv6 address without its closing ]");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') malformed_url(url, "characters after the IPv6 address");
      port = after.substr(1);
      if (port.empty()) malformed_url(url, "an empty PORT");
    }
    for (char c : host)
      if (!(std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.'))
        malformed_url(url, "the IPv6 address has a character that is not a hex digit, ':' or '.'");
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) malformed_url(url, "an empty PORT");
  }
  if (host.empty()) malformed_url(url, "no HOST");
  if (authority.front() != '[')
    for (char c : host)
      if (!host_char(c)) malformed_url(url, fmt::format("HOST has the character '{}'", c));
  if (!port.empty()) {
    const auto p = parse_integer(port, 1, 65535);
    if (!p) malformed_url(url, "PORT is not an integer from 1 to 65535");
    s.port = static_cast<int>(*p);
  }
  s.host = std::string(host);
  s.url = url;
}

Settings settings() {
  static std::mutex mutex;
  static std::string last_raw[3];
  static Settings last;
  static bool have = false;
  const std::string raw[3] = {env_trimmed(kUrlVar), env_trimmed(kTimeoutVar), env_trimmed(kKeyVar)};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (have && raw[0] == last_raw[0] && raw[1] == last_raw[1] && raw[2] == last_raw[2]) return last;
  }
  Settings s = parse_settings(raw[0], raw[1], raw[2]);  // throws on a malformed variable
  std::lock_guard<std::mutex> lock(mutex);
  for (int i = 0; i < 3; ++i) last_raw[i] = raw[i];
  last = s;
  have = true;
  return s;
}

void check_environment() {
  const char* url = std::getenv(kUrlVar);
  if (url == nullptr || *url == '\0') return;
  (void)settings();
}

bool built_in() {
#ifdef TMAGEMM_WITH_REMOTE_CACHE
  return true;
#else
  return false;
#endif
}

bool signing() {
  const Settings s = settings();
  return built_in() && s.enabled() && !s.key.empty();
}

void reject(const std::string& key, const std::string& why) { report_rejected(key, why); }

Stats stats() {
  return Stats{g_fetches.load(), g_hits.load(),      g_misses.load(), g_rejected.load(),
               g_published.load(), g_failures.load(), g_skipped.load()};
}

#ifdef TMAGEMM_WITH_REMOTE_CACHE

std::optional<std::string> fetch(const std::string& key, std::size_t max_bytes) {
  const std::optional<Settings> s = active_settings();
  if (!s) return std::nullopt;
  std::string value;
  {
    Connection& c = connection();
    std::lock_guard<std::mutex> lock(c.mutex);
    if (!c.open(*s)) return std::nullopt;
    g_fetches.fetch_add(1);
    // GETRANGE bounds what a wrong or hostile value can make this process read (GET would take any size).
    const std::string last = std::to_string(max_bytes + kEnvelopeBytes);
    const Reply r = c.command({"GETRANGE", key, "0", last}, "GETRANGE");
    if (!r) return std::nullopt;
    c.succeeded();
    if (r->type == REDIS_REPLY_ERROR) {  // e.g. WRONGTYPE: another kind of value at the key
      report_rejected(key, "the server answered " + std::string(r->str, r->len));
      return std::nullopt;
    }
    if (r->type != REDIS_REPLY_STRING) {
      report_rejected(key, fmt::format("the server answered a reply of type {}, not a string", r->type));
      return std::nullopt;
    }
    value.assign(r->str, r->len);
  }
  if (value.empty()) {  // GETRANGE answers "" for a missing key
    g_misses.fetch_add(1);
    if (log_enabled("remote")) std::fprintf(stderr, "tmagemm remote: miss %s\n", key.c_str());
    return std::nullopt;
  }
  if (value.size() > max_bytes + kEnvelopeBytes) {
    report_rejected(key, fmt::format("the value is larger than {} bytes", max_bytes + kEnvelopeBytes));
    return std::nullopt;
  }
  std::string why;
  std::optional<std::string> body = detail::open(key, value, s->key, why);
  if (!body) {
    report_rejected(key, why);
    return std::nullopt;
  }
  g_hits.fetch_add(1);
  if (log_enabled("remote"))
    std::fprintf(stderr, "tmagemm remote: hit %s (%zu bytes%s)\n", key.c_str(), body->size(),
                 s->key.empty() ? ", unsigned" : ", signature verified");
  return body;
}

bool publish(const std::string& key, const std::string& body) {
  const std::optional<Settings> s = active_settings();
  if (!s) return false;
  const std::string value = detail::seal(key, body, s->key);
  Connection& c = connection();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.open(*s)) return false;
  const Reply r = c.command({"SET", key, value}, "SET");
  if (!r) return false;
  if (r->type == REDIS_REPLY_ERROR) {  // e.g. a read-only replica, or the server out of memory
    c.failed(fmt::format("SET: {}", std::string(r->str, r->len)));
    return false;
  }
  c.succeeded();
  g_published.fetch_add(1);
  if (log_enabled("remote"))
    std::fprintf(stderr, "tmagemm remote: published %s (%zu bytes%s)\n", key.c_str(), body.size(),
                 s->key.empty() ? ", unsigned" : ", signed");
  return true;
}

namespace detail {

std::string seal(const std::string& key, const std::string& body, const std::string& hmac_key) {
  std::string value(kMagic);
  value += '\n';
  value += hmac_key.empty() ? std::string("-") : hmac_hex(hmac_key, key, body);
  value += '\n';
  value += body;
  return value;
}

std::optional<std::string> open(const std::string& key, const std::string& value, const std::string& hmac_key,
                                std::string& why) {
  const std::size_t first = value.find('\n');
  if (first == std::string::npos || std::string_view(value).substr(0, first) != kMagic) {
    why = "not a tmagemm entry (no tmagemm-remote-v1 header)";
    return std::nullopt;
  }
  const std::size_t second = value.find('\n', first + 1);
  if (second == std::string::npos) {
    why = "a truncated entry (no signature line)";
    return std::nullopt;
  }
  const std::string signature = value.substr(first + 1, second - first - 1);
  std::string body = value.substr(second + 1);
  if (hmac_key.empty()) {
    if (signature != "-" && signature.size() != 64) {
      why = "a malformed signature line";
      return std::nullopt;
    }
    return body;
  }
  if (signature == "-") {
    why = "unsigned, and TMAGEMM_REMOTE_CACHE_KEY is set (only signed entries are used)";
    return std::nullopt;
  }
  const std::string expected = hmac_hex(hmac_key, key, body);
  if (expected.empty() || signature.size() != expected.size() ||
      CRYPTO_memcmp(signature.data(), expected.data(), expected.size()) != 0) {
    why = "its signature does not verify with TMAGEMM_REMOTE_CACHE_KEY (changed after signing, or signed with "
          "another key)";
    return std::nullopt;
  }
  return body;
}

std::optional<std::string> raw_get(const std::string& key) {
  const std::optional<Settings> s = active_settings();
  if (!s) return std::nullopt;
  Connection& c = connection();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.open(*s)) return std::nullopt;
  const Reply r = c.command({"GET", key}, "GET");
  if (!r || r->type != REDIS_REPLY_STRING) return std::nullopt;
  c.succeeded();
  return std::string(r->str, r->len);
}

bool raw_set(const std::string& key, const std::string& value) {
  const std::optional<Settings> s = active_settings();
  if (!s) return false;
  Connection& c = connection();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.open(*s)) return false;
  const Reply r = c.command({"SET", key, value}, "SET");
  if (!r || r->type == REDIS_REPLY_ERROR) return false;
  c.succeeded();
  return true;
}

void reset_for_testing() {
  {
    Connection& c = connection();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.close();
    c.settings = Settings{};
    c.retry_after = {};
    c.reported = false;
  }
  std::lock_guard<std::mutex> lock(g_rejected_mutex);
  rejected_keys().clear();
}

void set_retry_seconds_for_testing(int seconds) {
  g_retry_seconds.store(seconds);
  Connection& c = connection();
  std::lock_guard<std::mutex> lock(c.mutex);
  const auto latest = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  if (c.retry_after > latest) c.retry_after = latest;
}

}  // namespace detail

#else  // built without hiredis / libcrypto: the settings are still checked, nothing is ever fetched or stored

std::optional<std::string> fetch(const std::string&, std::size_t) {
  (void)active_settings();
  return std::nullopt;
}

bool publish(const std::string&, const std::string&) {
  (void)active_settings();
  return false;
}

namespace detail {

std::string seal(const std::string&, const std::string& body, const std::string&) {
  return std::string(kMagic) + "\n-\n" + body;
}

std::optional<std::string> open(const std::string&, const std::string&, const std::string&, std::string& why) {
  why = "this tmagemm was built without the remote cache";
  return std::nullopt;
}

std::optional<std::string> raw_get(const std::string&) { return std::nullopt; }
bool raw_set(const std::string&, const std::string&) { return false; }

void reset_for_testing() {
  std::lock_guard<std::mutex> lock(g_rejected_mutex);
  rejected_keys().clear();
}

void set_retry_seconds_for_testing(int seconds) { g_retry_seconds.store(seconds); }

}  // namespace detail

#endif  // TMAGEMM_WITH_REMOTE_CACHE

}  // namespace tmagemm::runtime::remote
