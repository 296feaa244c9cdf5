// module.cpp — tmagemm._C, the Python extension (nanobind): the public ops,
// explain, the kernel cache and the tuning database, on plain descriptions of
// tensors. python/tmagemm/ turns torch tensors into those descriptions and
// registers the torch.library ops; nothing here knows torch, so the module
// builds without it.
//
// Contract with python/tmagemm/_ops.py:
// - A tensor is the tuple (data_ptr, dtype code, device index, sizes, strides):
// sizes and strides in elements, as
//   torch gives them; the dtype code is the position in tmagemm::DType (f16,
//   bf16, f32, e4m3, e5m2).
// - Options is None (TMAGEMM_* environment variables and defaults, as a
// default-constructed tmagemm::Options) or
//   the tuple (tuning, persistent_tma, fallback, cublaslt, skinny, pad_tma,
//   allow_reduced_precision_reduction, choice_regex, sm_carveout, m_buckets,
//   library_ranks_per_m, sustained_tuning), where None
//   keeps the environment's value.
// - stream is a cudaStream_t as an integer (torch's current raw stream of the
// tensors' device).
// - Every tmagemm::Error becomes an instance of the Python class registered for
// its code (_set_error_types),
//   carrying the C++ message; the GIL is released while an op runs (tuning can
//   take seconds).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "jit/jit.hpp"
#include "tmagemm/suites.hpp"
#include "tmagemm/tmagemm.hpp"
#include "tune/tuning_db.hpp"

namespace nb = nanobind;

namespace tmagemm::python {

namespace {

// Python exception classes by ErrorCode, set once by tmagemm/__init__.py (all
// subclasses of tmagemm.Error). Plain owned pointers, never released: a static
// nb::object would be destroyed after the interpreter is gone.
PyObject* g_error_types[6] = {};

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorCode::invalid_argument, message); }

TensorView view_of(nb::handle h, const char* op, const char* name) {
  if (!nb::isinstance<nb::tuple>(h)) invalid(std::string(op) + ": " + name + " is not a tensor description");
  nb::tuple t = nb::borrow<nb::tuple>(h);
  if (t.size() != 5) invalid(std::string(op) + ": " + name + " is not a tensor description");
  TensorView v;
  v.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(t[0]));
  const int code = nb::cast<int>(t[1]);
  if (code < 0 || code > static_cast<int>(DType::i32)) invalid(std::string(op) + ": " + name + ": unknown dtype");
  v.dtype = static_cast<DType>(code);
  v.device = nb::cast<int>(t[2]);
  nb::tuple sizes = nb::borrow<nb::tuple>(t[3]), strides = nb::borrow<nb::tuple>(t[4]);
  if (sizes.size() < 1 || sizes.size() > 3 || strides.size() != sizes.size())
    invalid(std::string(op) + ": " + name + " has " + std::to_string(sizes.size()) +
            " dimensions; tmagemm takes tensors of 1 to 3 dimensions");
  v.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < v.rank; ++d) {
    v.sizes[d] = nb::cast<int64_t>(sizes[d]);
    v.strides[d] = nb::cast<int64_t>(strides[d]);
  }
  return v;
}

Tuning parse_tuning(const std::string& s) {
  if (s == "benchmark") return Tuning::benchmark;
  if (s == "heuristic") return Tuning::heuristic;
  if (s == "cached_only") return Tuning::cached_only;
  invalid(
      "options.tuning must be 'benchmark', 'heuristic' or 'cached_only', "
      "got '" +
      s + "'");
}

Options options_of(nb::handle h, std::uintptr_t stream) {
  Options o;  // defaults, then TMAGEMM_* (a malformed variable throws
              // Error(invalid_argument) naming it)
  if (!h.is_none()) {
    nb::tuple t = nb::borrow<nb::tuple>(h);
    if (t.size() != 12) invalid("options: not an options description");
    auto flag = [&](std::size_t i, bool& field) {
      if (!t[i].is_none()) field = nb::cast<bool>(t[i]);
    };
    if (!t[0].is_none()) o.tuning = parse_tuning(nb::cast<std::string>(t[0]));
    flag(1, o.persistent_tma);
    flag(2, o.fallback);
    flag(3, o.cublaslt);
    flag(4, o.skinny);
    flag(5, o.pad_tma);
    flag(6, o.allow_reduced_precision_reduction);
    if (!t[7].is_none()) o.choice_regex = nb::cast<std::string>(t[7]);
    if (!t[8].is_none()) o.sm_carveout = nb::cast<int>(t[8]);
    flag(9, o.m_buckets);
    flag(10, o.library_ranks_per_m);
    flag(11, o.sustained_tuning);
  }
  o.stream = reinterpret_cast<cudaStream_t>(stream);
  return o;
}

