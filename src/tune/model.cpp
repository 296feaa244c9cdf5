// model.cpp — the model file of offline tuning, its jobs and the tuning of one job (see model.hpp).
#include "tune/model.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "runtime/cuda_check.hpp"
#include "tmagemm/error.hpp"
#include "tmagemm/tuning.hpp"
#include "choices/cublaslt.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::tune {

namespace {

using json = nlohmann::json;

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& rule) const {
    throw Error(ErrorCode::invalid_argument, fmt::format("model file {}: {}: {}", origin_, field, rule));
  }

  // Fields of `obj` other than `known` are refused (a misspelt field must not be ignored).
  void only(const json& obj, const std::string& where, std::initializer_list<const char*> known) const {
    for (const auto& [key, value] : obj.items()) {
      bool ok = false;
      for (const char* k : known) ok = ok || key == k;
      if (!ok) {
        std::string list;
        for (const char* k : known) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
        fail(where.empty() ? key : where + "." + key, fmt::format("unknown field (accepted: {})", list));
      }
    }
  }

  int64_t integer(const json& v, const std::string& field, int64_t lo, int64_t hi) const {
    if (!v.is_number_integer()) fail(field, fmt::format("must be an integer (got {})", v.dump()));
    const int64_t x = v.get<int64_t>();
    if (x < lo || x > hi) fail(field, fmt::format("{} is out of range: {} <= {} <= {}", x, lo, field, hi));
    return x;
  }

  std::string text(const json& v, const std::string& field) const {
    if (!v.is_string()) fail(field, fmt::format("must be a string (got {})", v.dump()));
    return v.get<std::string>();
  }

  bool boolean(const json& v, const std::string& field) const {
    if (!v.is_boolean()) fail(field, fmt::format("must be true or false (got {})", v.dump()));
    return v.get<bool>();
  }

 private:
  std::string origin_;
};

DType dtype_named(const Reader& r, const std::string& s, const std::string& field, const char* accepted,
                  std::initializer_list<DType> allowed) {
  for (DType d : allowed)
    if (s == to_string(d)) return d;
  r.fail(field, fmt::format("'{}' is not accepted ({})", s, accepted));
}

