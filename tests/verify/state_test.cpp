// The state, its commitment and checkpoint files; the Merkle tree.
#include <fstream>

#include "io/files.h"
#include "job.h"
#include "maroon/safetensors.h"
#include "maroon/sha256.h"
#include "verify/digest.h"
#include "verify/sha256_ni.h"
#include "verify/state.h"

using namespace maroon;
using namespace maroon::verify;
using maroon::verifytest::TestJob;
using maroon::verifytest::data;

namespace {

std::string slurp(const std::string& p) { return io::read_file(p, "test"); }

Digest digest_of(int i) { return sha256(std::to_string(i)); }

// RFC 9162's MTH written out directly from its definition, as an independent check.
Digest mth(const std::vector<Digest>& d, size_t lo, size_t hi) {
  if (hi - lo == 1) return sha256(std::string(1, '\0') + std::string(d[lo].begin(), d[lo].end()));
  size_t k = 1;
  while (k * 2 < hi - lo) k *= 2;
  Digest l = mth(d, lo, lo + k), r = mth(d, lo + k, hi);
  return sha256(std::string(1, '\1') + std::string(l.begin(), l.end()) + std::string(r.begin(), r.end()));
}

}  // namespace

TEST(VerifyState, NamesCoverModelOptimizerRandomDataAndRun) {
  TestJob j(data(), "mlp", 8);
  State s = capture(j.binding(), 3, j.job().digest());
  std::vector<std::string> names;
  for (auto& [k, t] : s) names.push_back(k);
  for (const char* want : {"model.l1.weight", "model.l3.bias", "optim.lr", "optim.b1_t", "optim.b2_t",
                           "optim.m.l1.weight", "optim.v.l3.bias", "rng.seed", "rng.counter", "data.position",
                           "data.seed", "run.step", "run.job"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.size(), 6u + 6 + 6 + 3 + 2 + 4 + 2);
}

TEST(VerifyState, CommitmentIsTheCheckpointFilesSha256) {
  std::string dir = verifytest::scratch("commit");
  TestJob j(data(), "mlp", 8);
  j.step(1);
  State s = capture(j.binding(), 1, j.job().digest());
  write_checkpoint(s, dir + "/c.safetensors");
  std::string bytes = slurp(dir + "/c.safetensors");
  EXPECT_EQ(hex(state_commitment(s)), hex(sha256(bytes)));
  // The same bytes as safe_save of the state (no metadata): any safetensors reader loads it.
  EXPECT_EQ(bytes, nn::safe_save_bytes(s));
  Digest c;
  State back = read_checkpoint(dir + "/c.safetensors", &c);
  EXPECT_EQ(c, state_commitment(s));
  ASSERT_EQ(back.size(), s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(back[i].first, s[i].first);
    EXPECT_EQ(back[i].second.bytes(), s[i].second.bytes()) << s[i].first;
  }
}

// Run's background hasher hashes 64 KB at a time and evicts each chunk from the caches once
// hashed (src/verify/evict.cpp): the same digest, the checkpoint file's sha256, for tensors of
// several chunks and for a transposed view (gathered row by row), and not a byte changes.
TEST(VerifyState, EvictingCommitmentIsTheCheckpointFilesSha256) {
  std::string dir = verifytest::scratch("evict");
  TestJob j(data(), "mlp", 8);
  j.step(1);
  State s = capture(j.binding(), 1, j.job().digest());
  auto l1 = std::find_if(s.begin(), s.end(), [](auto& kv) { return kv.first == "model.l1.weight"; });
  ASSERT_NE(l1, s.end());
  ASSERT_GT(l1->second.nbytes(), int64_t{4} << 16);
  s.push_back({"zz.transposed", l1->second.T()});
  std::vector<std::vector<uint8_t>> before;
  for (auto& [k, t] : s) before.push_back(t.bytes());
  write_checkpoint(s, dir + "/e.safetensors");
  Frozen f = freeze(s);
  EXPECT_EQ(hex(commitment_evicting(f)), hex(sha256(slurp(dir + "/e.safetensors"))));
  evict_from_caches(f);
  EXPECT_EQ(commitment_evicting(f), commitment_of(f));
  for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(s[i].second.bytes(), before[i]) << s[i].first;
}

// Run's pooled hashing takes a state a piece at a time (PieceHasher): whatever the pieces' size,
// with or without eviction, the digest is commitment_of's, the transposed view (not one run of
// its buffer) included, and a budget of B bytes takes at least (bytes / B) pieces for the bytes held as runs.
TEST(VerifyState, PieceHasherGivesTheCommitmentForAnyPieceSize) {
  TestJob j(data(), "mlp", 8);
  j.step(1);
  State s = capture(j.binding(), 1, j.job().digest());
  auto l1 = std::find_if(s.begin(), s.end(), [](auto& kv) { return kv.first == "model.l1.weight"; });
  ASSERT_NE(l1, s.end());
  size_t bytes = 0;  // in runs of their buffers
  for (auto& [k, t] : s) bytes += static_cast<size_t>(t.nbytes());
  s.push_back({"zz.transposed", l1->second.T()});
  Frozen f = freeze(s);
  const Digest want = commitment_of(f);
  for (size_t budget : {size_t{7}, size_t{4096}, size_t{1} << 16, size_t{1} << 30})
    for (bool evict : {false, true}) {
      if (budget == 7 && evict) continue;  // a flush per 7 bytes: slow, and no other path
      PieceHasher h(f, evict);
      size_t pieces = 1;
      while (!h.piece(budget)) ++pieces;
      EXPECT_EQ(hex(h.finish()), hex(want)) << budget << (evict ? " evicting" : "");
      EXPECT_GE(pieces, bytes / budget) << budget;
    }
}

// Run's pooled hashing takes two consecutive states at once (PairHasher): each digest is
// commitment_of's, for states of one layout (hashed in lockstep, which the SHA instructions must
// have taken) and of two (one tensor transposed: not one run of its buffer, so one after the
// other), for any piece size, with or without eviction; and the bytes of one state never enter the
// other's digest (the second state is the next step's, so every tensor differs).
TEST(VerifyState, PairHasherGivesEachStatesCommitment) {
  TestJob j(data(), "mlp", 8);
  j.step(1);
  State s1 = capture(j.binding(), 1, j.job().digest());
  j.step(2);
  State s2 = capture(j.binding(), 2, j.job().digest());
  State t2 = s2;
  auto l1 = std::find_if(t2.begin(), t2.end(), [](auto& kv) { return kv.first == "model.l1.weight"; });
  ASSERT_NE(l1, t2.end());
  t2.push_back({"zz.transposed", l1->second.T()});
  const Frozen a = freeze(s1), b = freeze(s2), c = freeze(t2);
  const Digest da = commitment_of(a), db = commitment_of(b), dc = commitment_of(c);
  size_t bytes = a.header.size();  // of one state's serialisation
  for (auto& [k, t] : s1) bytes += static_cast<size_t>(t.nbytes());
  ASSERT_NE(da, db);
  for (const Frozen* second : {&b, &c}) {
    const bool same = second == &b;
    for (size_t budget : {size_t{7}, size_t{4096}, size_t{1} << 16, size_t{1} << 30})
      for (bool evict : {false, true}) {
        if (budget == 7 && evict) continue;  // a flush per 7 bytes: slow, and no other path
        const int64_t blocks0 = paired_blocks();
        PairHasher h(a, evict, *second, !evict);
        EXPECT_EQ(h.lockstep(), same);
        while (!h.piece(budget)) {
        }
        const auto [x, y] = h.finish();
        const std::string what = std::to_string(budget) + (evict ? " evicting" : "") + (same ? " lockstep" : " apart");
        EXPECT_EQ(hex(x), hex(da)) << what;
        EXPECT_EQ(hex(y), hex(same ? db : dc)) << what;
        // In lockstep, every whole block of both went through sha256_ni_blocks2 together.
        if (same && have_sha_ni()) {
          EXPECT_EQ(paired_blocks() - blocks0, static_cast<int64_t>(bytes / 64)) << what;
        }
        if (!same) {
          EXPECT_EQ(paired_blocks(), blocks0) << what;
        }
      }
  }
}

// update_pair gives the digests of two Hashers updated one after the other: every length through
// three blocks, from every offset in a block (the same offset in both: in lockstep; another
// offset: one after the other), in one update and in pieces.
TEST(VerifyDigest, PairedUpdateGivesEachMessagesDigest) {
  std::string bytes(4096 + 77, '\0');
  uint64_t s = 7;
  for (char& c : bytes) c = static_cast<char>((s = s * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  const std::string_view all(bytes);
  const int64_t blocks0 = paired_blocks();
  for (size_t head : {size_t{0}, size_t{1}, size_t{55}, size_t{63}, size_t{64}, size_t{100}})
    for (size_t head_b : {head, head + 3})
      for (size_t n = 0; n <= 200; ++n) {
        verify::Hasher a, b;
        a.update(all.substr(0, head));
        b.update(all.substr(1000, head_b));
        update_pair(a, bytes.data() + 2000, b, bytes.data() + 3000, n);
        EXPECT_EQ(hex(a.finish()), hex(sha256(std::string(all.substr(0, head)) + std::string(all.substr(2000, n)))))
            << head << " " << n;
        EXPECT_EQ(hex(b.finish()), hex(sha256(std::string(all.substr(1000, head_b)) + std::string(all.substr(3000, n)))))
            << head_b << " " << n;
      }
  verify::Hasher a, b;
  for (size_t at = 0; at < 2000; at += 37) update_pair(a, bytes.data() + at, b, bytes.data() + 2000 + at, std::min<size_t>(37, 2000 - at));
  EXPECT_EQ(hex(a.finish()), sha256_hex(bytes.substr(0, 2000)));
  EXPECT_EQ(hex(b.finish()), sha256_hex(bytes.substr(2000, 2000)));
  if (have_sha_ni()) {
    EXPECT_GT(paired_blocks(), blocks0);  // the lockstep path ran
  }
}

TEST(VerifyState, RestoreThenStepEqualsTheUninterruptedStep) {
  TestJob a(data(), "mlp", 8), b(data(), "mlp", 8);
  Digest job = a.job().digest();
  for (int k = 1; k <= 3; ++k) a.step(k);
  State mid = capture(a.binding(), 3, job);
  for (int k = 4; k <= 5; ++k) a.step(k);
  EXPECT_EQ(restore(b.binding(), mid, job, "test"), 3);
  EXPECT_EQ(state_commitment(capture(b.binding(), 3, job)), state_commitment(mid));
  for (int k = 4; k <= 5; ++k) b.step(k);
  EXPECT_EQ(hex(state_commitment(capture(b.binding(), 5, job))), hex(state_commitment(capture(a.binding(), 5, job))));
}

TEST(VerifyState, CapturedStateDoesNotFollowLaterAssigns) {
  TestJob j(data(), "mlp", 8);
  Digest job = j.job().digest();
  State s = capture(j.binding(), 0, job);
  Digest before = state_commitment(s);
  j.step(1);
  EXPECT_EQ(state_commitment(s), before);
}

TEST(VerifyState, RestoreRejectsMismatchedStates) {
  TestJob j(data(), "mlp", 8);
  Digest job = j.job().digest();
  State s = capture(j.binding(), 0, job);
  auto expect_error = [&](State bad, const std::string& needle) {
    try {
      restore(j.binding(), bad, job, "ckpt");
      ADD_FAILURE() << "no error for " << needle;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  State missing = s;
  missing.erase(missing.begin());
  expect_error(missing, "no tensor \"data.batch\"");
  State extra = s;
  extra.push_back({"zz.extra", Tensor::zeros({1})});
  expect_error(extra, "\"zz.extra\" is not part of this run's state");
  State shape = s;
  for (auto& [k, t] : shape)
    if (k == "model.l1.bias") t = Tensor::zeros({3});
  expect_error(shape, "\"model.l1.bias\" is float32 (3,), this run's is float32 (512,)");
  try {
    restore(j.binding(), s, sha256("another job"), "ckpt");
    ADD_FAILURE();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("another job's state"), std::string::npos) << e.what();
  }
  State data_seed = s;
  for (auto& [k, t] : data_seed)
    if (k == "data.seed") t = Tensor::from_vector<uint64_t>({99}, {});
  expect_error(data_seed, "data.seed is 99, this run's is 7");
}

TEST(VerifyState, CheckpointReaderRejectsNonCanonicalAndBrokenFiles) {
  std::string dir = verifytest::scratch("canon");
  TestJob j(data(), "mlp", 8);
  State s = capture(j.binding(), 0, j.job().digest());
  auto expect_error = [&](const std::string& bytes, const std::string& needle) {
    verifytest::expect_format_error(dir + "/bad.safetensors", bytes, [](const std::string& p) { read_checkpoint(p); },
                                    needle);
  };
  expect_error(nn::safe_save_bytes(s, {{"step", "0"}}), "not canonical");
  State reversed(s.rbegin(), s.rend());
  expect_error(nn::safe_save_bytes(reversed), "not canonical");
  std::string good = nn::safe_save_bytes(s);
  expect_error(good.substr(0, good.size() - 5), "truncated");
  expect_error(good.substr(0, 20), "not a valid safetensors file");
}

TEST(VerifyMerkle, RootMatchesRfc9162AndEveryProofChecks) {
  for (size_t n = 1; n <= 17; ++n) {
    std::vector<Digest> d;
    for (size_t i = 0; i < n; ++i) d.push_back(digest_of(static_cast<int>(i)));
    Digest root = merkle_root(d);
    EXPECT_EQ(root, mth(d, 0, n)) << n;
    for (size_t i = 0; i < n; ++i) {
      std::vector<Digest> p = merkle_proof(d, i);
      EXPECT_TRUE(merkle_check(root, i, n, d[i], p)) << n << " " << i;
      EXPECT_FALSE(merkle_check(root, i, n, digest_of(1000), p)) << n << " " << i;
      if (!p.empty()) {
        p[0][0] ^= 1;
        EXPECT_FALSE(merkle_check(root, i, n, d[i], p)) << n << " " << i;
      }
      std::vector<Digest> e = d;
      e[i][31] ^= 0x80;
      int64_t compared = 0;
      EXPECT_EQ(first_difference(d, e, &compared), static_cast<int64_t>(i));
      int64_t depth = 0;  // ceil(log2(n))
      while ((size_t{1} << depth) < n) ++depth;
      EXPECT_LE(compared, 1 + depth);
      e = d;
      for (size_t k = i; k < n; ++k) e[k][0] ^= 1;  // a run that diverges at i stays diverged
      EXPECT_EQ(first_difference(d, e), static_cast<int64_t>(i));
    }
    EXPECT_EQ(first_difference(d, d), -1);
  }
  // A leaf's hash is not an inner node's: the tree of two leaves is not the leaf of their hash.
  std::vector<Digest> two{digest_of(0), digest_of(1)};
  EXPECT_NE(merkle_root(two), merkle_root({merkle_root(two)}));
}

TEST(VerifyDigest, ShaInstructionsAndPortableShaAgreeOnEveryLength) {
  // Hasher uses the CPU's SHA instructions where it has them (sha256_ni.cpp); maroon::Sha256 is the
  // portable FIPS 180-4 code. Every length through three blocks, in one update and in pieces.
  std::string bytes(4096 + 77, '\0');
  uint64_t s = 1;
  for (char& c : bytes) c = static_cast<char>((s = s * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  for (size_t n = 0; n <= 200; ++n) {
    Sha256 p;
    p.update(bytes.data(), n);
    EXPECT_EQ(hex(sha256(std::string_view(bytes).substr(0, n))), p.finish_hex()) << n;
  }
  verify::Hasher h;
  for (size_t at = 0; at < bytes.size(); at += 37) h.update(bytes.data() + at, std::min<size_t>(37, bytes.size() - at));
  EXPECT_EQ(hex(h.finish()), sha256_hex(bytes));
  EXPECT_EQ(hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // FIPS 180-2 B.1
}
