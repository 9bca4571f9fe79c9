// `maroon onnx run MODEL.onnx --input FILE ...`: runs an ONNX model (maroon/onnx.h) and prints
// the inference digest of its outputs (maroon/digest.h: the same digest `maroon infer` prints),
// so two machines can compare runs by one line. `maroon onnx info MODEL.onnx` lists the model's
// inputs, outputs and opset. Built only where ONNX import is (src/cli/CMakeLists.txt).
// `--repeat N` runs the model N times on the same inputs (runs after the second replay its
// kernels, maroon/onnx.h), checks that every run gives the first's digest and reports the median
// time a run, as onnxruntime_perf_test does for ONNX Runtime. `--fused` runs the model's
// products (MatMul, Gemm, Conv) as REDUCE_MULACC (docs/spec.md §14): other, equally defined bits,
// at FMA speed; the JSON result says which (`"products": "fused"|"unfused"`).
#include <algorithm>
#include <chrono>
#include <filesystem>

#include "cli/commands.h"
#include "maroon/digest.h"
#include "maroon/npy.h"
#include "maroon/onnx.h"

namespace maroon::cli {

namespace {

struct OnnxOptions {
  std::string model;
  std::vector<std::string> inputs;  // FILE or NAME=FILE
  int64_t repeat = 1;
  bool fused = false;
  DataOptions data;
};

Tensor read_input(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".npy") return data::load_npy(path).tensor();
  if (ext == ".pb") return onnx::load_tensor_pb(path);
  throw Error("input '" + path + "': expected a .npy file or a serialized ONNX TensorProto (.pb)");
}

// Named inputs (NAME=FILE) by name; the others in the model's input order.
std::map<std::string, Tensor> bind_inputs(const onnx::Model& m, const std::vector<std::string>& args) {
  std::map<std::string, Tensor> named;
  size_t next = 0;
  for (const std::string& a : args) {
    size_t eq = a.find('=');
    std::string name, file = a;
    if (eq != std::string::npos && !std::filesystem::exists(a)) name = a.substr(0, eq), file = a.substr(eq + 1);
    if (name.empty()) {
      while (next < m.inputs().size() && named.count(m.inputs()[next].name)) ++next;
      if (next >= m.inputs().size())
        throw Error("--input '" + a + "': the model takes only " + std::to_string(m.inputs().size()) + " input(s)");
      name = m.inputs()[next++].name;
    }
    if (named.count(name)) throw Error("--input '" + a + "': input '" + name + "' is given twice");
    named.insert_or_assign(name, read_input(file));
  }
  return named;
}

// Runs `m` o.repeat times; every run's outputs must have the first's digest. Returns the first
// run's outputs, and the median milliseconds a run (each run realizes its outputs) in *ms.
std::vector<Tensor> run_repeated(const onnx::Model& m, const std::map<std::string, Tensor>& in, const OnnxOptions& o,
                                 double* ms) {
  std::vector<Tensor> first;
  std::string digest;
  std::vector<double> times;
  for (int64_t r = 0; r < o.repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<Tensor> out = m.run(in);
    for (Tensor& t : out) t.realize();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    std::string d = tensors_digest(kInferenceTag, out);
    if (r == 0) first = out, digest = d;
    else if (d != digest)
      throw Error("run " + std::to_string(r + 1) + " of " + std::to_string(o.repeat) + " gave inference digest " + d +
                  ", the first run " + digest);
  }
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
  *ms = times[times.size() / 2];
  return first;
}

int onnx_run(const OnnxOptions& o, const Context& ctx) {
  apply_threads(o.data);
  const FusedScope fused(o.fused);  // this thread's products, for every run below
  onnx::Model m = onnx::load(o.model);
  ctx.log("running '%s' (opset %lld, %zu nodes)", o.model.c_str(), static_cast<long long>(m.opset()), m.node_count());
  std::map<std::string, Tensor> in = bind_inputs(m, o.inputs);
  double ms = 0;
  std::vector<Tensor> out = run_repeated(m, in, o, &ms);
  std::string digest = tensors_digest(kInferenceTag, out);
  nlohmann::ordered_json outs = nlohmann::ordered_json::array();
  std::string text = "inference digest  " + digest + "\n";
  for (size_t i = 0; i < out.size(); ++i) {
    outs.push_back({{"name", m.outputs()[i].name}, {"dtype", std::string(dtype_name(out[i].dtype()))},
                    {"shape", out[i].shape()}});
    text += "output " + m.outputs()[i].name + "  " + std::string(dtype_name(out[i].dtype())) + " " +
            shape_str(out[i].shape()) + "\n";
  }
  nlohmann::ordered_json j{{"model", o.model},     {"opset", m.opset()},
                           {"products", o.fused ? "fused" : "unfused"}, {"inference_digest", digest},
                           {"outputs", outs}};
  if (o.fused) text += "products fused (REDUCE_MULACC, docs/spec.md §14)\n";
  if (o.repeat > 1) {
    onnx::RunStats st = m.run_stats();
    j["runs"] = o.repeat, j["replays"] = st.replays, j["median_ms"] = ms;
    char line[160];
    std::snprintf(line, sizeof line, "runs %lld, the same digest each; %lld replayed; median %.3f ms a run\n",
                  static_cast<long long>(o.repeat), static_cast<long long>(st.replays), ms);
    text += line;
  }
  ctx.result(j, text);
  return kOk;
}

std::string dims_text(const onnx::ValueInfo& v) {
  if (!v.has_shape) return "(any shape)";
  std::string s = "(";
  for (size_t i = 0; i < v.dims.size(); ++i)
    s += (i ? "," : "") + (v.dims[i] >= 0 ? std::to_string(v.dims[i]) : v.dim_params[i].empty() ? "?" : v.dim_params[i]);
  return s + (v.dims.size() == 1 ? ",)" : ")");
}

int onnx_info(const OnnxOptions& o, const Context& ctx) {
  onnx::Model m = onnx::load(o.model);
  std::string text = "model     " + o.model + "\nproducer  " + m.producer() + "\nopset     " +
                     std::to_string(m.opset()) + "\nnodes     " + std::to_string(m.node_count()) + "\n";
  nlohmann::ordered_json j{{"model", o.model}, {"producer", m.producer()}, {"opset", m.opset()}, {"nodes", m.node_count()}};
  for (const char* kind : {"input", "output"}) {
    const auto& list = std::string(kind) == "input" ? m.inputs() : m.outputs();
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& v : list) {
      text += std::string(kind) + (kind[0] == 'i' ? "     " : "    ") + v.name + "  " +
              std::string(dtype_name(v.dtype)) + " " + dims_text(v) + "\n";
      arr.push_back({{"name", v.name}, {"dtype", std::string(dtype_name(v.dtype))}, {"shape", dims_text(v)}});
    }
    j[std::string(kind) + "s"] = arr;
  }
  ctx.result(j, text);
  return kOk;
}

