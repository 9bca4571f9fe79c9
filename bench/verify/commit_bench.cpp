// The cost of committing the full state (SHA-256 of its canonical serialisation) after every step
// of the MNIST MLP (784-512-512-10, Adam, batch 64; or the CNN), against the same steps without it,
// in one process: blocks of steps alternate between a plain loop and a loop calling Run::commit
// (background hashing, then inline hashing), each committed block waiting for its last
// commitment, so no hashing spills into the next block. Prints per-step medians and the ratios.
//   maroon-bench-commit [--threads T] [--rounds R] [--block B] [--model mlp|cnn] [--batch N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "maroon/backend.h"
#include "maroon/models.h"
#include "maroon/verify.h"

using namespace maroon;

namespace {

struct Loop {
  std::unique_ptr<models::MnistModel> model;
  models::TrainStep train;
  verify::EpochSampler sampler;
  std::vector<uint8_t> images;
  int64_t batch;
  Loop(const std::vector<uint8_t>& im, const std::string& kind, int64_t b)
      : model(models::make_model(kind, 0)), train(*model, 1e-3), sampler(60000, b, 0), images(im), batch(b) {}
  void step() {
    std::vector<uint32_t> idx = sampler.next();
    std::vector<uint8_t> x(idx.size() * 784), y(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      std::memcpy(&x[i * 784], &images[(idx[i] % 1000) * 784ull], 784);
      y[i] = static_cast<uint8_t>(idx[i] % 10);
    }
    train(models::images_to_input(x.data(), batch), models::labels_to_tensor(y.data(), batch));
  }
  verify::StateBinding binding() { return {model->state_dict(), &train.optimizer(), &sampler, true, {}}; }
};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7, block = 20;
  int64_t batch = 64;
  std::string kind = "mlp";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) set_num_threads(std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--block")) block = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--model")) kind = argv[i + 1];
    if (!std::strcmp(argv[i], "--batch")) batch = std::atoll(argv[i + 1]);
  }
  std::vector<uint8_t> images(1000 * 784);
  for (size_t i = 0; i < images.size(); ++i) images[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  std::string dir = std::filesystem::temp_directory_path() / ("maroon-bench-commit-" + std::to_string(::getpid()));
  const int64_t total = int64_t{rounds} * block + 1;
  Loop plain(images, kind, batch), bg(images, kind, batch), inl(images, kind, batch);
  verify::Job job{"bench-mnist-" + kind, {{"batch", std::to_string(batch)}}, {}, std::string(64, '0')};
  verify::RunOptions obg{dir + "/bg.run.json", total, 0, "bench", "", "", true};
  verify::RunOptions oin{dir + "/inline.run.json", total, 0, "bench", "", "", false};
  verify::Run rbg(job, bg.binding(), obg), rin(job, inl.binding(), oin);
  rbg.begin(), rin.begin();
  plain.step(), bg.step(), rbg.commit(), inl.step(), rin.commit();  // warm-up
  std::vector<double> t_plain, t_bg, t_inline;
  for (int r = 0; r < rounds; ++r) {
    double t0 = now();
    for (int i = 0; i < block; ++i) plain.step();
    double t1 = now();
    for (int i = 0; i < block; ++i) bg.step(), rbg.commit();
    rbg.commitments();  // waits for the last one
    double t2 = now();
    for (int i = 0; i < block; ++i) inl.step(), rin.commit();
    double t3 = now();
    t_plain.push_back((t1 - t0) / block), t_bg.push_back((t2 - t1) / block), t_inline.push_back((t3 - t2) / block);
  }
  double p = median(t_plain), b = median(t_bg), n = median(t_inline);
  size_t state_bytes = 0;
  for (auto& [k, t] : verify::capture(bg.binding(), 0, verify::Digest{})) state_bytes += static_cast<size_t>(t.nbytes());
  std::printf("MNIST %s step, batch %lld, state %.2f MB, %d thread(s), %s, %d rounds of %d steps each\n", kind.c_str(),
              static_cast<long long>(batch), static_cast<double>(state_bytes) / 1e6, num_threads(), simd_target().c_str(),
              rounds, block);
  std::printf("plain step                      %7.2f ms\n", 1e3 * p);
  std::printf("step + commit (background hash) %7.2f ms  ratio %.3f\n", 1e3 * b, b / p);
  std::printf("step + commit (inline hash)     %7.2f ms  ratio %.3f\n", 1e3 * n, n / p);
  std::filesystem::remove_all(dir);
  return 0;
}
