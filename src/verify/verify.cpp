// verify_run: every check a record allows, each difference a Finding (file, field or step, both
// values). Malformed input throws FormatError instead (it cannot be compared).
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "io/files.h"
#include "verify/digest.h"
#include "verify/record.h"
#include "verify/state.h"

namespace maroon::verify {

std::string Finding::message() const {
  std::string s = file + ": " + field;
  if (step >= 0) s += " (step " + std::to_string(step) + ")";
  return s + ": recorded " + recorded + ", found " + found;
}

namespace {

namespace fs = std::filesystem;

std::string canonical_path(const std::string& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::absolute(p), ec);
  return ec ? p : c.string();
}

// Hashes `path` and compares with `want`; a missing or unreadable file is a finding too.
bool check_file(VerifyReport& rep, const std::string& path, const std::string& field, int64_t step,
                const std::string& want) {
  ++rep.files_checked;
  std::string got;
  try {
    got = hex(file_digest(path, "[verify]"));
  } catch (const FormatError& e) {
    rep.findings.push_back({path, field, step, want, std::string("no readable file (") + e.what() + ")"});
    return false;
  }
  if (got == want) return true;
  rep.findings.push_back({path, field, step, want, got});
  return false;
}

void check_record(VerifyReport& rep, const RunRecord& r, const std::string& path) {
  std::string seal = seal_of(r);
  if (seal != r.seal)
    rep.findings.push_back({path, "seal (SHA-256 of every other field: one was edited)", -1, r.seal, seal});
  std::string text = io::read_file(path, "[verify] run record", uint64_t{256} << 20);
  if (text != canonical_record(r))
    rep.findings.push_back({path, "layout", -1, "the canonical JSON of its fields", "other bytes (edited by hand?)"});
  if (r.job.digest() != r.job_sha256)
    rep.findings.push_back({path, "job_sha256 (of the job's fields)", -1, hex(r.job_sha256), hex(r.job.digest())});
  if (merkle_root(r.states) != r.merkle_root)
    rep.findings.push_back({path, "merkle_root (of the states)", -1, hex(r.merkle_root), hex(merkle_root(r.states))});
  if (!r.complete())
    rep.findings.push_back({path, "states", -1, std::to_string(r.steps + 1) + " (steps + 1)",
                            std::to_string(r.states.size()) + " (an interrupted run)"});
}

void check_files(VerifyReport& rep, const RunRecord& r, const std::string& path, const VerifyOptions& o) {
  std::map<std::string, std::pair<std::string, std::string>> known;  // canonical path -> (field, sha256)
  for (const CheckpointRef& c : r.checkpoints) {
    std::string p = resolve(path, c.path), want = hex(r.states[static_cast<size_t>(c.step)]);
    known[canonical_path(p)] = {"checkpoint, states[" + std::to_string(c.step) + "]", want};
    check_file(rep, p, "sha256 = states[" + std::to_string(c.step) + "]", c.step, want);
  }
  for (const FileRef& d : r.job.data) {
    std::string p = o.data_dir.empty() ? resolve(path, d.path) : (fs::path(o.data_dir) / fs::path(d.path).filename()).string();
    known[canonical_path(p)] = {"job.data " + d.name, d.sha256};
    check_file(rep, p, "sha256 (job.data " + d.name + ")", -1, d.sha256);
  }
  for (const FileRef& f : r.outputs) {
    std::string p = resolve(path, f.path);
    known[canonical_path(p)] = {"outputs " + f.name, f.sha256};
    check_file(rep, p, "sha256 (outputs " + f.name + ")", -1, f.sha256);
  }
  // A file named on the command line is checked under its role (above) when the record names
  // its path; a copy elsewhere is compared with the entry of the same file name.
  for (const std::string& e : o.extra_files) {
    if (known.count(canonical_path(e))) continue;
    std::string name = fs::path(e).filename().string();
    auto same_name = [&](const std::string& recorded) { return fs::path(recorded).filename().string() == name; };
    bool found = false;
    for (const FileRef& f : r.outputs)
      if (!found && same_name(f.path)) found = true, check_file(rep, e, "sha256 (outputs " + f.name + ")", -1, f.sha256);
    for (const CheckpointRef& c : r.checkpoints)
      if (!found && same_name(c.path))
        found = true, check_file(rep, e, "sha256 = states[" + std::to_string(c.step) + "]", c.step,
                                 hex(r.states[static_cast<size_t>(c.step)]));
    if (!found) rep.findings.push_back({e, "reference", -1, "(no file of this name)", "a file given to verify"});
  }
}

}  // namespace

VerifyReport verify_run(const RunRecord& r, const std::string& path, Program* program, const VerifyOptions& o) {
  VerifyReport rep;
  check_record(rep, r, path);
  check_files(rep, r, path, o);
  if (!o.replay || !program) return rep;
  const Digest job = r.job.digest();
  auto diff = [&](int64_t step, const Digest& got, const std::string& what) {
    rep.findings.push_back({path, what, step,
                            step < static_cast<int64_t>(r.states.size()) ? hex(r.states[static_cast<size_t>(step)])
                                                                         : "(none)",
                            hex(got)});
  };
  Digest c = state_commitment(capture(program->binding, 0, job));
  if (r.states.empty() || c != r.states[0]) {
    diff(0, c, "states[0] (the initial state)");
    return rep;
  }
  for (int64_t k = 1; k < static_cast<int64_t>(r.states.size()); ++k) {
    if (program->before_step) program->before_step(k);
    std::optional<float> loss = program->step(k);
    ++rep.steps_replayed;
    if (loss && !r.losses.empty()) {
      float want = r.losses[static_cast<size_t>(k - 1)];
      uint32_t a, b;
      std::memcpy(&a, &want, 4), std::memcpy(&b, &*loss, 4);
      if (a != b) {
        char x[64], y[64];
        std::snprintf(x, sizeof x, "0x%08x (%.9g)", a, static_cast<double>(want));
        std::snprintf(y, sizeof y, "0x%08x (%.9g)", b, static_cast<double>(*loss));
        rep.findings.push_back({path, "losses_f32_bits[" + std::to_string(k - 1) + "]", k, x, y});
        return rep;
      }
    }
    c = state_commitment(capture(program->binding, k, job));
    if (c != r.states[static_cast<size_t>(k)]) {
      diff(k, c, "states[" + std::to_string(k) + "] (replayed)");
      return rep;
    }
  }
  rep.final_state = c;
  return rep;
}

}  // namespace maroon::verify
