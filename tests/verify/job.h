// A small training job for the verify tests: synthetic MNIST-shaped data, the MNIST MLP or CNN,
// Adam and the epoch sampler, as a Program (what verify and bisect replay) and a Run.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "io/files.h"
#include "maroon/models.h"
#include "maroon/verify.h"

namespace maroon::verifytest {

inline std::string scratch_root() { return ::testing::TempDir() + "maroon_verify_" + std::to_string(::getpid()); }

// Removes this process's scratch directory (checkpoints are megabytes each) when the tests end.
struct ScratchCleanup {
  ~ScratchCleanup() {
    std::error_code ec;
    std::filesystem::remove_all(scratch_root(), ec);
  }
};
inline ScratchCleanup scratch_cleanup;

inline std::string scratch(const std::string& name) {
  std::string dir = scratch_root() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

struct Data {
  int64_t n;
  std::vector<uint8_t> images, labels;
};

// n images of SplitMix64 bytes with labels 0..9: integer arithmetic, the same everywhere.
inline Data synthetic(int64_t n) {
  Data d{n, std::vector<uint8_t>(static_cast<size_t>(n * 784)), std::vector<uint8_t>(static_cast<size_t>(n))};
  uint64_t s = 12345;
  auto next = [&] {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (auto& p : d.images) p = static_cast<uint8_t>(next());
  for (auto& l : d.labels) l = static_cast<uint8_t>(next() % 10);
  return d;
}

// The data the tests share: 96 synthetic images.
inline const Data& data() {
  static Data d = synthetic(96);
  return d;
}

// `text` with its first `from` replaced by `to` (the test fails if there is none).
inline std::string edited(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Writes `bytes` to `path`, then read(path) must throw a FormatError naming the path and saying
// `needle`.
template <class Read>
void expect_format_error(const std::string& path, const std::string& bytes, Read read, const std::string& needle) {
  io::write_file_atomic(path, bytes, "test");
  try {
    read(path);
    ADD_FAILURE() << "no error for: " << needle;
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// One side of a run: its own model, optimizer and sampler over shared data.
struct TestJob {
  const Data& data;
  std::string kind;
  int64_t batch;
  std::unique_ptr<models::MnistModel> model;
  std::unique_ptr<models::TrainStep> train;
  std::unique_ptr<verify::EpochSampler> sampler;
  // Perturbed parties: before_forward(k) runs before step k reads the state, after_step(k) after
  // its update (before the state is committed); fault = (k, f) runs step k with a faulty node.
  std::function<void(TestJob&, int64_t)> before_forward, after_step;
  std::optional<std::pair<int64_t, verify::Fault>> fault;

  TestJob(const Data& d, std::string k, int64_t b) : data(d), kind(std::move(k)), batch(b) {
    model = models::make_model(kind, 0);
    train = std::make_unique<models::TrainStep>(*model, 1e-3);
    sampler = std::make_unique<verify::EpochSampler>(d.n, b, 7);
  }
  verify::Job job() const {
    return {"test-" + kind, {{"batch", std::to_string(batch)}, {"seed", "0"}}, {}, std::string(64, '0')};
  }
  verify::StateBinding binding() { return {model->state_dict(), &train->optimizer(), sampler.get(), true, {}}; }
  std::optional<float> step(int64_t k) {
    if (fault && fault->first == k) {
      std::optional<float> loss;
      verify::trace([&] { loss = body(k); }, nullptr, fault->second);
      return loss;
    }
    return body(k);
  }
  std::optional<float> body(int64_t k) {
    if (before_forward) before_forward(*this, k);
    std::vector<uint32_t> idx = sampler->next();
    std::vector<uint8_t> x(idx.size() * 784), y(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      std::copy_n(&data.images[idx[i] * 784ull], 784, &x[i * 784]);
      y[i] = data.labels[idx[i]];
    }
    float loss = (*train)(models::images_to_input(x.data(), batch), models::labels_to_tensor(y.data(), batch)).loss;
    if (after_step) after_step(*this, k);
    return loss;
  }
  verify::Program program() {
    return {binding(), [this](int64_t k) { return step(k); }, {}};
  }
  // A whole run into `record` (checkpoints beside it).
  verify::RunRecord run(const std::string& record, int64_t steps, int64_t every, const std::string& resume = "",
                        const std::string& resume_record = "", bool background = true) {
    verify::RunOptions o{record, steps, every, "test", resume, resume_record, background};
    verify::Run r(job(), binding(), o);
    return r.train([this](int64_t k) { return step(k); });
  }
};

}  // namespace maroon::verifytest