Runner declare_onnx(CLI::App& app) {
  auto o = std::make_shared<OnnxOptions>();
  app.require_subcommand(1);
  CLI::App* run = app.add_subcommand("run", "run a model; print the inference digest of its outputs");
  run->add_option("MODEL", o->model, "the model (.onnx; external data beside it)")->required();
  run->add_option("-i,--input", o->inputs,
                  "an input: FILE or NAME=FILE, FILE a .npy or a TensorProto .pb (unnamed ones in the model's order)")
      ->type_name("[NAME=]FILE");
  run->add_option("--repeat", o->repeat,
                  "run N times (runs after the second replay the kernels); every run must give the first's digest; "
                  "prints the median time a run")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->type_name("N");
  run->add_flag("--fused", o->fused,
                "run MatMul, Gemm and Conv as fused multiply-adds (REDUCE_MULACC, docs/spec.md §14): other bits, "
                "the same on every machine");
  add_threads_option(*run, o->data);
  CLI::App* info = app.add_subcommand("info", "list a model's inputs, outputs and opset");
  info->add_option("MODEL", o->model, "the model (.onnx)")->required();
  return [o, run](const Context& ctx) { return run->parsed() ? onnx_run(*o, ctx) : onnx_info(*o, ctx); };
}

const Registration onnx_command("onnx", "run an ONNX model with Maroon's bits (run, info)", declare_onnx);

}  // namespace

}  // namespace maroon::cli
