// tune.cpp — `tmagemm tune`: tunes mm for shapes given as a suite name or "MxNxK[:layout],..." — every
// applicable choice is precompiled, checked and timed by the library's tuner (Options::tuning = benchmark)
// and the winner is stored in the tuning database. Progress on stderr; a table of winners on stdout. The other modes
// (a model file, the bucket sweep, the serving loop) are in tune_model.cpp and tune_sweep.cpp; this file registers
// them all.
#include <fmt/core.h>

#include <chrono>
#include <memory>
#include <random>
#include <vector>

#include "common.hpp"
#include "runtime/device.hpp"
#include "tune_modes.hpp"
#include "suites.hpp"
#include "tmagemm/ops.hpp"
#include "tmagemm/options.hpp"

namespace tmagemm::cli {

namespace {

struct TuneOptions {
  std::string shapes = "llm";
  std::string dtype = "bf16";
  int device = 0;
};

int run_tune(const TuneOptions& opt) {
  if (runtime::device_count() == 0) {
    fmt::print(stderr, "tmagemm tune: no CUDA device found; nothing to tune\n");
    return 1;
  }
  const DType dtype = parse_dtype16(opt.dtype);
  cuda_check(cudaSetDevice(opt.device), "cudaSetDevice");
  std::vector<BenchShape> shapes;
  for (const Suite& s : expand_suite(opt.shapes))
    if (s.op == "mm" && s.implemented) shapes.insert(shapes.end(), s.shapes.begin(), s.shapes.end());
  Options options;  // TMAGEMM_* apply, but this command always benchmarks
  options.tuning = Tuning::benchmark;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<std::uint16_t> pool(1 << 16);
  for (auto& v : pool) {
    float f = dist(rng);
    v = float_to_16bit(dtype, f == 0.0f ? 0.5f : f);
  }
  fmt::print("{:<18} {:<6} {:<48} {:>10} {:>8}\n", "shape (MxNxK)", "layout", "winner", "best ms", "tune s");
  int failures = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const BenchShape& s = shapes[i];
    fmt::print(stderr, "[{}/{}] tuning {}x{}x{} {}\n", i + 1, shapes.size(), s.m, s.n, s.k, s.layout);
    const Layout layout = parse_layout(s.layout);
    const std::size_t es = itemsize(dtype);
    auto alloc = [&](int64_t r, int64_t c) {
      const std::size_t n = static_cast<std::size_t>(std::max<int64_t>(r * c, 1));
      DeviceBuffer buf(n * es);
      std::vector<std::uint16_t> host(n);
      for (std::size_t j = 0; j < n; ++j) host[j] = pool[(j * 7919) % pool.size()];
      cuda_check(cudaMemcpy(buf.get(), host.data(), n * es, cudaMemcpyHostToDevice), "cudaMemcpy");
      return buf;
    };
    DeviceBuffer a = alloc(s.m, s.k), b = alloc(s.k, s.n), out(static_cast<std::size_t>(std::max<int64_t>(s.m * s.n, 1)) * es);
    const TensorView va = matrix_view(a.get(), dtype, s.m, s.k, layout.a_col, opt.device);
    const TensorView vb = matrix_view(b.get(), dtype, s.k, s.n, layout.b_col, opt.device);
    const TensorView vo = TensorView::contiguous(out.get(), dtype, {s.m, s.n}, opt.device);
    try {
      const auto t0 = std::chrono::steady_clock::now();
      tmagemm::mm(va, vb, vo, options);
      cuda_check(cudaDeviceSynchronize(), "tmagemm::mm (synchronize)");
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::string winner = "?";
      double best = 0;
      for (const auto& c : tmagemm::explain_mm(va, vb, vo, options).choices)
        if (c.selected) {
          winner = c.name;
          best = c.tuned_ms.value_or(0);
        }
      fmt::print("{:<18} {:<6} {:<48} {:>10.4f} {:>8.2f}\n", fmt::format("{}x{}x{}", s.m, s.n, s.k), s.layout, winner,
                 best, secs);
    } catch (const std::exception& e) {
      ++failures;
      fmt::print("{:<18} {:<6} error: {}\n", fmt::format("{}x{}x{}", s.m, s.n, s.k), s.layout, e.what());
    }
  }
  return failures ? 1 : 0;
}

}  // namespace

