// choice.hpp — the Choice interface: one way to run a GEMM problem (a backend plus one config), and the
// registry of backends. Every backend lives in one file src/choices/<backend>.cpp and registers itself in
// backends() (src/choices/registry.cpp). The tuner (src/tune) enumerates, filters, precompiles, benchmarks
// and launches choices only through this interface.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "problem/problem.hpp"
#include "runtime/device.hpp"
#include "tmagemm/options.hpp"

namespace tmagemm::choices {

class Choice {
 public:
  virtual ~Choice() = default;
  // Unique and stable across runs: stored in the tuning database and matched by Options::choice_regex.
  virtual const std::string& name() const = 0;
  // "persistent_tma", "cublaslt", "fallback", ...
  virtual const char* backend() const = 0;
  // Empty when the choice can run `problem` on `device`; otherwise the reason, in words.
  virtual std::string can_implement(const GemmProblem& problem, const runtime::DeviceInfo& device) const = 0;
  // Everything that can be done before the first launch (NVRTC compile, library descriptors). Safe to call
  // from several threads at once for different choices. Throws Error on failure (the choice is then dropped).
  virtual void precompile(const GemmProblem& problem, int device) const = 0;
  // Enqueues the GEMM on `stream`; never synchronises. Throws Error on failure. `workspace` has at least
  // workspace_bytes(problem) bytes of device memory (may be null when that is 0).
  virtual void launch(const GemmProblem& problem, cudaStream_t stream, const Options& options, void* workspace) const = 0;
  virtual std::size_t workspace_bytes(const GemmProblem& /*problem*/) const { return 0; }
  // Where the choice's own library ranks it for the problem (cuBLASLt's heuristic: 0 is its first pick); -1 for
  // choices without such a ranking. The tuner breaks near-ties with it (tune/benchmark.hpp, pick_winner).
  virtual int library_rank() const { return -1; }
};

using ChoicePtr = std::shared_ptr<const Choice>;

// A backend offers choices for a problem (applicable or not: can_implement says which).
struct Backend {
  const char* name;
  // The Options field that enables it ("persistent_tma", "fallback", "cublaslt", "skinny").
  bool (*enabled)(const Options& options);
  std::vector<ChoicePtr> (*enumerate)(const GemmProblem& problem, const runtime::DeviceInfo& device,
                                      const Options& options);
};

// Every backend, in a fixed order (persistent_tma first).
const std::vector<Backend>& backends();

// Backends register here (each src/choices/<backend>.cpp defines one).
Backend persistent_tma_backend();
Backend cublaslt_backend();
Backend fallback_backend();
Backend skinny_backend();

}  // namespace tmagemm::choices
