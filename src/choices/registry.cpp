// registry.cpp — collects the kernel variants of all backends.
#include "choices/registry.hpp"

#include "choices/choice.hpp"
#include "choices/fallback.hpp"
#include "choices/persistent_tma.hpp"
#include "choices/skinny.hpp"
#include "jit/support_kernels.hpp"

namespace tmagemm::choices {

const std::vector<Backend>& backends() {
  static const std::vector<Backend> all = {persistent_tma_backend(), cublaslt_backend(), fallback_backend(),
                                           skinny_backend()};
  return all;
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
