// Lagoon's own tests, as vectors: tests/data/lagoon/vectors.jsonl, extracted from
// urbit/numerics lagoon/desk/tests/lib/*.hoon by tools/lagoon/extract_vectors.py. Each vector is
// a Lagoon arm applied to literal rays (possibly nested calls) with the result the Hoon test
// asserts; every one runs through the C ABI and must match bit for bit (or fail where Lagoon's
// test expects a crash). The summary by arm and kind is printed.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>

#include "maroon/settings.h"
#include "util.h"

using namespace lagoon_test;

namespace {

struct Value {
  enum class T { Ray, Atom, Fail } t = T::Fail;
  ORay ray;
  std::vector<uint8_t> atom;
  std::string error;
};

uint32_t kind_code(const std::string& k) {
  if (k == "i754") return MAROON_LAGOON_I754;
  if (k == "uint") return MAROON_LAGOON_UINT;
  if (k == "int2") return MAROON_LAGOON_INT2;
  throw std::runtime_error("kind " + k);
}

struct MetaArg {
  std::vector<uint64_t> shape;
  maroon_lagoon_meta m;
};

std::unique_ptr<MetaArg> meta_of(const Json& j) {
  auto out = std::make_unique<MetaArg>();
  for (auto& d : j["shape"].arr) out->shape.push_back(uint64_t(d.num));
  out->m = maroon_lagoon_meta{out->shape.data(), uint32_t(out->shape.size()), uint32_t(j["bloq"].num),
                              kind_code(j["kind"].str)};
  return out;
}

Value eval(const Json& call);

Value ray_arg(const Json& a) {
  if (a.has("call")) return eval(a["call"]);
  Value v;
  v.t = Value::T::Ray;
  const Json& r = a["ray"];
  for (auto& d : r["shape"].arr) v.ray.shape.push_back(uint64_t(d.num));
  v.ray.bloq = uint32_t(r["bloq"].num);
  v.ray.kind = kind_code(r["kind"].str);
  v.ray.data = from_hex(r["data"].str);
  return v;
}

int rnd_of(const Json& call) { return call["rnd"].str[0]; }

Value finish(int rc, maroon_lagoon_result& res, const maroon_lagoon_error& err) {
  Value v;
  if (rc != 0) {
    v.t = Value::T::Fail;
    v.error = err.message;
    return v;
  }
  v.t = Value::T::Ray;
  v.ray = take(res);
  return v;
}

Value eval(const Json& call) {
  const std::string arm = call["arm"].str;
  const auto& args = call["args"].arr;
  const int rnd = rnd_of(call);
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  // Arguments that are themselves calls: a failure inside propagates (Lagoon crashes there).
  std::vector<Value> rays;
  for (auto& a : args)
    if (a.has("ray") || a.has("call")) {
      rays.push_back(ray_arg(a));
      if (rays.back().t == Value::T::Fail) return rays.back();
    }
  auto R = [&](size_t i) { return rays.at(i).ray.c(); };
  auto atom_arg = [&](size_t i) { return from_hex(args.at(i)["atom"].str); };
  auto list_arg = [&](size_t i) {
    std::vector<uint64_t> v;
    for (auto& x : args.at(i)["list"].arr) v.push_back(uint64_t(x.num));
    return v;
  };
  using BinFn = int (*)(const maroon_lagoon_ray*, const maroon_lagoon_ray*, int, maroon_lagoon_result*,
                        maroon_lagoon_error*);
  static const std::map<std::string, BinFn> binary = {
      {"add", maroon_lagoon_add}, {"sub", maroon_lagoon_sub}, {"mul", maroon_lagoon_mul},
      {"div", maroon_lagoon_div}, {"mod", maroon_lagoon_mod}, {"gth", maroon_lagoon_gth},
      {"gte", maroon_lagoon_gte}, {"lth", maroon_lagoon_lth}, {"lte", maroon_lagoon_lte},
      {"equ", maroon_lagoon_equ}, {"neq", maroon_lagoon_neq}, {"dot", maroon_lagoon_dot},
      {"mmul", maroon_lagoon_mmul}};
  using ScalFn = int (*)(const maroon_lagoon_ray*, maroon_lagoon_atom, int, maroon_lagoon_result*,
                         maroon_lagoon_error*);
  static const std::map<std::string, ScalFn> scalar = {
      {"add-scalar", maroon_lagoon_add_scalar}, {"sub-scalar", maroon_lagoon_sub_scalar},
      {"mul-scalar", maroon_lagoon_mul_scalar}, {"div-scalar", maroon_lagoon_div_scalar},
      {"mod-scalar", maroon_lagoon_mod_scalar}};
  using UnFn = int (*)(const maroon_lagoon_ray*, int, maroon_lagoon_result*, maroon_lagoon_error*);
  static const std::map<std::string, UnFn> unary = {
      {"abs", maroon_lagoon_abs},   {"cumsum", maroon_lagoon_cumsum},       {"prod", maroon_lagoon_prod},
      {"max", maroon_lagoon_max},   {"min", maroon_lagoon_min},             {"transpose", maroon_lagoon_transpose},
      {"diag", maroon_lagoon_diag}, {"trace", maroon_lagoon_trace}};
  using MetaFn = int (*)(const maroon_lagoon_meta*, maroon_lagoon_result*, maroon_lagoon_error*);
  static const std::map<std::string, MetaFn> builders = {
      {"zeros", maroon_lagoon_zeros}, {"ones", maroon_lagoon_ones}, {"eye", maroon_lagoon_eye},
      {"iota", maroon_lagoon_iota},   {"magic", maroon_lagoon_magic}};

  if (auto it = binary.find(arm); it != binary.end()) {
    auto a = R(0), b = R(1);
    return finish(it->second(&a, &b, rnd, &res, &err), res, err);
  }
  if (auto it = scalar.find(arm); it != scalar.end()) {
    auto a = R(0);
    auto n = atom_arg(1);
    return finish(it->second(&a, atom(n), rnd, &res, &err), res, err);
  }
  if (auto it = unary.find(arm); it != unary.end()) {
    auto a = R(0);
    return finish(it->second(&a, rnd, &res, &err), res, err);
  }
  if (auto it = builders.find(arm); it != builders.end()) {
    auto m = meta_of(args.at(0)["meta"]);
    return finish(it->second(&m->m, &res, &err), res, err);
  }
  Value v;
  if (arm == "fill") {
    auto m = meta_of(args.at(0)["meta"]);
    auto x = atom_arg(1);
    return finish(maroon_lagoon_fill(&m->m, atom(x), &res, &err), res, err);
  }
  if (arm == "linspace" || arm == "range") {
    auto m = meta_of(args.at(0)["meta"]);
    auto lo = from_hex(args.at(1)["pair"].arr.at(0).str), hi = from_hex(args.at(1)["pair"].arr.at(1).str);
    auto x = atom_arg(2);
    if (arm == "linspace") {
      uint64_t n = 0;
      std::memcpy(&n, x.data(), std::min<size_t>(x.size(), 8));
      return finish(maroon_lagoon_linspace(&m->m, atom(lo), atom(hi), n, rnd, &res, &err), res, err);
    }
    return finish(maroon_lagoon_range(&m->m, atom(lo), atom(hi), atom(x), rnd, 0, &res, &err), res, err);
  }
  if (arm == "spac") {
    auto a = R(0);
    return finish(maroon_lagoon_spac(&a, &res, &err), res, err);
  }
  if (arm == "set-item") {
    auto a = R(0);
    auto idx = list_arg(1);
    auto val = atom_arg(2);
    return finish(maroon_lagoon_set_item(&a, idx.data(), uint32_t(idx.size()), atom(val), &res, &err), res, err);
  }
  if (arm == "get-row") {
    auto a = R(0);
    auto idx = list_arg(1);
    return finish(maroon_lagoon_get_row(&a, idx.data(), uint32_t(idx.size()), &res, &err), res, err);
  }
  if (arm == "set-row") {
    auto a = R(0), row = R(1);
    auto idx = list_arg(1);
    return finish(maroon_lagoon_set_row(&a, idx.data(), uint32_t(idx.size()), &row, &res, &err), res, err);
  }
  if (arm == "pow-n") {
    auto a = R(0);
    auto x = atom_arg(1);
    uint64_t n = 0;
    std::memcpy(&n, x.data(), std::min<size_t>(x.size(), 8));
    return finish(maroon_lagoon_pow_n(&a, n, rnd, &res, &err), res, err);
  }
  // Arms that return atoms.
  v.t = Value::T::Atom;
  int rc = 0;
  if (arm == "get-item") {
    auto a = R(0);
    auto idx = list_arg(1);
    std::vector<uint8_t> item(16);
    rc = maroon_lagoon_get_item(&a, idx.data(), uint32_t(idx.size()), item.data(), item.size(), &err);
    v.atom = item;
  } else if (arm == "check") {  // Lagoon's +check: %.y (0), or a failure for a bad ray
    auto a = R(0);
    rc = maroon_lagoon_check(&a, &err);
    v.atom = {};
  } else if (arm == "head") {  // the head of a ray's ravel (compare-reduce's ++hed)
    const ORay& r = rays.at(0).ray;
    v.atom.assign(r.data.begin(), r.data.begin() + std::min(r.w(), r.data.size()));
  } else if (arm == "argmax" || arm == "argmin") {
    auto a = R(0);
    uint64_t i = 0;
    rc = (arm == "argmax" ? maroon_lagoon_argmax : maroon_lagoon_argmin)(&a, &i, &err);
    v.atom = le_bytes(i, 8);
  } else if (arm == "any" || arm == "all") {
    auto a = R(0);
    int l = 0;
    rc = (arm == "any" ? maroon_lagoon_any : maroon_lagoon_all)(&a, &l, &err);
    v.atom = le_bytes(unsigned(l), 1);
  } else {
    throw std::runtime_error("the runner has no arm " + arm);
  }
  if (rc != 0) {
    v.t = Value::T::Fail;
    v.error = err.message;
  }
  while (!v.atom.empty() && v.atom.back() == 0) v.atom.pop_back();
  return v;
}

std::string key_of(const Json& expr) {
  const Json* e = &expr;
  while ((e->operator[]("arm").str == "head" || e->operator[]("arm").str == "get-item") &&
         e->operator[]("args").arr.at(0).has("call"))
    e = &e->operator[]("args").arr.at(0)["call"];
  std::string kind = "?";
  for (auto& a : (*e)["args"].arr) {
    const Json* x = &a;
    if (x->has("call")) x = &(*x)["call"]["args"].arr.at(0);
    for (const char* k : {"ray", "meta"})
      if (x->has(k)) kind = (*x)[k]["kind"].str + "/" + std::to_string((*x)[k]["bloq"].num);
    if (kind != "?") break;
  }
  return (*e)["arm"].str + " " + kind;
}

}  // namespace

