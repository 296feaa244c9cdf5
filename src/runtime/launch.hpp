// launch.hpp — the one launch point of tmagemm's own GEMM kernels (persistent TMA, skinny, fallback): a
// cuLaunchKernelEx through the driver entry point, its status mapped to Error(cuda_error), and a test hook that
// sees the configuration of every such launch (grid, block, cluster) before it is made.
#pragma once
#include <cuda.h>

#include <functional>

namespace tmagemm::runtime {

// Launches `fn` with `cfg` and `params` (cuLaunchKernelEx); throws Error(cuda_error) naming `what` on failure.
// Calls the launch observer, if one is installed, with `cfg` first.
void launch_kernel(const CUlaunchConfig& cfg, CUfunction fn, void** params, const char* what);

// Test hook: `observer` is called with the configuration of every launch made through launch_kernel, on the
// launching thread, before the launch. An empty function removes it. Safe to call while other threads launch;
// the observer itself must be safe to call from several threads at once.
void set_launch_observer_for_testing(std::function<void(const CUlaunchConfig&)> observer);

// Whether the persistent TMA and skinny kernels are launched with programmatic stream serialization (PDL): they may
// then start while the kernel before them in the stream finishes, and wait for it (griddepcontrol.wait) before their
// first global read, so the result is the same either way. On unless TMAGEMM_PDL=0 (read once, for experiments).
bool programmatic_launch();

}  // namespace tmagemm::runtime
