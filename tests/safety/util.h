// Helpers for the safety suite: expecting an error of a type whose message names what is wrong,
// running a body on a thread with a small stack (proof that nothing recurses with graph depth),
// and setting an environment variable for one scope.
#pragma once
#include <gtest/gtest.h>
#include <pthread.h>

#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../expect_error.h"

namespace maroon::test {

// Runs `body` on a thread whose stack is `stack_bytes`, rethrowing what it throws. A recursion
// per graph node would overflow 256 KiB after a few thousand nodes.
inline void on_small_stack(const std::function<void()>& body, size_t stack_bytes = 256 << 10) {
  struct Job {
    const std::function<void()>* body;
    std::exception_ptr error;
  } job{&body, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t th;
  auto run = [](void* p) -> void* {
    auto* j = static_cast<Job*>(p);
    try {
      (*j->body)();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&th, &attr, run, &job), 0);
  pthread_join(th, nullptr);
  pthread_attr_destroy(&attr);
  if (job.error) std::rethrow_exception(job.error);
}

// Sets an environment variable until the end of the scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace maroon::test
