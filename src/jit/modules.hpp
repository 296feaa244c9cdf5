// modules.hpp — the registry of loaded kernel modules and the rule that bounds it. Every kernel jit::load or
// jit::acquire loads is one CUmodule on one device (GPU memory for its code, host memory for the driver's copy).
// A tuning loads every candidate's kernel, and most are nobody's winner; the registry unloads those so that a process
// that tunes many shapes holds its winners' modules plus a fixed number of others.
//
// The rule. A module is
//   kept   once it is used outside a tuning (a dispatch launch, or a jit::load caller holding a raw CUfunction) or
//          its choice won a tuning (ModuleUses::keep): never unloaded;
//   pinned while a tuning in progress has used it (each use inside a RecordModuleUses scope pins it into that scope's
//          ModuleUses until the ModuleUses is destroyed): never unloaded meanwhile;
//   idle   otherwise: at most kIdleModuleCap idle modules stay loaded (trim, after each tuning), the least recently
//          used beyond that are unloaded. A tuning that needs one again loads it again (from the disk cache).
// A caller that keeps a LoadedFunction (KernelCache) asks use() before each launch: use() pins or keeps the module,
// or answers false when it was unloaded since (then acquire again). The check is one atomic load on a kept module.
#pragma once
#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tmagemm::jit {

// Idle modules (neither kept nor pinned) the registry holds at most: enough for the candidates of the next tuning of
// the same dtypes and layouts to be found loaded (a tuning times ~10-25 candidates), few enough to bound memory.
inline constexpr std::size_t kIdleModuleCap = 32;

class ModuleRegistry;

// One loaded module (one kernel on one device).
struct ModuleEntry {
  ModuleRegistry* owner = nullptr;
  std::string key;  // the kernel's cache key
  int device = 0;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::atomic<bool> kept{false};
  std::mutex smem_mutex;             // guards max_dynamic_smem
  std::size_t max_dynamic_smem = 0;  // the largest CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES set
  // Guarded by the owner's mutex:
  bool loaded = true;
  int pins = 0;
  uint64_t last_use = 0;  // the owner's tick when it last became unpinned
};

// A function and the module that holds it.
struct LoadedFunction {
  CUfunction function = nullptr;
  std::shared_ptr<ModuleEntry> module;
};

// The modules one candidate of a tuning has used (each pinned once). Destroying it unpins them; keep() first keeps
// them for good (the winner's).
class ModuleUses {
 public:
  ModuleUses() = default;
  ~ModuleUses();
  ModuleUses(const ModuleUses&) = delete;
  ModuleUses& operator=(const ModuleUses&) = delete;
  ModuleUses(ModuleUses&& other) noexcept : entries_(std::move(other.entries_)) {}
  ModuleUses& operator=(ModuleUses&&) = delete;

  void keep();
  std::size_t size() const { return entries_.size(); }

 private:
  friend class ModuleRegistry;
  std::vector<std::shared_ptr<ModuleEntry>> entries_;
};

// While alive, uses of modules on this thread pin them into `uses` (scopes nest; the innermost wins).
class RecordModuleUses {
 public:
  explicit RecordModuleUses(ModuleUses& uses);
  ~RecordModuleUses();
  RecordModuleUses(const RecordModuleUses&) = delete;
  RecordModuleUses& operator=(const RecordModuleUses&) = delete;

 private:
  ModuleUses* previous_;
};

struct ModuleCounts {
  std::size_t loaded = 0, kept = 0, pinned = 0, idle = 0;
  std::size_t unloaded = 0;  // modules unloaded by trim since the registry was made
};

// The registry proper; the process has one (jit::module_registry(), load.cpp), tests make their own with fake
// modules. Thread-safe.
class ModuleRegistry {
 public:
  using Make = std::function<std::pair<CUmodule, CUfunction>()>;  // compiles and loads; throws on failure
  using Unload = std::function<void(CUmodule, int device)>;
  explicit ModuleRegistry(Unload unload) : unload_(std::move(unload)) {}
  ModuleRegistry(const ModuleRegistry&) = delete;
  ModuleRegistry& operator=(const ModuleRegistry&) = delete;

  // The module of (key, device), loaded by `make` (outside the lock) when it is not loaded; a use (see use()).
  LoadedFunction acquire(const std::string& key, int device, const Make& make);
  // A use before a launch: inside a RecordModuleUses scope pins the module into the scope's ModuleUses (once), outside
  // keeps it. False (nothing done) when the module has been unloaded since it was acquired.
  bool use(const LoadedFunction& f);
  // Keeps the module for good.
  void keep(const LoadedFunction& f);
  // Unloads the least recently used idle modules until at most `cap` are idle; returns how many it unloaded.
  std::size_t trim(std::size_t cap = kIdleModuleCap);
  ModuleCounts counts();
  // Bumped by every trim that unloads something: caches keyed by CUfunction values drop their entries when it
  // changes (a new module may get the handle value of an unloaded one).
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

 private:
  friend class ModuleUses;
  bool use_locked(const std::shared_ptr<ModuleEntry>& e);  // mutex_ held
  void unpin(const std::vector<std::shared_ptr<ModuleEntry>>& entries);

  std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::shared_ptr<ModuleEntry>> entries_;
  uint64_t tick_ = 0;
  std::size_t unloaded_ = 0;
  std::atomic<uint64_t> epoch_{0};
  Unload unload_;
};

// The process's registry (leaked: used until exit) and its convenience forms.
ModuleRegistry& module_registry();
inline bool use(const LoadedFunction& f) { return f.module->owner->use(f); }
inline void trim_idle_modules(std::size_t cap = kIdleModuleCap) { module_registry().trim(cap); }
inline ModuleCounts module_counts() { return module_registry().counts(); }
inline uint64_t unload_epoch() { return module_registry().epoch(); }

}  // namespace tmagemm::jit
