// tune_modes.hpp — the modes of `tmagemm tune` besides a shape list: offline tuning of a model file, spread over GPUs
// and worker processes (tune_model.cpp), and the two measurements of shape buckets (tune_sweep.cpp): a bucketed
// tuning against exact per-M tuning on an M sweep, and a cached_only serving loop.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tmagemm::cli {

struct ModelRun {
  std::string file;
  std::string devices = "0";  // "all" or a comma list of device indices
  int workers = 0;            // 0: one per device; N: N worker processes, round-robin over the devices
  std::string worker;         // "I/N": this process is worker I of N (started by the parent; internal)
  int device = 0;             // the worker's device
};
int run_model(const ModelRun& run);

// "NxK[:rr|rc],..." (B row- or column-major, default rc) and "M,M,..." (1 <= M <= 2^20); throw std::invalid_argument
// naming the option and the rule.
struct WeightPair {
  int64_t n = 0, k = 0;
  bool b_col = true;
  std::string name() const;
};
std::vector<WeightPair> parse_pairs(const std::string& text, const char* option);
std::vector<int64_t> parse_m_list(const std::string& text, const char* option);

struct SweepRun {
  std::string pairs;
  std::string m_list;  // empty: the default sweep (kDefaultSweep)
  std::string dtype = "bf16";
  std::string json;    // write the rows here too
  int device = 0;
};
// For each pair and M: the bucketed winner (tuned on the bucket's largest M) and the exact one (Options::m_buckets
// false), each timed at M where they differ; the geometric mean of bucketed / exact time.
int run_sweep(const SweepRun& run);

struct ServeRun {
  std::string pairs;
  std::string m_list;
  std::string dtype = "bf16";
  int calls = 200;
  unsigned seed = 1;
  std::string json;
  int device = 0;
  bool preload = true;  // start as a server would: tmagemm::preload_model of the weights over the M range first
};
// A cached_only serving loop: `calls` calls with M drawn from the list, first in a process that has not seen them
// (host time per call), then loops of the same calls with bucketed and with exact keys (throughput ratio).
int run_serve(const ServeRun& run);

// The sweep's default M values: 1..8192, a few dozen, most inside buckets rather than on their edges.
inline constexpr const char* kDefaultSweep =
    "1,3,8,13,16,20,40,57,72,100,150,200,300,450,700,1000,1300,1800,2200,3000,3500,4500,5500,7000,8192";

}  // namespace tmagemm::cli