ModelWeight parse_weight(const Reader& r, const json& w, std::size_t i) {
  const std::string at = fmt::format("weights[{}]", i);
  if (!w.is_object()) r.fail(at, "must be an object {\"n\": .., \"k\": .., ...}");
  r.only(w, at,
         {"name", "op", "n", "k", "groups", "dtype", "out_dtype", "layout", "bias", "activation", "scale",
          "fast_accum"});
  ModelWeight m;
  m.name = w.contains("name") ? r.text(w["name"], at + ".name") : at;
  const std::string op = w.contains("op") ? r.text(w["op"], at + ".op") : "mm";
  if (op == "mm")
    m.op = Op::mm;
  else if (op == "addmm")
    m.op = Op::addmm;
  else if (op == "scaled_mm")
    m.op = Op::scaled_mm;
  else if (op == "grouped_mm")
    m.op = Op::grouped_mm;
  else
    r.fail(at + ".op", fmt::format("'{}' is not accepted (mm, addmm, scaled_mm or grouped_mm)", op));
  if (m.op == Op::grouped_mm) {
    if (!w.contains("groups")) r.fail(at + ".groups", "is missing (grouped_mm's expert count G is required)");
    m.groups = r.integer(w["groups"], at + ".groups", 1, kModelMaxGroups);
  } else if (w.contains("groups")) {
    r.fail(at + ".groups", "only grouped_mm takes groups");
  }
  for (const char* f : {"n", "k"})
    if (!w.contains(f)) r.fail(at + "." + f, "is missing (the weight's extents N and K are required)");
  constexpr int64_t kMaxExtent = (int64_t{1} << 31) - 1;
  m.n = r.integer(w["n"], at + ".n", 1, kMaxExtent);
  m.k = r.integer(w["k"], at + ".k", 1, kMaxExtent);
  const bool fp8 = m.op == Op::scaled_mm;
  const std::string dtype = w.contains("dtype") ? r.text(w["dtype"], at + ".dtype") : fp8 ? "e4m3" : "bf16";
  m.dtype = fp8 ? dtype_named(r, dtype, at + ".dtype", "scaled_mm takes e4m3 inputs", {DType::e4m3})
                : dtype_named(r, dtype, at + ".dtype", "bf16 or f16", {DType::bf16, DType::f16});
  m.out_dtype = fp8 ? DType::bf16 : m.dtype;
  if (w.contains("out_dtype"))
    m.out_dtype = dtype_named(r, r.text(w["out_dtype"], at + ".out_dtype"), at + ".out_dtype", "bf16, f16 or f32",
                              {DType::bf16, DType::f16, DType::f32});
  const std::string layout = w.contains("layout") ? r.text(w["layout"], at + ".layout") : "rc";
  if (layout == "rc")
    m.b_col_major = true;
  else if (layout == "rr" && !fp8)
    m.b_col_major = false;
  else if (layout == "cr" || layout == "cc")
    r.fail(at + ".layout",
           fmt::format("'{}' is not accepted: a must be row-major (rr or rc); a column-major a has M in its leading "
                       "dimension, so its M is not bucketed and every M would be a tuning of its own",
                       layout));
  else
    r.fail(at + ".layout", fmt::format("'{}' is not accepted ({})", layout,
                                       fp8 ? "scaled_mm takes rc: a row-major, b column-major (both K-major)"
                                           : "rr or rc: a row-major, b row- or column-major"));
  if (m.op == Op::addmm) {
    m.bias = true;
    if (w.contains("bias") && !r.boolean(w["bias"], at + ".bias"))
      r.fail(at + ".bias", "addmm always has its (N) bias (use op mm for none)");
  } else if (w.contains("bias")) {
    if (m.op != Op::scaled_mm) r.fail(at + ".bias", "only addmm and scaled_mm take a bias");
    m.bias = r.boolean(w["bias"], at + ".bias");
    if (m.bias && m.out_dtype == DType::f32) r.fail(at + ".bias", "scaled_mm takes no bias with an f32 output");
  }
  if (w.contains("activation")) {
    if (m.op != Op::addmm) r.fail(at + ".activation", "only addmm takes an activation");
    const std::string a = r.text(w["activation"], at + ".activation");
    bool found = false;
    for (Activation act : {Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh,
                           Activation::silu, Activation::sigmoid})
      if (a == to_string(act)) {
        m.activation = act;
        found = true;
      }
    if (!found)
      r.fail(at + ".activation", fmt::format("'{}' is not accepted (none, relu, gelu, gelu_tanh, silu, sigmoid)", a));
  }
  if (w.contains("scale")) {
    if (!fp8) r.fail(at + ".scale", "only scaled_mm takes scales");
    const std::string s = r.text(w["scale"], at + ".scale");
    if (s == "rowwise")
      m.scale = ScaleKind::rowwise;
    else if (s == "tensorwise")
      m.scale = ScaleKind::tensorwise;
    else
      r.fail(at + ".scale", fmt::format("'{}' is not accepted (rowwise or tensorwise)", s));
  }
  if (w.contains("fast_accum")) {
    if (!fp8) r.fail(at + ".fast_accum", "only scaled_mm takes fast_accum");
    m.fast_accum = r.boolean(w["fast_accum"], at + ".fast_accum");
  }
  if (fp8 && (m.n % 16 != 0 || m.k % 16 != 0))
    r.fail(at, fmt::format("scaled_mm needs N and K multiples of 16 (got {} x {})", m.n, m.k));
  return m;
}

// The fields of a weight that decide its tuning keys (not its name).
auto shape_of(const ModelWeight& w) {
  return std::tuple(static_cast<int>(w.op), w.n, w.k, w.groups, static_cast<int>(w.dtype),
                    static_cast<int>(w.out_dtype), w.b_col_major, w.bias, static_cast<int>(w.activation),
                    static_cast<int>(w.scale), w.fast_accum);
}

}  // namespace

std::string ModelWeight::describe() const {
  std::string s = op == Op::grouped_mm ? fmt::format("{} {}x{}x{}", to_string(op), groups, n, k)
                                        : fmt::format("{} {}x{}", to_string(op), n, k);
  s += fmt::format(" {} {}", to_string(dtype), b_col_major ? "rc" : "rr");
  if (out_dtype != dtype) s += fmt::format("->{}", to_string(out_dtype));
  if (op == Op::addmm) s += fmt::format(" bias{}", activation == Activation::none ? "" : std::string("+") + to_string(activation));
  if (op == Op::scaled_mm)
    s += fmt::format(" {}{}{}", scale == ScaleKind::rowwise ? "rowwise" : "tensorwise", fast_accum ? " fast" : "",
                     bias ? " bias" : "");
  return s;
}

