// tune_model.cpp — `tmagemm tune --model FILE [--devices all|LIST] [--workers N]`: offline tuning of a model's
// weight shapes. The file is read and checked first (tune::parse_model names the field and the rule); its jobs (one
// per weight and shape bucket of the M range) are tuned by the library's tuner into the tuning database, which
// `tmagemm cache export` then ships. One process tunes them in order; with several devices or workers, the parent
// starts one worker process per slot (this program again, with --worker I/N --device D), each tuning every N-th job
// into the shared database, and reads their one-line reports. A progress bar with an ETA goes to stderr, the table of
// winners to stdout.
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "runtime/device.hpp"
#include "tmagemm/error.hpp"
#include "tmagemm/options.hpp"
#include "tune/model.hpp"
#include "tune_modes.hpp"

extern char** environ;

namespace tmagemm::cli {

namespace {

using clock = std::chrono::steady_clock;

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{}:{:02}", s / 60, s % 60);
}

// The progress bar on stderr: redrawn in place on a terminal, one line per finished job otherwise (logs).
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO) != 0), start_(clock::now()) {}

  void finished(const std::string& what) {
    ++done_;
    const double elapsed = std::chrono::duration<double>(clock::now() - start_).count();
    const double eta = done_ ? elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_) : 0;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * done_ / std::max<std::size_t>(total_, 1));
    const std::string bar = std::string(static_cast<std::size_t>(filled), '#') + std::string(kWidth - filled, '.');
    const std::string line = fmt::format("[{}] {}/{} {:3.0f}%  elapsed {}  ETA {}  {}", bar, done_, total_,
                                         100.0 * static_cast<double>(done_) / static_cast<double>(std::max<std::size_t>(total_, 1)),
                                         clock_text(elapsed), clock_text(eta), what);
    if (tty_)
      fmt::print(stderr, "\r\033[K{}{}", line, done_ == total_ ? "\n" : "");
    else
      fmt::print(stderr, "{}\n", line);
    std::fflush(stderr);
  }
  // A message that must not be drawn over.
  void note(const std::string& text) {
    fmt::print(stderr, "{}{}\n", tty_ ? "\r\033[K" : "", text);
    std::fflush(stderr);
  }

 private:
  std::size_t total_, done_ = 0;
  bool tty_;
  clock::time_point start_;
};

struct Outcome {
  bool done = false, failed = false, tuned = false;
  std::string winner, error;
  double seconds = 0;
};

std::string label(const tune::Model& model, const tune::ModelJob& job) {
  return fmt::format("{} M {}", model.weights[job.weight].describe(), tune::m_key(job.bucket));
}

// The worker's report of one job: "done J tuned|stored SECONDS WINNER" or "fail J MESSAGE" (one line).
std::string report_line(std::size_t j, const Outcome& o) {
  if (o.failed) {
    std::string msg = o.error;
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    return fmt::format("fail {} {}", j, msg);
  }
  return fmt::format("done {} {} {:.3f} {}", j, o.tuned ? "tuned" : "stored", o.seconds, o.winner);
}

bool parse_report(const std::string& line, std::size_t& j, Outcome& o) {
  std::istringstream in(line);
  std::string kind;
  if (!(in >> kind >> j)) return false;
  if (kind == "fail") {
    o.failed = true;
    std::getline(in >> std::ws, o.error);
    return true;
  }
  std::string how;
  if (kind != "done" || !(in >> how >> o.seconds >> o.winner)) return false;
  o.done = true;
  o.tuned = how == "tuned";
  return true;
}

Outcome run_job(const tune::Model& model, const tune::ModelJob& job, int device, const Options& options) {
  Outcome o;
  try {
    const tune::JobResult r = tune::tune_job(model, job, device, options);
    o.done = true;
    o.tuned = r.tuned;
    o.winner = r.winner;
    o.seconds = r.seconds;
  } catch (const std::exception& e) {
    o.failed = true;
    o.error = e.what();
  }
  return o;
}

