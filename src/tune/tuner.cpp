// tuner.cpp — enumeration, filters, the heuristic, the in-memory map and the tuning database (see tuner.hpp);
// precompile + quick check + timing live in benchmark.cpp.
#include "tune/tuner.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <unordered_map>

#include "jit/jit.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "tmagemm/error.hpp"
#include "tmagemm/tuning.hpp"
#include "tmagemm/version.hpp"
#include "tune/benchmark.hpp"
#include "tune/buckets.hpp"
#include "tune/remote_cache.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm::tune {

namespace {

std::mutex g_extra_mutex;
std::vector<choices::ChoicePtr> g_extra;

// The in-memory map: everything the choice depends on, as plain values (no string building on a hit).
struct MemoKey {
  int op, device, sm_count;
  std::size_t smem;
  int a_dtype, b_dtype, out_dtype, a_major, b_major, out_major;
  unsigned align_bits;
  int64_t m, n, k, batch;
  int tuning, carveout;
  unsigned backends_off;  // bit i: row i of choices::backend_switches() is off
  bool reduced, m_buckets, library_ranks, sustained;
  int bias_kind, act, scale_kind;
  unsigned epilogue_bits;  // epilogue_class
  bool fast_accum;
  std::string regex;
  bool operator==(const MemoKey&) const = default;
};

struct MemoKeyHash {
  std::size_t operator()(const MemoKey& k) const noexcept {
    std::size_t h = std::hash<std::string>()(k.regex);
    auto mix = [&h](uint64_t v) { h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(static_cast<uint64_t>(k.op) | static_cast<uint64_t>(k.a_dtype) << 8 | static_cast<uint64_t>(k.b_dtype) << 16 |
        static_cast<uint64_t>(k.out_dtype) << 24 | static_cast<uint64_t>(k.a_major) << 32 |
        static_cast<uint64_t>(k.b_major) << 36 | static_cast<uint64_t>(k.out_major) << 40 |
        static_cast<uint64_t>(k.align_bits) << 44 | static_cast<uint64_t>(k.tuning) << 52 |
        static_cast<uint64_t>(k.fast_accum) << 54 | static_cast<uint64_t>(k.reduced) << 55 |
        static_cast<uint64_t>(k.m_buckets) << 63 | static_cast<uint64_t>(k.library_ranks) << 62 |
        static_cast<uint64_t>(k.backends_off) << 56);
    mix(static_cast<uint64_t>(k.device) | static_cast<uint64_t>(k.sm_count) << 16 |
        static_cast<uint64_t>(k.carveout) << 32 | static_cast<uint64_t>(k.bias_kind) << 48 |
        static_cast<uint64_t>(k.act) << 52 | static_cast<uint64_t>(k.scale_kind) << 56 |
        static_cast<uint64_t>(k.epilogue_bits) << 60);
    mix(k.smem);
    mix(static_cast<uint64_t>(k.m));
    mix(static_cast<uint64_t>(k.n));
    mix(static_cast<uint64_t>(k.k));
    mix(static_cast<uint64_t>(k.batch) << 1 | static_cast<uint64_t>(k.sustained));
    return h;
  }
};

std::mutex g_memo_mutex;
std::unordered_map<MemoKey, choices::ChoicePtr, MemoKeyHash> g_memo;

// Winners this process holds per shape bucket: device index | database key -> the choice a tuning or the database
// gave for the bucket. A first call of another M of a bucket takes it (after its can_implement) without enumerating
// or reading the database: a serving process meets every M of a bucket, and both cost milliseconds (cuBLASLt's
// heuristic, the SQLite read). Only keys whose M is a bucket (not exact) are kept.
// `top`, where set, is the choice of the bucket's largest M when it is not the bucket's winner (top_m_choice).
struct BucketWinners {
  choices::ChoicePtr pick, top;
};
std::mutex g_bucket_mutex;
std::unordered_map<std::string, BucketWinners> g_bucket_memo;

std::string bucket_memo_key(const GemmProblem& p, const std::string& database_key) {
  return std::to_string(p.device) + "|" + database_key;
}

// The one entry listed for a backend that is off and whose enumeration asks a library (Backend::costly_enumeration):
// it never runs (enumerate gives it the backend's "disabled" reason).
class DisabledBackend final : public choices::Choice {
 public:
  explicit DisabledBackend(const char* backend) : name_(backend), backend_(backend) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return backend_; }
  std::string can_implement(const GemmProblem&, const runtime::DeviceInfo&) const override {
    return fmt::format("backend {} is off", backend_);
  }
  void precompile(const GemmProblem&, int) const override {
    throw Error(ErrorCode::unsupported, fmt::format("backend {} is off", backend_));
  }
  void launch(const GemmProblem&, cudaStream_t, const Options&, void*) const override {
    throw Error(ErrorCode::unsupported, fmt::format("backend {} is off", backend_));
  }

