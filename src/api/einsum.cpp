// einsum (tinygrad's Tensor.einsum), in MLX's steps: parse the formula (operand subscripts, the
// ellipsis, the implicit output), take repeated-subscript diagonals, then contract: broadcast
// every operand to the sorted union of subscripts, multiply, sum the letters the output lacks.
#include <algorithm>
#include <cctype>
#include <map>

#include "maroon/tensor.h"

namespace maroon {

namespace {

// A formula, parsed: the subscripts of each operand and of the output, one letter per axis.
struct Einsum {
  std::vector<std::string> inputs;
  std::string output;
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// The output when the formula has no "->": `prefix` (the ellipsis's letters), then the letters
// that appear once, sorted.
std::string implicit_output(const std::string& lhs, const std::string& prefix) {
  std::map<char, int> count;
  for (char c : lhs)
    if (std::isalpha(static_cast<unsigned char>(c))) ++count[c];
  std::string out = prefix;
  for (auto [c, n] : count)
    if (n == 1) out += c;
  return out;
}

// Replaces each operand's "..." by letters the formula does not use, standing for its broadcast
// axes right-aligned; returns the letters of the longest (the output's "...").
std::string expand_ellipsis(std::vector<std::string>& inputs, const std::string& formula,
                            const std::vector<Tensor>& xs) {
  std::string unused;
  for (char c = 'A'; c <= 'z'; ++c)
    if (std::isalpha(static_cast<unsigned char>(c)) && formula.find(c) == std::string::npos) unused += c;
  std::vector<int64_t> n(inputs.size(), 0);
  int64_t most = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].find("...") != std::string::npos)
      n[i] = std::max<int64_t>(0, xs[i].ndim() - static_cast<int64_t>(inputs[i].size()) + 3);
    most = std::max(most, n[i]);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    size_t at = inputs[i].find("...");
    if (at != std::string::npos) inputs[i].replace(at, 3, unused.substr(most - n[i], n[i]));
  }
  return unused.substr(0, most);
}

Einsum parse(const std::string& formula_in, const std::vector<Tensor>& xs) {
  std::string f;
  for (char c : formula_in)
    if (c != ' ') f += c;
  const size_t arrow = f.find("->");
  const std::string lhs = f.substr(0, arrow);
  Einsum e{split_commas(lhs), ""};
  if (e.inputs.size() != xs.size())
    throw ShapeError("[einsum] number of operands doesn't match, expected " + std::to_string(e.inputs.size()) +
                     ", got " + std::to_string(xs.size()));
  std::string prefix;
  if (f.find("...") != std::string::npos) prefix = expand_ellipsis(e.inputs, f, xs);
  if (arrow == std::string::npos) {
    e.output = implicit_output(lhs, prefix);
  } else {
    e.output = f.substr(arrow + 2);
    size_t at = e.output.find("...");
    if (at != std::string::npos) e.output.replace(at, 3, prefix);
  }
  return e;
}

// A letter repeated within one operand takes that operand's diagonal over those axes (the
// letter moves last).
void take_diagonals(std::string& s, Tensor& x) {
  for (bool again = true; again;) {
    again = false;
    for (size_t j = 0; j < s.size() && !again; ++j) {
      size_t k = s.find(s[j], j + 1);
      if (k == std::string::npos) continue;
      if (x.shape()[k] != x.shape()[j]) throw ShapeError("[einsum] repeated subscript with sizes that differ");
      std::vector<int64_t> perm;
      for (int64_t d = 0; d < x.ndim(); ++d)
        if (d != static_cast<int64_t>(j) && d != static_cast<int64_t>(k)) perm.push_back(d);
      perm.push_back(static_cast<int64_t>(j));
      perm.push_back(static_cast<int64_t>(k));
      x = x.permute(perm).diagonal(0, -2, -1);  // the diagonal axis is now last
      char c = s[j];
      s.erase(k, 1);
      s.erase(j, 1);
      s += c;
      again = true;
    }
  }
}

// Each letter's size (size-1 axes broadcast), checking operands against their subscripts.
std::map<char, int64_t> letter_sizes(Einsum& e, std::vector<Tensor>& xs) {
  std::map<char, int64_t> sz;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    std::string& s = e.inputs[i];
    if (static_cast<int64_t>(s.size()) != xs[i].ndim())
      throw ShapeError("[einsum] subscripts '" + s + "' do not match shape " + shape_str(xs[i].shape()));
    take_diagonals(s, xs[i]);
    for (size_t j = 0; j < s.size(); ++j) {
      auto it = sz.find(s[j]);
      int64_t d = xs[i].shape()[j];
      if (it != sz.end() && it->second != d && it->second != 1 && d != 1)
        throw ShapeError("[einsum] size mismatch for subscript '" + std::string(1, s[j]) + "'");
      if (it == sz.end() || it->second == 1) sz[s[j]] = d;
    }
  }
  return sz;
}

// Every operand permuted to sorted subscripts and reshaped onto all letters (`alpha`, sorted),
// multiplied, summed over the letters the output lacks, then permuted to the output's order.
Tensor contract(const Einsum& e, const std::vector<Tensor>& xs, std::map<char, int64_t>& sz) {
  std::string alpha;
  for (auto& [c, n] : sz) alpha += c;  // sorted
  std::vector<Tensor> ys;
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::string& s = e.inputs[i];
    if (s.empty()) {
      ys.push_back(xs[i]);
      continue;
    }
    std::string sorted_s = s;
    std::sort(sorted_s.begin(), sorted_s.end());
    std::vector<int64_t> perm;
    for (char c : sorted_s) perm.push_back(static_cast<int64_t>(s.find(c)));
    Shape rs;
    for (char c : alpha) rs.push_back(s.find(c) != std::string::npos ? sz[c] : 1);
    ys.push_back(xs[i].permute(perm).reshape(rs));
  }
  Tensor prod = ys[0];
  for (size_t i = 1; i < ys.size(); ++i) prod = prod.mul(ys[i]);
  const std::string& rhs = e.output;
  std::vector<int64_t> red;
  for (size_t i = 0; i < alpha.size(); ++i)
    if (rhs.find(alpha[i]) == std::string::npos) red.push_back(static_cast<int64_t>(i));
  Tensor r = red.empty() ? prod.sum(Axis(std::vector<int64_t>{}), false) : prod.sum(Axis(red));
  // The remaining axes are in sorted order; permute to rhs: argsort(argsort(rhs)).
  std::vector<int64_t> a(rhs.size()), inv(rhs.size());
  for (size_t i = 0; i < rhs.size(); ++i) a[i] = static_cast<int64_t>(i);
  std::sort(a.begin(), a.end(), [&](int64_t p, int64_t q) { return rhs[p] < rhs[q]; });
  for (size_t i = 0; i < a.size(); ++i) inv[a[i]] = static_cast<int64_t>(i);
  return rhs.empty() ? r : r.permute(inv);
}

}  // namespace

Tensor Tensor::einsum(const std::string& formula, const std::vector<Tensor>& operands) {
  std::vector<Tensor> xs = operands;
  Einsum e = parse(formula, xs);
  std::map<char, int64_t> sz = letter_sizes(e, xs);
  return contract(e, xs, sz);
}

}  // namespace maroon
