// maroon._maroon.dist: the data-parallel step (maroon/dist.h); docstrings in maroon/_docs/dist.py. The communicator is a Python object
// (maroon.dist.MPIComm wraps mpi4py) that only moves bytes; the step, the tree sum and the
// checks are the C++ ones, so Python and C++ runs give the same bits.
#include "bind.h"
#include "maroon/dist.h"

namespace maroon::py_bind {

namespace {

std::string bytes_of(const py::handle& o, const char* what) {
  if (!py::isinstance<py::bytes>(o))
    throw DTypeError(std::string("[dist] the communicator's ") + what + " must return bytes, got " +
                     std::string(py::str(o.get_type().attr("__name__"))));
  return o.cast<std::string>();
}

// A communicator written in Python: rank(), size(), all_to_all(list of bytes) -> list of bytes,
// all_gather(bytes) -> list of bytes, broadcast(bytes, root) -> bytes.
class PyComm : public dist::Comm {
 public:
  explicit PyComm(py::object o) : o_(std::move(o)) {
    rank_ = o_.attr("rank")().cast<int>();
    size_ = o_.attr("size")().cast<int>();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<std::string> all_to_all(const std::vector<std::string>& send) override {
    py::list blocks;
    for (const std::string& s : send) blocks.append(py::bytes(s));
    return list_of(o_.attr("all_to_all")(blocks), "all_to_all");
  }
  std::vector<std::string> all_gather(const std::string& mine) override {
    return list_of(o_.attr("all_gather")(py::bytes(mine)), "all_gather");
  }
  std::string broadcast(const std::string& bytes, int root) override {
    return bytes_of(o_.attr("broadcast")(py::bytes(bytes), root), "broadcast");
  }

 private:
  std::vector<std::string> list_of(const py::object& r, const char* what) {
    std::vector<std::string> out;
    for (py::handle h : r) out.push_back(bytes_of(h, what));
    if (out.size() != static_cast<size_t>(size_))
      throw ShapeError(std::string("[dist] the communicator's ") + what + " returned " + std::to_string(out.size()) +
                       " blocks for " + std::to_string(size_) + " ranks");
    return out;
  }
  py::object o_;
  int rank_ = 0, size_ = 1;
};

// The step and the communicator it uses, kept alive together.
struct PyDataParallel {
  std::unique_ptr<dist::Comm> comm;
  std::unique_ptr<dist::DataParallel> dp;
};

// A shard function's result: a loss Tensor, or (loss, count) with count a Tensor or None.
dist::ShardOutput shard_output(const py::object& r) {
  if (py::isinstance<Tensor>(r)) return {r.cast<Tensor>(), std::nullopt};
  if (py::isinstance<py::tuple>(r) && py::len(r) == 2) {
    py::tuple t = r;
    std::optional<Tensor> count;
    if (!t[1].is_none()) count = t[1].cast<Tensor>();
    return {t[0].cast<Tensor>(), count};
  }
  throw DTypeError("[dist] a shard function must return its loss sum (a Tensor) or (loss sum, count)");
}

}  // namespace

void bind_dist(py::module_& m) {
  py::module_ d = m.def_submodule("dist", "Deterministic data-parallel training (docs/dist.md): maroon.dist.");
  d.def("part", [](int64_t n, int64_t k, int64_t i) {
    dist::Range r = dist::part(n, k, i);
    return py::make_tuple(r.begin, r.end);
  }, py::arg("n"), py::arg("k"), py::arg("i"));
  d.def("tree_cover", [](int64_t shards, int64_t begin, int64_t end) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (dist::Range r : dist::tree_cover(shards, {begin, end})) out.push_back({r.begin, r.end});
    return out;
  }, py::arg("shards"), py::arg("begin"), py::arg("end"));

  py::class_<dist::StepOutput>(d, "StepOutput")
      .def_readonly("loss", &dist::StepOutput::loss)
      .def_readonly("count", &dist::StepOutput::count);

  py::class_<PyDataParallel>(d, "DataParallel")
      .def(py::init([](optim::Optimizer& opt, int64_t shards, const py::object& comm,
                       const std::vector<nn::BatchNorm*>& batchnorms, double timeout) {
             auto self = std::make_unique<PyDataParallel>();
             if (comm.is_none())
               self->comm = std::make_unique<dist::SelfComm>();
             else
               self->comm = std::make_unique<PyComm>(comm);
             self->dp = std::make_unique<dist::DataParallel>(opt, shards, *self->comm, batchnorms, timeout);
             return self;
           }),
           py::arg("optimizer"), py::arg("shards"), py::arg("comm") = py::none(),
           py::arg("batchnorms") = std::vector<nn::BatchNorm*>{}, py::arg("timeout") = 600.0,
           py::keep_alive<1, 2>(), py::keep_alive<1, 4>(), py::keep_alive<1, 5>())
      .def("step", [](PyDataParallel& self, int64_t batch, const py::function& fn) {
        return self.dp->step(batch, [&](dist::Range s) { return shard_output(fn(s.begin, s.end)); });
      }, py::arg("batch"), py::arg("fn"))
      .def_property_readonly("shards", [](const PyDataParallel& s) { return s.dp->shards(); })
      .def_property_readonly("my_shards", [](const PyDataParallel& s) {
        dist::Range r = s.dp->my_shards();
        return py::make_tuple(r.begin, r.end);
      })
      .def_property_readonly("steps_done", [](const PyDataParallel& s) { return s.dp->steps_done(); })
      .def("state_digest", [](const PyDataParallel& s) { return s.dp->state_digest(); });
}

}  // namespace maroon::py_bind
