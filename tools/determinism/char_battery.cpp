// The character GPT workload (maroon/char_gpt.h): both variants, the tests' tiny configuration
// (so its digests are also those of tests/data/char_gpt_digest.txt), trained and sampled in
// every configuration of the matrix, qemu AArch64 included (the Python example cannot run there;
// this is the same program in C++, checked bit for bit against it by the tests).
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "battery.h"

#if __has_include("maroon/char_gpt.h")
#include "maroon/char_gpt.h"

namespace maroon::determinism {

bool run_char_battery(Recorder& rec, int steps) {
  const models::Corpus corpus = models::load_corpus(models::kCharCorpusPath, models::kCharCorpusSha256);
  std::printf("# char=%s %d steps x batch 4\n", models::kCharCorpusPath, steps);
  std::fflush(stdout);
  for (bool llama : {false, true}) {
    const std::string name = llama ? "char.llama" : "char.gpt2";
    const models::CharRun r = models::train_char_gpt(corpus, models::tiny_config(llama), models::tiny_training(steps));
    std::vector<uint8_t> loss_bytes;
    for (float f : r.losses) {
      uint32_t u;
      std::memcpy(&u, &f, 4);
      for (int s = 0; s < 32; s += 8) loss_bytes.push_back(static_cast<uint8_t>(u >> s));
    }
    rec.add_bytes("char:train", name + ".losses", loss_bytes);
    rec.add_bytes("char:train", name + ".sample", std::vector<uint8_t>(r.sample.begin(), r.sample.end()));
    rec.note(name + ".digests", r.loss_digest + "/" + r.sample_digest + "/" + r.weights_digest + "/" + r.inference_digest);
  }
  return true;
}

}  // namespace maroon::determinism

#else

namespace maroon::determinism {
bool run_char_battery(Recorder&, int) { return false; }
}  // namespace maroon::determinism

#endif
