// ops.cpp — the public ops: check the options and validate the views (src/problem), then the one dispatch point
// (src/dispatch). Only tmagemm::Error leaves them: every body runs inside public_call, which turns any other
// exception into an Error with the most honest code.
#include <fmt/format.h>

#include <exception>
#include <new>
#include <optional>
#include <regex>

#include "dispatch/dispatch.hpp"
#include "problem/problem.hpp"
#include "tmagemm/error.hpp"
#include "tmagemm/ops.hpp"

namespace tmagemm {

namespace {

// Thrown (as a copy, which shares the message and allocates nothing) when even the message of the out-of-memory
// error cannot be allocated.
const Error kOutOfHostMemory(ErrorCode::cuda_error, "out of memory (host allocation failed)");

[[noreturn]] void throw_out_of_host_memory(const char* function) {
  std::optional<Error> error;
  try {
    error.emplace(ErrorCode::cuda_error, fmt::format("{}: out of memory (host allocation failed)", function));
  } catch (...) {
    throw kOutOfHostMemory;
  }
  throw *error;
}

// Runs the body of the public function `function` ("mm", "explain_bmm", ...) and returns its result. A
// tmagemm::Error passes through unchanged; std::bad_alloc becomes Error(cuda_error, "... out of memory (host
// allocation failed)"); std::regex_error (only a choice_regex is ever compiled) becomes Error(invalid_argument)
// naming choice_regex; anything else is a bug of the library and becomes Error(cuda_error, "internal error: ...").
template <class Body>
auto public_call(const char* function, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw_out_of_host_memory(function);
  } catch (const std::regex_error& e) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: Options::choice_regex is not a valid ECMAScript regular expression ({})", function,
                            e.what()));
  } catch (const std::exception& e) {
    throw Error(ErrorCode::cuda_error, fmt::format("internal error: {}: {}", function, e.what()));
  } catch (...) {
    throw Error(ErrorCode::cuda_error,
                fmt::format("internal error: {}: an exception that is not a std::exception", function));
  }
}

}  // namespace

void mm(const TensorView& a, const TensorView& b, const TensorView& out, const Options& options) {
  public_call("mm", [&] {
    validate_options(options);
    dispatch::run(make_mm_problem(a, b, out), options);
  });
}

void addmm(const TensorView& bias, const TensorView& a, const TensorView& b, const TensorView& out, float beta,
           float alpha, Activation act, const Options& options) {
  public_call("addmm", [&] {
    validate_options(options);
    dispatch::run(make_addmm_problem(bias, a, b, out, beta, alpha, act), options);
  });
}

void scaled_mm(const TensorView& a, const TensorView& b, const TensorView& scale_a, const TensorView& scale_b,
               const TensorView* bias, const TensorView& out, bool use_fast_accum, const Options& options) {
  public_call("scaled_mm", [&] {
    validate_options(options);
    dispatch::run(make_scaled_mm_problem(a, b, scale_a, scale_b, bias, out, use_fast_accum), options);
  });
}

void bmm(const TensorView& a, const TensorView& b, const TensorView& out, const Options& options) {
  public_call("bmm", [&] {
    validate_options(options);
    dispatch::run(make_bmm_problem(a, b, out), options);
  });
}

void grouped_mm(const TensorView& a, const TensorView& b, const TensorView& offs, const TensorView& out,
                const Options& options) {
  public_call("grouped_mm", [&] {
    validate_options(options);
    dispatch::run(make_grouped_mm_problem(a, b, offs, out), options);
  });
}

Explanation explain_grouped_mm(const TensorView& a, const TensorView& b, const TensorView& offs, const TensorView& out,
                               const Options& options) {
  return public_call("explain_grouped_mm", [&] {
    validate_options(options);
    return dispatch::explain(make_grouped_mm_problem(a, b, offs, out), options);
  });
}

Explanation explain_mm(const TensorView& a, const TensorView& b, const TensorView& out, const Options& options) {
  return public_call("explain_mm", [&] {
    validate_options(options);
    return dispatch::explain(make_mm_problem(a, b, out), options);
  });
}

Explanation explain_addmm(const TensorView& bias, const TensorView& a, const TensorView& b, const TensorView& out,
                          float beta, float alpha, Activation act, const Options& options) {
  return public_call("explain_addmm", [&] {
    validate_options(options);
    return dispatch::explain(make_addmm_problem(bias, a, b, out, beta, alpha, act), options);
  });
}

Explanation explain_bmm(const TensorView& a, const TensorView& b, const TensorView& out, const Options& options) {
  return public_call("explain_bmm", [&] {
    validate_options(options);
    return dispatch::explain(make_bmm_problem(a, b, out), options);
  });
}

Explanation explain_scaled_mm(const TensorView& a, const TensorView& b, const TensorView& scale_a,
                              const TensorView& scale_b, const TensorView* bias, const TensorView& out,
                              bool use_fast_accum, const Options& options) {
  return public_call("explain_scaled_mm", [&] {
    validate_options(options);
    return dispatch::explain(make_scaled_mm_problem(a, b, scale_a, scale_b, bias, out, use_fast_accum), options);
  });
}

std::string Explanation::to_string() const {
  return public_call("Explanation::to_string", [&] {
    std::string s = fmt::format("explain {}\n", problem);
    for (const auto& c : choices) {
      s += fmt::format("  {} {:<40} {:<16} ", c.selected ? "*" : " ", c.name, c.backend);
      if (c.applicable)
        s += c.tuned_ms ? fmt::format("applicable, tuned {:.4f} ms", *c.tuned_ms) : std::string("applicable");
      else
        s += "not applicable: " + c.reason;
      s += "\n";
    }
    return s;
  });
}

}  // namespace tmagemm
