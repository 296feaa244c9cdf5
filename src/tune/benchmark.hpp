// benchmark.hpp — the tuner's measuring step: precompile candidates in parallel, check each one's output at
// sampled positions against an fp32 reference, time the survivors on scratch buffers (never the user's output;
// inputs are read), L2 flushed before each run: a short warm-up, a screen of three interleaved rounds over every
// survivor, 400 ms of the leader back to back (the card's sustained state), then interleaved rounds for the
// finalists (within 10 % of the best screen), median; and the AUTOTUNE log table.
#pragma once
#include <string>
#include <vector>

#include "choices/choice.hpp"
#include "problem/problem.hpp"
#include "tmagemm/options.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm::tune {

struct Tuned {  // the outcome of one benchmark
  choices::ChoicePtr winner;
  std::vector<Timing> timings;  // fastest first
  double precompile_s = 0, total_s = 0;
  int benchmarked = 0;
};

// Throws Error(no_valid_choice) when every candidate fails its precompile or check (each failure is logged).
Tuned benchmark(const GemmProblem& problem, const Options& options, const std::vector<choices::ChoicePtr>& candidates);

// The AUTOTUNE table on stderr (TMAGEMM_LOG=autotune).
void print_autotune(const GemmProblem& problem, const Tuned& tuned, std::size_t candidates);

}  // namespace tmagemm::tune
