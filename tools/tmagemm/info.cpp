// info.cpp — `tmagemm info`: library version, cache directory, remote cache settings, CUDA toolkit used for run-time
// compilation, and the properties of one CUDA device. Exits 1 when there is no CUDA device.
#include <fmt/core.h>

#include <exception>

#include "common.hpp"
#include "jit/jit.hpp"
#include "runtime/device.hpp"
#include "runtime/remote_store.hpp"
#include "tmagemm/version.hpp"

namespace tmagemm::cli {

namespace {

std::string cuda_version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::string bytes_string(std::size_t b) {
  if (b >= (std::size_t{1} << 20)) return fmt::format("{} bytes ({:.1f} MiB)", b, b / 1048576.0);
  return fmt::format("{} bytes ({:.1f} KiB)", b, b / 1024.0);
}

int run_info(int device) {
  fmt::print("tmagemm {}\n", tmagemm::version());
  try {
    fmt::print("cache dir:       {}\n", jit::cache_dir());
  } catch (const std::exception& e) {
    fmt::print("cache dir:       unavailable ({})\n", e.what());
  }
  try {
    const runtime::remote::Settings remote = runtime::remote::settings();
    if (!remote.enabled())
      fmt::print("remote cache:    off (TMAGEMM_REMOTE_CACHE unset)\n");
    else if (!runtime::remote::built_in())
      fmt::print("remote cache:    {} set, but this build has no remote cache (built without hiredis/libcrypto)\n",
                 remote.url);
    else
      fmt::print("remote cache:    {} (timeout {} ms; {})\n", remote.url, remote.timeout_ms,
                 remote.key.empty() ? "no key: tuning winners only, kernels compile locally"
                                    : "key set: winners and signed cubins");
  } catch (const std::exception& e) {
    fmt::print("remote cache:    {}\n", e.what());
  }
  try {
    fmt::print("CUDA toolkit:    {}\n", jit::cuda_home());
  } catch (const std::exception& e) {
    fmt::print("CUDA toolkit:    not found ({})\n", e.what());
  }

  const int count = runtime::device_count();
  fmt::print("CUDA devices:    {}\n", count);
  if (count == 0) {
    fmt::print("no CUDA device\n");
    return 1;
  }
  if (device < 0 || device >= count) {
    fmt::print(stderr, "tmagemm info: --device {} does not exist ({} CUDA devices)\n", device, count);
    return 1;
  }
  const runtime::DeviceInfo& d = runtime::device_info(device);
  fmt::print("device {}:        {}\n", d.index, d.name);
  fmt::print("  compute cap.:  {}.{}\n", d.cc_major, d.cc_minor);
  fmt::print("  arch:          {}\n", d.arch());
  fmt::print("  SMs:           {}\n", d.sm_count);
  fmt::print("  smem/block:    {} (opt-in)\n", bytes_string(d.smem_per_block_optin));
  fmt::print("  smem/SM:       {}\n", bytes_string(d.smem_per_sm));
  fmt::print("  L2:            {}\n", bytes_string(d.l2_bytes));
  fmt::print("  driver:        CUDA {}\n", cuda_version_string(d.driver_version));
  fmt::print("  runtime:       CUDA {}\n", cuda_version_string(d.runtime_version));
  if (d.cc_major != 9 || d.cc_minor != 0)
    fmt::print("  note: the persistent TMA + WGMMA kernels need sm_90a (H100/H200)\n");
  return 0;
}

}  // namespace

void add_info(CLI::App& app, Action& action) {
  CLI::App* sub = app.add_subcommand("info", "Print the library version, cache dir, CUDA toolkit and device properties");
  auto device = std::make_shared<int>(0);
  sub->add_option("--device", *device, "CUDA device index")->capture_default_str();
  sub->callback([&action, device] { action = [device] { return run_info(*device); }; });
}

}  // namespace tmagemm::cli
