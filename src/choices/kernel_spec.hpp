// kernel_spec.hpp — what the backends with kernels of their own (persistent_tma, skinny, fallback) share on the
// host: the KernelSpec of one config (its fields rendered as a config struct of `static constexpr` members, with
// the EpilogueSpec's `using Epi = ...`, as the kernel template's argument), the loaded-kernel cache, and the launch
// (cuLaunchKernelEx with grid, block, dynamic shared memory and cluster size, through runtime::launch_kernel, whose
// test observer sees every launch).
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "choices/epilogue_params.hpp"
#include "jit/jit.hpp"

namespace tmagemm::choices {

// One `static constexpr` member of a kernel's config struct.
struct ConfigField {
  const char* name;      // e.g. "kBM"
  int value;
  bool boolean = false;  // declared `bool` (rendered true / false) instead of `int`
};
inline ConfigField int_field(const char* name, int value) { return {name, value, false}; }
inline ConfigField bool_field(const char* name, bool value) { return {name, value ? 1 : 0, true}; }

// A kernel's config struct: one `static constexpr` declaration per line, the fields of a line all of one type
// (all int or all bool).
struct KernelConfig {
  const char* struct_name;  // e.g. "TmagemmTmaConfig"
  std::vector<std::vector<ConfigField>> lines;
};

// A static_assert compiled with the kernel: the kernel's own count of dynamic shared memory must equal the host's.
struct SmemCheck {
  const char* host;    // what the host launches with, e.g. "SkinnyConfig::smem_bytes" (named in a comment)
  const char* device;  // the kernel's constexpr count, e.g. "tmagemm::kernels::skinny_smem_bytes"
  std::size_t bytes;   // the host's count for this config
};

// The config struct's source: "struct <name> {\n", one line per declaration, the epilogue's `using Epi`, "};\n", then
// the shared-memory check when there is one.
std::string render_config(const KernelConfig& config, const EpilogueSpec& epi, const SmemCheck* smem = nullptr);

// The KernelSpec of `kernel_template`<config.struct_name> from the embedded header `header`, with render_config as
// its extra source.
jit::KernelSpec config_kernel_spec(std::string name, const char* header, const char* kernel_template,
                                   const KernelConfig& config, const EpilogueSpec& epi,
                                   const SmemCheck* smem = nullptr);

// One backend's loaded kernels by a cheap key of its own (config address, dtypes, layouts, device, epilogue code): a
// repeated launch renders and hashes no KernelSpec. Each thread keeps a copy of the entries it has used and reads it
// without the lock. A module may be unloaded once no tuning uses it and it has never run outside one (jit/modules.hpp):
// every get() asks jit::use() (one atomic load for a kept module), which pins or keeps the module for the launch that
// follows, or says it is gone, and then the kernel is acquired again. Use as a function-local static.
template <class Key>
class KernelCache {
 public:
  template <class MakeSpec>
  CUfunction get(const Key& key, int device, std::size_t dynamic_smem_bytes, MakeSpec&& make_spec) {
    thread_local std::map<std::pair<const KernelCache*, Key>, jit::LoadedFunction> seen;
    const std::pair<const KernelCache*, Key> local{this, key};
    if (auto it = seen.find(local); it != seen.end()) {
      if (jit::use(it->second)) return it->second.function;
      seen.erase(it);  // unloaded since: acquire it again
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = loaded_.find(key); it != loaded_.end()) {
        if (jit::use(it->second)) {
          seen.insert_or_assign(local, it->second);
          return it->second.function;
        }
        loaded_.erase(it);
      }
    }
    const jit::LoadedFunction f = jit::acquire(make_spec(), device, dynamic_smem_bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    loaded_.insert_or_assign(key, f);
    seen.insert_or_assign(local, f);
    return f.function;
  }

 private:
  std::mutex mutex_;
  std::map<Key, jit::LoadedFunction> loaded_;
};

// One launch of a loaded kernel: block (x only), dynamic shared memory, a cluster of `cluster` CTAs along x when it is
// above 1 (the cluster-dimension attribute), and the grid, which may be set after the occupancy question below.
class KernelLaunch {
 public:
  KernelLaunch(CUfunction fn, cudaStream_t stream, unsigned threads, std::size_t smem_bytes, unsigned cluster = 1);
  KernelLaunch(const KernelLaunch&) = delete;
  KernelLaunch& operator=(const KernelLaunch&) = delete;

  void set_grid(int64_t x, int64_t y = 1, int64_t z = 1);
  // Programmatic stream serialization (PDL) when runtime::programmatic_launch(): for kernels that wait for the
  // previous kernel (ptx::grid_dependency_wait) before their first global read.
  void set_programmatic();
  // How many clusters of this launch (with the grid set now) fit on the device at once: cuOccupancyMaxActiveClusters,
  // asked once per (kernel, grid, block, shared memory, cluster) and thread; `what` names it in an error.
  int max_active_clusters(const char* what) const;
  const CUlaunchConfig& config() const { return cfg_; }
  // Enqueues the kernel (runtime::launch_kernel: the launch observer sees the configuration first); throws
  // Error(cuda_error) naming `what` on failure.
  void launch(void** params, const char* what) const;

 private:
  CUfunction fn_;
  CUlaunchAttribute attr_[2];
  CUlaunchConfig cfg_{};
};

// Profiling builds (TMAGEMM_TRACE=<file>, read once per process; "" when unset): the kernels of persistent_tma and
// skinny are built with kTrace and record a timeline per CTA. launch_traced launches such a build with a zeroed
// timeline buffer of `slots` 64-bit values per CTA (the kernel's `trace` argument, *trace in params), waits, and
// rewrites the file: "# " + title, the CSV header "cta," + columns, then one row per CTA of its first `columns_used`
// slots.
const std::string& trace_path();
void launch_traced(const KernelLaunch& launch, void** params, unsigned long long** trace, int slots, int columns_used,
                   const std::string& title, const std::string& columns, const char* what);

}  // namespace tmagemm::choices
