#include "maroon/backend.h"

#include <cstdlib>
#include <string>
#include <thread>

#include "maroon/error.h"

namespace maroon {

namespace {

Backend initial_backend() {
  const char* e = std::getenv("MAROON_BACKEND");
  if (e && std::string(e) == "ref") return Backend::Ref;
  return Backend::Cpu;
}

int initial_threads() {
  if (const char* e = std::getenv("MAROON_THREADS")) {
    int n = std::atoi(e);
    if (n > 0) return n;
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc ? static_cast<int>(hc) : 1;
}

Backend g_backend = initial_backend();
int g_threads = initial_threads();

}  // namespace

Backend backend() { return g_backend; }
void set_backend(Backend b) { g_backend = b; }

int num_threads() { return g_threads; }
void set_num_threads(int n) {
  if (n < 1 || n > 1024)
    throw Error("[set_num_threads] thread count must be in 1..1024, got " + std::to_string(n));
  g_threads = n;
}

}  // namespace maroon
