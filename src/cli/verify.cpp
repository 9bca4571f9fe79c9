// `maroon verify RUN`: replays a recorded run step by step and names the first step whose loss or
// weights differ, or says "identical".
#include <cstdio>
#include <cstring>

#include "cli/commands.h"
#include "cli/run.h"
#include "maroon/backend.h"

namespace maroon::cli {

namespace {
std::string bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  char b[64];
  std::snprintf(b, sizeof b, "0x%08x (%.9g)", u, static_cast<double>(f));
  return b;
}
}  // namespace

int cmd_verify(const Args& a) {
  if (a.positional.size() != 1) throw Error("verify takes one run record (.run.json) or weights file");
  apply_threads(a);
  std::string path = record_path_for(a.positional[0]);
  RunRecord rec = read_record(path);
  check_dataset(rec.cfg.dataset);
  data::Mnist ds = load_dataset(rec.cfg.dataset, a.get("data", ""));
  std::printf("maroon verify: %s (%s, %s model, %zu steps), %d thread(s), %s\n", path.c_str(), rec.cfg.dataset.c_str(),
              rec.cfg.model.c_str(), rec.losses.size(), num_threads(), simd_target().c_str());
  std::fflush(stdout);
  std::string data = split_digest(ds.train);
  if (data != rec.data_sha256) {
    std::printf("differs before step 1: the training data's sha256 is %s, the run used %s\n", data.c_str(),
                rec.data_sha256.c_str());
    return 1;
  }
  Run run(rec.cfg, ds.train);
  if (static_cast<int64_t>(rec.losses.size()) != run.total_steps())
    throw FormatError("[verify] '" + path + "': " + std::to_string(rec.losses.size()) +
                      " losses recorded, the run has " + std::to_string(run.total_steps()) + " steps");
  std::vector<float> losses;
  size_t next_ckpt = 0;
  while (run.done() < run.total_steps()) {
    models::StepResult r = run.step();
    int64_t done = run.done();
    losses.push_back(r.loss);
    float want = rec.losses[static_cast<size_t>(done - 1)];
    if (std::memcmp(&want, &r.loss, 4) != 0) {
      std::printf("differs at step %lld: loss %s, the run recorded %s\n", static_cast<long long>(done),
                  bits(r.loss).c_str(), bits(want).c_str());
      return 1;
    }
    if (run.is_checkpoint(done)) {
      std::string got = run.weights_digest();
      if (next_ckpt >= rec.checkpoints.size() || rec.checkpoints[next_ckpt].step != done)
        throw FormatError("[verify] '" + path + "': no recorded weights digest for step " + std::to_string(done));
      const Checkpoint& c = rec.checkpoints[next_ckpt++];
      if (got != c.weights_sha256) {
        int64_t prev = next_ckpt >= 2 ? rec.checkpoints[next_ckpt - 2].step : 0;
        std::printf(
            "differs at step %lld: weights sha256 %s, the run recorded %s (weights matched after step %lld; "
            "every loss through step %lld matched)\n",
            static_cast<long long>(done), got.c_str(), c.weights_sha256.c_str(), static_cast<long long>(prev),
            static_cast<long long>(done));
        return 1;
      }
    }
  }
  std::string weights = run.weights_digest(), trace = models::loss_trace_digest(losses);
  if (weights != rec.weights_sha256 || trace != rec.loss_trace_sha256) {
    std::printf("differs at the end: weights sha256 %s (recorded %s), loss trace sha256 %s (recorded %s)\n",
                weights.c_str(), rec.weights_sha256.c_str(), trace.c_str(), rec.loss_trace_sha256.c_str());
    return 1;
  }
  std::printf("identical: %lld steps, every loss and weights digest the same\n",
              static_cast<long long>(run.total_steps()));
  std::printf("weights sha256     %s\n", weights.c_str());
  std::printf("loss trace sha256  %s\n", trace.c_str());
  return 0;
}

}  // namespace maroon::cli