Activation parse_activation(const std::string& s) {
  for (Activation a : {Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh, Activation::silu,
                       Activation::sigmoid})
    if (s == to_string(a)) return a;
  invalid(
      "addmm: activation must be one of none, relu, gelu, gelu_tanh, silu, "
      "sigmoid; got '" +
      s + "'");
}

// mm and bmm: (a, b, out, options, stream, explain).
using MatmulRun = void (*)(const TensorView&, const TensorView&, const TensorView&, const Options&);
using MatmulExplain = Explanation (*)(const TensorView&, const TensorView&, const TensorView&, const Options&);

void def_matmul(nb::module_& m, const char* name, const char* explain_name, MatmulRun run, MatmulExplain explain) {
  m.def(
      name,
      [name, explain_name, run, explain](nb::handle a, nb::handle b, nb::handle out, nb::handle opts,
                                         std::uintptr_t stream, bool want_explain) -> std::optional<Explanation> {
        const char* op = want_explain ? explain_name : name;
        const TensorView va = view_of(a, op, "a"), vb = view_of(b, op, "b"), vo = view_of(out, op, "out");
        const Options o = options_of(opts, stream);
        nb::gil_scoped_release release;
        if (want_explain) return explain(va, vb, vo, o);
        run(va, vb, vo, o);
        return std::nullopt;
      },
      nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("options").none(), nb::arg("stream"),
      nb::arg("explain") = false);
}

// One tuning DB entry as (key, winner, [(choice, ms)], tuned_at); a failed
// choice's ms is +inf.
using Entry = std::tuple<std::string, std::string, std::vector<std::pair<std::string, double>>, std::string>;

// The cache tools refuse a cache dir the library refuses (another user's, or writable by others).
void check_cache_dir() { jit::check_cache_dir_for_tools(jit::cache_dir()); }

std::vector<Entry> tuning_entries() {
  check_cache_dir();
  const std::string path = tune::TuningDb::default_path();
  std::vector<Entry> out;
  if (!std::filesystem::exists(path)) return out;  // listing does not create the database
  tune::TuningDb db(path);
  for (auto& [key, record] : db.list()) {
    std::vector<std::pair<std::string, double>> timings;
    for (const tune::Timing& t : record.timings) timings.emplace_back(t.choice, t.ms);
    out.emplace_back(key, record.winner, std::move(timings), record.tuned_at);
  }
  return out;
}

}  // namespace

}  // namespace tmagemm::python

