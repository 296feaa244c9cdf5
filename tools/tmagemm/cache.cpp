// cache.cpp — `tmagemm cache ls|clear|export|import|stats`: the kernel cache (<cache dir>/kernels/*.cubin) and the
// tuning database (<cache dir>/tuning.sqlite). No GPU needed, except for `stats --model` (the keys hold the GPU's
// model). The cache dir follows TMAGEMM_CACHE_DIR; one the library refuses (another user's, or writable by its group
// or every user: jit::cache_dir_refusal) is refused here too.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "common.hpp"
#include "jit/jit.hpp"
#include "runtime/device.hpp"
#include "tmagemm/error.hpp"
#include "tmagemm/options.hpp"
#include "tune/model.hpp"
#include "tune/tuner.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm::cli {

namespace {

namespace fs = std::filesystem;

// "1 cubin", "2 cubins", "1 entry", "0 entries".
std::string count_string(std::size_t n, const char* noun) {
  const std::string one = noun;
  if (n == 1) return fmt::format("1 {}", one);
  if (one == "entry") return fmt::format("{} entries", n);
  return fmt::format("{} {}s", n, one);
}

std::string size_string(std::uintmax_t b) {
  if (b >= (std::uintmax_t{1} << 30)) return fmt::format("{:.1f} GiB", b / 1073741824.0);
  if (b >= (std::uintmax_t{1} << 20)) return fmt::format("{:.1f} MiB", b / 1048576.0);
  if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", b);
}

// The winner's time, else the best finite time; "-" when there is none.
std::string best_ms(const tune::TuningRecord& r) {
  double best = INFINITY;
  for (const tune::Timing& t : r.timings)
    if (t.choice == r.winner && std::isfinite(t.ms)) return fmt::format("{:.4f}", t.ms);
  for (const tune::Timing& t : r.timings)
    if (std::isfinite(t.ms)) best = std::min(best, t.ms);
  return std::isfinite(best) ? fmt::format("{:.4f}", best) : "-";
}

int run_ls() {
  jit::check_cache_dir_for_tools(jit::cache_dir());  // refuses what the library refuses
  const jit::KernelCacheFiles kernels = jit::kernel_cache_files();
  fmt::print("kernel cache: {} ({}, {})\n", kernels.dir, count_string(kernels.files.size(), "cubin"),
             size_string(kernels.bytes));

  const std::string path = tune::TuningDb::default_path();
  if (!fs::exists(path)) {  // listing does not create the database
    fmt::print("tuning DB:    {} (none yet)\n", path);
    return 0;
  }
  tune::TuningDb db(path);
  const auto entries = db.list();
  fmt::print("tuning DB:    {} ({})\n", path, count_string(entries.size(), "entry"));
  if (entries.empty()) return 0;

  std::vector<std::string> best;
  std::size_t wk = 3, ww = 6, wb = 7;
  for (const auto& [key, record] : entries) {
    best.push_back(best_ms(record));
    wk = std::max(wk, key.size());
    ww = std::max(ww, record.winner.size());
    wb = std::max(wb, best.back().size());
  }
  fmt::print("\n{:<{}}  {:<{}}  {:>{}}  {}\n", "key", wk, "winner", ww, "best ms", wb, "tuned_at");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& [key, record] = entries[i];
    fmt::print("{:<{}}  {:<{}}  {:>{}}  {}\n", key, wk, record.winner, ww, best[i], wb,
               record.tuned_at.empty() ? "-" : record.tuned_at);
  }
  return 0;
}

