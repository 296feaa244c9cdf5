// modules.cpp — the loaded-module registry: kept, pinned and idle modules, and the trim of idle ones (see
// modules.hpp). The process's registry unloads through the driver entry point (load.cpp makes it).
#include "jit/modules.hpp"

#include <algorithm>

namespace tmagemm::jit {

namespace {
thread_local ModuleUses* t_scope = nullptr;  // the innermost RecordModuleUses of this thread
}  // namespace

ModuleUses::~ModuleUses() {
  // Entries of one ModuleUses may come from several registries only in tests; unpin each with its own.
  while (!entries_.empty()) {
    ModuleRegistry* owner = entries_.front()->owner;
    std::vector<std::shared_ptr<ModuleEntry>> mine;
    std::erase_if(entries_, [&](const std::shared_ptr<ModuleEntry>& e) {
      if (e->owner != owner) return false;
      mine.push_back(e);
      return true;
    });
    owner->unpin(mine);
  }
}

void ModuleUses::keep() {
  for (const auto& e : entries_) e->kept.store(true, std::memory_order_release);
}

RecordModuleUses::RecordModuleUses(ModuleUses& uses) : previous_(t_scope) { t_scope = &uses; }
RecordModuleUses::~RecordModuleUses() { t_scope = previous_; }

bool ModuleRegistry::use_locked(const std::shared_ptr<ModuleEntry>& e) {
  if (!e->loaded) return false;
  if (e->kept.load(std::memory_order_relaxed)) return true;
  if (ModuleUses* scope = t_scope) {
    if (std::find(scope->entries_.begin(), scope->entries_.end(), e) == scope->entries_.end()) {
      ++e->pins;
      scope->entries_.push_back(e);
    }
    return true;
  }
  e->kept.store(true, std::memory_order_release);
  return true;
}

bool ModuleRegistry::use(const LoadedFunction& f) {
  ModuleEntry& e = *f.module;
  // Kept modules are never unloaded: no lock. A module this thread's tuning scope pinned stays loaded too.
  if (e.kept.load(std::memory_order_acquire)) return true;
  if (ModuleUses* scope = t_scope)
    if (std::find(scope->entries_.begin(), scope->entries_.end(), f.module) != scope->entries_.end()) return true;
  std::lock_guard<std::mutex> lock(mutex_);
  return use_locked(f.module);
}

void ModuleRegistry::keep(const LoadedFunction& f) {
  std::lock_guard<std::mutex> lock(mutex_);
  f.module->kept.store(true, std::memory_order_release);
}

LoadedFunction ModuleRegistry::acquire(const std::string& key, int device, const Make& make) {
  const std::pair<std::string, int> id(key, device);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = entries_.find(id); it != entries_.end() && use_locked(it->second))
      return {it->second->function, it->second};
  }
  // Not loaded: compile and load without the lock (compiles take seconds; other kernels must not wait). Two threads
  // racing here both load; the loser unloads its module.
  const auto [module, function] = make();
  auto fresh = std::make_shared<ModuleEntry>();
  fresh->owner = this;
  fresh->key = key;
  fresh->device = device;
  fresh->module = module;
  fresh->function = function;
  std::shared_ptr<ModuleEntry> winner;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto [it, inserted] = entries_.emplace(id, fresh);  // (an unloaded module is no longer in entries_)
    winner = it->second;
    use_locked(winner);
    if (inserted) fresh = nullptr;
  }
  if (fresh) unload_(fresh->module, device);
  return {winner->function, winner};
}

void ModuleRegistry::unpin(const std::vector<std::shared_ptr<ModuleEntry>>& entries) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++tick_;
  for (const auto& e : entries) {
    --e->pins;
    e->last_use = tick_;
  }
}

std::size_t ModuleRegistry::trim(std::size_t cap) {
  std::vector<std::shared_ptr<ModuleEntry>> victims;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::shared_ptr<ModuleEntry>> idle;
    for (const auto& [id, e] : entries_)
      if (!e->kept.load(std::memory_order_relaxed) && e->pins == 0) idle.push_back(e);
    if (idle.size() <= cap) return 0;
    std::sort(idle.begin(), idle.end(), [](const auto& x, const auto& y) { return x->last_use < y->last_use; });
    victims.assign(idle.begin(), idle.end() - static_cast<std::ptrdiff_t>(cap));
    for (const auto& e : victims) {
      e->loaded = false;
      entries_.erase({e->key, e->device});
    }
    unloaded_ += victims.size();
    epoch_.fetch_add(1, std::memory_order_acq_rel);
  }
  // Nothing can launch them now: every holder of a LoadedFunction asks use() first, which answers false.
  for (const auto& e : victims) unload_(e->module, e->device);
  return victims.size();
}

ModuleCounts ModuleRegistry::counts() {
  std::lock_guard<std::mutex> lock(mutex_);
  ModuleCounts c;
  c.loaded = entries_.size();
  for (const auto& [id, e] : entries_) {
    if (e->kept.load(std::memory_order_relaxed))
      ++c.kept;
    else if (e->pins > 0)
      ++c.pinned;
    else
      ++c.idle;
  }
  c.unloaded = unloaded_;
  return c;
}

}  // namespace tmagemm::jit
