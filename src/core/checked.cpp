#include "core/checked.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

#include "maroon/error.h"
#include "maroon/settings.h"
#include "maroon/tensor.h"

namespace maroon {

namespace checked {

bool fits(const Shape& s, int64_t item) {
  int64_t n = item;
  for (int64_t d : s) {
    if (d < 0) return false;
    if (d != 0 && !mul(n, d, n)) return false;
  }
  return true;
}

}  // namespace checked

void check_shape(std::string_view op, const Shape& s, DType d) {
  for (int64_t x : s)
    if (x < 0) throw ShapeError("[" + std::string(op) + "] negative dimension in shape " + shape_str(s));
  if (!checked::fits(s, static_cast<int64_t>(itemsize(d))))
    throw ShapeError("[" + std::string(op) + "] shape " + shape_str(s) + " of " + std::string(dtype_name(d)) +
                     " is too large: its size in bytes does not fit in 64 bits");
}

namespace {
[[noreturn]] void overflow(std::string_view op, std::string_view what, int64_t a, char sign, int64_t b) {
  throw ShapeError("[" + std::string(op) + "] " + std::string(what) + " " + std::to_string(a) + sign +
                   std::to_string(b) + " does not fit in 64 bits");
}
}  // namespace

int64_t mul_or_throw(std::string_view op, std::string_view what, int64_t a, int64_t b) {
  int64_t r;
  if (!checked::mul(a, b, r)) overflow(op, what, a, '*', b);
  return r;
}

int64_t add_or_throw(std::string_view op, std::string_view what, int64_t a, int64_t b) {
  int64_t r;
  if (!checked::add(a, b, r)) overflow(op, what, a, '+', b);
  return r;
}

uint64_t max_alloc_bytes() {
  // Read at each call (realize() once per graph: AllocCapScope) so tests and users can change it.
  if (std::optional<std::string> text = setting(SettingId::MAROON_MAX_ALLOC_BYTES)) {
    const char* s = text->c_str();
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (!errno && !*end && s[0] != '-' && v > 0) return v;
  }
  static const uint64_t physical = [] {
    long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return UINT64_MAX;
    uint64_t total = static_cast<uint64_t>(pages);
    return total > UINT64_MAX / static_cast<uint64_t>(page) ? UINT64_MAX : total * static_cast<uint64_t>(page);
  }();
  return physical;
}

namespace {
thread_local uint64_t t_cap = 0;  // an AllocCapScope's cap; 0: none, read the setting
uint64_t current_cap() { return t_cap ? t_cap : max_alloc_bytes(); }
}  // namespace

AllocCapScope::AllocCapScope() : prev_(t_cap) { t_cap = max_alloc_bytes(); }
AllocCapScope::~AllocCapScope() { t_cap = prev_; }

bool alloc_fits(uint64_t count, uint64_t item) {
  return item == 0 || count <= current_cap() / item;
}

void check_alloc(std::string_view op, uint64_t count, uint64_t item, const std::string& what) {
  uint64_t cap = current_cap();
  if (item != 0 && count > cap / item) {
    std::string bytes = count > UINT64_MAX / item ? std::to_string(count) + "*" + std::to_string(item)
                                                   : std::to_string(count * item);
    throw MemoryError("[" + std::string(op) + "] cannot allocate " + bytes + " bytes (" + what +
                      "): over the limit of " + std::to_string(cap) + " bytes (MAROON_MAX_ALLOC_BYTES)");
  }
}

}  // namespace maroon
