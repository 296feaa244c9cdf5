// modules_test.cpp — the loaded-module registry's rule without a GPU (fake module handles, a recording unload):
// modules used outside a tuning and winners are kept, a tuning's modules are pinned while it runs, idle modules beyond
// the cap are unloaded least recently used first, an unloaded module is reported gone and loaded again, and a process
// that tunes 1000 shapes holds at most its winners' modules plus the cap. Also under threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "jit/modules.hpp"

namespace tmagemm::jit {
namespace {

// Fake modules: handle values 1, 2, 3, ... (never dereferenced); unloads are recorded.
class FakeDriver {
 public:
  ModuleRegistry::Make make(const std::string& key) {
    return [this, key] {
      std::lock_guard<std::mutex> lock(mutex_);
      ++loads_;
      const auto id = ++next_;
      loaded_.insert(id);
      return std::pair<CUmodule, CUfunction>(reinterpret_cast<CUmodule>(id), reinterpret_cast<CUfunction>(id));
    };
  }
  ModuleRegistry::Unload unload() {
    return [this](CUmodule m, int) {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto id = reinterpret_cast<uintptr_t>(m);
      if (!loaded_.erase(id)) ++double_unloads_;
      unloaded_.insert(id);
    };
  }
  bool is_unloaded(CUfunction f) {
    std::lock_guard<std::mutex> lock(mutex_);
    return unloaded_.count(reinterpret_cast<uintptr_t>(f)) > 0;
  }
  std::size_t live() {
    std::lock_guard<std::mutex> lock(mutex_);
    return loaded_.size();
  }
  int loads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return loads_;
  }
  int double_unloads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return double_unloads_;
  }

 private:
  std::mutex mutex_;
  uintptr_t next_ = 0;
  int loads_ = 0, double_unloads_ = 0;
  std::set<uintptr_t> loaded_, unloaded_;
};

TEST(ModuleRegistry, OutsideATuningAModuleIsKept) {
  FakeDriver driver;
  ModuleRegistry r(driver.unload());
  const LoadedFunction f = r.acquire("k1", 0, driver.make("k1"));
  EXPECT_TRUE(f.module->kept);
  EXPECT_EQ(r.trim(0), 0u);
  EXPECT_TRUE(r.use(f));
  EXPECT_EQ(r.counts().kept, 1u);
  // The same (key, device) is found, not loaded again; another device is another module.
  EXPECT_EQ(r.acquire("k1", 0, driver.make("k1")).function, f.function);
  EXPECT_NE(r.acquire("k1", 1, driver.make("k1")).function, f.function);
  EXPECT_EQ(driver.loads(), 2);
}

TEST(ModuleRegistry, TuningPinsThenIdleModulesAreTrimmedLeastRecentlyUsedFirst) {
  FakeDriver driver;
  ModuleRegistry r(driver.unload());
  std::vector<LoadedFunction> fs;
  {
    ModuleUses a, b;
    {
      RecordModuleUses record(a);
      fs.push_back(r.acquire("a", 0, driver.make("a")));
      EXPECT_TRUE(r.use(fs.back()));  // a second use pins nothing more
    }
    {
      RecordModuleUses record(b);
      fs.push_back(r.acquire("b", 0, driver.make("b")));
    }
    EXPECT_EQ(a.size(), 1u);
    EXPECT_EQ(r.counts().pinned, 2u);
    EXPECT_EQ(r.trim(0), 0u);  // pinned: a tuning in progress uses them
    // a is destroyed after b (reverse order): b becomes idle first, then a
  }
  EXPECT_EQ(r.counts().idle, 2u);
  EXPECT_EQ(r.trim(1), 1u);  // b: least recently used
  EXPECT_TRUE(driver.is_unloaded(fs[1].function));
  EXPECT_FALSE(driver.is_unloaded(fs[0].function));
  EXPECT_FALSE(r.use(fs[1]));  // gone: the holder acquires it again
  const LoadedFunction again = r.acquire("b", 0, driver.make("b"));
  EXPECT_NE(again.function, fs[1].function);
  EXPECT_EQ(driver.loads(), 3);
  EXPECT_EQ(r.counts().unloaded, 1u);
  EXPECT_TRUE(again.module->kept);  // acquired outside a tuning: kept
  // An idle module used outside a tuning becomes kept, and trim leaves it.
  EXPECT_TRUE(r.use(fs[0]));
  EXPECT_EQ(r.trim(0), 0u);
  EXPECT_EQ(driver.double_unloads(), 0);
}