std::vector<int> parse_devices(const std::string& text, int count) {
  std::vector<int> devices;
  if (text == "all") {
    for (int d = 0; d < count; ++d) devices.push_back(d);
    return devices;
  }
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int d = -1;
    try {
      std::size_t used = 0;
      d = std::stoi(item, &used);
      if (used != item.size()) d = -1;
    } catch (const std::exception&) {
      d = -1;
    }
    if (d < 0 || d >= count)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--devices: '{}' is not a device index 0..{} (or \"all\")", item, count - 1));
    if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
  }
  if (devices.empty()) throw Error(ErrorCode::invalid_argument, "--devices: give \"all\" or a list like \"0,1\"");
  return devices;
}

// Starts this program as worker `index` of `count` on `device`; its stdout is returned as a pipe's read end.
pid_t spawn_worker(const std::string& file, int index, int count, int device, int& out_fd) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  const std::string worker = fmt::format("{}/{}", index, count), dev = std::to_string(device);
  std::vector<std::string> args = {"tmagemm", "tune", "--model", file, "--worker", worker, "--device", dev};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error(fmt::format("starting worker {}: {}", worker, std::strerror(rc)));
  }
  out_fd = fds[0];
  return pid;
}

int run_worker(const ModelRun& run, const tune::Model& model, const std::vector<tune::ModelJob>& jobs,
               const Options& options) {
  int index = -1, count = 0;
  char slash = 0;
  std::istringstream in(run.worker);
  if (!(in >> index >> slash >> count) || slash != '/' || count < 1 || index < 0 || index >= count)
    throw Error(ErrorCode::invalid_argument, fmt::format("--worker: '{}' is not I/N with 0 <= I < N", run.worker));
  int failures = 0;
  for (std::size_t j = static_cast<std::size_t>(index); j < jobs.size(); j += static_cast<std::size_t>(count)) {
    const Outcome o = run_job(model, jobs[j], run.device, options);
    failures += o.failed;
    fmt::print("{}\n", report_line(j, o));
    std::fflush(stdout);
  }
  return failures ? 1 : 0;
}

}  // namespace

