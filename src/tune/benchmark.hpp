// benchmark.hpp — the tuner's measuring step: precompile candidates in parallel, check each one's output at
// sampled positions against an fp64 reference (the accuracy floor below), time the survivors on scratch buffers
// (scratch inputs with random finite values and a scratch output, laid out like the user's; the user's tensors are
// neither read nor written), L2 flushed before each run: 400 ms of one candidate back to back (the card's sustained,
// power-capped state), a screen of five interleaved rounds over every survivor (memory-bound problems: once after
// each kind of flush, below), then interleaved rounds for the finalists (within 10 % of the best screen), median;
// for a problem a loop runs at the power cap, a sustained final (below); the winner (pick_winner); and the AUTOTUNE
// log table.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "choices/choice.hpp"
#include "problem/problem.hpp"
#include "tmagemm/options.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm::tune {

struct Tuned {  // the outcome of one benchmark
  choices::ChoicePtr winner;
  std::vector<Timing> timings;  // fastest first
  // The accuracy check: the floor's relative error, the bound a choice had to meet, and each checked choice's error.
  // (A class timed over several routings: a choice's error is its largest over them, scaled to the representative
  // routing's bound, error / bound_r x error_bound.)
  double floor_error = 0, error_bound = 0;
  std::vector<std::pair<std::string, double>> errors;
  int routings = 1;  // grouped_mm: the routings each candidate was checked and timed on (tuning_group_routings)
  double precompile_s = 0, total_s = 0;
  double margin = 0;  // the near-tie margin the winner was picked with (tie_margin)
  bool bucket_pick = false;  // the winner is a shape bucket's pick across its Ms, not this M's (tuner.cpp)
  // memory_bound problems: each timing's ms is the geometric mean of its medians after a write and a read flush,
  // which are kept here by choice name (for the AUTOTUNE log).
  bool both_flushes = false;
  std::vector<std::pair<std::string, std::pair<double, double>>> flush_ms;
  // The sustained final's finalists (sustained_eligible): ms per run alone back to back, by choice name. Their timings
  // above are the best interleaved time scaled by these (the fastest here gets it).
  std::vector<std::pair<std::string, double>> sustained_ms;
  int benchmarked = 0;
  // Candidates dropped because device memory ran out (Error(out_of_memory): a failure of the moment, not of the
  // choice). A tuning with any is incomplete: the tuner keeps its winner in memory and does not store it.
  std::vector<std::string> out_of_memory;
};

// The accuracy floor. No choice may be less accurate than an fp32-accumulated GEMM rounded once to the output type.
// The check runs every candidate on the tuner's scratch inputs and compares kCheckSamples output elements with an
// fp64-accumulated reference: a choice's relative error (Frobenius, over the samples) must stay within
//   bound = sqrt((kFloorFactor * floor)^2 + (kAccumulationSlack * 2^-24 * K)^2 + (u_out * sqrt(2 / samples))^2)
// where floor is the error of fp32 accumulation in K order rounded once to the output type (u_out its unit
// roundoff), measured on the same samples. A split-K whose partial sums are rounded to a 16-bit output type before
// they are added has sqrt(2) (2 parts) or more times the floor's error, so kFloorFactor must stay well below that;
// the K term leaves room for tensor-core accumulation order, and the last term for too few samples to measure.
// Options::allow_reduced_precision_reduction multiplies the bound by kReducedPrecisionFactor.
inline constexpr int kCheckSamples = 2048;
inline constexpr double kFloorFactor = 1.2;
inline constexpr double kAccumulationSlack = 0.125;
// scaled_mm: the fp8 tensor-core accumulation keeps ~14 bits (DeepSeek-V3's report measured it; twice that, 2^-13, as
// slack per 32-element wgmma K step). With use_fast_accum the K term is kFastAccumSlack * K / 32 (the steps' errors
// taken as adding up linearly); with two-level accumulation it is kFastAccumSlack * 8: the relative error of one run
// of at most 8 steps, which the fp32 totals do not compound (run errors of random sign add up like the sum itself).
inline constexpr double kFastAccumSlack = 0x1p-13;
inline constexpr double kReducedPrecisionFactor = 3.0;
double accuracy_bound(const GemmProblem& problem, double floor_error, bool allow_reduced_precision_reduction,
                      int samples);

// Near-ties go to cuBLASLt's own ranking (the choices whose Choice::tie_policy() is TiePolicy::library_rank). Two
// medians closer than the tuner's resolution say nothing about which choice is faster: measured on H200
// (docs/perf-notes.md), the same choice's median moved by up to ~0.5 % between tunings of a compute-bound problem
// and by up to ~3 % on a memory-bound one (decode shapes), more than the gaps between cuBLASLt's algorithms there.
// So a choice of another backend wins only when it is more than the margin faster than the fastest cuBLASLt choice;
// otherwise, of the cuBLASLt choices within the margin of the fastest choice, the one its heuristic ranks first wins
// (the pick is never more than the margin slower than the fastest).
inline constexpr double kTieMarginComputeBound = 0.005;
inline constexpr double kTieMarginMemoryBound = 0.03;
// memory_bound and kMemoryBoundIntensity: problem/problem.hpp.
double tie_margin(const GemmProblem& problem);  // kTieMarginMemoryBound where memory_bound, else kTieMarginComputeBound

