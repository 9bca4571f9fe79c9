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
// With --replay, each case instead checks the model's replays (src/onnx/replay.h) on its first data
// set: a fresh model runs the inputs (plain), the inputs with their elements reversed (captured:
// other values, the same signature), then the inputs again, which a replay must give with the
// first run's exact bits. A decision the capture took from the reversed inputs' values and a
// replay kept would show here. Lines "name replayed|plain|skipped|differs detail"; exits 1 on any
// "differs".
//
// usage: maroon-onnx-conformance DATA_DIR [--expect FILE] [--filter SUBSTRING] [--replay]
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

// A case's test_data_set_* folders, in order.
std::vector<fs::path> data_sets(const fs::path& dir) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

// The test data store bfloat16 tensors as uint16 (numpy has no bfloat16): the same bits, as the
// dtype `infos` declares.
void as_bfloat16(std::vector<Tensor>& ts, const std::vector<maroon::onnx::ValueInfo>& infos) {
  for (size_t i = 0; i < ts.size() && i < infos.size(); ++i)
    if (infos[i].dtype == maroon::DType::BFloat16 && ts[i].dtype() == maroon::DType::UInt16)
      ts[i] = ts[i].bitcast(maroon::DType::BFloat16);
}

Outcome run_case(const fs::path& dir) {
  std::vector<fs::path> sets = data_sets(dir);
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
    as_bfloat16(in, model->inputs());
    as_bfloat16(want, model->outputs());
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

// Every element of `t` in reverse order (all axes flipped), realized: the same shape and dtype.
Tensor reversed(const Tensor& t) {
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < t.ndim(); ++a) axes.push_back(a);
  Tensor r = axes.empty() ? t : t.flip(axes);
  return r.contiguous().realize();
}

Outcome replay_case(const fs::path& dir) {
  std::vector<fs::path> sets = data_sets(dir);
  if (sets.empty()) return {"skipped", "no test_data_set_*"};
  std::vector<Tensor> in, again, flipped;
  std::vector<std::vector<uint8_t>> first;
  std::optional<maroon::onnx::Model> model;
  try {
    model = maroon::onnx::load((dir / "model.onnx").string());
    for (const auto& p : numbered(sets[0], "input_")) in.push_back(maroon::onnx::load_tensor_pb(p.string()));
    as_bfloat16(in, model->inputs());
    for (const Tensor& t : model->run(in)) first.push_back(t.bytes());
  } catch (const maroon::Error& e) {
    return {"skipped", e.what()};  // refused or unreadable: the conformance run reports it
  }
  for (const Tensor& t : in) flipped.push_back(reversed(t));
  try {
    model->run(flipped);
  } catch (const maroon::Error&) {
    return {"plain", "the reversed inputs are refused"};
  }
  std::vector<Tensor> got = model->run(in);
  maroon::onnx::RunStats st = model->run_stats();
  if (got.size() != first.size()) return {"differs", "output count changed"};
  for (size_t k = 0; k < got.size(); ++k)
    if (got[k].bytes() != first[k])
      return {"differs", "output " + std::to_string(k) + (st.replays ? " (replayed)" : " (plain)") + " is not the first run's bits"};
  return {st.replays ? "replayed" : "plain", st.refused ? "refused for replay" : ""};
}

int rank(const std::string& s) { return s == "bits" ? 3 : s == "tolerance" ? 2 : 0; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: maroon-onnx-conformance DATA_DIR [--expect FILE] [--filter SUBSTRING]\n";
    return 2;
  }
  std::string expect_path, filter;
  bool replay = false;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--replay")) replay = true;
    else if (i + 1 < argc && !std::strcmp(argv[i], "--expect")) expect_path = argv[++i];
    else if (i + 1 < argc && !std::strcmp(argv[i], "--filter")) filter = argv[++i];
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
    Outcome o = replay ? replay_case(c) : run_case(c);
    if (replay && o.status == "differs") ++regressions, std::cerr << "REPLAY DIFFERS " << name << ": " << o.detail << "\n";
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