 private:
  std::string name_;
  const char* backend_;
};

// How choose() answered (tmagemm::tuning_stats).
struct Counters {
  std::atomic<uint64_t> memo_hits{0}, bucket_hits{0}, db_hits{0}, db_misses{0}, tuned{0}, cached_only_misses{0},
      heuristic{0}, out_of_memory_retries{0}, tunings_out_of_memory{0}, rank_tunings{0};
};
Counters g_counters;
void count(std::atomic<uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }

// Row alignment class: 2 = rows on 128-byte boundaries, 1 = on 32-byte (sector) boundaries, 0 = neither. TMA
// speed differs between the classes (docs/perf-notes.md), so a winner is never shared across them.
unsigned row_class(const Operand& o) {
  const int a = row_alignment_bytes(o);
  return a >= 128 ? 2u : a >= 32 ? 1u : 0u;
}

// Three bits per operand: TMA-compatible, row class (the alignment class of the DB key).
unsigned align_bits(const Operand& o) { return (can_use_tma(o).ok ? 1u : 0u) | row_class(o) << 1; }

// What of an addmm's epilogue, beyond bias kind and activation, changes which choices apply (cuBLASLt's epilogues
// take beta 0 or 1, an unscaled bias vector of the output type with unit stride) or which kernel runs (alpha != 1,
// bias dtype): beta class (0, 1, other) | alpha != 1 << 2 | bias dtype code << 3 | bias unit-stride and 16-byte
// aligned << 5. 0 for other ops.
unsigned epilogue_class(const GemmProblem& p) {
  if (p.op != Op::addmm) return 0;
  const unsigned beta = p.beta == 0.0f ? 0u : p.beta == 1.0f ? 1u : 2u;
  unsigned bits = beta | (p.alpha != 1.0f ? 4u : 0u);
  if (p.bias_kind != BiasKind::none) {
    bits |= (p.bias.dtype == DType::bf16 ? 0u : p.bias.dtype == DType::f16 ? 1u : 2u) << 3;
    const bool unit = p.bias.col_stride == 1 || p.bias.row_stride == 1;
    const bool aligned = reinterpret_cast<std::uintptr_t>(p.bias.data) % 16 == 0;
    bits |= (unit && aligned ? 1u : 0u) << 5;
  }
  return bits;
}

// Which backends `o` turns off: bit i for row i of choices::backend_switches().
unsigned backends_off(const Options& o) {
  const auto& table = choices::backend_switches();
  unsigned bits = 0;
  for (std::size_t i = 0; i < table.size(); ++i)
    if (!(o.*table[i].field)) bits |= 1u << i;
  return bits;
}

MemoKey memo_key(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& d) {
  return MemoKey{static_cast<int>(p.op),         p.device,
                 d.sm_count,                     d.smem_per_block_optin,
                 static_cast<int>(p.a.dtype),    static_cast<int>(p.b.dtype),
                 static_cast<int>(p.out.dtype),  static_cast<int>(p.a.major()),
                 static_cast<int>(p.b.major()),  static_cast<int>(p.out.major()),
                 align_bits(p.a) | align_bits(p.b) << 3 | align_bits(p.out) << 6,
                 p.m,                            p.n,
                 p.k,                            p.batch,
                 static_cast<int>(o.tuning),     o.sm_carveout,
                 backends_off(o),                o.allow_reduced_precision_reduction,
                 o.m_buckets,                    o.library_ranks_per_m,
                 o.sustained_tuning,
                 static_cast<int>(p.bias_kind),
                 static_cast<int>(p.act),        static_cast<int>(p.scale_kind),
                 epilogue_class(p),
                 p.fast_accum,                   o.choice_regex};
}

bool regex_allows(const std::string& pattern, const std::string& name) {
  if (pattern.empty()) return true;
  static std::mutex mutex;
  static std::map<std::string, std::regex> compiled;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = compiled.find(pattern);
  if (it == compiled.end()) it = compiled.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
  return std::regex_search(name, it->second);
}

// Operand alignment class: TMA-compatible or not, then the row class (0, 1 or 2, as in row_class).
std::string align_class(const Operand& o) {
  return fmt::format("{}{}", can_use_tma(o).ok ? 't' : 'n', row_class(o));
}

// Options that change which choices may run; part of the keys when not default.
std::string filter_signature(const Options& o) {
  std::string s;
  for (const choices::BackendSwitch& b : choices::backend_switches())
    if (!(o.*b.field)) s += b.key_tag;
  if (o.sm_carveout) s += fmt::format("-carve{}", o.sm_carveout);
  if (!o.choice_regex.empty()) s += "-re:" + o.choice_regex;
  if (o.allow_reduced_precision_reduction) s += "-reduced";
  return s;
}

// The tuning database as the tuner uses it: opened on first use, bypassed while it fails. A database that cannot be
// opened, is locked by another process past the tuner's short wait, or fails a read or write is reported on stderr
// once, then left alone for g_db_retry_seconds (calls tune and keep winners in memory meanwhile), then tried again;
// a successful use after an outage re-arms the report. Never disabled for the life of the process.
constexpr TuningDb::Waits kTunerWaits{1000, 1};  // at most ~2 s of waiting for another process's lock
std::atomic<int> g_db_retry_seconds{30};

struct DatabaseState {
  std::mutex mutex;
  std::string path;
  std::shared_ptr<TuningDb> db;
  std::chrono::steady_clock::time_point retry_after{};
  bool reported = false;  // this outage has been reported
};
DatabaseState& db_state() {
  static auto* state = new DatabaseState();  // leaked: used from other threads until exit
  return *state;
}

// Called with the state's mutex held.
void database_failed(DatabaseState& st, const std::string& what) {
  st.db.reset();
  st.retry_after = std::chrono::steady_clock::now() + std::chrono::seconds(g_db_retry_seconds.load());
  if (!st.reported)
    fmt::print(stderr, "tmagemm: tuning database {} unavailable ({}); tuning results are kept in memory, trying it "
               "again in {} s\n", st.path, what, g_db_retry_seconds.load());
  st.reported = true;
}

std::shared_ptr<TuningDb> database() {
  DatabaseState& st = db_state();
  const std::string path = TuningDb::default_path();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (path != st.path) {  // TMAGEMM_CACHE_DIR changed (tests): a new database, no outage yet
    st.path = path;
    st.db.reset();
    st.retry_after = {};
    st.reported = false;
  }
  if (st.db) return st.db;
  if (std::chrono::steady_clock::now() < st.retry_after) return nullptr;
  // A cache dir another user could write is not used (jit::cache_dir_refusal reports it once).
  if (!jit::cache_dir_refusal(std::filesystem::path(path).parent_path().string()).empty()) return nullptr;
  try {
    st.db = std::make_shared<TuningDb>(path, kTunerWaits);
  } catch (const std::exception& e) {
    database_failed(st, e.what());
  }
  return st.db;
}

// Runs f(db) when the database is available; a failure is reported (once per outage) and answered with `fallback`.
template <class F, class R>
R with_database(F&& f, R fallback) {
  std::shared_ptr<TuningDb> db = database();
  if (!db) return fallback;
  try {
    R r = f(*db);
    DatabaseState& st = db_state();
    std::lock_guard<std::mutex> lock(st.mutex);
    st.reported = false;
    return r;
  } catch (const std::exception& e) {
    DatabaseState& st = db_state();
    std::lock_guard<std::mutex> lock(st.mutex);
    if (st.db == db) database_failed(st, e.what());
    return fallback;
  }
}

// Out-of-memory reports (report_out_of_memory, report_tuning_out_of_memory): when each subject was last reported,
// so that an outage writes one line per subject every kOutOfMemoryReportSeconds. forget_in_memory clears it.
// The same map holds the tunings that ran out ("backoff " + key): such a problem is not tuned again for that long (its
// calls run the heuristic choice untimed), so that a shortage of memory does not make every call try a tuning.
struct OutOfMemoryReports {
  std::mutex mutex;
  std::map<std::string, std::chrono::steady_clock::time_point> last;
  static bool recent(std::chrono::steady_clock::time_point then, std::chrono::steady_clock::time_point now) {
    return now - then < std::chrono::seconds(kOutOfMemoryReportSeconds);
  }
  // True when `subject` was not marked in the last kOutOfMemoryReportSeconds (and marks it now).
  bool due(const std::string& subject) {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mutex);
    if (last.size() > 1024) std::erase_if(last, [&](const auto& e) { return !recent(e.second, now); });
    auto [it, first] = last.try_emplace(subject, now);
    if (!first && recent(it->second, now)) return false;
    it->second = now;
    return true;
  }
  // True when `subject` was marked in the last kOutOfMemoryReportSeconds.
  bool active(const std::string& subject) {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = last.find(subject);
    return it != last.end() && recent(it->second, std::chrono::steady_clock::now());
  }
};
OutOfMemoryReports g_oom_reports;

// Choices that failed to compile or launch in this process, per database key (with the failure): skipped from then
// on (enumerate gives the reason), so a failing choice is never returned again.
std::mutex g_failed_mutex;
std::map<std::string, std::map<std::string, std::string>> g_failed;

}  // namespace

std::vector<Candidate> enumerate(const GemmProblem& p, const Options& o) {
  return enumerate(p, o, runtime::device_info(p.device));
}

