// compile_check.cpp — `tmagemm compile-check`: compiles every kernel variant of every backend's config table
// (choices::all_kernel_specs) with NVRTC, in parallel, for one target arch. Needs no GPU: CI runs it.
// With --verbose it prints each kernel's ptxas resource report and fails kernels that spill registers or
// get a ptxas performance advisory C75xx (wgmma serialised, setmaxnreg ignored, ...).
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "choices/registry.hpp"
#include "common.hpp"
#include "jit/jit.hpp"

namespace tmagemm::cli {

namespace {

struct CompileCheckOptions {
  std::string arch = "sm_90a";
  unsigned jobs = 0;  // 0: std::thread::hardware_concurrency()
  std::string filter;
  bool verbose = false;
  bool print_keys = false;  // print "<cache key> <name>" per kernel and compile nothing
};

struct Outcome {
  bool ok = true;
  std::string problem;   // why it failed (one line)
  std::string log;       // the compiler log to show with a failure
  std::string resources; // condensed ptxas report (--verbose)
  bool from_cache = false;
};

// Lines of the ptxas -v report worth showing, and the rules --verbose enforces on them.
void inspect_resources(const std::string& log, Outcome& out) {
  static const std::regex spill(R"((\d+) bytes spill (stores|loads))");
  std::istringstream in(log);
  std::string line;
  std::vector<std::string> shown;
  bool saw_usage = false;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    std::string trimmed = line.substr(first);
    // "ptxas info    : Used 168 registers" / "ptxas         .     0 bytes stack frame" -> the text after the tag
    if (trimmed.rfind("ptxas", 0) == 0) {
      const auto sep = trimmed.find_first_of(":.", 5);
      if (sep != std::string::npos) {
        const auto text = trimmed.find_first_not_of(" \t", sep + 1);
        if (text != std::string::npos) trimmed = trimmed.substr(text);
      }
    }
    const bool usage = trimmed.find("Used ") != std::string::npos && trimmed.find("registers") != std::string::npos;
    const bool frame = trimmed.find("bytes stack frame") != std::string::npos;
    const bool advisory = trimmed.find("(C75") != std::string::npos;
    if (usage) saw_usage = true;
    if (usage || frame || advisory) shown.push_back(trimmed);
    for (std::sregex_iterator it(trimmed.begin(), trimmed.end(), spill), end; it != end; ++it) {
      if (std::stoll((*it)[1].str()) != 0 && out.ok) {
        out.ok = false;
        out.problem = "register spill: " + trimmed;
      }
    }
    if (advisory && out.ok) {
      out.ok = false;
      out.problem = "ptxas performance advisory: " + trimmed;
    }
  }
  if (!saw_usage && out.ok) {
    out.ok = false;
    out.problem = "no ptxas resource report in the compile log (expected with verbose_resources)";
  }
  for (const auto& s : shown) out.resources += (out.resources.empty() ? "" : "; ") + s;
}

int run_compile_check(const CompileCheckOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<jit::KernelSpec> specs = choices::all_kernel_specs();
  if (!opt.filter.empty()) {
    std::regex re;
    try {
      re = std::regex(opt.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      fmt::print(stderr, "tmagemm compile-check: --filter '{}' is not a valid regex: {}\n", opt.filter, e.what());
      return 2;
    }
    std::erase_if(specs, [&](const jit::KernelSpec& s) { return !std::regex_search(s.name, re); });
  }
  if (specs.empty()) {
    fmt::print(stderr, "tmagemm compile-check: no kernel matches --filter '{}'\n", opt.filter);
    return 1;
  }

  if (opt.print_keys) {  // for tools that compare two builds' kernels by name (lab/compare-sass.py)
    for (const auto& s : specs) fmt::print("{} {}\n", jit::cache_key(s, opt.arch), s.name);
    return 0;
  }

  unsigned jobs = opt.jobs ? opt.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(specs.size()));
  fmt::print("compile-check: compiling {} kernels for {} with {} threads\n", specs.size(), opt.arch, jobs);
  std::fflush(stdout);

  std::vector<Outcome> outcomes(specs.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < specs.size(); i = next++) {
      Outcome& out = outcomes[i];
      try {
        jit::Cubin cubin = jit::compile(specs[i], opt.arch, opt.verbose);
        out.from_cache = cubin.from_cache;
        out.log = cubin.log;
        if (cubin.image.empty()) {
          out.ok = false;
          out.problem = "compiler returned an empty cubin";
        } else if (opt.verbose) {
          inspect_resources(cubin.log, out);
        }
      } catch (const std::exception& e) {
        out.ok = false;
        out.problem = e.what();  // Error(compile_error) carries the NVRTC log
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < jobs; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();

  std::size_t failed = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const Outcome& out = outcomes[i];
    if (opt.verbose)
      fmt::print("{} {}{}: {}\n", out.ok ? "ok  " : "FAIL", specs[i].name, out.from_cache ? " (cached)" : "",
                 out.resources.empty() ? std::string("(no resource report)") : out.resources);
    if (!out.ok) {
      ++failed;
      fmt::print("FAILED {}: {}\n", specs[i].name, out.problem);
      if (!out.log.empty() && out.problem.find(out.log) == std::string::npos)
        fmt::print("--- compile log ---\n{}\n-------------------\n", out.log);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("compile-check: {} kernels, {} failed, {:.1f} s\n", specs.size(), failed, seconds);
  return failed == 0 ? 0 : 1;
}

}  // namespace

void add_compile_check(CLI::App& app, Action& action) {
  CLI::App* sub = app.add_subcommand(
      "compile-check", "Compile every kernel variant with NVRTC (no GPU needed); non-zero exit on any failure");
  auto opt = std::make_shared<CompileCheckOptions>();
  sub->add_option("--arch", opt->arch, "NVRTC target architecture")->capture_default_str();
  sub->add_option("--jobs,-j", opt->jobs, "Compile threads (default: number of hardware threads)");
  sub->add_option("--filter", opt->filter, "Only kernels whose name matches this regex (ECMAScript, search)");
  sub->add_flag("--verbose,-v", opt->verbose,
                "Print each kernel's ptxas resource usage; register spills and C75xx advisories fail");
  sub->add_flag("--print-keys", opt->print_keys,
                "Print each kernel's cache key and name (the file <key>.cubin in the kernel cache); compile nothing");
  sub->callback([&action, opt] { action = [opt] { return run_compile_check(*opt); }; });
}

}  // namespace tmagemm::cli
