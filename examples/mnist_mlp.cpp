// The MNIST MLP trained by a user's own C++ loop, with every step's state committed by
// maroon::verify::Run (checkpoints, a run record with a Merkle root), then verified by replaying
// every step with a program built afresh. Build: the maroon-example-mnist-mlp target.
//   build/maroon-example-mnist-mlp [STEPS] [RECORD] [DATA_DIR]     (default 100 runs/mlp.run.json data/mnist)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "maroon/datasets.h"
#include "maroon/models.h"
#include "maroon/verify.h"

using namespace maroon;

namespace {

// Everything one step reads and writes, and the step itself: the user's training program.
struct Mlp {
  const data::Split& train;
  models::MnistMLP model{0};  // seeds the random stream, then draws the initial weights
  models::TrainStep step_fn{model, 1e-3};
  verify::EpochSampler sampler{train.n, 64, 0};

  // The step runs through TinyJit: replayed from the 3rd call, the same bits without rebuilding.
  explicit Mlp(const data::Split& t) : train(t) { step_fn.set_jit(true); }
  float step(int64_t) {
    std::vector<uint32_t> idx = sampler.next();
    std::vector<uint8_t> x(idx.size() * 784), y(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      std::memcpy(&x[i * 784], &train.images[idx[i] * size_t{784}], 784);
      y[i] = train.labels[idx[i]];
    }
    return step_fn(models::images_to_input(x.data(), 64), models::labels_to_tensor(y.data(), 64)).loss;
  }
  verify::StateBinding binding() { return {model.state_dict(), &step_fn.optimizer(), &sampler, true, {}}; }
};

}  // namespace

int main(int argc, char** argv) {
  const int64_t steps = argc > 1 ? std::atoll(argv[1]) : 100;
  const std::string record = argc > 2 ? argv[2] : "runs/mlp.run.json";
  const std::string dir = argc > 3 ? argv[3] : "data/mnist";
  try {
    data::Mnist ds = data::load_mnist(dir);
    Mlp mlp(ds.train);
    verify::Job job{"mnist-mlp-example", {{"batch", "64"}, {"lr", "0.001"}, {"seed", "0"}}, {}, std::string(64, '0')};
    for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"}) {
      // A record's relative paths are relative to the record: name the data absolutely.
      std::string path = std::filesystem::absolute(dir + "/" + f).lexically_normal().string();
      job.data.push_back({f, path, verify::hex(verify::file_digest(path, "data"))});
    }
    verify::RunOptions opts;
    opts.record = record, opts.steps = steps, opts.checkpoint_every = 25;
    verify::Run run(job, mlp.binding(), opts);
    run.begin();
    while (run.step() < run.total_steps()) {
      float loss = mlp.step(run.step() + 1);
      run.commit(loss);
      if (run.step() % 10 == 0) std::printf("step %4lld  loss %.4f\n", static_cast<long long>(run.step()), loss);
    }
    verify::RunRecord rec = run.finish();
    std::printf("run record   %s\nmerkle root  %s\n", record.c_str(), verify::hex(rec.merkle_root).c_str());

    // A verifier: the same program built afresh, every file hashed, every step replayed.
    Mlp fresh(ds.train);
    verify::Program program{fresh.binding(), [&](int64_t k) -> std::optional<float> { return fresh.step(k); }, {}};
    verify::VerifyReport rep = verify::verify_run(verify::read_record(record), record, &program, {});
    for (const verify::Finding& f : rep.findings) std::printf("differs: %s\n", f.message().c_str());
    std::printf("%s: %lld files, %lld steps replayed\n", rep.findings.empty() ? "verified" : "NOT verified",
                static_cast<long long>(rep.files_checked), static_cast<long long>(rep.steps_replayed));
    return rep.findings.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mnist_mlp: %s\n", e.what());
    return 2;
  }
}