int run_clear(bool kernels, bool tuning) {
  jit::check_cache_dir_for_tools(jit::cache_dir());  // refuses what the library refuses
  if (!kernels && !tuning) kernels = tuning = true;  // neither flag: both
  int rc = 0;
  if (kernels) {
    jit::KernelCacheFiles removed;
    for (const std::string& failure : jit::clear_kernel_cache(removed)) {
      fmt::print(stderr, "tmagemm cache clear: cannot remove {}\n", failure);
      rc = 1;
    }
    fmt::print("kernel cache: removed {} ({}) from {}\n", count_string(removed.files.size(), "cubin"),
               size_string(removed.bytes), removed.dir);
  }
  if (tuning) {
    const std::string path = tune::TuningDb::default_path();
    if (!fs::exists(path)) {
      fmt::print("tuning DB:    {} does not exist; nothing to clear\n", path);
    } else {
      tune::TuningDb db(path);
      const std::size_t n = db.size();
      db.clear();
      fmt::print("tuning DB:    cleared {} from {}\n", count_string(n, "entry"), path);
    }
  }
  return rc;
}

// FILE "-" is standard output.
int run_export(const std::string& file) {
  jit::check_cache_dir_for_tools(jit::cache_dir());  // refuses what the library refuses
  tune::TuningDb db(tune::TuningDb::default_path());
  const std::string text = db.export_json();
  const std::size_t n = nlohmann::json::parse(text).at("entries").size();
  if (file == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    fmt::print(stderr, "exported {} from {}\n", count_string(n, "entry"), db.path());
    return 0;
  }
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out || !out.flush()) {
      fmt::print(stderr, "tmagemm cache export: cannot write {}\n", file);
      return 1;
    }
  }
  fmt::print("exported {} from {} to {}\n", count_string(n, "entry"), db.path(), file);
  return 0;
}

// FILE "-" is standard input.
int run_import(const std::string& file) {
  jit::check_cache_dir_for_tools(jit::cache_dir());  // refuses what the library refuses
  std::string text;
  if (file == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      fmt::print(stderr, "tmagemm cache import: cannot read {}\n", file);
      return 1;
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  tune::TuningDb db(tune::TuningDb::default_path());
  const std::size_t n = db.import_json(text);  // Error(invalid_argument) on a bad document, nothing written
  fmt::print("imported {} into {}\n", count_string(n, "entry"), db.path());
  return 0;
}

// The fields of a tuning key (tune::tuning_key): device|SMs|cc|driver|version|op|types|layouts|extents|...
std::vector<std::string> key_fields(const std::string& key) {
  std::vector<std::string> f;
  std::size_t start = 0;
  for (std::size_t bar; (bar = key.find('|', start)) != std::string::npos; start = bar + 1)
    f.push_back(key.substr(start, bar - start));
  f.push_back(key.substr(start));
  return f;
}

// The tuning database by GPU and op, bucketed (M "lo..hi") or exact; with a model file, which of its shape buckets
// the database holds for `device` (exit status 1 when one is missing: a cached_only serving process would run the
// heuristic choice there).
int run_stats(const std::string& model_file, int device) {
  std::optional<tune::Model> model;
  if (!model_file.empty()) {  // checked before the database is read
    std::ifstream in(model_file, std::ios::binary);
    if (!in) throw Error(ErrorCode::invalid_argument, fmt::format("--model: cannot read {}", model_file));
    model = tune::parse_model(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
                              model_file);
  }
  const std::string path = tune::TuningDb::default_path();
  if (!fs::exists(path)) {
    fmt::print("tuning DB:    {} (none yet)\n", path);
    if (model) fmt::print("every bucket of {} is missing\n", model_file);
    return model ? 1 : 0;
  }
  tune::TuningDb db(path);
  const auto entries = db.list();
  fmt::print("tuning DB:    {} ({})\n", path, count_string(entries.size(), "entry"));
  std::map<std::string, std::pair<std::size_t, std::size_t>> by;  // "GPU op" -> (bucketed, exact)
  for (const auto& [key, record] : entries) {
    const auto f = key_fields(key);
    if (f.size() < 9) continue;
    auto& [bucketed, exact] = by[fmt::format("{} ({}) {}", f[0], f[1], f[5])];
    (f[8].find("..") != std::string::npos ? bucketed : exact) += 1;
  }
  for (const auto& [what, n] : by) fmt::print("  {:<48} {:>6} bucketed, {:>6} exact M\n", what, n.first, n.second);
  if (!model) return 0;

  if (runtime::device_count() == 0)
    throw Error(ErrorCode::invalid_argument, "cache stats --model needs the GPU the keys are for (no CUDA device)");
  const runtime::DeviceInfo& dev = runtime::device_info(device);
  const Options options;  // the serving process's filters come from the same TMAGEMM_* variables
  std::size_t found = 0, missing = 0;
  std::map<std::size_t, std::vector<std::string>> missing_by_weight;
  for (const tune::ModelJob& job : tune::model_jobs(*model)) {
    const GemmProblem p = tune::model_problem(model->weights[job.weight], job.bucket.hi, device);
    if (db.get(tune::database_key(p, options, dev))) {
      ++found;
    } else {
      ++missing;
      missing_by_weight[job.weight].push_back(tune::m_key(job.bucket));
    }
  }
  fmt::print("model {} on {} (device {}): {} of {} shape buckets in the tuning DB\n", model_file, dev.name, device,
             found, found + missing);
  for (const auto& [w, buckets] : missing_by_weight)
    fmt::print("  {} ({}): missing M {}\n", model->weights[w].name, model->weights[w].describe(),
               fmt::format("{}", fmt::join(buckets, ", ")));
  return missing ? 1 : 0;
}

}  // namespace