std::vector<Candidate> enumerate(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev) {
  std::vector<Candidate> out;
  auto consider = [&](const choices::ChoicePtr& c, const choices::BackendSwitch* disabled_by) {
    Candidate cand{c, {}};
    if (disabled_by)
      cand.reason = fmt::format("backend {} disabled (Options::{} / {})", c->backend(), disabled_by->field_name,
                                disabled_by->env);
    else if (auto r = c->can_implement(p, dev); !r.empty())
      cand.reason = std::move(r);
    else if (!regex_allows(o.choice_regex, c->name()))
      cand.reason = fmt::format("name does not match choice_regex '{}'", o.choice_regex);
    out.push_back(std::move(cand));
  };
  for (const auto& backend : choices::backends()) {
    const bool on = backend.enabled(o);
    const choices::BackendSwitch* off = on ? nullptr : &choices::backend_switch(backend.name);
    if (off && backend.costly_enumeration) {
      consider(std::make_shared<const DisabledBackend>(backend.name), off);
      continue;
    }
    for (const auto& c : backend.enumerate(p, dev, o)) consider(c, off);
  }
  // Each backend's tuning rules over every candidate, in backends() order: the persistent-TMA twin domination and
  // prescreen, then the fallback's set-aside on large problems (see each backend's prune for why). What they set
  // aside can still run the problem (Candidate::set_aside).
  std::vector<bool> before(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) before[i] = out[i].reason.empty();
  for (const auto& backend : choices::backends())
    if (backend.prune) backend.prune(p, dev, o, out);
  for (std::size_t i = 0; i < out.size(); ++i) out[i].set_aside = before[i] && !out[i].reason.empty();
  {
    std::lock_guard<std::mutex> lock(g_extra_mutex);
    for (const auto& c : g_extra) consider(c, nullptr);
  }
  std::lock_guard<std::mutex> lock(g_failed_mutex);
  if (!g_failed.empty())
    if (auto it = g_failed.find(database_key(p, o, dev)); it != g_failed.end())
      for (auto& c : out)
        if (auto f = it->second.find(c.choice->name()); (c.reason.empty() || c.set_aside) && f != it->second.end()) {
          c.reason = "failed earlier in this process: " + f->second;
          c.set_aside = false;  // not runnable any more (a stored winner set aside here would run, and fail, again)
        }
  return out;
}

std::string tuning_key(const GemmProblem& p) { return tuning_key(p, runtime::device_info(p.device)); }

std::string tuning_key(const GemmProblem& p, const runtime::DeviceInfo& d, bool m_buckets) {
  // M by shape bucket (buckets.hpp, m_bucket: exact up to 16, then one bucket per skinny row padding, then quarter
  // octaves; grouped_mm's total M by power of two, so that a new routing of the same tokens, or a few more of them,
  // does not tune again: the offsets are never part of the key). A winner stored under the key was tuned on the
  // bucket's largest M and applies to every M of it (choose()). "lo..hi" in the key; a bare number when exact.
  const std::string m_class = m_key(bucket_of(p, m_buckets));
  std::string epilogue = "none";
  if (p.op == Op::addmm || p.op == Op::scaled_mm)
    epilogue = fmt::format("bias{}-act{}-scale{}-fast{}-e{}", static_cast<int>(p.bias_kind), to_string(p.act),
                           static_cast<int>(p.scale_kind), p.fast_accum ? 1 : 0, epilogue_class(p));
  return fmt::format("{}|{}sm|cc{}{}|drv{}|v{}|{}|{}.{}->{}|{}{}{}|{}x{}x{}x{}|{}{}{}|{}", d.name, d.sm_count,
                     d.cc_major, d.cc_minor, d.driver_version, version(), to_string(p.op), to_string(p.a.dtype),
                     to_string(p.b.dtype), to_string(p.out.dtype), to_string(p.a.major())[0],
                     to_string(p.b.major())[0], to_string(p.out.major())[0], m_class, p.n, p.k, p.batch,
                     align_class(p.a), align_class(p.b), align_class(p.out), epilogue);
}

choices::ChoicePtr heuristic_choice(const GemmProblem& p, const std::vector<Candidate>& cands,
                                    const runtime::DeviceInfo& dev, int sm_carveout) {
  // Documented rule: the choice with the best predicted time (Choice::heuristic_score; persistent TMA: waves x tile
  // area / measured tile throughput, penalised for misaligned rows); if no scored choice applies — or the rows of both
  // A and B start off 32-byte boundaries, where every TMA tile shape (Choice::tma_tiles) loses ~1/3 to L2 request
  // throughput (docs/perf-notes.md) — the first applicable choice of the other backends (cuBLASLt's first heuristic
  // algorithm). Before all that, a backend's own pick when it applies (Backend::heuristic_pick; the skinny backend
  // for M <= 64, see skinny.cpp).
  for (const auto& backend : choices::backends()) {
    if (!backend.heuristic_pick) continue;
    const std::string pick = backend.heuristic_pick(p, dev, sm_carveout);
    for (const auto& c : cands)
      if (c.reason.empty() && c.choice->name() == pick) return c.choice;
  }
  const auto off32 = [](const Operand& o) { return row_alignment_bytes(o) < 32; };
  if (off32(p.a) && off32(p.b))
    for (const auto& c : cands)
      if (c.reason.empty() && !c.choice->tma_tiles()) return c.choice;
  choices::ChoicePtr best;
  double best_score = -1;
  for (const auto& c : cands) {
    if (!c.reason.empty()) continue;
    if (const std::optional<double> s = c.choice->heuristic_score(p, dev, sm_carveout); s && *s > best_score) {
      best_score = *s;
      best = c.choice;
    }
  }
  if (best) return best;
  for (const auto& c : cands)
    if (c.reason.empty()) return c.choice;
  return nullptr;
}

choices::ChoicePtr choose(const GemmProblem& p, const Options& o) {
  return choose(p, o, runtime::device_info(p.device));
}