NB_MODULE(_C, m) {
  using namespace tmagemm;
  using namespace tmagemm::python;
  m.doc() = "tmagemm's C++ library (python/src/module.cpp); use the tmagemm package, not this module";

  m.def("_set_error_types", [](nb::handle invalid_argument, nb::handle unsupported, nb::handle cuda_error,
                               nb::handle compile_error, nb::handle no_valid_choice, nb::handle out_of_memory) {
    auto set = [](ErrorCode code, nb::handle type) {
      PyObject*& slot = g_error_types[static_cast<int>(code)];
      Py_XDECREF(slot);
      slot = type.inc_ref().ptr();
    };
    set(ErrorCode::invalid_argument, invalid_argument);
    set(ErrorCode::unsupported, unsupported);
    set(ErrorCode::cuda_error, cuda_error);
    set(ErrorCode::compile_error, compile_error);
    set(ErrorCode::no_valid_choice, no_valid_choice);
    set(ErrorCode::out_of_memory, out_of_memory);
  });
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyObject* type = g_error_types[static_cast<int>(e.code())];
      PyErr_SetString(type ? type : PyExc_RuntimeError, e.what());
    }
  });

  nb::class_<ChoiceReport>(m, "ChoiceReport", "One choice the dispatcher considers for a call")
      .def_ro("name", &ChoiceReport::name)
      .def_ro("backend", &ChoiceReport::backend)
      .def_ro("applicable", &ChoiceReport::applicable)
      .def_ro("reason", &ChoiceReport::reason, "why not, when not applicable (else empty)")
      .def_ro("tuned_ms", &ChoiceReport::tuned_ms, "its median time in the tuning database, if timed")
      .def_ro("selected", &ChoiceReport::selected, "the choice a call runs now")
      .def("__repr__", [](const ChoiceReport& c) {
        return "ChoiceReport(" + c.name + ", " + (c.applicable ? "applicable" : "not applicable: " + c.reason) +
               (c.selected ? ", selected" : "") + ")";
      });
  nb::class_<Explanation>(m, "Explanation", "Every choice for one call, applicable or not and why")
      .def_ro("problem", &Explanation::problem)
      .def_ro("choices", &Explanation::choices)
      .def("__str__", &Explanation::to_string)
      .def("__repr__", [](const Explanation& e) { return "Explanation(" + e.problem + ")"; });

  // Each op runs, or with explain=True returns the Explanation of the same call instead (launching nothing).
  def_matmul(m, "mm", "explain_mm", &tmagemm::mm, &tmagemm::explain_mm);
  def_matmul(m, "bmm", "explain_bmm", &tmagemm::bmm, &tmagemm::explain_bmm);
  m.def(
      "grouped_mm",
      [](nb::handle a, nb::handle b, nb::handle offs, nb::handle out, nb::handle opts, std::uintptr_t stream,
         bool explain) -> std::optional<Explanation> {
        const char* op = explain ? "explain_grouped_mm" : "grouped_mm";
        const TensorView va = view_of(a, op, "a"), vb = view_of(b, op, "b"), voffs = view_of(offs, op, "offs"),
                         vo = view_of(out, op, "out");
        const Options o = options_of(opts, stream);
        nb::gil_scoped_release release;
        if (explain) return explain_grouped_mm(va, vb, voffs, vo, o);
        tmagemm::grouped_mm(va, vb, voffs, vo, o);
        return std::nullopt;
      },
      nb::arg("a"), nb::arg("b"), nb::arg("offs"), nb::arg("out"), nb::arg("options").none(), nb::arg("stream"),
      nb::arg("explain") = false);
  m.def(
      "addmm",
      [](nb::handle bias, nb::handle a, nb::handle b, nb::handle out, float beta, float alpha, const std::string& act,
         nb::handle opts, std::uintptr_t stream, bool explain) -> std::optional<Explanation> {
        const char* op = explain ? "explain_addmm" : "addmm";
        const TensorView vc = view_of(bias, op, "bias"), va = view_of(a, op, "a"), vb = view_of(b, op, "b"),
                         vo = view_of(out, op, "out");
        const Activation activation = parse_activation(act);
        const Options o = options_of(opts, stream);
        nb::gil_scoped_release release;
        if (explain) return explain_addmm(vc, va, vb, vo, beta, alpha, activation, o);
        tmagemm::addmm(vc, va, vb, vo, beta, alpha, activation, o);
        return std::nullopt;
      },
      nb::arg("bias"), nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("beta"), nb::arg("alpha"),
      nb::arg("activation"), nb::arg("options").none(), nb::arg("stream"), nb::arg("explain") = false);
  m.def(
      "scaled_mm",
      [](nb::handle a, nb::handle b, nb::handle scale_a, nb::handle scale_b, nb::handle bias, nb::handle out,
         bool use_fast_accum, nb::handle opts, std::uintptr_t stream, bool explain) -> std::optional<Explanation> {
        const char* op = explain ? "explain_scaled_mm" : "scaled_mm";
        const TensorView va = view_of(a, op, "a"), vb = view_of(b, op, "b"), vsa = view_of(scale_a, op, "scale_a"),
                         vsb = view_of(scale_b, op, "scale_b"), vo = view_of(out, op, "out");
        TensorView vbias;
        if (!bias.is_none()) vbias = view_of(bias, op, "bias");
        const TensorView* pbias = bias.is_none() ? nullptr : &vbias;
        const Options o = options_of(opts, stream);
        nb::gil_scoped_release release;
        if (explain) return explain_scaled_mm(va, vb, vsa, vsb, pbias, vo, use_fast_accum, o);
        tmagemm::scaled_mm(va, vb, vsa, vsb, pbias, vo, use_fast_accum, o);
        return std::nullopt;
      },
      nb::arg("a"), nb::arg("b"), nb::arg("scale_a"), nb::arg("scale_b"), nb::arg("bias").none(), nb::arg("out"),
      nb::arg("use_fast_accum"), nb::arg("options").none(), nb::arg("stream"), nb::arg("explain") = false);

  // The caches (no GPU needed): the cubin cache and the tuning database under
  // jit::cache_dir().
  m.def("cache_dir", [] { return jit::cache_dir(); });
  m.def("tuning_db_path", [] { return tune::TuningDb::default_path(); });
  m.def("kernel_cache", [] {
    check_cache_dir();
    const jit::KernelCacheFiles k = jit::kernel_cache_files();
    return std::make_tuple(k.dir, k.files.size(), k.bytes);
  });
  m.def("clear_kernel_cache", [] {
    check_cache_dir();
    jit::KernelCacheFiles removed;
    std::vector<std::string> failures = jit::clear_kernel_cache(removed);
    return std::make_tuple(removed.files.size(), removed.bytes, failures);
  });
  m.def("tuning_entries", &tuning_entries);
  // The tuner's counters of this process and the loaded kernel modules (tmagemm::tuning_stats).
  m.def("tuning_stats", [] {
    const TuningStats s = tuning_stats();
    nb::dict d;
    d["memo_hits"] = s.memo_hits;
    d["bucket_hits"] = s.bucket_hits;
    d["db_hits"] = s.db_hits;
    d["db_misses"] = s.db_misses;
    d["tuned"] = s.tuned;
    d["cached_only_misses"] = s.cached_only_misses;
    d["heuristic"] = s.heuristic;
    d["out_of_memory_retries"] = s.out_of_memory_retries;
    d["tunings_out_of_memory"] = s.tunings_out_of_memory;
    d["rank_tunings"] = s.rank_tunings;
    d["modules_loaded"] = s.modules_loaded;
    d["modules_kept"] = s.modules_kept;
    d["modules_unloaded"] = s.modules_unloaded;
    return d;
  });
  m.def("reset_tuning_stats", [] { reset_tuning_stats(); });
  m.def(
      "preload_model",
      [](const std::string& path, int device, bool warm) {
        Options o;  // the TMAGEMM_* environment's filters
        o.tuning = Tuning::cached_only;
        PreloadStats s;
        {
          nb::gil_scoped_release release;
          s = preload_model(path, device, o, warm);
        }
        nb::dict d;
        d["buckets"] = s.buckets;
        d["winners"] = s.winners;
        d["misses"] = s.misses;
        d["warm_runs"] = s.warm_runs;
        d["seconds"] = s.seconds;
        return d;
      },
      nb::arg("path"), nb::arg("device") = 0, nb::arg("warm") = true);
  m.def("clear_tuning", [] {
    check_cache_dir();
    const std::string path = tune::TuningDb::default_path();
    if (!std::filesystem::exists(path)) return std::size_t{0};
    tune::TuningDb db(path);
    const std::size_t n = db.size();
    db.clear();
    return n;
  });
  m.def("export_tuning", [] {
    check_cache_dir();
    return tune::TuningDb(tune::TuningDb::default_path()).export_json();
  });
  m.def("import_tuning", [](const std::string& text) {
    check_cache_dir();
    return tune::TuningDb(tune::TuningDb::default_path()).import_json(text);
  });
  // The benchmark suites of `tmagemm bench` (tools/tmagemm/suites.cpp), for python -m tmagemm.bench: one dict a
  // row; raises ValueError for an unknown name (suite_names lists them).
  m.def("suite_names", [] { return cli::suite_names(); });
  m.def("bench_suite", [](const std::string& name) {
    std::vector<cli::Suite> suites;
    try {
      suites = cli::expand_suite(name);
    } catch (const std::invalid_argument& e) {
      throw nb::value_error(e.what());
    }
    nb::list rows;
    for (const cli::Suite& s : suites)
      for (const cli::BenchShape& x : s.shapes) {
        nb::dict d;
        d["suite"] = s.name;
        d["op"] = s.op;
        d["dtype"] = s.dtype;
        d["implemented"] = s.implemented;
        d["report_bandwidth"] = s.report_bandwidth;
        d["batch"] = x.batch;
        d["m"] = x.m;
        d["n"] = x.n;
        d["k"] = x.k;
        d["layout"] = x.layout;
        d["note"] = x.note;
        d["a_pad"] = x.a_pad;
        d["a_offset"] = x.a_offset;
        d["b_pad"] = x.b_pad;
        d["out_pad"] = x.out_pad;
        d["epilogue"] = x.epilogue.empty() ? s.epilogue : x.epilogue;
        d["group_rows"] = x.group_rows;
        rows.append(d);
      }
    return rows;
  });
  m.attr("version") = TMAGEMM_VERSION_STRING;
}