Model parse_model(const std::string& text, const std::string& origin) {
  const Reader r(origin);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    r.fail("(document)", fmt::format("not valid JSON: {}", e.what()));
  }
  if (!doc.is_object()) r.fail("(document)", "must be an object {\"m\": [min, max], \"weights\": [...]}");
  r.only(doc, "", {"m", "weights"});
  Model model;
  if (!doc.contains("m")) r.fail("m", "is missing (the M range [min, max] of the calls, e.g. [1, 8192])");
  const json& m = doc["m"];
  if (!m.is_array() || m.size() != 2) r.fail("m", fmt::format("must be [min, max] (got {})", m.dump()));
  model.m_min = r.integer(m[0], "m[0] (min)", 1, kModelMaxRows);
  model.m_max = r.integer(m[1], "m[1] (max)", 1, kModelMaxRows);
  if (model.m_min > model.m_max)
    r.fail("m", fmt::format("min {} is above max {} (the range is [min, max])", model.m_min, model.m_max));
  if (!doc.contains("weights")) r.fail("weights", "is missing (a list of {\"n\": .., \"k\": .., ...})");
  const json& ws = doc["weights"];
  if (!ws.is_array() || ws.empty()) r.fail("weights", "must be a non-empty list");
  for (std::size_t i = 0; i < ws.size(); ++i) model.weights.push_back(parse_weight(r, ws[i], i));
  return model;
}

std::vector<ModelJob> model_jobs(const Model& model) {
  std::vector<ModelJob> jobs;
  std::set<decltype(shape_of(ModelWeight{}))> seen;
  for (std::size_t w = 0; w < model.weights.size(); ++w) {
    if (!seen.insert(shape_of(model.weights[w])).second) continue;
    for (int64_t m = model.m_min; m <= model.m_max;) {
      const MBucket b = m_bucket(model.weights[w].op, m);
      jobs.push_back({w, b});
      m = b.hi + 1;
    }
  }
  return jobs;
}

GemmProblem model_problem(const ModelWeight& w, int64_t m, int device) {
  // Stand-in addresses: 256-byte aligned, far apart; only their alignment is read.
  constexpr uintptr_t kA = uintptr_t{0x7e0000000000}, kB = uintptr_t{0x7e4000000000}, kOut = uintptr_t{0x7e8000000000},
                      kBias = uintptr_t{0x7ec000000000}, kScaleA = uintptr_t{0x7ed000000000},
                      kScaleB = uintptr_t{0x7ee000000000}, kOffs = uintptr_t{0x7ef000000000};
  GemmProblem p;
  p.op = w.op;
  p.device = device;
  p.m = m;
  p.n = w.n;
  p.k = w.k;
  // A contiguous matrix (row-major: strides (cols, 1); column-major: (1, rows)) as the validator canonicalises it
  // (problem.hpp, Operand: the free stride of an extent-1 dimension is the other extent rounded up to 16 bytes).
  const auto matrix = [](uintptr_t addr, DType t, int64_t rows, int64_t cols, bool col_major) {
    Operand o;
    o.data = reinterpret_cast<const void*>(addr);
    o.dtype = t;
    o.rows = rows;
    o.cols = cols;
    o.row_stride = col_major ? 1 : cols;
    o.col_stride = col_major ? rows : 1;
    const int64_t per16 = 16 / static_cast<int64_t>(itemsize(t));
    const auto round16 = [&](int64_t x) { return std::max<int64_t>((x + per16 - 1) / per16 * per16, 1); };
    if (rows == 1 && cols == 1) {
      o.col_stride = 1;
      o.row_stride = round16(1);
    } else if (rows == 1) {
      if (o.col_stride == 1)
        o.row_stride = round16(cols);
      else
        o.row_stride = 1;
    } else if (cols == 1) {
      if (o.row_stride == 1)
        o.col_stride = round16(rows);
      else
        o.col_stride = 1;
    }
    return o;
  };
  p.a = matrix(kA, w.dtype, m, w.k, false);
  p.b = matrix(kB, w.dtype, w.k, w.n, w.b_col_major);
  p.out = matrix(kOut, w.out_dtype, m, w.n, false);
  if (w.op == Op::grouped_mm) {  // b (G, K, N), the experts' matrices one after the other
    p.batch = w.groups;
    p.b.batch_stride = w.groups > 1 ? w.k * w.n : 0;
    p.group_ends = reinterpret_cast<const int32_t*>(kOffs);
  }
  if (w.bias) {
    p.bias_kind = BiasKind::row_vector;
    p.bias.data = reinterpret_cast<const void*>(kBias);
    p.bias.dtype = w.out_dtype;
    p.bias.rows = 1;
    p.bias.cols = w.n;
    p.bias.row_stride = 0;
    p.bias.col_stride = 1;
  }
  if (w.op == Op::addmm) p.act = w.activation;
  if (w.op == Op::scaled_mm) {
    p.scale_kind = w.scale;
    p.scale_a = reinterpret_cast<const float*>(kScaleA);
    p.scale_b = reinterpret_cast<const float*>(kScaleB);
    p.fast_accum = w.fast_accum;
  }
  return p;
}