namespace {

// The candidate named `name` when it can run `p` (applicable, or only set aside by a tuning rule), else null.
choices::ChoicePtr runnable(const std::vector<Candidate>& cands, const std::string& name) {
  for (const auto& c : cands)
    if (c.choice->name() == name && (c.reason.empty() || c.set_aside)) return c.choice;
  return nullptr;
}

// A bucket's record as the choices this call runs: the bucket's winner, and (top_m_choice) another for its largest M.
BucketWinners bucket_winners(const GemmProblem& p, const MBucket& bucket, const std::vector<Candidate>& cands,
                             const TuningRecord& rec) {
  BucketWinners w{runnable(cands, rec.winner), nullptr};
  if (!w.pick || bucket.exact()) return w;
  std::vector<Entry> entries;
  for (const Timing& t : rec.timings) {  // ms = +inf where the choice cannot run the call
    const choices::ChoicePtr c = runnable(cands, t.choice);
    entries.push_back(c ? entry_of(*c, t.ms) : Entry{INFINITY, false, -1});
  }
  const std::string top = top_m_choice(rec.timings, entries, rec.winner, tie_margin(with_m(p, bucket.hi)));
  if (top != rec.winner) w.top = runnable(cands, top);
  return w;
}

// bucket_tuning (tuner.hpp) on the call's own enumeration. Applicability changes with M only at thresholds
// (skinny's 64 rows, extents of 2^31), which the bucket rule keeps off bucket interiors, so both ends stand for every
// M between.
BucketTuning bucket_tuning(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev,
                           const std::vector<Candidate>& cands, const std::vector<choices::ChoicePtr>& usable) {
  BucketTuning t{bucket_of(p, o.m_buckets), p, {}, {}};
  if (t.bucket.exact()) {
    t.candidates = usable;
    return t;
  }
  t.problem = with_m(p, t.bucket.hi);
  const auto at_rep = enumerate(t.problem, o, dev);
  const auto at_lo = t.bucket.lo == p.m ? cands : enumerate(with_m(p, t.bucket.lo), o, dev);
  // A library choice named by its rank (cuBLASLt's "cublaslt_algo<r>") runs the heuristic's pick of that rank at each M,
  // which is another algorithm at another M of the bucket; only its first pick (rank 0), the library's own choice at
  // every M, is a policy that one tuning can stand for. (Measured on the H200, docs/perf-notes.md: a bucket's rank-3
  // winner lost 5-15 % to rank 0 at other Ms of the bucket.)
  for (const auto& c : at_rep)
    if (c.reason.empty() && c.choice->library_rank() <= 0 && !c.choice->m_only() &&
        runnable(at_lo, c.choice->name()) && runnable(cands, c.choice->name()))
      t.candidates.push_back(c.choice);
    else if (c.reason.empty() && c.choice->library_rank() > 0)
      t.top_only.push_back(c.choice);  // the representative M runs its own timings' winner, as an exact tuning would
  // NOTE: not reached by the shapes the rule was checked on (tests/cpu/tune/buckets_test.cpp); should a bucket have
  // no choice for both ends, the call's own M is tuned and its winner stored for the bucket: another M of the bucket
  // that it cannot run then finds no runnable winner and is tuned in turn.
  if (t.candidates.empty()) {
    t.problem = p;
    for (const auto& c : usable)
      if (!c->m_only()) t.candidates.push_back(c);
    if (t.candidates.empty()) t.candidates = usable;  // (a winner no other M has: those Ms tune in turn, as above)
    t.top_only.clear();
  }
  return t;
}

// cached_only: one autotune line per hit or miss (each problem once per process: the in-memory map remembers it).
void log_cached_only(const GemmProblem& p, const std::string& key, bool hit, const choices::Choice* chosen) {
  if (!runtime::log_enabled("autotune")) return;
  fmt::print(stderr, "AUTOTUNE cached_only {} {}: {} {} (key {})\n", hit ? "hit" : "miss", p.describe(),
             hit ? "runs the tuned winner" : "not tuned, runs the heuristic choice",
             chosen ? chosen->name() : std::string("(none)"), key);
}

// A bucket's winner serves every M of it. After the tuning on the bucket's largest M, its finalists (that tuning's
// winner and the fastest others within kBucketFinalistSpread of the best, at most kBucketFinalists) are timed again on
// the bucket's smallest and middle M, and the winner is the finalist with the best geometric mean of its three times,
// each relative to the best at that M; the first tuning's winner stays unless another is more than the tie margin
// better. (Measured on the H200, docs/perf-notes.md: a winner of the largest M alone lost up to 20 % at the low end of
// some buckets, and a tile whose waves fit both ends lost 10 % in the middle.)
constexpr double kBucketFinalistSpread = 1.10;
constexpr std::size_t kBucketFinalists = 4;

Tuned confirm_across_bucket(const Options& o, const BucketTuning& bt, Tuned at_hi) {
  std::vector<choices::ChoicePtr> finalists{at_hi.winner};  // the largest M's winner (its tie rule may pass over
                                                            // faster ones) and the fastest others
  // The fastest of the bucket's candidates at the largest M (a top-only choice may be faster there).
  double best_hi = INFINITY;
  for (const Timing& t : at_hi.timings)
    if (std::none_of(bt.top_only.begin(), bt.top_only.end(), [&](const auto& c) { return c->name() == t.choice; }))
      best_hi = std::min(best_hi, t.ms);
  for (const Timing& t : at_hi.timings) {
    if (finalists.size() == kBucketFinalists || !(t.ms <= kBucketFinalistSpread * best_hi)) break;
    if (t.choice == at_hi.winner->name()) continue;  // (never a top-only choice: bucket_winner_of)
    for (const auto& c : bt.candidates)
      if (c->name() == t.choice) finalists.push_back(c);
  }
  if (finalists.size() < 2) return at_hi;
  // Relative times per finalist name, one entry per M timed (the largest first).
  std::map<std::string, std::vector<double>> relative;
  for (const Timing& t : at_hi.timings) relative[t.choice].push_back(t.ms / best_hi);
  std::vector<int64_t> ms_timed{bt.problem.m};
  for (const int64_t m : {bt.bucket.lo, (bt.bucket.lo + bt.bucket.hi) / 2}) {
    if (m == ms_timed.back() || m == bt.problem.m) continue;
    Tuned at;
    try {
      at = benchmark(with_m(bt.problem, m), o, finalists, BenchmarkRun{.card_warm = true, .keep_winner = false, .sustained_final = false});
    } catch (const Error& e) {
      if (e.code() == ErrorCode::invalid_argument) throw;
      if (e.code() == ErrorCode::out_of_memory) at_hi.out_of_memory.push_back(fmt::format("the tuning at M = {}", m));
      continue;  // every finalist failed at this M: the others decide (the largest M's check passed)
    }
    at_hi.out_of_memory.insert(at_hi.out_of_memory.end(), at.out_of_memory.begin(), at.out_of_memory.end());
    const double best = at.timings.front().ms;
    for (const Timing& t : at.timings) relative[t.choice].push_back(t.ms / best);
    ms_timed.push_back(m);
  }
  auto score = [&](const std::string& name) -> double {
    const auto it = relative.find(name);
    if (it == relative.end() || it->second.size() != ms_timed.size()) return INFINITY;  // failed somewhere
    double log_sum = 0;
    for (double r : it->second) log_sum += std::log(r);
    return std::exp(log_sum / static_cast<double>(it->second.size()));
  };
  choices::ChoicePtr best = at_hi.winner;
  double best_score = score(at_hi.winner->name());
  const double kept = best_score;
  for (const auto& f : finalists)
    if (const double sc = score(f->name()); sc < best_score) {
      best_score = sc;
      best = f;
    }
  if (runtime::log_enabled("autotune")) {
    std::string line = fmt::format("AUTOTUNE bucket M {}: finalists on M =", m_key(bt.bucket));
    for (int64_t m : ms_timed) line += fmt::format(" {}", m);
    line += " (time / best at each):";
    for (const auto& f : finalists) {
      line += " " + f->name();
      const auto it = relative.find(f->name());
      if (it != relative.end())
        for (std::size_t i = 0; i < it->second.size(); ++i) line += fmt::format("{}{:.3f}", i ? "/" : " ", it->second[i]);
    }
    fmt::print(stderr, "{}\n", line);
  }
  if (best != at_hi.winner && best_score * (1.0 + tie_margin(bt.problem)) < kept) {
    if (runtime::log_enabled("autotune"))
      fmt::print(stderr, "AUTOTUNE bucket M {}: {} serves the bucket better than {} ({:.3f} against {:.3f})\n",
                 m_key(bt.bucket), best->name(), at_hi.winner->name(), best_score, kept);
    at_hi.winner = best;
    at_hi.bucket_pick = true;
  }
  return at_hi;
}

// The tuning of a bucket's representative timed its top-only choices too: the bucket's own winner is picked among
// its candidates alone (pick_winner's rule on their timings); a top-only winner is what that M itself runs
// (top_m_choice, from the stored timings).
Tuned bucket_winner_of(const BucketTuning& bt, Tuned t) {
  std::vector<Entry> entries;
  std::vector<choices::ChoicePtr> in_order;
  for (const Timing& tm : t.timings)
    for (const auto& c : bt.candidates)
      if (c->name() == tm.choice) {
        entries.push_back(entry_of(*c, tm.ms));
        in_order.push_back(c);
      }
  if (in_order.empty() || !std::isfinite(entries.front().ms)) return t;  // benchmark threw unless one passed
  const choices::ChoicePtr w = in_order[pick_winner(entries, t.margin)];
  if (w != t.winner) t.bucket_pick = true;  // the AUTOTUNE table: picked for the bucket
  t.winner = w;
  return t;
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

bool ranks_record_current(const TuningRecord& record, const std::vector<std::string>& required) {
  return std::all_of(required.begin(), required.end(), [&](const std::string& name) {
    return std::any_of(record.timings.begin(), record.timings.end(), [&](const Timing& t) { return t.choice == name; });
  });
}

choices::ChoicePtr fastest_of_ours(const TuningRecord& bucket, const std::vector<Candidate>& cands,
                                   const std::string& library) {
  choices::ChoicePtr best;
  double best_ms = INFINITY;
  for (const Timing& t : bucket.timings) {
    const choices::ChoicePtr c = runnable(cands, t.choice);
    if (!c || c->backend() == library || c->library_rank() >= 0 || c->fitted_to_m() || !(t.ms < best_ms)) continue;
    best = c;
    best_ms = t.ms;
  }
  return best;
}

std::string top_m_choice(const std::vector<Timing>& timings, const std::vector<Entry>& entries,
                         const std::string& bucket_winner, double margin) {
  if (timings.size() != entries.size())
    throw Error(ErrorCode::invalid_argument, fmt::format("top_m_choice: {} timings but {} entries", timings.size(),
                                                         entries.size()));
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (std::isfinite(entries[i].ms)) order.push_back(i);
  if (order.empty()) return bucket_winner;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return entries[x].ms < entries[y].ms; });
  std::vector<Entry> sorted;
  for (std::size_t i : order) sorted.push_back(entries[i]);
  return timings[order[pick_winner(sorted, margin)]].choice;
}

