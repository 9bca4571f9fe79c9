#include "maroon/backend.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "maroon/error.h"
#include "maroon/settings.h"

namespace maroon {

namespace {

// The environment is read during static initialisation, where throwing would abort the
// program: a bad value is reported and the default kept (no setting changes a bit).
Backend initial_backend() {
  std::optional<std::string> e = setting(SettingId::MAROON_BACKEND);
  if (!e || *e == "cpu") return Backend::Cpu;
  if (*e == "ref") return Backend::Ref;
  std::fprintf(stderr, "maroon: ignoring MAROON_BACKEND=%s (cpu or ref)\n", e->c_str());
  return Backend::Cpu;
}

int initial_threads() {
  if (std::optional<std::string> e = setting(SettingId::MAROON_THREADS)) {
    char* end = nullptr;
    long n = std::strtol(e->c_str(), &end, 10);
    if (end != e->c_str() && *end == '\0' && n >= 1 && n <= 1024) return static_cast<int>(n);
    std::fprintf(stderr, "maroon: ignoring MAROON_THREADS=%s (a count in 1..1024)\n", e->c_str());
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc ? static_cast<int>(hc) : 1;
}

// Atomics: settings may change on one thread while another's realize reads them (Python
// releases the GIL during realize). A change applies from the next parallel region on.
std::atomic<Backend> g_backend{initial_backend()};
std::atomic<int> g_threads{initial_threads()};

}  // namespace

Backend backend() { return g_backend.load(std::memory_order_relaxed); }
void set_backend(Backend b) { g_backend.store(b, std::memory_order_relaxed); }
void set_backend(const std::string& name) {
  if (name != "ref" && name != "cpu")
    throw ShapeError("[set_backend] unknown backend '" + name + "' (ref, cpu)");
  set_backend(name == "ref" ? Backend::Ref : Backend::Cpu);
}
std::string backend_name() { return backend() == Backend::Ref ? "ref" : "cpu"; }

int num_threads() { return g_threads.load(std::memory_order_relaxed); }
void set_num_threads(int n) {
  if (n < 1 || n > 1024)
    throw ShapeError("[set_num_threads] thread count must be in 1..1024, got " + std::to_string(n));
  g_threads.store(n, std::memory_order_relaxed);
}

}  // namespace maroon
