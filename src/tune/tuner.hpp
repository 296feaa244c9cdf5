// tuner.hpp — picks, per problem, the choice to run: enumerate every backend's choices, filter (enable flags,
// can_implement, choice_regex), then by Options::tuning
//   benchmark   : in-memory map -> tuning DB -> precompile all candidates in parallel, check (accuracy floor) and
//                 time each on the tuner's own scratch inputs and output, keep the fastest one that passed, store
//                 it in the DB. The DB key holds M by shape bucket (buckets.hpp): a bucket is timed once, on its
//                 largest M, among the candidates that can run every M of it, and its winner serves each of them
//                 but that largest M, which runs its own timings' winner (top_m_choice). During a CUDA graph capture of the
//                 stream: the heuristic choice, untimed and not remembered (the autotune log says so once per
//                 problem);
//   heuristic   : a documented rule (heuristic_choice: a backend's pick, else the best Choice::heuristic_score, else
//                 the first applicable choice), no GPU timing;
//   cached_only : in-memory map -> tuning DB -> heuristic; never benchmarks (a serving process: a miss costs an
//                 enumeration and a DB read, and is counted, tmagemm::tuning_stats).
// TMAGEMM_LOG=autotune prints an AUTOTUNE table per tuned problem, and in cached_only mode one line per hit or miss.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "choices/choice.hpp"
#include "problem/problem.hpp"
#include "tmagemm/options.hpp"
#include "tune/benchmark.hpp"
#include "tune/buckets.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm::tune {

// A choice and the reason it is filtered out (empty when the choice may run this problem).
using Candidate = choices::Candidate;

// Every choice of every backend for the problem, with the reason it is filtered out (if it is). Besides each
// choice's own can_implement, the on/off switches and the regex: each backend's prune (choices::Backend::prune), in
// backends() order — direct-store TMA configs with an applicable TMA-store twin are "dominated" and TMA configs
// predicted far behind the best are "set aside" (persistent_tma.cpp), and the fallback is "set aside" on large
// problems that persistent TMA can take (fallback.cpp).
std::vector<Candidate> enumerate(const GemmProblem& problem, const Options& options);
std::vector<Candidate> enumerate(const GemmProblem& problem, const Options& options, const runtime::DeviceInfo& device);

// The tuning-database key of a problem on its device (device, SMs, cc, driver, library version, op, dtypes,
// layouts, extents with M by shape bucket (buckets.hpp; exact with m_buckets false), alignment class, epilogue
// signature).
std::string tuning_key(const GemmProblem& problem);
std::string tuning_key(const GemmProblem& problem, const runtime::DeviceInfo& device, bool m_buckets = true);
// The tuning database's key for a problem under `options`: tuning_key plus the filters (backend flags, regex,
// carveout) when they are not the defaults, and the experiments switched on in the environment that widen a backend's
// choices for the problem (Backend::key_tag: TMAGEMM_GROUPED_STREAM_K=0 on grouped_mm), so a filtered tuning never
// answers for an unfiltered call.
std::string database_key(const GemmProblem& problem, const Options& options, const runtime::DeviceInfo& device);

// What a benchmark-mode tuning of `problem` times: for a shape bucket, the bucket's largest M (its representative) and
// the candidates that may win for the whole bucket: applicable and kept by the tuning rules at the representative,
// and able to run (applicable or only set aside) the bucket's smallest M and the problem's own M. For an exact key:
// the problem and its applicable candidates.
struct BucketTuning {
  MBucket bucket;
  GemmProblem problem;
  std::vector<choices::ChoicePtr> candidates;
  // Timed on the representative too, for that M alone (top_m_choice): cuBLASLt's picks past its first, which name
  // other algorithms at the bucket's other Ms.
  std::vector<choices::ChoicePtr> top_only;
};
BucketTuning bucket_tuning(const GemmProblem& problem, const Options& options, const runtime::DeviceInfo& device);

// The choice a shape bucket's largest M runs. The bucket's tuning timed every candidate on that M (its representative)
// and its winner is the best across the bucket's Ms (tuner.cpp confirm_across_bucket), which can be slower on that M
// itself (measured on the H200, docs/perf-notes.md: 64x4096x4096 read 0.915 of cuBLASLt with the winner of 33..64).
// So that M runs what an exact tuning of it would: the winner of its own timings by pick_winner's rule (near-ties
// within `margin` to cuBLASLt's ranking). `entries[i]` describes `timings[i]` (a choice that cannot run the call: ms =
// +inf); the order is free. Returns the name to run (`bucket_winner` where no timed choice can run).
std::string top_m_choice(const std::vector<Timing>& timings, const std::vector<Entry>& entries,
                         const std::string& bucket_winner, double margin);

