// choice.hpp — the Choice interface: one way to run a GEMM problem (a backend plus one config), and the
// registry of backends. Every backend lives in one file src/choices/<backend>.cpp and registers itself in
// backends() (src/choices/registry.cpp), with its row of the on/off table (backend_switches(), same file). The
// tuner (src/tune) enumerates, filters, prunes, precompiles, benchmarks and launches choices only through this
// interface: each backend's tuning rules (pruning, heuristic score and pick, tie policy) are properties here.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jit/jit.hpp"
#include "problem/problem.hpp"
#include "runtime/device.hpp"
#include "tmagemm/options.hpp"

namespace tmagemm::choices {

// How the tuner decides between benchmarked choices whose medians are closer than its resolution
// (tune/benchmark.hpp, tie_margin and pick_winner).
enum class TiePolicy {
  fastest,       // the faster median wins, however close
  library_rank,  // near-ties go to the choice's own library's ranking (Choice::library_rank)
};

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
  // The kernels the choice compiles and launches for `problem` (what precompile compiles): the tuner publishes a
  // winner's cubins to the remote cache with them (tune/remote_cache.cpp). Empty for a library's choices (cuBLASLt).
  virtual std::vector<jit::KernelSpec> kernel_specs(const GemmProblem& /*problem*/) const { return {}; }
  // Enqueues the GEMM on `stream`; never synchronises. Throws Error on failure. `workspace` has at least
  // workspace_bytes(problem) bytes of device memory (may be null when that is 0).
  virtual void launch(const GemmProblem& problem, cudaStream_t stream, const Options& options, void* workspace) const = 0;
  virtual std::size_t workspace_bytes(const GemmProblem& /*problem*/) const { return 0; }
  // Where the choice's own library ranks it for the problem (cuBLASLt's heuristic: 0 is its first pick); -1 for
  // choices without such a ranking. The tuner breaks near-ties with it when tie_policy() says so.
  virtual int library_rank() const { return -1; }
  virtual TiePolicy tie_policy() const { return TiePolicy::fastest; }
  // The library behind library_rank() as the AUTOTUNE log names it ("cuBLASLt"); empty for tmagemm's kernels.
  virtual const char* library() const { return ""; }
  // The heuristic's predicted throughput of the choice for `problem` (higher is better; the problem must pass
  // can_implement), or none when the choice takes no part in the heuristic's score rule (tune/tuner.cpp,
  // heuristic_choice).
  virtual std::optional<double> heuristic_score(const GemmProblem& /*problem*/, const runtime::DeviceInfo& /*device*/,
                                                int /*sm_carveout*/) const {
    return std::nullopt;
  }
  // A persistent grid of output tiles loaded by TMA (persistent_tma). Two tuning rules read it: the heuristic passes
  // such choices over when the rows of both A and B start off 32-byte sectors (tune/tuner.cpp), and the fallback
  // stands aside on large problems where one of them applies (choices/fallback.cpp).
  virtual bool tma_tiles() const { return false; }
  // A configuration picked for the enumerated problem's own M (the cuBLASLt search's wave-fitting tiles at that M,
  // choices/cublaslt.hpp): the tuner times it at that M against the bucket's winner and the library's ranks
  // (tune/tuner.cpp, library_rank_at_m), whatever the bucket's tuning found.
  virtual bool fitted_to_m() const { return false; }
  // Offered for the enumerated problem's own M only: another M of its shape bucket may not have it, so it is never a
  // candidate of a bucket's tuning (whose winner must run every M of the bucket); implies fitted_to_m.
  virtual bool m_only() const { return false; }
};

using ChoicePtr = std::shared_ptr<const Choice>;

// A choice for one problem, with the reason it is filtered out (empty when it may run the problem).
struct Candidate {
  ChoicePtr choice;
  std::string reason;
  // The reason is a tuning rule's (a backend's prune: dominated, set aside by the prescreen), not can_implement's, a
  // switch's or the regex's: the choice can run the problem, the tuner only does not time it here. A tuning
  // database winner is taken even so (it was timed on the shape bucket's representative M).
  bool set_aside = false;
};

// One row of the per-backend on/off table (backend_switches()): the public Options member that enables the backend,
// its name as the messages spell it, the environment variable that sets it (src/api/options.cpp), and the tag the
// tuner adds to its keys when the backend is off (tune/tuner.cpp: a filtered tuning never answers for another).
struct BackendSwitch {
  const char* backend;     // Backend::name
  bool Options::*field;    // e.g. &Options::persistent_tma
  const char* field_name;  // "persistent_tma"
  const char* env;         // "TMAGEMM_PERSISTENT_TMA"
  const char* key_tag;     // "-tma"
};

// Every backend's row, in the order of the tuner's key tags (and of the environment's reading).
const std::vector<BackendSwitch>& backend_switches();
// The row of `backend`; throws std::logic_error when there is none (a backend registered without its row).
const BackendSwitch& backend_switch(const char* backend);

// A backend offers choices for a problem (applicable or not: can_implement says which), and may hold tuning rules
// that look at every candidate of a problem.
struct Backend {
  const char* name;
  std::vector<ChoicePtr> (*enumerate)(const GemmProblem& problem, const runtime::DeviceInfo& device,
                                      const Options& options);
  // Sets the reason of candidates (of any backend, usually its own) that the tuner should not benchmark; sees the
  // candidates of every backend after can_implement, the on/off switches and the regex, and after the prune of
  // each backend before it in backends(). Leaves candidates that already have a reason alone. May be null.
  void (*prune)(const GemmProblem& problem, const runtime::DeviceInfo& device, const Options& options,
                std::vector<Candidate>& candidates) = nullptr;
  // The name of the choice the heuristic takes ahead of its score rule when that choice applies, or empty. May be
  // null.
  std::string (*heuristic_pick)(const GemmProblem& problem, const runtime::DeviceInfo& device,
                                int sm_carveout) = nullptr;
  // What an experiment switched on in the environment adds to the tuning database's key of `problem` (it widens the
  // backend's choices there, so a tuning with it must never answer for a call without it, nor the other way round),
  // or empty. May be null.
  std::string (*key_tag)(const GemmProblem& problem) = nullptr;
  // Enumeration asks a library (cuBLASLt: a handle, descriptors and its heuristic): while the backend is off, the
  // tuner lists one "backend disabled" entry instead of enumerating it.
  bool costly_enumeration = false;

  // Whether `options` enable the backend: its row of backend_switches().
  bool enabled(const Options& options) const { return options.*(backend_switch(name).field); }
};

// Every backend, in a fixed order (persistent_tma first).
const std::vector<Backend>& backends();

// Backends register here (each src/choices/<backend>.cpp defines one).
Backend persistent_tma_backend();
Backend cublaslt_backend();
Backend fallback_backend();
Backend skinny_backend();
Backend pad_tma_backend();

}  // namespace tmagemm::choices
