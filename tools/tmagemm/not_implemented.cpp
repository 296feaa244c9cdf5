// not_implemented.cpp — `tmagemm tune` and `tmagemm cache`: registered so that they show in --help, but they
// say plainly that they do not exist yet and exit with code 2 (they wait for the autotuner's tuning DB).
#include <fmt/core.h>

#include <string>

#include "common.hpp"

namespace tmagemm::cli {

namespace {
void add_stub(CLI::App& app, Action& action, const std::string& name, const std::string& description) {
  CLI::App* sub = app.add_subcommand(name, description + " [not implemented yet]");
  sub->allow_extras();  // accept whatever arguments the eventual command will take, and still refuse
  sub->callback([&action, name] {
    action = [name] {
      fmt::print(stderr, "tmagemm {}: not implemented yet (issue: autotuner)\n", name);
      return 2;
    };
  });
}
}  // namespace

void add_not_implemented(CLI::App& app, Action& action) {
  add_stub(app, action, "tune", "Benchmark every applicable choice for given shapes and store the winners");
  add_stub(app, action, "cache", "List, inspect or clear the kernel cache and the tuning database");
}

}  // namespace tmagemm::cli