void add_cache(CLI::App& app, Action& action) {
  CLI::App* cache = app.add_subcommand(
      "cache", "List, clear, export or import the kernel cache and the tuning database (no GPU needed)");
  cache->require_subcommand(1);

  CLI::App* ls = cache->add_subcommand(
      "ls", "Print the kernel cache dir (cubin count, total size) and every tuning DB entry "
            "(key, winner, best ms, tuned_at)");
  ls->callback([&action] { action = [] { return run_ls(); }; });

  CLI::App* clear =
      cache->add_subcommand("clear", "Remove the cached cubins and/or the tuning DB entries (default both)");
  auto kernels = std::make_shared<bool>(false);
  auto tuning = std::make_shared<bool>(false);
  clear->add_flag("--kernels", *kernels, "remove the cubins in <cache dir>/kernels");
  clear->add_flag("--tuning", *tuning, "delete every tuning DB entry");
  clear->callback([&action, kernels, tuning] {
    action = [kernels, tuning] { return run_clear(*kernels, *tuning); };
  });

  CLI::App* exp =
      cache->add_subcommand("export", "Write the tuning DB as JSON ({\"version\":1,\"entries\":[...]})");
  auto out = std::make_shared<std::string>();
  exp->add_option("FILE", *out, "output file (- for standard output)")->required();
  exp->callback([&action, out] { action = [out] { return run_export(*out); }; });

  CLI::App* imp =
      cache->add_subcommand("import", "Add (or replace) the tuning DB entries of a JSON file from `cache export`");
  auto in = std::make_shared<std::string>();
  imp->add_option("FILE", *in, "input file (- for standard input)")->required();
  imp->callback([&action, in] { action = [in] { return run_import(*in); }; });

  CLI::App* stats = cache->add_subcommand(
      "stats", "Count the tuning DB entries by GPU and op (bucketed or exact M); with --model FILE, which of the "
               "model's shape buckets are tuned for this GPU (exit status 1 when one is missing)");
  auto model = std::make_shared<std::string>();
  auto device = std::make_shared<int>(0);
  stats->add_option("--model", *model, "a model file of `tmagemm tune --model` (needs the GPU: keys hold its model)");
  stats->add_option("--device", *device, "CUDA device index (with --model)")->capture_default_str();
  stats->callback([&action, model, device] { action = [model, device] { return run_stats(*model, *device); }; });
}

}  // namespace tmagemm::cli