void add_tune(CLI::App& app, Action& action) {
  CLI::App* sub = app.add_subcommand(
      "tune", "Tune mm for a suite or given shapes, or every shape bucket of a model file (--model), and store the "
              "winners; measure shape buckets (--sweep, --serve)");
  auto opt = std::make_shared<TuneOptions>();
  auto model = std::make_shared<ModelRun>();
  auto sweep = std::make_shared<SweepRun>();
  auto serve = std::make_shared<ServeRun>();
  auto m_list = std::make_shared<std::string>();
  auto json = std::make_shared<std::string>();
  auto* shapes = sub->add_option("shapes", opt->shapes, "A suite name (llm, square, decode, ...) or \"MxNxK[:layout],...\"")
                     ->capture_default_str();
  sub->add_option("--dtype", opt->dtype, "Input/output dtype (shapes, --sweep, --serve)")
      ->check(CLI::IsMember({"bf16", "f16"}))
      ->capture_default_str();
  sub->add_option("--device", opt->device, "CUDA device index")->capture_default_str();
  auto* model_opt = sub->add_option("--model", model->file,
                                    "Tune every shape bucket of a model file's M range for each weight (JSON; README "
                                    "\"Offline tuning\"); a progress bar and ETA on stderr");
  sub->add_option("--devices", model->devices, "--model: the GPUs to spread the buckets over: \"all\" or a list "
                                               "\"0,1\" (one worker process per GPU)")
      ->capture_default_str();
  sub->add_option("--workers", model->workers, "--model: worker processes (default one per device; more than the "
                                               "devices share them round-robin)")
      ->check(CLI::Range(1, 256));
  sub->add_option("--worker", model->worker, "(internal) this process is worker I/N of a --model run")
      ->group("");
  auto* sweep_opt = sub->add_option("--sweep", sweep->pairs,
                                    "Bucketed against exact per-M tuning for weights \"NxK[:rr|rc],...\" on the M "
                                    "values of --m: both winners timed at each M, geomean of the ratio");
  auto* serve_opt = sub->add_option("--serve", serve->pairs,
                                    "A cached_only serving loop over weights \"NxK[:rr|rc],...\" with M drawn from "
                                    "--m: host time per call, throughput against exact per-M tuning");
  sub->add_option("--m", *m_list, fmt::format("--sweep, --serve: the M values (default {})", kDefaultSweep));
  sub->add_option("--calls", serve->calls, "--serve: calls per loop")->check(CLI::Range(1, 1000000))->capture_default_str();
  sub->add_option("--seed", serve->seed, "--serve: seed of the M sequence")->capture_default_str();
  sub->add_flag("!--no-preload", serve->preload,
                "--serve: skip the start-up preload of the weights' buckets (first calls then enumerate, read the "
                "database and load kernels)");
  sub->add_option("--json", *json, "--sweep, --serve: also write the results to this JSON file");
  model_opt->excludes(sweep_opt)->excludes(serve_opt)->excludes(shapes);
  sweep_opt->excludes(serve_opt)->excludes(shapes);
  serve_opt->excludes(shapes);
  sub->callback([&action, opt, model, sweep, serve, m_list, json, model_opt, sweep_opt, serve_opt] {
    if (model_opt->count()) {
      model->device = opt->device;
      action = [model] { return run_model(*model); };
    } else if (sweep_opt->count()) {
      sweep->m_list = *m_list;
      sweep->dtype = opt->dtype;
      sweep->json = *json;
      sweep->device = opt->device;
      action = [sweep] { return run_sweep(*sweep); };
    } else if (serve_opt->count()) {
      serve->m_list = *m_list;
      serve->dtype = opt->dtype;
      serve->json = *json;
      serve->device = opt->device;
      action = [serve] { return run_serve(*serve); };
    } else {
      action = [opt] { return run_tune(*opt); };
    }
  });
}

}  // namespace tmagemm::cli