// The sustained final. Interleaved rounds share the card's clock among the candidates, so that a candidate's median
// shows its speed per clock, not its energy per FLOP; but a loop of one large GEMM (a training step's) runs at the
// card's power cap, where the clock each kernel gets is set by its own energy per FLOP. Measured on the H200
// (docs/perf-notes.md, "Energy per FLOP"): 8192^3 alone back to back for 3 s at the 700 W cap, 128x256 2x1 TMA-store
// 680 TFLOP/s, 1x1 677, torch.mm 662, 128x192 667, 2x2 645, 128x128 ping-pong 633 (m64n128 wgmmas: more shared-memory
// reads per FLOP), within ~1 % of each other in interleaved rounds. So where the problem is compute-bound and its
// operands and output (A + B + out) exceed kSustainedFootprintL2 x L2 (a loop cannot keep them in L2, so timing it
// without a flush times what a loop sees), the finalists within kSustainedSpread of the best (at most
// kSustainedFinalists, cuBLASLt's included) are timed alone back to back in blocks of kSustainedBlockS, in the order
// A B C ... C B A (a drift of the card weighs on each alike), each block's second half timed (the first lets the
// clock settle to that candidate's power): up to 12 x 0.2 s more a tuning. (Three finalists were too few: on
// 8192x28672x8192 the nine fastest of the interleaved rounds lay within 1.6 %, the 128x256 tiles fifth and sixth.) Options::sustained_tuning (TMAGEMM_SUSTAINED_TUNING
// =0) turns it off.
inline constexpr double kSustainedSpread = 0.03;
inline constexpr std::size_t kSustainedFinalists = 6;
inline constexpr double kSustainedBlockS = 0.2;
inline constexpr double kSustainedFootprintL2 = 1.0;
bool sustained_eligible(const GemmProblem& problem, std::size_t l2_bytes);

// A memory-bound problem's time depends on what L2 holds when it starts (issue 21, docs/perf-notes.md "Decode under
// both flushes"): after a write flush L2 is full of dirty lines that the GEMM's reads evict (a write-back each), after
// a read flush of clean ones. Serving sees either, so each timed round of a memory-bound problem runs every candidate
// once after each flush (the order alternating by round), and a candidate's time is the geometric mean of its two
// medians: a pick must hold under both, not exploit one.

// The pick must also hold under each flush against cuBLASLt (issue 21: no row under 0.97 of cuBLASLt under either):
// a choice of another backend whose median under either flush is more than kFlushHold slower than the fastest
// cuBLASLt choice's under that flush is ranked behind cuBLASLt, at the larger of its geometric mean and the fastest
// cuBLASLt geometric mean x (1 + 2 x margin) (beyond the near-tie band, so pick_winner never takes it over a cuBLASLt
// choice; another choice that holds still can). Measured on the H200 (docs/perf-notes.md, forty-fourth session): on
// 64 x 4096 x 14336 the geometric mean picked a skinny grid 10 % ahead of cuBLASLt under the write flush and 3.6 %
// behind under the read flush (the bench's read-flush row 0.954).
inline constexpr double kFlushHold = 0.02;
// And a choice that holds under both flushes and is more than the margin ahead of the fastest cuBLASLt choice under
// one of them is clearly the faster there, whatever its geometric mean says: it ranks ahead of cuBLASLt's near-tie
// band (the clear choices' times scaled alike, the fastest to the fastest cuBLASLt geometric mean / (1 + 2 x margin)).
// Measured (docs/perf-notes.md, fifty-first session): on 128 x 8192 x 8192 our 64x128 tile was 5.5-7.5 % ahead of
// cuBLASLt after a write flush and within 2 % after a read flush in all 18 tunings of nine H100 and H200 runs, its
// geometric mean 1.9-4.6 % ahead: the 3 % near-tie band handed the row to cuBLASLt in half of them (llm rows 1.00
// against 1.05-1.07).
struct FlushTimes {  // one timed choice of a memory-bound problem
  double write_ms = 0, read_ms = 0;
  bool library_ranked = false;  // a cuBLASLt choice
};
// The ranking time of each choice (the order of `t`): the geometric mean of its two medians, or for a choice that
// does not hold or that is clear (above) the cuBLASLt-relative time. Without a cuBLASLt choice, the geometric means.
std::vector<double> flush_ranked_ms(const std::vector<FlushTimes>& t, double margin);

struct Entry {  // what pick_winner needs of one timed choice
  double ms = 0;
  bool library_ranked = false;  // Choice::tie_policy() is TiePolicy::library_rank (cuBLASLt)
  int library_rank = -1;        // Choice::library_rank()
};
// What pick_winner needs of choice `c` timed at `ms`.
inline Entry entry_of(const choices::Choice& c, double ms) {
  return Entry{ms, c.tie_policy() == choices::TiePolicy::library_rank, c.library_rank()};
}
// The index of the winner among `entries` (fastest first).
std::size_t pick_winner(const std::vector<Entry>& entries, double margin);

// Throws Error(no_valid_choice) when every candidate fails its precompile or check (each failure is logged).
// How a benchmark is run: `card_warm`: the card has just run a tuning (a shape bucket's other Ms), so the 400 ms heat
// is skipped; `keep_winner`: the winner's modules are kept loaded (off where the caller may pick another finalist:
// the one it picks is kept once it runs outside the tuning, modules.hpp).
// `sustained_final`: off for a shape bucket's other Ms (tuner.cpp), where the finalists' times join the largest M's,
// whose sustained final has ordered them already (6 x 0.3 s at each M would triple its cost).
struct BenchmarkRun {
  bool card_warm = false;
  bool keep_winner = true;
  bool sustained_final = true;
};
Tuned benchmark(const GemmProblem& problem, const Options& options, const std::vector<choices::ChoicePtr>& candidates,
                BenchmarkRun run = {});

// The AUTOTUNE table on stderr (TMAGEMM_LOG=autotune).
void print_autotune(const GemmProblem& problem, const Tuned& tuned, std::size_t candidates);

}  // namespace tmagemm::tune
