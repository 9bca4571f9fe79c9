// verify_run: an honest run verifies; a flipped bit in any file it names, an edited field of the
// record and a forged but self-consistent record are each reported with the file, the field or
// step and both values.
#include <filesystem>

#include "io/files.h"
#include "job.h"
#include "maroon/safetensors.h"

using namespace maroon;
using namespace maroon::verify;
using maroon::verifytest::TestJob;
using maroon::verifytest::data;

namespace {

// A run with a data file and a weights file, so that verify has every kind of file to check.
struct Recorded {
  std::string dir, record;
  RunRecord rec;
  explicit Recorded(const std::string& name) : dir(verifytest::scratch(name)), record(dir + "/r.run.json") {
    io::write_file_atomic(dir + "/images.bin", std::string(data().images.begin(), data().images.end()), "test");
    TestJob j(data(), "mlp", 8);
    Job job = j.job();
    job.data.push_back({"images", "images.bin", hex(file_digest(dir + "/images.bin", "test"))});
    RunOptions o;
    o.record = record, o.steps = 4, o.checkpoint_every = 2;
    verify::Run run(job, j.binding(), o);
    run.begin();
    while (run.step() < run.total_steps()) run.commit(j.step(run.step() + 1));
    nn::safe_save(j.model->state_dict(), dir + "/w.safetensors");
    rec = run.finish({{"weights", dir + "/w.safetensors", ""}}, {{"test_accuracy", "12.50"}});
  }
  VerifyReport verify(bool replay = true) {
    TestJob fresh(data(), "mlp", 8);
    Program p = fresh.program();
    VerifyOptions o;
    o.replay = replay;
    return verify_run(read_record(record), record, &p, o);
  }
  void flip(const std::string& file, size_t at) {
    std::string b = io::read_file(file, "test");
    b[at] ^= 0x04;
    io::write_file_atomic(file, b, "test");
  }
};

std::string all(const VerifyReport& r) {
  std::string s;
  for (auto& f : r.findings) s += f.message() + "\n";
  return s;
}

}  // namespace

TEST(VerifyRecord, HonestRunVerifiesFilesAndEveryReplayedStep) {
  Recorded r("honest");
  VerifyReport rep = r.verify();
  EXPECT_TRUE(rep.findings.empty()) << all(rep);
  EXPECT_EQ(rep.steps_replayed, 4);
  EXPECT_EQ(rep.files_checked, 3 + 1 + 1);  // checkpoints 0, 2, 4; the data; the weights
  EXPECT_EQ(rep.final_state, r.rec.states.back());
}

TEST(VerifyRecord, FlippedBitInAnyNamedFileIsReported) {
  for (std::string file : {"r.ckpt/step-000000002.safetensors", "images.bin", "w.safetensors"}) {
    Recorded r("flip");
    std::string path = r.dir + "/" + file;
    r.flip(path, io::read_file(path, "test").size() - 3);
    VerifyReport rep = r.verify(false);
    ASSERT_EQ(rep.findings.size(), 1u) << file << "\n" << all(rep);
    const Finding& f = rep.findings[0];
    EXPECT_EQ(f.file, path);
    EXPECT_NE(f.recorded, f.found);
    EXPECT_EQ(f.recorded.size(), 64u);
    EXPECT_EQ(f.found.size(), 64u);
    if (file[0] == 'r') {
      EXPECT_EQ(f.step, 2);
    }
  }
}

TEST(VerifyRecord, EditedFieldsAreReportedWithBothValues) {
  Recorded r("edit");
  std::string text = io::read_file(r.record, "test");
  auto expect = [&](const std::string& from, const std::string& to, const std::string& field) {
    std::string t = text;
    size_t at = t.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    io::write_file_atomic(r.record, t, "test");
    VerifyReport rep = r.verify(false);
    std::string m = all(rep);
    EXPECT_NE(m.find(field), std::string::npos) << field << "\n" << m;
    EXPECT_NE(m.find(r.record), std::string::npos) << m;
  };
  std::string s2 = hex(r.rec.states[2]);
  expect(s2, std::string(64, 'a'), "merkle_root (of the states)");
  expect("\"batch\": \"8\"", "\"batch\": \"9\"", "job_sha256 (of the job's fields)");
  expect("\"command_line\": \"\"", "\"command_line\": \"x\"", "seal");
  expect("\"test_accuracy\": \"12.50\"", "\"test_accuracy\": \"99.50\"", "seal");
  expect("\"steps\": 4,", "\"steps\":  4,", "layout");
}

TEST(VerifyRecord, ForgedSelfConsistentRecordFailsTheReplayAtItsStep) {
  Recorded r("forged");
  RunRecord forged = read_record(r.record);
  forged.states[3][0] ^= 1;
  write_record(forged, r.record);  // a new root and seal: consistent, but not what step 3 computes
  VerifyReport rep = r.verify();
  ASSERT_FALSE(rep.findings.empty());
  const Finding& f = rep.findings.back();
  EXPECT_EQ(f.step, 3);
  EXPECT_EQ(f.field, "states[3] (replayed)");
  EXPECT_EQ(f.recorded, hex(forged.states[3]));
  EXPECT_EQ(f.found, hex(r.rec.states[3]));
  EXPECT_EQ(rep.steps_replayed, 3);
}

TEST(VerifyRecord, MalformedRecordsAreErrorsNamingTheFile) {
  Recorded r("malformed");
  std::string text = io::read_file(r.record, "test");
  auto expect = [&](const std::string& bytes, const std::string& needle) {
    verifytest::expect_format_error(r.record, bytes, read_record, needle);
  };
  using verifytest::edited;
  expect(text.substr(0, text.size() / 3), "");
  expect("{}", "has no field \"format\"");
  expect(edited(text, "maroon-run/3", "maroon-run/1"), "records before maroon-run/3 commit to no states");
  expect(edited(text, "\"steps\": 4", "\"steps\": 1"), "states for 1 steps");
  expect(edited(text, "{\"step\": 2", "{\"step\": 9"), "checkpoints must be in increasing step order");
}