TEST(LagoonVectors, EveryExtractedVectorPassesThroughTheCAbi) {
  // MAROON_LAGOON_VECTORS_FILE overrides the path (to run a modified copy, e.g. to see that a
  // changed expectation fails).
  const std::optional<std::string> env_value = maroon::setting(maroon::SettingId::MAROON_LAGOON_VECTORS_FILE);
  const char* env = env_value ? env_value->c_str() : nullptr;
  const std::string path = env ? env : MAROON_LAGOON_VECTORS;
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot open " << path;
  std::string line;
  std::getline(in, line);  // the header: source and revision
  Json header = parse_json(line);
  std::map<std::string, std::pair<int, int>> by_key;  // "arm kind/bloq" -> (total, passed)
  int total = 0, passed = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    Json v = parse_json(line);
    std::string where = v["file"].str + " " + v["test"].str;
    Value got = eval(v["expr"]);
    const Json& want = v["expect"];
    bool ok;
    std::string detail;
    if (want.has("fail")) {
      ok = got.t == Value::T::Fail;
      detail = "expected an error";
    } else if (got.t == Value::T::Fail) {
      ok = false;
      detail = "error: " + got.error;
    } else if (want.has("atom")) {
      ok = got.t == Value::T::Atom && hex(got.atom) == want["atom"].str;
      detail = "want " + want["atom"].str + " got " + hex(got.atom);
    } else {
      const Json& r = want["ray"];
      std::vector<uint64_t> shape;
      for (auto& d : r["shape"].arr) shape.push_back(uint64_t(d.num));
      ok = got.t == Value::T::Ray && got.ray.shape == shape && got.ray.bloq == uint32_t(r["bloq"].num) &&
           got.ray.kind == kind_code(r["kind"].str) && hex(got.ray.data) == r["data"].str;
      detail = "want " + r["data"].str + " got " + (got.t == Value::T::Ray ? hex(got.ray.data) : "(atom)");
    }
    EXPECT_TRUE(ok) << where << ": " << detail;
    auto& k = by_key[key_of(v["expr"])];
    ++k.first;
    ++total;
    if (ok) ++k.second, ++passed;
  }
  std::cout << "Lagoon vectors from " << header["source"].str << " " << header["rev"].str.substr(0, 7)
            << ": " << passed << " of " << total << " pass\n";
  for (auto& [key, c] : by_key) std::cout << "  " << key << ": " << c.second << "/" << c.first << "\n";
  EXPECT_GT(total, 0);
  EXPECT_EQ(passed, total);
}
