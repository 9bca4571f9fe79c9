// Runs ONNX backend test cases (Debian's libonnx-testdata: DIR/test_x/model.onnx and
// DIR/test_x/test_data_set_N/{input,output}_K.pb) and classifies each case:
//   bits      every output has the expected dtype, shape and exactly the expected bytes
//   tolerance every output within ONNX's backend tolerance (rtol 1e-3, atol 1e-7; NaN = NaN)
//   differs   an output outside it (the line says which and by how much)
//   refused   load or run threw maroon's clear error (an unsupported operator, dtype, attribute)
//   error     the test data itself could not be read
// One line per case: "name status detail". With --expect FILE (lines "name status"), exits 1
// if a case expected to be bits or tolerance is now anything worse, and prints the counts.
//
// usage: maroon-onnx-conformance DATA_DIR [--expect FILE] [--filter SUBSTRING]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "maroon/onnx.h"

namespace fs = std::filesystem;
using maroon::Tensor;

namespace {

struct Outcome {
  std::string status, detail;
};

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) return out;
    out.push_back(p);
  }
}

// "bits", "tolerance" or a description of the first output that differs.
std::string compare(const Tensor& got, const Tensor& want, size_t k) {
  std::string name = "output " + std::to_string(k);
  if (got.dtype() != want.dtype())
    return name + " is " + std::string(maroon::dtype_name(got.dtype())) + ", expected " +
           std::string(maroon::dtype_name(want.dtype()));
  if (got.shape() != want.shape())
    return name + " has shape " + maroon::shape_str(got.shape()) + ", expected " + maroon::shape_str(want.shape());
  if (got.bytes() == want.bytes()) return "bits";
  std::vector<double> g = got.tolist(), w = want.tolist();
  if (!maroon::is_float(want.dtype()))  // the first integer that differs
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i] != w[i]) {
        std::ostringstream s;
        s << name << "[" << i << "] = " << g[i] << ", expected " << w[i] << " (integers)";
        return s.str();
      }
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i])) continue;
    if (g[i] == w[i]) continue;  // also equal infinities
    double err = std::fabs(g[i] - w[i]), tol = 1e-7 + 1e-3 * std::fabs(w[i]);
    if (!(err <= tol) && (std::isnan(err) || err / tol > worst)) worst = std::isnan(err) ? INFINITY : err / tol, at = i;
  }
  if (worst == 0) return "tolerance";
  std::ostringstream s;
  s << name << "[" << at << "] = " << g[at] << ", expected " << w[at] << " (" << worst << "x the tolerance)";
  return s.str();
}

Outcome run_case(const fs::path& dir) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {"error", "no test_data_set_*"};
  std::optional<maroon::onnx::Model> model;
  try {
    model = maroon::onnx::load((dir / "model.onnx").string());
  } catch (const maroon::Error& e) {
    return {"refused", e.what()};
  }
  std::string worst = "bits";
  for (const fs::path& set : sets) {
    std::vector<Tensor> in, want;
    try {
      for (const auto& p : numbered(set, "input_")) in.push_back(maroon::onnx::load_tensor_pb(p.string()));
      for (const auto& p : numbered(set, "output_")) want.push_back(maroon::onnx::load_tensor_pb(p.string()));
    } catch (const maroon::Error& e) {
      return {"refused", std::string("test data: ") + e.what()};
    }
    // The test data store bfloat16 tensors as uint16 (numpy has no bfloat16): same bits.
    for (size_t i = 0; i < in.size() && i < model->inputs().size(); ++i)
      if (model->inputs()[i].dtype == maroon::DType::BFloat16 && in[i].dtype() == maroon::DType::UInt16)
        in[i] = in[i].bitcast(maroon::DType::BFloat16);
    for (size_t i = 0; i < want.size() && i < model->outputs().size(); ++i)
      if (model->outputs()[i].dtype == maroon::DType::BFloat16 && want[i].dtype() == maroon::DType::UInt16)
        want[i] = want[i].bitcast(maroon::DType::BFloat16);
    std::vector<Tensor> got;
    try {
      got = model->run(in);
      if (got.size() != want.size()) return {"differs", "outputs: " + std::to_string(got.size()) + " vs " + std::to_string(want.size())};
      for (size_t k = 0; k < got.size(); ++k) {
        std::string r = compare(got[k], want[k], k);
        if (r == "tolerance") worst = "tolerance";
        else if (r != "bits") return {"differs", set.filename().string() + ": " + r};
      }
    } catch (const maroon::Error& e) {
      return {"refused", e.what()};
    }
  }
  return {worst, ""};
}

int rank(const std::string& s) { return s == "bits" ? 3 : s == "tolerance" ? 2 : 0; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: maroon-onnx-conformance DATA_DIR [--expect FILE] [--filter SUBSTRING]\n";
    return 2;
  }
  std::string expect_path, filter;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--expect")) expect_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--filter")) filter = argv[i + 1];
  }
  std::map<std::string, std::string> expect;
  if (!expect_path.empty()) {
    std::ifstream f(expect_path);
    if (!f) { std::cerr << "cannot read " << expect_path << "\n"; return 2; }
    std::string name, status;
    while (f >> name >> status) expect[name] = status;
  }
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(argv[1]))
    if (e.is_directory() && e.path().filename().string().find(filter) != std::string::npos) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  std::map<std::string, int> counts;
  int regressions = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (const fs::path& c : cases) {
    std::string name = c.filename().string();
    Outcome o = run_case(c);
    ++counts[o.status];
    std::cout << name << " " << o.status << (o.detail.empty() ? "" : " " + o.detail) << "\n";
    auto it = expect.find(name);
    if (it != expect.end() && rank(o.status) < rank(it->second)) {
      std::cerr << "REGRESSION " << name << ": expected " << it->second << ", got " << o.status << " " << o.detail << "\n";
      ++regressions;
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "conformance: " << cases.size() << " cases in " << secs << " s:";
  for (const auto& [s, n] : counts) std::cerr << " " << s << " " << n;
  std::cerr << "\n";
  if (!expect_path.empty() && regressions) std::cerr << regressions << " regression(s)\n";
  return regressions ? 1 : 0;
}
