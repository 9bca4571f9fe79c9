#include "torch_harness.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

namespace maroon::torchtest {

namespace {

std::string hexf(double v) {
  if (std::isnan(v)) return "float('nan')";
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  char buf[64];
  std::snprintf(buf, sizeof buf, "float.fromhex('%a')", v);
  return buf;
}

struct Built {
  std::vector<std::vector<double>> data;  // base values per input
  std::vector<Tensor> base;               // Maroon leaves
  std::vector<Tensor> views;              // what the op sees
};

Built build_inputs(const Case& c, uint32_t seed) {
  Built b;
  uint32_t s = seed;
  for (const Input& in : c.inputs) {
    int64_t n = apitest::numel_of(in.shape);
    std::vector<double> v = apitest::uniform_values(n, in.lo, in.hi, s++);
    for (double& x : v) {
      if (in.integer) x = std::floor(x);
      else if (in.quantize) x = std::round(x * 2) / 2;
      else x = static_cast<float>(x);
    }
    b.data.push_back(v);
    Tensor t = in.integer ? Tensor::from_vector<int64_t>(std::vector<int64_t>(v.begin(), v.end()), in.shape)
                          : apitest::f32(v, in.shape);
    b.base.push_back(t);
    b.views.push_back(in.perm.empty() ? t : t.permute(in.perm));
  }
  return b;
}

std::string shape_py(const Shape& s) {
  std::string o = "(";
  for (int64_t d : s) o += std::to_string(d) + ",";
  return o + ")";
}

// Parses "name kind v v v" lines.
std::map<std::string, std::vector<double>> parse(const std::string& path) {
  std::map<std::string, std::vector<double>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string key, tok;
    ss >> key;
    std::vector<double> v;
    while (ss >> tok) v.push_back(std::strtod(tok.c_str(), nullptr));
    out[key] = v;
  }
  return out;
}

void compare(const std::string& what, const std::vector<double>& got, const std::vector<double>& want, double atol,
             double rtol) {
  ASSERT_EQ(got.size(), want.size()) << what << ": element count";
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want[i];
    bool ok = (std::isnan(g) && std::isnan(w)) || g == w || std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok && bad++ < 5) ADD_FAILURE() << what << " element " << i << ": maroon " << g << " torch " << w;
  }
}

}  // namespace

Outcome run_cases(const std::vector<Case>& cases, uint32_t seed) {
  Outcome oc;
  std::ostringstream py;
  py << "import torch, sys, warnings\nwarnings.filterwarnings('ignore')\nimport torch.nn.functional as F\ntorch.set_grad_enabled(True)\n"
        "out = open(sys.argv[1], 'w')\n"
        "def emit(key, t):\n"
        "  t = t.detach().reshape(-1)\n"
        "  out.write(key + ' ' + ' '.join(float(v).hex() for v in t.double().tolist()) + '\\n')\n";
  std::vector<Built> built;
  std::vector<std::vector<double>> weights;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    built.push_back(build_inputs(c, seed + 97 * static_cast<uint32_t>(ci)));
    const Built& b = built.back();
    py << "# " << c.name << "\ntry:\n";
    std::vector<std::string> leaves;
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      const Input& in = c.inputs[k];
      py << "  b" << k << " = torch.tensor([";
      for (double v : b.data[k]) py << (in.integer ? std::to_string(static_cast<int64_t>(v)) : hexf(v)) << ",";
      py << "], dtype=" << (in.integer ? "torch.int64" : "torch.float32") << ").reshape(" << shape_py(in.shape) << ")";
      if (!in.integer && c.backward && in.grad) py << ".requires_grad_()";
      py << "\n  x" << k << " = b" << k;
      if (!in.perm.empty()) py << ".permute" << shape_py(in.perm);
      py << "\n";
    }
    py << "  r = " << c.torch << "\n  emit('" << ci << ".out', r)\n";
    // The output shape decides the weight; computed on the Maroon side.
    Tensor out = c.maroon(b.views);
    if (c.backward) {
      std::vector<double> w = apitest::uniform_values(apitest::numel_of(out.shape()), 0.5, 1.5, 7 + ci);
      for (double& x : w) x = static_cast<float>(x);
      weights.push_back(w);
      py << "  w = torch.tensor([";
      for (double v : w) py << hexf(v) << ",";
      py << "], dtype=torch.float32).reshape(" << shape_py(out.shape()) << ")\n";
      py << "  (r.float() * w).sum().backward()\n";
      for (size_t k = 0; k < c.inputs.size(); ++k)
        if (!c.inputs[k].integer && c.inputs[k].grad)
          py << "  emit('" << ci << ".grad" << k << "', b" << k << ".grad if b" << k
             << ".grad is not None else torch.zeros_like(b" << k << "))\n";
    } else {
      weights.push_back({});
    }
    py << "except Exception as e:\n  out.write('" << ci << ".error ' + '\\n')\n  print('" << c.name
       << "', repr(e), file=sys.stderr)\n";
  }
  py << "out.close()\n";
  // Unique per process and test: ctest may run several of these at once.
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string stem = ::testing::TempDir() + "maroon_torch_" + std::to_string(::getpid()) + "_" +
                     (info ? std::string(info->name()) : std::string("case"));
  std::string script = stem + ".py", result = stem + ".txt";
  {
    std::ofstream f(script);
    f << py.str();
  }
  std::string cmd = std::string(MAROON_PYTHON) + " " + script + " " + result;
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << "running PyTorch failed: " << cmd;
  auto ref = parse(result);
  std::remove(script.c_str());
  std::remove(result.c_str());
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    SCOPED_TRACE(c.name);
    ++oc.cases;
    if (ref.count(std::to_string(ci) + ".error")) {
      ADD_FAILURE() << c.name << ": the PyTorch reference raised";
      continue;
    }
    const Built& b = built[ci];
    Tensor out = c.maroon(b.views);
    compare(c.name + " forward", out.tolist(), ref[std::to_string(ci) + ".out"], c.atol, c.rtol);
    ++oc.forward_checked;
    if (!c.backward) continue;
    Tensor w = apitest::f32(weights[ci], out.shape());
    std::vector<Tensor> targets;
    std::vector<size_t> which;
    for (size_t k = 0; k < c.inputs.size(); ++k)
      if (!c.inputs[k].integer && c.inputs[k].grad) {
        targets.push_back(b.base[k]);
        which.push_back(k);
      }
    std::vector<Tensor> gs = (out.cast(DType::Float32) * w).sum().gradient(targets);
    for (size_t j = 0; j < gs.size(); ++j)
      compare(c.name + " grad" + std::to_string(which[j]), gs[j].tolist(),
              ref[std::to_string(ci) + ".grad" + std::to_string(which[j])], c.grad_atol, c.grad_rtol);
    ++oc.backward_checked;
  }
  return oc;
}

}  // namespace maroon::torchtest
