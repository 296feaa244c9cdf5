// main.cpp — entry point of the `tmagemm` command-line tool: parses the command line (CLI11) and runs the
// chosen subcommand (info, compile-check, bench, explain, tune, cache). Each subcommand is in its own file.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <string>

#include "common.hpp"
#include "tmagemm/version.hpp"


int main(int argc, char** argv) {
  CLI::App app{"tmagemm: GEMM library for NVIDIA Hopper (persistent TMA + WGMMA kernels compiled at run time).\n"
               "Device information, kernel compile check, benchmarks against cuBLASLt, dispatch explanations.",
               "tmagemm"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(tmagemm::version()));
  app.footer("Environment: TMAGEMM_TUNING, TMAGEMM_PERSISTENT_TMA, TMAGEMM_FALLBACK, TMAGEMM_CUBLASLT,\n"
             "TMAGEMM_SKINNY, "
             "TMAGEMM_CHOICE_REGEX, TMAGEMM_SM_CARVEOUT, TMAGEMM_M_BUCKETS, TMAGEMM_CACHE_DIR, TMAGEMM_REMOTE_CACHE,\n"
             "TMAGEMM_REMOTE_CACHE_KEY, TMAGEMM_REMOTE_CACHE_TIMEOUT_MS, TMAGEMM_LOG, CUDA_HOME (see README.md).");

  tmagemm::cli::Action action;
  tmagemm::cli::add_info(app, action);
  tmagemm::cli::add_compile_check(app, action);
  tmagemm::cli::add_bench(app, action);
  tmagemm::cli::add_explain(app, action);
  tmagemm::cli::add_tune(app, action);
  tmagemm::cli::add_cache(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!action) return 0;
  try {
    return action();
  } catch (const std::exception& e) {
    const std::string message = e.what();  // tmagemm::Error messages already start with "tmagemm: "
    fmt::print(stderr, "{}{}\n", message.rfind("tmagemm", 0) == 0 ? "" : "tmagemm: ", message);
    return 1;
  }
}