BucketTuning bucket_tuning(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev) {
  const auto cands = enumerate(p, o, dev);
  std::vector<choices::ChoicePtr> usable;
  for (const auto& c : cands)
    if (c.reason.empty()) usable.push_back(c.choice);
  return bucket_tuning(p, o, dev, cands, usable);
}

namespace {

// The tuning itself ran out of device memory: one stderr line per problem key every kOutOfMemoryReportSeconds.
void report_tuning_out_of_memory(const std::string& key, const GemmProblem& p, const choices::Choice* chosen,
                                 const std::string& what) {
  g_oom_reports.due("backoff " + key);
  if (!g_oom_reports.due("tuning " + key)) return;
  fmt::print(stderr, "tmagemm: device memory ran out while tuning {}; calls run the heuristic choice {} untimed, and "
             "one {} s from now tunes again: {}\n", p.describe(), chosen ? chosen->name() : std::string("(none)"),
             kOutOfMemoryReportSeconds, what);
}

}  // namespace

// A bucket's M other than its largest: the library's ranks (and the choices fitted to this M, Choice::fitted_to_m: the
// cuBLASLt search's wave-fitting tiles of this M) are timed at this exact M once and the fastest runs it
// (pick_winner's rules: near-ties go to the lower rank), kept in its own record (the exact M's key + "|ranks"), so that
// a later process reads it. Where the bucket's winner is a library choice named by its rank (cublaslt_algo0: "the
// library's first pick at each M"), its library's ranks; where it is one of ours (a tile, a skinny grid), that choice
// against every library's ranks, so that an M whose waves the bucket's winner fills worse than the bucket's sampled Ms
// runs the library where the library is faster there; where the library won the bucket, its ranks and our fastest
// choice at the bucket's largest M, so that an M where the bucket's sampled Ms favoured the library runs ours where
// ours is faster there. The bucket's record and winner stay as they are. A library
// adapts its pick to M but its first pick is not always its best: on the H200 cuBLASLt's rank 0 read 0.928 and 0.946
// of its best of four at M = 1000 (bucket 897..1024) and 4224 (4097..5120) in the waves suite (docs/perf-notes.md,
// twenty-eighth session); and a bucket won by a tile loses where M changes its waves: 4224^3 ran 128x192 (the winner
// of 4097..5120, timed at M = 5120, 4097 and 4608) at 0.953 of cuBLASLt (thirty-fourth session). Timing a few
// choices at an M is a small part of a tuning; Options::library_ranks_per_m (TMAGEMM_LIBRARY_RANKS_PER_M=0) turns it
// off for a process that must not time anything past a bucket's first call. Only in Tuning::benchmark: a cached_only
// process runs the bucket's winner at every M (a new M of a preloaded bucket reads nothing, README "Shape buckets");
// inside a capture, or while a tuning that ran out of memory waits, the stored choice or else the bucket's winner
// runs. `enumerated`: the call's own enumeration of p where it has one (the choice returned is then one of its
// entries); else p is enumerated here. `may_time` false: the stored choice or the winner. `settled` (where given) is
// set false when the ranks were due but could not be timed now (a capture, an out-of-memory backoff, a timing that
// ran out of memory): the call then runs the bucket's winner without remembering it, so that a later call times them.
choices::ChoicePtr library_rank_at_m(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev,
                                     choices::ChoicePtr bucket_choice, const std::vector<Candidate>* enumerated,
                                     bool may_time = true, bool* settled = nullptr) {
  // (A library rank above 0 never wins a bucket: such ranks are timed at the largest M only, bucket_tuning.)
  if (!o.library_ranks_per_m || o.tuning != Tuning::benchmark || !bucket_choice ||
      bucket_choice->library_rank() > 0 || p.op == Op::grouped_mm)
    return bucket_choice;
  const bool library_won = bucket_choice->library_rank() == 0;
  Options exact = o;
  exact.m_buckets = false;
  const std::string key = database_key(p, exact, dev) + "|ranks";
  const std::vector<Candidate> own = enumerated ? std::vector<Candidate>() : enumerate(p, o, dev);
  const std::vector<Candidate>& cands = enumerated ? *enumerated : own;
  const std::string library = bucket_choice->backend();
  std::vector<choices::ChoicePtr> ranks;  // the choices timed: the bucket's winner where it is ours, the ranks
  // Where the library won the bucket, our fastest choice at the bucket's largest M (from the bucket's record) is timed
  // here too: the bucket's pick weighs every M it sampled, and at this M ours can be the faster (H200, forty-ninth
  // session: 3000x5000x1000 rc, bucket 2561..3072, kept cublaslt_algo0 for M = 2561, where our 128x256 2x2 was 5.8 %
  // behind; at 3072 it was the fastest of the bucket's candidates, and at M = 3000 only cuBLASLt was timed).
  choices::ChoicePtr ours;
  std::vector<std::string> required;  // what a stored record must have timed to answer (ranks_record_current)
  if (!library_won) {
    if (!runnable(cands, bucket_choice->name())) return bucket_choice;
    ranks.push_back(bucket_choice);
    required.push_back(bucket_choice->name());
  } else {
    const auto bucket_rec = with_database([&](TuningDb& db) { return db.get(database_key(p, o, dev)); },
                                          std::optional<TuningRecord>());
    if (bucket_rec && (ours = fastest_of_ours(*bucket_rec, cands, library))) {
      ranks.push_back(ours);
      required.push_back(ours->name());
    }
  }
  for (const auto& c : cands) {
    const bool timed = (c.choice->library_rank() >= 0 && (!library_won || c.choice->backend() == library)) ||
                       c.choice->fitted_to_m() || c.choice->m_only();
    const bool already = std::any_of(ranks.begin(), ranks.end(),
                                     [&](const choices::ChoicePtr& r) { return r->name() == c.choice->name(); });
    if (c.reason.empty() && timed && !already) ranks.push_back(c.choice);
  }
  if (ranks.size() < 2) return bucket_choice;
  const auto rec = with_database([&](TuningDb& db) { return db.get(key); }, std::optional<TuningRecord>());
  if (rec && ranks_record_current(*rec, required)) {
    // A library rank, a configuration fitted to this M, or the bucket's winner itself. (A record that did not time
    // the bucket's present winner of ours is timed again below, ranks_record_current; one whose winner is another of
    // ours cannot then occur, and would run the bucket's winner.)
    if (choices::ChoicePtr c = runnable(cands, rec->winner);
        c && (c->library_rank() >= 0 || c->fitted_to_m() || c->m_only() || c->name() == bucket_choice->name() ||
              (ours && c->name() == ours->name())))
      return c;
    return bucket_choice;
  }
  if (!may_time) return bucket_choice;
  if (runtime::stream_capturing(o.stream) || g_oom_reports.active("backoff " + database_key(p, o, dev))) {
    if (settled) *settled = false;
    return bucket_choice;
  }
  Tuned t;
  try {
    t = benchmark(p, o, ranks, BenchmarkRun{.card_warm = true});
  } catch (const Error& e) {
    if (e.code() == ErrorCode::invalid_argument) throw;
    cudaGetLastError();
    // Out of memory: a failure of the moment, the bucket's winner for this call only (a later call times again).
    // Anything else (every rank failed its check or its launch): the bucket's winner, remembered by this process.
    if (settled && e.code() == ErrorCode::out_of_memory) *settled = false;
    return bucket_choice;
  }
  count(g_counters.rank_tunings);
  if (runtime::log_enabled("autotune")) {
    fmt::print(stderr, "AUTOTUNE bucket M {}: the library's ranks{} timed at M = {} (the bucket's winner {}):\n",
               m_key(bucket_of(p, o.m_buckets)),
               library_won ? (ours ? " and our fastest at the bucket's largest M" : "") : " and the bucket's winner", p.m,
               bucket_choice->name());
    print_autotune(p, t, ranks.size());
  }
  if (t.out_of_memory.empty()) {
    TuningRecord record{t.winner->name(), t.timings, now_iso8601_utc()};
    // A required choice the timing dropped (its check, precompile or a launch failed here) is kept as timed, with no
    // time (stored as null): the record then answers for it, where otherwise every later process would time this M
    // again (ranks_record_current).
    for (const std::string& name : required)
      if (std::none_of(record.timings.begin(), record.timings.end(), [&](const Timing& x) { return x.choice == name; }))
        record.timings.push_back({name, INFINITY});
    with_database([&](TuningDb& db) { db.put(key, record); return true; }, false);
  }
  return t.winner;
}

