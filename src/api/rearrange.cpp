// einops-style rearrange (tinygrad's mixin/movement.py): unflatten, permute, flatten.
#include <algorithm>

#include "api/internal.h"
#include "maroon/tensor.h"

namespace maroon {

using api::resolve_dim;

namespace {
// One side of an einops formula: axis names, and (start, end) name ranges for "( ... )" groups.
std::pair<std::vector<std::string>, std::vector<std::pair<size_t, size_t>>> parse_side(const std::string& s) {
  std::vector<std::string> names;
  std::vector<std::pair<size_t, size_t>> groups;
  std::string cur;
  bool open = false;
  size_t start = 0;
  auto flush = [&] {
    if (!cur.empty()) names.push_back(cur);
    cur.clear();
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(') {
      flush();
      if (open) throw ShapeError("[rearrange] nested brackets in '" + s + "'");
      open = true;
      start = names.size();
    } else if (c == ')') {
      flush();
      if (!open) throw ShapeError("[rearrange] bracket mismatch in '" + s + "'");
      open = false;
      groups.push_back({start, names.size()});
    } else if (c == ' ') {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
  if (open) throw ShapeError("[rearrange] bracket mismatch in '" + s + "'");
  return {names, groups};
}
}  // namespace

Tensor Tensor::rearrange(const std::string& formula, const std::vector<std::pair<std::string, int64_t>>& sizes) const {
  size_t arrow = formula.find("->");
  if (arrow == std::string::npos || formula.find("->", arrow + 2) != std::string::npos)
    throw ShapeError("[rearrange] need exactly one '->' in '" + formula + "'");
  if (formula.find("...") != std::string::npos) throw ShapeError("[rearrange] ellipsis is not supported");
  auto [lhs, ugroups] = parse_side(formula.substr(0, arrow));
  auto [rhs, fgroups] = parse_side(formula.substr(arrow + 2));
  std::vector<std::string> sl = lhs, sr = rhs;
  std::sort(sl.begin(), sl.end());
  std::sort(sr.begin(), sr.end());
  if (sl != sr || std::adjacent_find(sl.begin(), sl.end()) != sl.end())
    throw ShapeError("[rearrange] name mismatch in '" + formula + "'");
  Tensor t = *this;
  // Left groups unflatten; each group collapses to one input axis.
  int64_t collapsed = 0;
  for (auto [s, e] : ugroups) collapsed += static_cast<int64_t>(e - s) - 1;
  if (static_cast<int64_t>(lhs.size()) - collapsed != ndim())
    throw ShapeError("[rearrange] '" + formula + "' does not match shape " + shape_str(shape()));
  for (auto [s, e] : ugroups) {
    Shape parts;
    for (size_t i = s; i < e; ++i) {
      int64_t v = -1;
      for (auto& [n, sz] : sizes)
        if (n == lhs[i]) v = sz;
      parts.push_back(v);
    }
    t = t.unflatten(static_cast<int64_t>(s), parts);
  }
  std::vector<int64_t> perm;
  for (auto& n : rhs) perm.push_back(std::find(lhs.begin(), lhs.end(), n) - lhs.begin());
  t = t.permute(perm);
  for (auto it = fgroups.rbegin(); it != fgroups.rend(); ++it) {
    auto [s, e] = *it;
    t = s < e ? t.flatten(static_cast<int64_t>(s), static_cast<int64_t>(e) - 1) : t.unsqueeze(static_cast<int64_t>(s));
  }
  return t;
}

}  // namespace maroon
