// Environment variables set for a scope (the engine's NDCONV_* switches in the tests): each is
// restored when the scope ends, also when an ASSERT leaves it early, so no setting leaks into the
// tests that run after it.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace ndconv::test {

/// Sets an environment variable for a scope and restores the previous value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      had_old_ = true;
      old_ = old;
    }
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_old_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  bool had_old_ = false;
  std::string old_;
};

/// Several variables set for a scope, chosen as the test goes (`set` for each); restored in the
/// reverse order, so a variable set twice gets its value from before the first.
class ScopedEnvs {
 public:
  ScopedEnvs() = default;
  ScopedEnvs(const ScopedEnvs&) = delete;
  ScopedEnvs& operator=(const ScopedEnvs&) = delete;
  ~ScopedEnvs() {
    while (!settings_.empty())
      settings_.pop_back();
  }
  void set(const char* name, const char* value) {
    settings_.push_back(std::make_unique<ScopedEnv>(name, value));
  }

 private:
  std::vector<std::unique_ptr<ScopedEnv>> settings_;
};

}  // namespace ndconv::test