choices::ChoicePtr choose(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev) {
  MemoKey mkey = memo_key(p, o, dev);
  {
    std::lock_guard<std::mutex> lock(g_memo_mutex);
    if (auto it = g_memo.find(mkey); it != g_memo.end()) {
      count(g_counters.memo_hits);
      return it->second;
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const bool timing_log = runtime::log_enabled("timing");
  const std::string key = database_key(p, o, dev);
  const MBucket bucket = bucket_of(p, o.m_buckets);
  const bool bucketed = o.tuning != Tuning::heuristic && !bucket.exact();
  const bool at_top = bucketed && p.m == bucket.hi;  // the bucket's largest M: it runs its own timings' winner
  const std::string bkey = bucketed ? bucket_memo_key(p, key) : std::string();
  if (bucketed) {
    choices::ChoicePtr held;
    {
      std::lock_guard<std::mutex> lock(g_bucket_mutex);
      if (auto it = g_bucket_memo.find(bkey); it != g_bucket_memo.end())
        held = at_top && it->second.top ? it->second.top : it->second.pick;
    }
    if (held && held->can_implement(p, dev).empty()) {
      count(g_counters.bucket_hits);
      bool settled = true;
      if (!at_top) held = library_rank_at_m(p, o, dev, held, nullptr, true, &settled);
      if (o.tuning == Tuning::cached_only) log_cached_only(p, key, true, held.get());
      if (timing_log)
        fmt::print(stderr, "tmagemm timing choose {}: {:.3f} ms (the bucket's winner held in memory)\n",
                   p.describe(), elapsed_ms(t0));
      if (!settled) return held;
      std::lock_guard<std::mutex> lock(g_memo_mutex);
      g_memo.emplace(std::move(mkey), held);
      return held;
    }
  }
  const auto cands = enumerate(p, o, dev);
  const double enumerate_ms = elapsed_ms(t0);
  double database_ms = 0, remote_ms = 0;
  std::vector<choices::ChoicePtr> usable;
  for (const auto& c : cands)
    if (c.reason.empty()) usable.push_back(c.choice);
  if (usable.empty()) {
    std::string msg = fmt::format("no choice can run {}:", p.describe());
    for (const auto& c : cands) msg += fmt::format("\n  {}: {}", c.choice->name(), c.reason);
    throw Error(ErrorCode::no_valid_choice, msg);
  }
  choices::ChoicePtr chosen;
  bool remember_for_bucket = false;
  BucketWinners winners;  // a bucket's record as choices (bucket_winners)
  if (o.tuning != Tuning::heuristic) {
    const auto t_db = std::chrono::steady_clock::now();
    auto rec = with_database([&](TuningDb& db) { return db.get(key); }, std::optional<TuningRecord>());
    database_ms = elapsed_ms(t_db);
    // A local miss: the fleet's cache (remote_cache.hpp), kept here. Not while a tuning of the problem that ran out of
    // device memory waits to be tried again (nothing is remembered then: each call would ask the server again).
    const bool backoff = o.tuning == Tuning::benchmark && g_oom_reports.active("backoff " + key);
    if (!rec && !backoff) {
      const auto t_remote = std::chrono::steady_clock::now();
      if ((rec = remote_winner(key, dev)))
        with_database([&](TuningDb& db) { db.put(key, *rec); return true; }, false);
      remote_ms = elapsed_ms(t_remote);
    }
    if (rec) {  // tuned on the bucket's representative: may be set aside here
      winners = bucket_winners(p, bucket, cands, *rec);
      chosen = at_top && winners.top ? winners.top : winners.pick;
    }
    count(chosen ? g_counters.db_hits : g_counters.db_misses);
    remember_for_bucket = chosen != nullptr;
  }
  if (!chosen && o.tuning == Tuning::benchmark) {
    if (runtime::stream_capturing(o.stream)) {
      // NOTE: tuning allocates, synchronises and times kernels, none of which a stream capture allows. The call runs
      // the heuristic choice untimed and is not remembered: the first call outside a capture tunes the problem.
      chosen = heuristic_choice(p, cands, dev, o.sm_carveout);
      static std::mutex logged_mutex;
      static std::set<std::string> logged;
      std::lock_guard<std::mutex> lock(logged_mutex);
      if (runtime::log_enabled("autotune") && logged.insert(key).second)
        fmt::print(stderr,
                   "AUTOTUNE {}: called during a CUDA graph capture, not tuned; runs the heuristic choice {} "
                   "(tuned at the first call outside a capture)\n",
                   p.describe(), chosen ? chosen->name() : std::string("(none)"));
      count(g_counters.heuristic);
      if (chosen) return chosen;
    } else if (g_oom_reports.active("backoff " + key)) {
      // A tuning of this problem ran out of device memory a moment ago: not tried again yet (not remembered either).
      chosen = heuristic_choice(p, cands, dev, o.sm_carveout);
      count(g_counters.heuristic);
      if (chosen) return chosen;
    } else {
      const BucketTuning bt = bucket_tuning(p, o, dev, cands, usable);
      // In a bucket the finalists are checked on its other Ms first: the final winner's modules are kept once it runs.
      std::vector<choices::ChoicePtr> timed = bt.candidates;
      timed.insert(timed.end(), bt.top_only.begin(), bt.top_only.end());
      Tuned t;
      try {
        t = benchmark(bt.problem, o, timed, BenchmarkRun{.keep_winner = bt.bucket.exact()});
        if (!bt.bucket.exact()) t = confirm_across_bucket(o, bt, bucket_winner_of(bt, std::move(t)));
      } catch (const Error& e) {
        if (e.code() != ErrorCode::out_of_memory) throw;
        // Device memory ran out for the tuning itself (its scratch, or every candidate): a failure of the moment.
        // The call runs the heuristic choice untimed, and nothing is remembered: a later call tunes again.
        cudaGetLastError();
        count(g_counters.tunings_out_of_memory);
        chosen = heuristic_choice(p, cands, dev, o.sm_carveout);
        count(g_counters.heuristic);
        report_tuning_out_of_memory(key, p, chosen.get(), e.what());
        if (chosen) return chosen;
        throw;
      }
      count(g_counters.tuned);
      if (runtime::log_enabled("autotune")) {
        if (!bt.bucket.exact())
          fmt::print(stderr, "AUTOTUNE bucket M {}: tuned on M = {} for the call's M = {} ({} of {} candidates run "
                     "every M of the bucket)\n", m_key(bt.bucket), bt.problem.m, p.m, bt.candidates.size(),
                     usable.size());
        print_autotune(bt.problem, t, bt.candidates.size() + bt.top_only.size());
      }
      const TuningRecord record{t.winner->name(), t.timings, now_iso8601_utc()};
      // A tuning that dropped a candidate because device memory ran out is incomplete: its winner serves this process
      // (remembered in memory) but is neither stored nor published, so that a later process tunes the problem whole.
      const bool complete = t.out_of_memory.empty();
      if (!complete) {
        count(g_counters.tunings_out_of_memory);
        fmt::print(stderr, "tmagemm: device memory ran out for {} while tuning {}; its winner {} is used by this "
                   "process but not stored in the tuning database\n", fmt::join(t.out_of_memory, ", "),
                   p.describe(), t.winner->name());
      }
      if (complete)
        with_database(
            [&](TuningDb& db) {
              db.put(key, record);
              return true;
            },
            false);
      winners = bucket_winners(p, bucket, cands, record);  // the call's own enumeration of the winners
      if (!winners.pick) winners.pick = t.winner;
      // The fleet's cache, with the cubins (signed) of the winner and of the largest M's own choice.
      if (complete) publish_winner(bt.problem, key, record, *t.winner, dev, winners.top.get());
      chosen = at_top && winners.top ? winners.top : winners.pick;
      if (winners.top && runtime::log_enabled("autotune"))
        fmt::print(stderr, "AUTOTUNE bucket M {}: M = {} itself runs {}, its own timings' winner (the bucket's "
                   "winner {} serves its other Ms)\n", m_key(bucket), bucket.hi, winners.top->name(),
                   winners.pick->name());
      remember_for_bucket = true;
    }
  }
  const bool tuned_or_stored = chosen != nullptr;
  if (!chosen) {
    chosen = heuristic_choice(p, cands, dev, o.sm_carveout);
    count(g_counters.heuristic);
    if (o.tuning == Tuning::cached_only) count(g_counters.cached_only_misses);
  }
  if (o.tuning == Tuning::cached_only) log_cached_only(p, key, tuned_or_stored, chosen.get());
  if (timing_log)
    fmt::print(stderr,
               "tmagemm timing choose {}: {:.3f} ms (enumerate {:.3f}, database {:.3f}, remote {:.3f}, the rest: "
               "tuning, restore, heuristic) -> {}\n",
               p.describe(), elapsed_ms(t0), enumerate_ms, database_ms, remote_ms,
               chosen ? chosen->name() : std::string("(none)"));
  if (bucketed && remember_for_bucket && winners.pick) {
    std::lock_guard<std::mutex> lock(g_bucket_mutex);
    g_bucket_memo[bkey] = winners;
  }
  bool settled = true;
  if (bucketed && !at_top && tuned_or_stored) chosen = library_rank_at_m(p, o, dev, chosen, &cands, true, &settled);
  if (!settled) return chosen;
  std::lock_guard<std::mutex> lock(g_memo_mutex);
  g_memo.emplace(std::move(mkey), chosen);
  return chosen;
}

void report_failure(const GemmProblem& p, const Options& o, const choices::Choice& choice, const std::string& what) {
  report_failure(p, o, runtime::device_info(p.device), choice, what);
}

void report_failure(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev,
                    const choices::Choice& choice, const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(g_failed_mutex);
    g_failed[database_key(p, o, dev)].emplace(choice.name(), what);
  }
  {
    std::lock_guard<std::mutex> lock(g_memo_mutex);
    if (auto it = g_memo.find(memo_key(p, o, dev)); it != g_memo.end() && it->second->name() == choice.name())
      g_memo.erase(it);
  }
  {
    std::lock_guard<std::mutex> lock(g_bucket_mutex);
    if (auto it = g_bucket_memo.find(bucket_memo_key(p, database_key(p, o, dev)));
        it != g_bucket_memo.end() &&
        (it->second.pick->name() == choice.name() || (it->second.top && it->second.top->name() == choice.name())))
      g_bucket_memo.erase(it);
  }
  fmt::print(stderr, "tmagemm: {} failed for {} and is skipped from now on: {}\n", choice.name(), p.describe(), what);
}

choices::ChoicePtr choose_instead(const GemmProblem& p, const Options& o, const std::vector<std::string>& excluded) {
  return choose_instead(p, o, runtime::device_info(p.device), excluded);
}

choices::ChoicePtr choose_instead(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev,
                                  const std::vector<std::string>& excluded) {
  std::vector<Candidate> cands = enumerate(p, o, dev);
  for (auto& c : cands)
    if (std::find(excluded.begin(), excluded.end(), c.choice->name()) != excluded.end()) {
      c.reason = "ran out of device memory on this call";
      c.set_aside = false;
    }
  if (o.tuning != Tuning::heuristic) {
    const auto rec = with_database([&](TuningDb& db) { return db.get(database_key(p, o, dev)); },
                                   std::optional<TuningRecord>());
    // Timings are stored fastest first, taken on the bucket's largest M: there a library choice named by its rank
    // (cublaslt_algo<r>, r > 0) is the algorithm timed; at another M of the bucket it is another algorithm.
    const MBucket bucket = bucket_of(p, o.m_buckets);
    const bool ranks_hold = bucket.exact() || p.m == bucket.hi;
    if (rec)
      for (const Timing& t : rec->timings)
        if (choices::ChoicePtr c = runnable(cands, t.choice); c && (ranks_hold || c->library_rank() <= 0)) return c;
  }
  return heuristic_choice(p, cands, dev, o.sm_carveout);
}

void report_out_of_memory(const GemmProblem& p, const choices::Choice& choice, const std::string& what) {
  count(g_counters.out_of_memory_retries);
  if (!g_oom_reports.due("choice " + choice.name())) return;
  fmt::print(stderr, "tmagemm: {} ran out of device memory for {}; the call runs another choice ({} stays the "
             "choice; reported at most every {} s): {}\n", choice.name(), p.describe(), choice.name(),
             kOutOfMemoryReportSeconds, what);
}

std::string database_key(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev) {
  std::string filters = filter_signature(o);
  for (const choices::Backend& b : choices::backends())
    if (b.key_tag && b.enabled(o)) filters += b.key_tag(p);
  return tuning_key(p, dev, o.m_buckets) + (filters.empty() ? "" : "|" + filters);
}

Known known(const GemmProblem& p, const Options& o) {
  Known k;
  const auto rec = with_database(
      [&](TuningDb& db) { return db.get(database_key(p, o, runtime::device_info(p.device))); },
      std::optional<TuningRecord>());
  if (rec) {
    k.winner = rec->winner;
    for (const auto& t : rec->timings) k.timings_ms.emplace_back(t.choice, t.ms);
  }
  return k;
}

choices::ChoicePtr stored_choice(const GemmProblem& p, const Options& o, const std::vector<Candidate>& cands) {
  const auto rec = with_database(
      [&](TuningDb& db) { return db.get(database_key(p, o, runtime::device_info(p.device))); },
      std::optional<TuningRecord>());
  if (!rec) return nullptr;
  const MBucket bucket = bucket_of(p, o.m_buckets);
  const BucketWinners w = bucket_winners(p, bucket, cands, *rec);
  if (p.m == bucket.hi && w.top) return w.top;
  if (bucket.exact() || p.m == bucket.hi) return w.pick;
  return library_rank_at_m(p, o, runtime::device_info(p.device), w.pick, &cands, false);
}

void set_database_retry_seconds_for_testing(int seconds) {
  g_db_retry_seconds.store(seconds);
  DatabaseState& st = db_state();
  std::lock_guard<std::mutex> lock(st.mutex);
  const auto latest = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  if (st.retry_after > latest) st.retry_after = latest;  // an outage in progress ends no later than the new wait
}

void set_extra_choices_for_testing(std::vector<choices::ChoicePtr> extra) {
  std::lock_guard<std::mutex> lock(g_extra_mutex);
  g_extra = std::move(extra);
}

void forget_in_memory() {
  {
    std::lock_guard<std::mutex> lock(g_memo_mutex);
    g_memo.clear();
  }
  {
    std::lock_guard<std::mutex> lock(g_oom_reports.mutex);
    g_oom_reports.last.clear();
  }
  std::lock_guard<std::mutex> lock(g_bucket_mutex);
  g_bucket_memo.clear();
}

}  // namespace tmagemm::tune

