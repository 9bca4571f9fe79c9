// Run records: the canonical JSON a run leaves (docs/verify.md, "Run record"), its seal, and a
// strict reader.
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "io/files.h"
#include "verify/digest.h"
#include "verify/jsonio.h"
#include "verify/record.h"

namespace maroon::verify {

namespace {

std::string job_json(const Job& j, bool with_paths) {
  std::string s = "{\"name\": " + q(j.name) + ", \"config\": {";
  bool first = true;
  for (auto& [k, v] : j.config) s += (first ? "" : ", ") + q(k) + ": " + q(v), first = false;
  s += "}, \"data\": [";
  for (size_t i = 0; i < j.data.size(); ++i) {
    s += (i ? ", {" : "{") + std::string("\"name\": ") + q(j.data[i].name);
    if (with_paths) s += ", \"path\": " + q(j.data[i].path);
    s += ", \"sha256\": " + q(j.data[i].sha256) + "}";
  }
  return s + "], \"arch_sha256\": " + q(j.arch_sha256) + "}";
}

std::string files_json(const std::vector<FileRef>& fs) {
  std::string s = "[";
  for (size_t i = 0; i < fs.size(); ++i)
    s += (i ? ",\n    " : "\n    ") + std::string("{\"name\": ") + q(fs[i].name) + ", \"path\": " + q(fs[i].path) +
         ", \"sha256\": " + q(fs[i].sha256) + "}";
  return s + (fs.empty() ? "]" : "\n  ]");
}

std::string provenance_json(const Provenance& p) {
  return "{\"maroon_version\": " + q(p.maroon_version) + ", \"git_commit\": " + q(p.git_commit) +
         ", \"spec_sha256\": " + q(p.spec_sha256) + ", \"compiler\": " + q(p.compiler) +
         ", \"build_type\": " + q(p.build_type) + ", \"simd_target\": " + q(p.simd_target) +
         ", \"backend\": " + q(p.backend) + ", \"threads\": " + std::to_string(p.threads) +
         ", \"command_line\": " + q(p.command_line) + "}";
}

std::string f32_hex(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  char b[9];
  std::snprintf(b, sizeof b, "%08x", u);
  return b;
}

// The record with the given seal; every field in a fixed order and layout.
std::string serialise(const RunRecord& r, const std::string& seal) {
  std::string s = "{\n  \"format\": \"maroon-run/3\",\n";
  s += "  \"job\": " + job_json(r.job, true) + ",\n";
  s += "  \"job_sha256\": " + q(hex(r.job_sha256)) + ",\n";
  s += "  \"steps\": " + std::to_string(r.steps) + ",\n";
  s += "  \"checkpoint_every\": " + std::to_string(r.checkpoint_every) + ",\n";
  s += "  \"provenance\": " + provenance_json(r.provenance) + ",\n";
  s += "  \"merkle_root\": " + q(hex(r.merkle_root)) + ",\n";
  s += "  \"states\": [";
  for (size_t i = 0; i < r.states.size(); ++i) s += (i ? ",\n    " : "\n    ") + q(hex(r.states[i]));
  s += r.states.empty() ? "],\n" : "\n  ],\n";
  s += "  \"checkpoints\": [";
  for (size_t i = 0; i < r.checkpoints.size(); ++i)
    s += (i ? ",\n    " : "\n    ") + std::string("{\"step\": ") + std::to_string(r.checkpoints[i].step) +
         ", \"path\": " + q(r.checkpoints[i].path) + "}";
  s += r.checkpoints.empty() ? "],\n" : "\n  ],\n";
  s += "  \"losses_f32_bits\": [";
  for (size_t i = 0; i < r.losses.size(); ++i)
    s += std::string(i % 8 ? ", " : (i ? ",\n    " : "\n    ")) + q(f32_hex(r.losses[i]));
  s += r.losses.empty() ? "],\n" : "\n  ],\n";
  s += "  \"outputs\": " + files_json(r.outputs) + ",\n";
  s += "  \"claims\": {";
  bool first = true;
  for (auto& [k, v] : r.claims) s += (first ? "" : ", ") + q(k) + ": " + q(v), first = false;
  s += "},\n";
  return s + "  \"seal\": " + q(seal) + "\n}\n";
}

std::vector<FileRef> read_files(const json::Value& a, const std::string& where) {
  std::vector<FileRef> out;
  for (size_t i = 0; i < a.items.size(); ++i) {
    Obj o(a.items[i], where + "[" + std::to_string(i) + "]", {"name", "path", "sha256"});
    out.push_back({o.str("name"), o.str("path"), hex(o.digest("sha256"))});
  }
  return out;
}

Job read_job(const Obj& top, const std::string& where) {
  Obj o(top.obj("job"), where + " job", {"name", "config", "data", "arch_sha256"});
  Job j;
  j.name = o.str("name");
  for (auto& f : o.obj("config").fields) {
    if (f.value.kind != json::Value::Kind::String) throw FormatError(o.field("config") + "." + f.key + " is not a string");
    j.config[f.key] = f.value.str;
  }
  j.data = read_files(o.arr("data"), o.field("data"));
  j.arch_sha256 = hex(o.digest("arch_sha256"));
  return j;
}

Provenance read_provenance(const Obj& top, const std::string& where) {
  Obj o(top.obj("provenance"), where + " provenance",
        {"maroon_version", "git_commit", "spec_sha256", "compiler", "build_type", "simd_target", "backend", "threads",
         "command_line"});
  Provenance p;
  p.maroon_version = o.str("maroon_version");
  p.git_commit = o.str("git_commit");
  p.spec_sha256 = o.str("spec_sha256");
  p.compiler = o.str("compiler");
  p.build_type = o.str("build_type");
  p.simd_target = o.str("simd_target");
  p.backend = o.str("backend");
  p.threads = o.num("threads");
  p.command_line = o.str("command_line");
  return p;
}

}  // namespace

std::string canonical_record(const RunRecord& r) { return serialise(r, r.seal); }
std::string seal_of(const RunRecord& r) { return hex(sha256(serialise(r, ""))); }

Digest Job::digest() const { return sha256(job_json(*this, false)); }

std::string record_json(RunRecord& r) {
  r.job_sha256 = r.job.digest();
  r.merkle_root = merkle_root(r.states);
  r.seal = hex(sha256(serialise(r, "")));
  return serialise(r, r.seal);
}

void write_record(RunRecord& r, const std::string& path) {
  io::write_file_atomic(path, record_json(r), "[run record]");
}

RunRecord read_record(const std::string& path) {
  const std::string where = "run record '" + path + "':";
  std::string text = io::read_file(path, "[run record]", uint64_t{256} << 20);
  json::Value v = json::parse(text, where);
  Obj o(v, where, {"format", "job", "job_sha256", "steps", "checkpoint_every", "provenance", "merkle_root", "states",
                   "checkpoints", "losses_f32_bits", "outputs", "claims", "seal"});
  std::string format = o.str("format");
  if (format != "maroon-run/3")
    throw o.fail("has format \"" + format + "\", expected \"maroon-run/3\"" +
                 (format == "maroon-run/1" || format == "maroon-run/2"
                      ? " (records before maroon-run/3 commit to no states: train the run again)"
                      : ""));
  RunRecord r;
  r.job = read_job(o, where);
  r.job_sha256 = o.digest("job_sha256");  // verify checks it against the job's fields
  r.steps = o.num("steps");
  r.checkpoint_every = o.num("checkpoint_every");
  r.provenance = read_provenance(o, where);
  r.merkle_root = o.digest("merkle_root");
  const json::Value& states = o.arr("states");
  if (states.items.size() > static_cast<size_t>(r.steps) + 1)
    throw o.fail("has " + std::to_string(states.items.size()) + " states for " + std::to_string(r.steps) + " steps");
  for (size_t i = 0; i < states.items.size(); ++i) {
    if (states.items[i].kind != json::Value::Kind::String) throw o.fail("states[" + std::to_string(i) + "] is not a string");
    r.states.push_back(parse_digest(states.items[i].str, where + " states[" + std::to_string(i) + "]"));
  }
  const json::Value& cks = o.arr("checkpoints");
  for (size_t i = 0; i < cks.items.size(); ++i) {
    Obj c(cks.items[i], where + " checkpoints[" + std::to_string(i) + "]", {"step", "path"});
    r.checkpoints.push_back({c.num("step"), c.str("path")});
    if (r.checkpoints.back().step >= static_cast<int64_t>(r.states.size()) ||
        (i && r.checkpoints[i - 1].step >= r.checkpoints.back().step))
      throw c.fail("names step " + std::to_string(r.checkpoints.back().step) +
                   ": checkpoints must be in increasing step order and have a recorded state");
  }
  for (auto& l : o.arr("losses_f32_bits").items) {
    if (l.kind != json::Value::Kind::String || l.str.size() != 8 ||
        l.str.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw o.fail("has a loss that is not 8 lowercase hex digits");
    uint32_t u = static_cast<uint32_t>(std::strtoul(l.str.c_str(), nullptr, 16));
    float x;
    std::memcpy(&x, &u, 4);
    r.losses.push_back(x);
  }
  if (!r.losses.empty() && r.losses.size() + 1 != r.states.size())
    throw o.fail("has " + std::to_string(r.losses.size()) + " losses for " + std::to_string(r.states.size() - 1) +
                 " steps taken");
  r.outputs = read_files(o.arr("outputs"), where + " outputs");
  for (auto& f : o.obj("claims").fields) {
    if (f.value.kind != json::Value::Kind::String) throw o.fail("claims." + f.key + " is not a string");
    r.claims[f.key] = f.value.str;
  }
  r.seal = hex(o.digest("seal"));
  return r;
}

std::string checkpoint_dir_for(const std::string& record_path) {
  const std::string ext = ".run.json";
  std::string stem = record_path;
  if (stem.size() > ext.size() && stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0)
    stem.resize(stem.size() - ext.size());
  return stem + ".ckpt";
}

std::string resolve(const std::string& record_path, const std::string& recorded) {
  std::filesystem::path p(recorded);
  if (p.is_absolute()) return recorded;
  return (std::filesystem::path(record_path).parent_path() / p).string();
}

}  // namespace maroon::verify
