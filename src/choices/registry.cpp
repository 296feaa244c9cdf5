// registry.cpp — collects the kernel variants of all backends.
#include "choices/registry.hpp"

#include "choices/persistent_tma.hpp"

namespace tmagemm::choices {

std::vector<jit::KernelSpec> all_kernel_specs() {
  std::vector<jit::KernelSpec> specs = persistent_tma_all_specs();
  if (specs.empty()) specs.push_back(jit::probe_spec());
  return specs;
}

}  // namespace tmagemm::choices
