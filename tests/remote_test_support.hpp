// remote_test_support.hpp — for the remote cache tests (CPU and GPU): a real redis-server started on a free local
// port (bound to 127.0.0.1, nothing written to disk) that a test can kill or pause, and child processes running one
// helper test of the same binary (separate processes with separate local caches).
#pragma once
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace tmagemm::remote_test {

// redis-server: $TMAGEMM_REDIS_SERVER when set, else the first on PATH; "" when there is none.
inline std::string find_redis_server() {
  if (const char* v = std::getenv("TMAGEMM_REDIS_SERVER"); v && *v) return v;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/redis-server";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

inline const char* kNoRedisMessage =
    "redis-server not found (install the Debian package redis-server, as scripts/install-deps.sh does, or set "
    "TMAGEMM_REDIS_SERVER): remote cache test skipped";

// A port the kernel just handed out on 127.0.0.1 (free when asked; the server below retries if it is taken).
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// True when a server on 127.0.0.1:port answers PING within ~250 ms.
inline bool answers_ping(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{0, 250000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const char ping[] = "PING\r\n";
    char reply[16] = {};
    ok = ::send(fd, ping, sizeof ping - 1, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof ping - 1) &&
         ::recv(fd, reply, sizeof reply - 1, 0) >= 5 && std::strncmp(reply, "+PONG", 5) == 0;
  }
  ::close(fd);
  return ok;
}

// Spawns argv[0] with argv, stdout and stderr to `log` (appended), this process's environment. -1 on failure.
inline pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> copies = args;
  std::vector<char*> argv;
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, copies[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A redis-server of our own: `redis-server --port P --bind 127.0.0.1 --save "" --appendonly no`, its working dir and
// log under `dir`. Killed (SIGKILL) and reaped on destruction if it still runs.
class RedisServer {
 public:
  RedisServer(const std::string& binary, const std::filesystem::path& dir) : dir_(dir) {
    for (int attempt = 0; attempt < 5 && pid_ < 0; ++attempt) {
      port_ = free_port();
      const std::string log = (dir_ / "redis.log").string();
      pid_ = spawn({binary, "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                    "no", "--dir", dir_.string(), "--daemonize", "no"},
                   log);
      if (pid_ < 0) continue;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (std::chrono::steady_clock::now() < deadline) {
        if (answers_ping(port_)) return;
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) break;  // exited: e.g. the port was taken meanwhile
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      kill();
    }
  }
  ~RedisServer() { kill(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  bool running() const { return pid_ > 0; }
  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return read_file(dir_ / "redis.log"); }

  // SIGKILL and reap: the server is gone at once, its connections reset.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  // SIGSTOP / SIGCONT: connections stay open and nothing answers (a stalled server).
  void pause() {
    if (pid_ > 0) ::kill(pid_, SIGSTOP);
  }
  void resume() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
  }

 private:
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// Runs `--gtest_filter=<filter>` of `binary` in a child process (this process's environment), its output to `log`;
// the exit status as waitpid gives it, or -1 when it could not be started.
inline int run_helper(const std::string& binary, const std::string& filter, const std::string& log) {
  const pid_t pid = spawn({binary, "--gtest_filter=" + filter, "--gtest_color=no"}, log);
  if (pid < 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

inline bool exited_ok(int status) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

}  // namespace tmagemm::remote_test