namespace tmagemm {

TuningStats tuning_stats() {
  TuningStats s;
  s.memo_hits = tune::g_counters.memo_hits.load(std::memory_order_relaxed);
  s.bucket_hits = tune::g_counters.bucket_hits.load(std::memory_order_relaxed);
  s.db_hits = tune::g_counters.db_hits.load(std::memory_order_relaxed);
  s.db_misses = tune::g_counters.db_misses.load(std::memory_order_relaxed);
  s.tuned = tune::g_counters.tuned.load(std::memory_order_relaxed);
  s.rank_tunings = tune::g_counters.rank_tunings.load(std::memory_order_relaxed);
  s.cached_only_misses = tune::g_counters.cached_only_misses.load(std::memory_order_relaxed);
  s.heuristic = tune::g_counters.heuristic.load(std::memory_order_relaxed);
  s.out_of_memory_retries = tune::g_counters.out_of_memory_retries.load(std::memory_order_relaxed);
  s.tunings_out_of_memory = tune::g_counters.tunings_out_of_memory.load(std::memory_order_relaxed);
  const jit::ModuleCounts m = jit::module_counts();
  s.modules_loaded = m.loaded;
  s.modules_kept = m.kept;
  s.modules_unloaded = m.unloaded;
  return s;
}

void reset_tuning_stats() {
  for (auto* c : {&tune::g_counters.memo_hits, &tune::g_counters.bucket_hits, &tune::g_counters.db_hits, &tune::g_counters.db_misses,
                  &tune::g_counters.tuned, &tune::g_counters.cached_only_misses, &tune::g_counters.heuristic,
                  &tune::g_counters.out_of_memory_retries, &tune::g_counters.tunings_out_of_memory,
                  &tune::g_counters.rank_tunings})
    c->store(0, std::memory_order_relaxed);
}

}  // namespace tmagemm
