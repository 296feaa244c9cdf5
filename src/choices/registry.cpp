// registry.cpp — the backends in their fixed order, their on/off table, and the kernel variants of all of them.
// Adding a backend: its own src/choices/<backend>.cpp, one entry in backends(), one row in backend_switches()
// (with its public Options field, include/tmagemm/options.hpp), and its specs in all_kernel_specs().
#include "choices/registry.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "choices/choice.hpp"
#include "choices/fallback.hpp"
#include "choices/persistent_tma.hpp"
#include "choices/skinny.hpp"
#include "jit/support_kernels.hpp"

namespace tmagemm::choices {

const std::vector<Backend>& backends() {
  static const std::vector<Backend> all = {persistent_tma_backend(), cublaslt_backend(), fallback_backend(),
                                           skinny_backend(), pad_tma_backend()};
  return all;
}

const std::vector<BackendSwitch>& backend_switches() {
  // The order is that of the tuner's key tags (tuning databases on disk hold keys built in this order).
  static const std::vector<BackendSwitch> table = {
      {"persistent_tma", &Options::persistent_tma, "persistent_tma", "TMAGEMM_PERSISTENT_TMA", "-tma"},
      {"fallback", &Options::fallback, "fallback", "TMAGEMM_FALLBACK", "-fallback"},
      {"cublaslt", &Options::cublaslt, "cublaslt", "TMAGEMM_CUBLASLT", "-cublaslt"},
      {"skinny", &Options::skinny, "skinny", "TMAGEMM_SKINNY", "-skinny"},
      {"pad_tma", &Options::pad_tma, "pad_tma", "TMAGEMM_PAD_TMA", "-pad"},
  };
  return table;
}

const BackendSwitch& backend_switch(const char* backend) {
  for (const BackendSwitch& s : backend_switches())
    if (std::strcmp(s.backend, backend) == 0) return s;
  throw std::logic_error(std::string("backend ") + backend + " has no row in backend_switches()");
}

std::vector<jit::KernelSpec> all_kernel_specs() {
  std::vector<jit::KernelSpec> specs = persistent_tma_all_specs();
  for (auto& s : fallback_all_specs()) specs.push_back(std::move(s));
  for (auto& s : skinny_all_specs()) specs.push_back(std::move(s));
  for (auto& s : jit::support_kernel_specs()) specs.push_back(std::move(s));
  if (specs.empty()) specs.push_back(jit::probe_spec());
  return specs;
}

}  // namespace tmagemm::choices
