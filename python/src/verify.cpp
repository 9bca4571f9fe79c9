// maroon::verify (include/maroon/verify.h) as maroon._maroon.verify: run state, commitments,
// checkpoints, records, traces, verify and bisect. Python objects become the C++ ones here and
// nothing else happens: maroon/verify.py adds the walk over a Python model's attributes.
#include <filesystem>

#include "bind.h"
#include "maroon/verify.h"

namespace maroon::py_bind {

namespace {

namespace v = maroon::verify;

nn::StateDict state_of(const py::object& d) {
  nn::StateDict out;
  if (d.is_none()) return out;
  for (auto [k, t] : d.cast<py::dict>()) out.push_back({k.cast<std::string>(), t.cast<Tensor>()});
  return out;
}

py::dict dict_of(const nn::StateDict& s) {
  py::dict d;
  for (auto& [k, t] : s) d[py::str(k)] = t;
  return d;
}

// The objects a step changes. The optimizer and sampler stay owned by Python (keep_alive below).
v::StateBinding binding_of(const py::object& model, optim::Optimizer* opt, v::EpochSampler* sampler, bool random,
                           const py::object& extra) {
  return {state_of(model), opt, sampler, random, state_of(extra)};
}

v::Job job_of(const py::dict& j) {
  v::Job job;
  job.name = j.contains("name") ? j["name"].cast<std::string>() : "";
  if (j.contains("config"))
    for (auto [k, x] : j["config"].cast<py::dict>()) job.config[k.cast<std::string>()] = py::str(x).cast<std::string>();
  if (j.contains("data"))
    for (auto f : j["data"]) {
      auto d = f.cast<py::dict>();
      // Absolute, since a Python path is relative to the working directory and a record's
      // relative paths to the record. The name defaults to the file's name, not its path: paths
      // are not part of the job (another machine keeps its data elsewhere), names are.
      std::string path =
          std::filesystem::absolute(d["path"].cast<std::string>()).lexically_normal().string();
      std::string name =
          d.contains("name") ? d["name"].cast<std::string>() : std::filesystem::path(path).filename().string();
      job.data.push_back({name, path, v::hex(v::file_digest(path, "[verify] data"))});
    }
  job.arch_sha256 = j.contains("arch_sha256") ? j["arch_sha256"].cast<std::string>() : std::string(64, '0');
  v::parse_digest(job.arch_sha256, "job arch_sha256");
  return job;
}

std::function<std::optional<float>(int64_t)> step_of(const py::object& fn) {
  return [fn](int64_t k) -> std::optional<float> {
    py::object r = fn(k);
    if (r.is_none()) return std::nullopt;
    if (py::isinstance<Tensor>(r)) return static_cast<float>(r.cast<Tensor>().item());
    return r.cast<float>();
  };
}

py::dict record_dict(const v::RunRecord& r) {
  py::dict d;
  d["job_sha256"] = v::hex(r.job_sha256);
  d["name"] = r.job.name;
  d["config"] = r.job.config;
  d["steps"] = r.steps;
  d["checkpoint_every"] = r.checkpoint_every;
  py::list states;
  for (auto& s : r.states) states.append(v::hex(s));
  d["states"] = states;
  d["merkle_root"] = v::hex(r.merkle_root);
  py::list cks;
  for (auto& c : r.checkpoints) cks.append(py::make_tuple(c.step, c.path));
  d["checkpoints"] = cks;
  d["losses"] = r.losses;
  d["claims"] = r.claims;
  d["seal"] = r.seal;
  d["complete"] = r.complete();
  return d;
}

py::dict node_dict(const v::TraceNode& n) {
  py::dict d;
  d["op"] = n.op, d["dtype"] = n.dtype, d["shape"] = n.shape, d["round"] = n.round, d["arg"] = n.arg;
  d["src"] = n.src, d["label"] = n.label, d["sha256"] = v::hex(n.digest);
  return d;
}

void bind_trace(py::module_& m) {
  py::class_<v::Trace>(m, "Trace")
      .def_readonly("step", &v::Trace::step)
      .def_property_readonly("nodes",
                             [](const v::Trace& t) {
                               py::list l;
                               for (auto& n : t.nodes) l.append(node_dict(n));
                               return l;
                             })
      .def_property_readonly("state_out",
                             [](const v::Trace& t) {
                               py::list l;
                               for (auto& s : t.state_out)
                                 l.append(py::make_tuple(s.name, v::hex(s.digest), s.node < 0 ? py::object(py::none()) : py::object(py::int_(s.node))));
                               return l;
                             })
      .def("json", &v::trace_json)
      .def("save", [](const v::Trace& t, const std::string& p) { v::write_trace(t, p); }, py::arg("path"))
      .def("__len__", [](const v::Trace& t) { return t.nodes.size(); });
  m.def("trace", [](const py::function& fn) { return v::trace([&] { fn(); }); }, py::arg("fn"),
        "Runs fn() with every realized node traced (op, dtype, shape, rounding, sources, SHA-256).");
  m.def("read_trace", &v::read_trace, py::arg("path"));
}

void bind_run(py::module_& m) {
  py::class_<v::Run>(m, "Run")
      .def(py::init([](const py::dict& job, const py::object& model, optim::Optimizer* opt, v::EpochSampler* sampler,
                       bool random, const py::object& extra, const std::string& record, int64_t steps, int64_t every,
                       const std::string& cmd, const std::string& resume, const std::string& resume_record,
                       bool background) {
             v::RunOptions o{record, steps, every, cmd, resume, resume_record, background};
             return std::make_unique<v::Run>(job_of(job), binding_of(model, opt, sampler, random, extra), o);
           }),
           py::arg("job"), py::arg("model"), py::arg("optimizer") = nullptr, py::arg("sampler") = nullptr,
           py::arg("random") = true, py::arg("extra") = py::none(), py::arg("record"), py::arg("steps"),
           py::arg("checkpoint_every") = 0, py::arg("command_line") = "", py::arg("resume") = "",
           py::arg("resume_record") = "", py::arg("background") = true, py::keep_alive<1, 4>(), py::keep_alive<1, 5>())
      .def("begin", &v::Run::begin)
      .def_property_readonly("step", &v::Run::step)
      .def_property_readonly("total_steps", &v::Run::total_steps)
      .def("commit", [](v::Run& r, const py::object& loss) {
        std::optional<float> l;
        if (!loss.is_none()) l = py::isinstance<Tensor>(loss) ? static_cast<float>(loss.cast<Tensor>().item()) : loss.cast<float>();
        r.commit(l);
      }, py::arg("loss") = py::none())
      .def("finish", [](v::Run& r, const py::dict& outputs, const std::map<std::string, std::string>& claims) {
        std::vector<v::FileRef> outs;
        for (auto [k, p] : outputs) outs.push_back({k.cast<std::string>(), p.cast<std::string>(), ""});
        return record_dict(r.finish(outs, claims));
      }, py::arg("outputs") = py::dict(), py::arg("claims") = std::map<std::string, std::string>())
      .def("commitments", [](v::Run& r) {
        std::vector<std::string> out;
        for (auto& d : r.commitments()) out.push_back(v::hex(d));
        return out;
      });
}

// A party's program: the objects its steps change and a step function step(k) -> loss or None.
struct PyProgram {
  v::Program p;
};

void bind_checks(py::module_& m) {
  py::class_<PyProgram>(m, "Program")
      .def(py::init([](const py::object& model, optim::Optimizer* opt, v::EpochSampler* sampler, bool random,
                       const py::object& extra, const py::function& step) {
             return PyProgram{{binding_of(model, opt, sampler, random, extra), step_of(step), {}}};
           }),
           py::arg("model"), py::arg("optimizer") = nullptr, py::arg("sampler") = nullptr, py::arg("random") = true,
           py::arg("extra") = py::none(), py::arg("step"), py::keep_alive<1, 3>(), py::keep_alive<1, 4>());
  m.def("verify_run", [](const std::string& record, PyProgram* prog, bool replay, const std::string& data_dir,
                         const std::vector<std::string>& files) {
    v::VerifyOptions o{replay, data_dir, files};
    v::VerifyReport r = v::verify_run(v::read_record(record), record, prog ? &prog->p : nullptr, o);
    py::list found;
    for (auto& f : r.findings) found.append(f.message());
    py::dict d;
    d["verified"] = r.findings.empty(), d["differences"] = found, d["files_checked"] = r.files_checked;
    d["steps_replayed"] = r.steps_replayed;
    return d;
  }, py::arg("record"), py::arg("program") = nullptr, py::arg("replay") = true, py::arg("data_dir") = "",
     py::arg("files") = std::vector<std::string>());
  m.def("bisect", [](const std::string& a, const std::string& b, PyProgram& pa, PyProgram& pb) {
    v::BisectReport r = v::bisect(v::read_record(a), a, pa.p, v::read_record(b), b, pb.p);
    py::dict d;
    d["same"] = r.same, d["step"] = r.step, d["node"] = r.node, d["state_tensor"] = r.state_tensor;
    d["state_node"] = r.state_node, d["referee_says"] = r.referee_says, d["referee_sha256"] = r.referee_digest;
    d["node_a"] = node_dict(r.node_a), d["node_b"] = node_dict(r.node_b);
    d["merkle_compared"] = r.merkle_compared, d["checkpoint_loads"] = r.checkpoint_loads;
    d["step_replays"] = r.step_replays, d["lines"] = r.lines;
    return d;
  }, py::arg("record_a"), py::arg("record_b"), py::arg("program_a"), py::arg("program_b"));
  m.def("trace_step", [](const std::string& record, PyProgram& p, int64_t k) {
    return v::trace_step(v::read_record(record), record, p.p, k);
  }, py::arg("record"), py::arg("program"), py::arg("step"));
}

void bind_state(py::module_& m) {
  py::class_<v::EpochSampler>(m, "EpochSampler")
      .def(py::init<int64_t, int64_t, uint64_t>(), py::arg("samples"), py::arg("batch"), py::arg("seed"))
      .def("next", &v::EpochSampler::next)
      .def_property_readonly("position", &v::EpochSampler::position)
      .def_property_readonly("epoch", &v::EpochSampler::epoch)
      .def_property_readonly("batches_per_epoch", &v::EpochSampler::batches_per_epoch);
  m.def("capture", [](const py::object& model, optim::Optimizer* opt, v::EpochSampler* sampler, bool random,
                      const py::object& extra, int64_t step, const std::string& job) {
    return dict_of(v::capture(binding_of(model, opt, sampler, random, extra), step, v::parse_digest(job, "job")));
  }, py::arg("model"), py::arg("optimizer") = nullptr, py::arg("sampler") = nullptr, py::arg("random") = true,
     py::arg("extra") = py::none(), py::arg("step") = 0, py::arg("job") = std::string(64, '0'));
  m.def("state_commitment", [](const py::dict& s) {
    nn::StateDict st = state_of(s);
    std::sort(st.begin(), st.end(), [](auto& a, auto& b) { return a.first < b.first; });
    return v::hex(v::state_commitment(st));
  }, py::arg("state"));
  m.def("read_checkpoint", [](const std::string& p) {
    v::Digest d;
    nn::StateDict s = v::read_checkpoint(p, &d);
    return py::make_tuple(dict_of(s), v::hex(d));
  }, py::arg("path"));
  m.def("read_record", [](const std::string& p) { return record_dict(v::read_record(p)); }, py::arg("path"));
  m.def("merkle_root", [](const std::vector<std::string>& hs) {
    std::vector<v::Digest> ds;
    for (auto& h : hs) ds.push_back(v::parse_digest(h, "merkle_root"));
    return v::hex(v::merkle_root(ds));
  }, py::arg("commitments"));
  m.def("graph_digest", [](const std::vector<Tensor>& outs, const py::object& leaves) {
    return v::hex(v::graph_digest(outs, state_of(leaves)));
  }, py::arg("outputs"), py::arg("leaves") = py::none());
  m.def("tensor_digest", [](const Tensor& t) { return v::hex(v::tensor_digest(t)); }, py::arg("tensor"));
  m.def("flip_bit", [](Tensor& t, int64_t e, int b) { v::flip_bit(t, e, b); }, py::arg("tensor"), py::arg("element"),
        py::arg("bit"));
}

}  // namespace

void bind_verify(py::module_& m) {
  py::module_ vm = m.def_submodule("verify", "verifiable runs (include/maroon/verify.h)");
  bind_state(vm);
  bind_run(vm);
  bind_trace(vm);
  bind_checks(vm);
}

}  // namespace maroon::py_bind