// Whether a bucket's M other than its largest may run the winner of its stored per-M record (tuner.cpp
// library_rank_at_m, the "|ranks" record): only where the record timed every choice in `required`, the choices that
// M's timing takes besides the library's ranks: the bucket's winner where it is one of ours, or where the library won,
// our fastest at the bucket's largest M (fastest_of_ours). A record timed against an earlier winner of the bucket
// (tuned again since: a remote cache, an import, a cleared record), or before that rule, says nothing about them and
// is timed again.
bool ranks_record_current(const TuningRecord& record, const std::vector<std::string>& required);

// Of a bucket record's timings (at its largest M), the fastest choice of ours that can run `cands`' problem: not of
// the `library` backend, not ranked by a library (Choice::library_rank), not a configuration of one M; null if none.
choices::ChoicePtr fastest_of_ours(const TuningRecord& bucket, const std::vector<Candidate>& cands,
                                   const std::string& library);

// The choice to run (see the file comment). Throws Error(no_valid_choice) listing each choice's reason.
choices::ChoicePtr choose(const GemmProblem& problem, const Options& options);
// The same for an explicit device description (heuristic and cached_only modes touch no GPU).
choices::ChoicePtr choose(const GemmProblem& problem, const Options& options, const runtime::DeviceInfo& device);

// What explain() reports: the candidates, which one choose() would take now (without tuning), and
// known timings from the tuning database.
struct Known {
  std::optional<std::string> winner;
  std::vector<std::pair<std::string, double>> timings_ms;
};
// Looked up under the same key choose() writes: the tuning key plus the options' filter signature.
Known known(const GemmProblem& problem, const Options& options);
// The choice among `candidates` (problem's enumeration) that a call runs from the tuning database without tuning, as
// choose() takes it: the stored winner, or at a shape bucket's largest M that M's own (top_m_choice), or at another M
// the choice stored for that M from the library's ranks (and the bucket's winner where it is not the library's first
// pick) timed there (library_ranks_per_m); null where nothing is stored or the choice cannot run the problem.
choices::ChoicePtr stored_choice(const GemmProblem& problem, const Options& options,
                                 const std::vector<Candidate>& candidates);
choices::ChoicePtr heuristic_choice(const GemmProblem& problem, const std::vector<Candidate>& candidates,
                                    const runtime::DeviceInfo& device, int sm_carveout = 0);

// A choice failed to compile or launch for the problem (dispatch), other than by running out of memory: it is
// skipped for this problem from now on (enumerate gives the reason), the remembered choice is forgotten where it is
// this one (a call that ran another in place of an out-of-memory choice keeps that choice), and one line goes to stderr.
void report_failure(const GemmProblem& problem, const Options& options, const choices::Choice& choice,
                    const std::string& what);
void report_failure(const GemmProblem& problem, const Options& options, const runtime::DeviceInfo& device,
                    const choices::Choice& choice, const std::string& what);

// A choice ran out of device memory on a call (dispatch: Error(out_of_memory), a failure of the moment): it stays the
// problem's choice. choose_instead gives what this call runs in its place: the fastest choice in the tuning record
// that can run the problem and is not in `excluded`, else the heuristic choice among the rest; null where none is
// left. Nothing is remembered or stored. report_out_of_memory counts it (TuningStats::out_of_memory_retries) and
// writes one stderr line, at most one per choice every kOutOfMemoryReportSeconds.
choices::ChoicePtr choose_instead(const GemmProblem& problem, const Options& options,
                                  const std::vector<std::string>& excluded);
choices::ChoicePtr choose_instead(const GemmProblem& problem, const Options& options, const runtime::DeviceInfo& device,
                                  const std::vector<std::string>& excluded);
void report_out_of_memory(const GemmProblem& problem, const choices::Choice& choice, const std::string& what);
inline constexpr int kOutOfMemoryReportSeconds = 30;

// Test hook: seconds a failing tuning database is bypassed before it is tried again (default 30); an outage in
// progress then ends no later than that many seconds from now.
void set_database_retry_seconds_for_testing(int seconds);

// Test hook: extra choices appended to the enumeration (e.g. a deliberately broken one). Empty to clear.
void set_extra_choices_for_testing(std::vector<choices::ChoicePtr> extra);
// Forgets the in-memory map and when out-of-memory troubles were last reported (tests; the DB is untouched).
void forget_in_memory();

}  // namespace tmagemm::tune