TEST(ModuleRegistry, WinnersAreKeptAndTheEpochMovesOnUnloads) {
  FakeDriver driver;
  ModuleRegistry r(driver.unload());
  const uint64_t epoch = r.epoch();
  LoadedFunction win, lose;
  {
    ModuleUses winner, loser;
    {
      RecordModuleUses record(winner);
      win = r.acquire("w", 0, driver.make("w"));
    }
    {
      RecordModuleUses record(loser);
      lose = r.acquire("l", 0, driver.make("l"));
    }
    winner.keep();
  }
  EXPECT_EQ(r.trim(0), 1u);
  EXPECT_TRUE(driver.is_unloaded(lose.function));
  EXPECT_FALSE(driver.is_unloaded(win.function));
  EXPECT_TRUE(r.use(win));
  EXPECT_GT(r.epoch(), epoch);
  const uint64_t after = r.epoch();
  EXPECT_EQ(r.trim(0), 0u);
  EXPECT_EQ(r.epoch(), after);  // nothing unloaded: no new epoch
}

TEST(ModuleRegistry, ThousandTuningsHoldWinnersPlusTheCap) {
  // 1000 tunings of 20 candidates each, drawn from 400 kernels; each tuning keeps one winner among its candidates (60
  // distinct winners in all). After every tuning the registry holds at most the winners' modules plus the cap, and
  // the real module count (the fake driver's) agrees with the registry's.
  FakeDriver driver;
  ModuleRegistry r(driver.unload());
  std::mt19937 rng(22);
  std::set<std::string> winners;
  for (int t = 0; t < 1000; ++t) {
    std::vector<std::string> keys;
    for (int i = 0; i < 20; ++i) keys.push_back("k" + std::to_string(rng() % 400));
    const std::string win = "k" + std::to_string(rng() % 60);
    keys.push_back(win);
    {
      std::vector<ModuleUses> uses(keys.size());
      for (std::size_t i = 0; i < keys.size(); ++i) {
        RecordModuleUses record(uses[i]);
        const LoadedFunction f = r.acquire(keys[i], 0, driver.make(keys[i]));
        ASSERT_TRUE(r.use(f));
      }
      uses.back().keep();
      winners.insert(win);
    }
    r.trim();
    const ModuleCounts c = r.counts();
    ASSERT_LE(c.loaded, winners.size() + kIdleModuleCap) << "after tuning " << t;
    ASSERT_EQ(c.kept, winners.size());
    ASSERT_EQ(c.pinned, 0u);
    ASSERT_EQ(driver.live(), c.loaded);
  }
  EXPECT_GT(r.counts().unloaded, 1000u);  // most tunings unloaded something
  EXPECT_EQ(driver.double_unloads(), 0);
}

TEST(ModuleRegistry, ThreadsNeverUseAnUnloadedModule) {
  // Tuning threads pin, use and release modules while another trims to 0 without pause; a use that answers true
  // (pinned, or kept) must find the module loaded until the scope ends.
  FakeDriver driver;
  ModuleRegistry r(driver.unload());
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread trimmer([&] {
    while (!stop) r.trim(0);
  });
  std::vector<std::thread> tuners;
  for (int t = 0; t < 4; ++t)
    tuners.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<LoadedFunction> held;
      for (int i = 0; i < 2000; ++i) {
        ModuleUses uses;
        RecordModuleUses record(uses);
        const std::string key = "k" + std::to_string(rng() % 50);
        LoadedFunction f = r.acquire(key, 0, driver.make(key));
        if (i % 7 == 0 && !held.empty()) {
          LoadedFunction& old = held[rng() % held.size()];
          if (!r.use(old)) old = r.acquire("k1", 0, driver.make("k1"));
          if (driver.is_unloaded(old.function)) ++bad;
        }
        if (!r.use(f) || driver.is_unloaded(f.function)) ++bad;
        if (i % 50 == 0) held.push_back(f);
      }
    });
  for (auto& th : tuners) th.join();
  stop = true;
  trimmer.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(driver.double_unloads(), 0);
}

}  // namespace
}  // namespace tmagemm::jit