int run_model(const ModelRun& run) {
  // Everything about the input is checked before any GPU work.
  std::ifstream file(run.file, std::ios::binary);
  if (!file) throw Error(ErrorCode::invalid_argument, fmt::format("--model: cannot read {}", run.file));
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const tune::Model model = tune::parse_model(text, run.file);
  const std::vector<tune::ModelJob> jobs = tune::model_jobs(model);
  const Options options;  // TMAGEMM_* apply (filters, carveout); tune_job benchmarks
  if (!options.m_buckets)
    throw Error(ErrorCode::invalid_argument,
                "TMAGEMM_M_BUCKETS=0: offline tuning fills shape buckets, which a process with exact M keys never "
                "reads; unset it (or set 1)");
  if (!run.worker.empty()) return run_worker(run, model, jobs, options);

  const int count = runtime::device_count();
  if (count == 0) {
    fmt::print(stderr, "tmagemm tune: no CUDA device found; nothing to tune\n");
    return 1;
  }
  const std::vector<int> devices =
      run.devices == "0" && run.device != 0 ? std::vector<int>{run.device} : parse_devices(run.devices, count);
  // The keys hold the GPU model: one run tunes for one model of GPU.
  for (int d : devices) {
    const runtime::DeviceInfo& a = runtime::device_info(devices.front());
    const runtime::DeviceInfo& b = runtime::device_info(d);
    if (a.name != b.name || a.sm_count != b.sm_count)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--devices: device {} ({}, {} SMs) and device {} ({}, {} SMs) differ; tuning keys hold "
                              "the GPU model, so tune each model on its own (e.g. --devices {})",
                              devices.front(), a.name, a.sm_count, d, b.name, b.sm_count, devices.front()));
  }
  const int workers = run.workers > 0 ? run.workers : static_cast<int>(devices.size());
  fmt::print(stderr, "tmagemm tune: {} weight(s), M {}..{}: {} bucket tunings on {} worker(s), device(s) {}\n",
             model.weights.size(), model.m_min, model.m_max, jobs.size(), workers,
             fmt::format("{}", fmt::join(devices, ",")));

  std::vector<Outcome> outcomes(jobs.size());
  Progress progress(jobs.size());
  const auto t0 = clock::now();
  const auto finished = [&](std::size_t j) {
    const Outcome& o = outcomes[j];
    progress.finished(fmt::format("{}: {}", label(model, jobs[j]),
                                  o.failed ? "FAILED" : fmt::format("{} ({})", o.winner, o.tuned ? "tuned" : "stored")));
    if (o.failed) progress.note(fmt::format("tmagemm tune: {} failed: {}", label(model, jobs[j]), o.error));
  };
  int worker_failures = 0;
  if (workers == 1) {
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      outcomes[j] = run_job(model, jobs[j], devices.front(), options);
      finished(j);
    }
  } else {
    struct Worker {
      pid_t pid;
      int fd;
      std::string buffer;
    };
    std::vector<Worker> live;
    for (int i = 0; i < workers; ++i) {
      Worker w{0, -1, {}};
      w.pid = spawn_worker(run.file, i, workers, devices[static_cast<std::size_t>(i) % devices.size()], w.fd);
      live.push_back(w);
    }
    while (!live.empty()) {
      std::vector<pollfd> fds;
      for (const Worker& w : live) fds.push_back({w.fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
        throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
      for (std::size_t i = fds.size(); i-- > 0;) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Worker& w = live[i];
        char chunk[4096];
        const ssize_t got = read(w.fd, chunk, sizeof chunk);
        if (got > 0) {
          w.buffer.append(chunk, static_cast<std::size_t>(got));
          for (std::size_t nl; (nl = w.buffer.find('\n')) != std::string::npos;) {
            const std::string line = w.buffer.substr(0, nl);
            w.buffer.erase(0, nl + 1);
            std::size_t j = 0;
            Outcome o;
            if (parse_report(line, j, o) && j < outcomes.size()) {
              outcomes[j] = o;
              finished(j);
            } else if (!line.empty()) {
              progress.note(line);  // not a report: pass it on
            }
          }
          continue;
        }
        if (got < 0 && errno == EINTR) continue;
        close(w.fd);
        int status = 0;
        waitpid(w.pid, &status, 0);
        if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1)) {
          ++worker_failures;
          progress.note(fmt::format("tmagemm tune: worker (pid {}) ended abnormally ({})", w.pid,
                                    WIFSIGNALED(status) ? fmt::format("signal {}", WTERMSIG(status))
                                                        : fmt::format("exit {}", WEXITSTATUS(status))));
        }
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }

  const double total = std::chrono::duration<double>(clock::now() - t0).count();
  std::size_t tuned = 0, stored = 0, failed = 0, missing = 0;
  fmt::print("{:<40} {:<14} {:<48} {:>7} {:>7}\n", "weight", "M bucket", "winner", "how", "s");
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const Outcome& o = outcomes[j];
    const tune::ModelWeight& w = model.weights[jobs[j].weight];
    const std::string name = w.name == fmt::format("weights[{}]", jobs[j].weight) ? w.describe() : w.name;
    if (o.failed) ++failed;
    else if (!o.done) ++missing;
    else if (o.tuned) ++tuned;
    else ++stored;
    fmt::print("{:<40} {:<14} {:<48} {:>7} {:>7.2f}\n", name, tune::m_key(jobs[j].bucket),
               o.failed ? "error: " + o.error.substr(0, 41) : o.done ? o.winner : "(no report)",
               o.failed ? "failed" : o.done ? (o.tuned ? "tuned" : "stored") : "-", o.seconds);
  }
  fmt::print("{} bucket(s): {} tuned, {} already in the tuning database, {} failed, {} not reported; {:.1f} s on {} "
             "worker(s)\n",
             jobs.size(), tuned, stored, failed, missing, total, workers);
  return failed || missing || worker_failures ? 1 : 0;
}

}  // namespace tmagemm::cli
