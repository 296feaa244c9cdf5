// tmagemm/tuning.hpp — what the tuner has done in this process: how the calls' problems were answered (the
// in-memory map, the tuning database, a tuning, the heuristic) and how many kernel modules are loaded. A serving
// process in Options::tuning = cached_only never tunes: its misses run the heuristic choice and are counted here
// (TMAGEMM_LOG=autotune prints one line per hit or miss too). Counters start at 0 with the process.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "tmagemm/options.hpp"

namespace tmagemm {

struct TuningStats {
  uint64_t memo_hits = 0;           // calls whose problem this process had seen before (the in-memory map)
  uint64_t bucket_hits = 0;         // first calls of a problem answered by the winner this process already held for
                                    // its shape bucket (another M of the bucket came first)
  uint64_t db_hits = 0;             // first calls of a problem answered by the tuning database
  uint64_t db_misses = 0;           // first calls of a problem the database could not answer (no usable winner for
                                    // its key, or the database unavailable); benchmark and cached_only modes
  uint64_t tuned = 0;               // tunings run (benchmark mode, after a miss)
  uint64_t rank_tunings = 0;        // a library's ranks timed at an M of a bucket whose winner is the library's first
                                    // pick (Options::library_ranks_per_m; README "Shape buckets")
  uint64_t cached_only_misses = 0;  // cached_only misses: the heuristic choice ran instead of a tuned winner
  uint64_t heuristic = 0;           // first calls that ran the heuristic choice (heuristic mode, cached_only misses,
                                    // calls inside a CUDA graph capture, tunings that ran out of memory)
  // Device memory running out (Error(out_of_memory), README "Errors"): launches of a choice that ran out (the call
  // then tried another; the choice stays the problem's), and tunings that ran out (of scratch: the call ran the
  // heuristic choice and nothing was remembered; or for a candidate: the winner served this process and was not
  // stored).
  uint64_t out_of_memory_retries = 0;
  uint64_t tunings_out_of_memory = 0;
  // Kernel modules (README "Memory"): loaded now, of which kept (winners and kernels that ran outside a tuning;
  // never unloaded), and unloaded so far (idle tuning candidates beyond the cap).
  std::size_t modules_loaded = 0, modules_kept = 0;
  std::size_t modules_unloaded = 0;
};

TuningStats tuning_stats();

// Start-up of a serving process (README "Serving"). For every shape bucket of every weight of a model (the JSON of
// `tmagemm tune --model`), resolves the bucket's choice from the tuning database as a call in Options::tuning =
// cached_only would (never tuning; a miss resolves to the heuristic choice of the bucket's largest M), readies it
// (kernels compiled or read from the kernel cache and loaded, cuBLASLt's descriptors planned) and, with `warm`, runs
// every kernel a call of the model's rows can meet once on zeroed scratch operands (each bucket's largest M, and for a
// cuBLASLt winner one M per distinct first pick of its heuristic over the bucket's rows: CUDA loads a library kernel
// on its first launch, ~3 ms each). Afterwards a call of any M of a bucket whose winner was found neither enumerates
// choices, reads the database nor loads a module or kernel. The scratch is the largest problem of the model (for an
// llm weight of 28672x8192 and M up to 8192: ~1.1 GB), allocated once and freed before it returns; the runs go to
// options.stream, synchronised. Throws Error(invalid_argument) for a bad model (naming the field and the rule), and
// what a call would throw.
struct PreloadStats {
  uint64_t buckets = 0;    // (weight, bucket) pairs resolved
  uint64_t winners = 0;    // ... found in the tuning database (or the remote cache)
  uint64_t misses = 0;     // ... not tuned: their first calls run the heuristic choice
  uint64_t warm_runs = 0;  // GEMMs run on scratch
  double seconds = 0;
};
// `options`: the filters the serving calls will use (backends, carveout, regex, m_buckets, stream); tuning is taken
// as cached_only whatever it says.
PreloadStats preload_model(const std::string& model_path, int device = 0, const Options& options = Options(),
                           bool warm = true);
// The same with the model file's text (`origin` names it in messages).
PreloadStats preload_model_json(const std::string& model_json, const std::string& origin, int device = 0,
                                const Options& options = Options(), bool warm = true);

// Sets the call counters to 0 (the module counts are the registry's state, not counters).
void reset_tuning_stats();

}  // namespace tmagemm
