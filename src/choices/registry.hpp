// registry.hpp — what every backend can compile, for `tmagemm compile-check` and the tuner's enumeration.
#pragma once
#include <vector>

#include "jit/jit.hpp"

namespace tmagemm::choices {

// Every kernel variant in every backend's config table (each distinct KernelSpec once).
// Falls back to the probe kernel when no backend has device kernels.
std::vector<jit::KernelSpec> all_kernel_specs();

}  // namespace tmagemm::choices
