// explain.cpp — `tmagemm explain`: for one mm problem (shape, layouts, dtype), allocates the tensors on the
// GPU and prints what the dispatcher would consider: every choice, whether it applies and why, known tuned
// times, and the one a call would run (tmagemm::explain_mm). Runs no kernel.
#include <fmt/core.h>

#include <memory>

#include "common.hpp"
#include "runtime/device.hpp"
#include "tmagemm/ops.hpp"
#include "tmagemm/options.hpp"

namespace tmagemm::cli {

namespace {

struct ExplainOptions {
  int64_t m = 0, n = 0, k = 0;
  std::string layout = "rr";
  std::string dtype = "bf16";
  int device = 0;
};

int run_explain(const ExplainOptions& opt) {
  if (runtime::device_count() == 0) {
    fmt::print(stderr, "tmagemm explain: no CUDA device found (explain needs the tensors on a GPU)\n");
    return 1;
  }
  const Layout layout = parse_layout(opt.layout);
  const DType dtype = parse_dtype16(opt.dtype);
  cuda_check(cudaSetDevice(opt.device), "cudaSetDevice");
  const std::size_t es = itemsize(dtype);
  // At least one element each, so that empty dimensions still get valid device pointers.
  auto bytes = [&](int64_t r, int64_t c) { return static_cast<std::size_t>(std::max<int64_t>(r * c, 1)) * es; };
  DeviceBuffer a(bytes(opt.m, opt.k)), b(bytes(opt.k, opt.n)), out(bytes(opt.m, opt.n));
  const TensorView va = matrix_view(a.get(), dtype, opt.m, opt.k, layout.a_col, opt.device);
  const TensorView vb = matrix_view(b.get(), dtype, opt.k, opt.n, layout.b_col, opt.device);
  const TensorView vo = TensorView::contiguous(out.get(), dtype, {opt.m, opt.n}, opt.device);
  const Options options;  // TMAGEMM_* environment variables apply
  fmt::print("{}", tmagemm::explain_mm(va, vb, vo, options).to_string());
  return 0;
}

}  // namespace

void add_explain(CLI::App& app, Action& action) {
  CLI::App* sub = app.add_subcommand("explain", "Show which choices the dispatcher considers for an mm, and why");
  auto opt = std::make_shared<ExplainOptions>();
  sub->add_option("--m", opt->m, "Rows of A and out")->required()->check(CLI::NonNegativeNumber);
  sub->add_option("--n", opt->n, "Columns of B and out")->required()->check(CLI::NonNegativeNumber);
  sub->add_option("--k", opt->k, "Columns of A, rows of B")->required()->check(CLI::NonNegativeNumber);
  sub->add_option("--layout", opt->layout, "A then B: r = row-major, c = column-major")
      ->check(CLI::IsMember({"rr", "rc", "cr", "cc"}))
      ->capture_default_str();
  sub->add_option("--dtype", opt->dtype, "Input/output dtype")
      ->check(CLI::IsMember({"bf16", "f16"}))
      ->capture_default_str();
  sub->add_option("--device", opt->device, "CUDA device index")->capture_default_str();
  sub->callback([&action, opt] { action = [opt] { return run_explain(*opt); }; });
}

}  // namespace tmagemm::cli