JobResult tune_job(const Model& model, const ModelJob& job, int device, Options options) {
  const auto t0 = std::chrono::steady_clock::now();
  runtime::check_cuda(cudaSetDevice(device), "cudaSetDevice");
  options.tuning = Tuning::benchmark;
  const GemmProblem p = model_problem(model.weights.at(job.weight), job.bucket.hi, device);
  const TuningStats before = tuning_stats();
  JobResult r;
  r.winner = choose(p, options)->name();
  // Device memory ran out for the tuning (nothing stored: the call ran the heuristic choice) or for a candidate (the
  // winner is not stored either): the job failed, and is tried again by a later run.
  if (tuning_stats().tunings_out_of_memory != before.tunings_out_of_memory)
    throw Error(ErrorCode::out_of_memory,
                fmt::format("device memory ran out while tuning {}: nothing stored", p.describe()));
  // The bucket's winner (its largest M, on which the job tunes, may run another choice: top_m_choice).
  if (const auto stored = known(p, options).winner) r.winner = *stored;
  r.tuned = tuning_stats().tuned > before.tuned;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

PreloadStats preload(const Model& model, int device, Options options, std::vector<GemmProblem>* warm_runs) {
  const auto t0 = std::chrono::steady_clock::now();
  runtime::check_cuda(cudaSetDevice(device), "cudaSetDevice");
  options.tuning = Tuning::cached_only;
  PreloadStats stats;
  // Every weight (weights of one shape share their buckets' keys: resolving them again is a memo hit).
  for (const ModelWeight& w : model.weights)
    for (int64_t m = model.m_min; m <= model.m_max;) {
      const MBucket b = m_bucket(w.op, m);
      m = b.hi + 1;
      const GemmProblem p = model_problem(w, b.hi, device);
      ++stats.buckets;
      const choices::ChoicePtr c = choose(p, options);  // a remote winner is in the local database afterwards
      const bool stored = known(p, options).winner.has_value();
      if (stored)
        ++stats.winners;
      else
        ++stats.misses;
      c->precompile(p, device);
      if (warm_runs) warm_runs->push_back(p);
      // The bucket's largest M may run its own timings' winner (top_m_choice): the bucket's winner, which its other Ms
      // run, is readied too (held in memory since the call above: no second database read).
      if (stored && !b.exact()) {
        const GemmProblem lo = model_problem(w, b.lo, device);
        const choices::ChoicePtr other = choose(lo, options);
        if (other->name() != c->name()) {
          other->precompile(lo, device);
          if (warm_runs) warm_runs->push_back(lo);
        }
      }
      if (!warm_runs) continue;
      // A cuBLASLt choice runs its rank's heuristic pick at each M: one run per distinct first pick of the bucket's
      // rows loads each kernel it can meet (buckets.hpp: in a bucket only rank 0 is ever the winner). A configuration
      // of the search (rank -1) is one algorithm at every M: the run above loaded it.
      if (std::string(c->backend()) == "cublaslt" && c->library_rank() >= 0 && !b.exact()) {
        std::vector<GemmProblem> rows;
        for (int64_t r = b.lo; r < b.hi; ++r) rows.push_back(model_problem(w, r, device));
        for (std::size_t i : choices::cublaslt_distinct_first_picks(rows, options)) warm_runs->push_back(rows[i]);
      }
    }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace tmagemm::tune
