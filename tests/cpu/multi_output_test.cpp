// Kernels of several outputs (cpu/plan.cpp find_outputs): earlier elementwise nodes of a
// kernel's shape that only it reads are computed in it and written by it in the same pass
// (Adam's m, v and parameter). Every output's bits against the reference executor on every SIMD
// target and 1, 2 and 3 threads, each run checked to have taken the path (as an accumulator
// program with Out steps, whole tiles in place where the shape allows, and through the segment
// kernels with accumulator programs off); and graphs whose nodes must stay in kernels of their
// own (another shape, read through a view, by a reduction, by another kernel) checked to keep
// the bits, and where nothing may merge, that nothing did; states assigned across TinyJit
// replays, and the optimizers' steps eager and jitted.
#include <gtest/gtest.h>

#include <optional>

#include "harness.h"
#include "cpu/kernel.h"
#include "maroon/jit.h"
#include "maroon/optim.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// Counters a case's CPU runs must each have moved (an accumulator program, whole tiles in place).
struct Paths {
  bool acc = false, in_place = false;
};

// Accumulator programs off for the scope: the segment kernels' outputs (chain_eval_test.cpp).
struct AccProgramsOff {
  AccProgramsOff() { cpu::set_acc_programs(false); }
  ~AccProgramsOff() { cpu::set_acc_programs(true); }
};

// The last tensor of `build()` realized with the others alive (each an output the graph
// materializes: a handle sees it), then every one's bytes: on the reference executor, then on the
// CPU backend on every target and thread count. `merges`: each CPU run must run a kernel of
// several outputs (true), or none (false); `paths`: and must have taken these paths.
void check_outputs(const std::string& what, const std::function<std::vector<Tensor>()>& build, bool merges,
                   Paths paths = {}) {
  BackendSettings keep;
  auto run = [&] {
    std::vector<Tensor> t = build();
    t.back().realize();
    std::vector<std::vector<uint8_t>> out;
    for (const Tensor& x : t) out.push_back(x.bytes());
    return out;
  };
  set_backend(Backend::Ref);
  const std::vector<std::vector<uint8_t>> want = run();
  set_backend(Backend::Cpu);
  for (const std::string& target : targets_to_test()) {
    set_simd_target(target);
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      const int64_t before = cpu::multi_output_runs(), acc = cpu::acc_runs(), range = cpu::acc_range_runs();
      const std::vector<std::vector<uint8_t>> got = run();
      const int64_t runs = cpu::multi_output_runs() - before;
      ++g_runs;
      if (paths.acc) {
        EXPECT_GT(cpu::acc_runs(), acc) << what << " on " << target << ": no accumulator program ran";
      }
      if (paths.in_place) {
        EXPECT_GT(cpu::acc_range_runs(), range) << what << " on " << target << ": no tiles in place";
      }
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_TRUE(got[i] == want[i]) << what << " output " << i << " on " << target << " with " << threads << " threads";
      if (merges) EXPECT_GE(runs, 1) << what << " on " << target << ": no kernel wrote several outputs";
      else EXPECT_EQ(runs, 0) << what << " on " << target << ": a kernel wrote several outputs";
    }
  }
}

constexpr DType kOutDtypes[] = {DType::Float32, DType::Float64};
// One element, a partial vector, tiles with a partial last one, many tiles.
const Shape kOutShapes[] = {{1}, {7, 13}, {3, 300}, {3, 24001}};

// optim.cpp's Adam update of one parameter, its states' new values realized with it.
std::vector<Tensor> adam_update(const Shape& s, DType d, bool specials) {
  Tensor t = specials ? random_bits_tensor(s, d, 1) : near_one_tensor(d, s, 1);
  Tensor m = specials ? random_bits_tensor(s, d, 2) : near_one_tensor(d, s, 2);
  Tensor v = specials ? random_bits_tensor(s, d, 3) : near_one_tensor(d, s, 3, true);
  Tensor g = specials ? random_bits_tensor(s, d, 4) : near_one_tensor(d, s, 4, true);
  Tensor c1 = near_one_tensor(d, {1}, 5), c2 = near_one_tensor(d, {1}, 6);
  Tensor m_next = prim::add(prim::mul(m, 0.9), prim::mul(g, 0.1));
  Tensor v_next = prim::add(prim::mul(v, 0.999), prim::mul(prim::mul(g, g), 0.001));
  Tensor m_hat = prim::mul(m_next, prim::reciprocal(c1.reshape(Shape(s.size(), 1)).expand(s)));
  Tensor v_hat = prim::mul(v_next, prim::reciprocal(c2.reshape(Shape(s.size(), 1)).expand(s)));
  Tensor up = prim::mul(m_hat, prim::reciprocal(prim::add(prim::sqrt(v_hat), 1e-8)));
  return {m_next, v_next, prim::add(t, prim::mul(prim::mul(up, 1e-3), -1.0))};
}

// As one accumulator program whose Out steps store m and v (whole tiles in place for the
// largest shape), and through the segment kernels.
TEST(CpuMultiOutput, AdamUpdate) {
  int cases = 0;
  for (bool acc : {true, false}) {
    std::optional<AccProgramsOff> off;
    if (!acc) off.emplace();
    for (DType d : kOutDtypes)
      for (const Shape& s : kOutShapes)
        for (bool specials : {false, true}) {
          ++cases;
          const Paths paths{acc, acc && numel(s) > 4 * cpu::kTile};
          check_outputs("adam " + std::string(dtype_name(d)) + " " + shape_str(s) + (specials ? " random bits" : "") +
                            (acc ? "" : " segments"),
                        [&] { return adam_update(s, d, specials); }, true, paths);
        }
  }
  EXPECT_EQ(cases, 32);
}

// An output that a WHERE copies, one that is a WHERE's result, one read by a later step only
// through a slot, and one that is the running value when the next output is made: the Out
// steps' Canon (the stored value and what the kernel reads on are the one-op kernels' bits).
TEST(CpuMultiOutput, AccumulatorOutputs) {
  for (DType d : kOutDtypes)
    for (const Shape& s : kOutShapes) {
      const std::string name = std::string(dtype_name(d)) + " " + shape_str(s);
      const Paths paths{true, numel(s) > 4 * cpu::kTile};
      check_outputs("where " + name, [&] {
        Tensor a = random_bits_tensor(s, d, 71), b = random_bits_tensor(s, d, 72), c = random_bits_tensor(s, d, 73);
        Tensor x = prim::mul(a, b);                                      // NaN payloads from a and b
        Tensor w = prim::where(prim::cmplt(c, a), b, a);                 // a WHERE's result
        Tensor y = prim::where(prim::cmplt(c, x), x, w);                 // copies x's bits
        return std::vector<Tensor>{x, w, prim::maximum(prim::mul(prim::add(prim::sqrt(y), x), c), w)};
      }, true, paths);
      check_outputs("consecutive " + name, [&] {
        Tensor a = random_bits_tensor(s, d, 74), b = random_bits_tensor(s, d, 75);
        Tensor x = prim::add(a, b);
        Tensor y = prim::mul(x, a);  // reads the running value x, itself an output
        Tensor z = prim::reciprocal(y);
        return std::vector<Tensor>{x, y, prim::add(z, x)};
      }, true, paths);
    }
}

// Outputs of other dtypes than the kernel's result, one feeding another directly (a chain of
// outputs: each taken over by the next kernel, then all by the last), leaves read through views.
TEST(CpuMultiOutput, MixedDtypesAndNestedOutputs) {
  for (const Shape& s : kOutShapes) {
    check_outputs("float64 output of a float32 kernel " + shape_str(s), [&] {
      Tensor a = near_one_tensor(DType::Float32, s, 11), b = near_one_tensor(DType::Float64, s, 12, true);
      Tensor w = prim::add(prim::cast(a, DType::Float64), b);
      return std::vector<Tensor>{w, prim::cast(prim::mul(w, w), DType::Float32)};
    }, true);
    check_outputs("nested " + shape_str(s), [&] {
      Tensor a = random_bits_tensor(s, DType::Float32, 13), b = near_one_tensor(DType::Float32, s, 14);
      Tensor x = prim::mul(a, b);
      Tensor y = prim::add(prim::sqrt(x), b);
      Tensor z = prim::maximum(prim::mul(y, x), a);
      return std::vector<Tensor>{x, y, z};
    }, true);
  }
  check_outputs("leaves through views", [] {
    Tensor a = random_bits_tensor({300, 7}, DType::Float32, 15).permute({1, 0});
    Tensor b = random_bits_tensor({5, 298}, DType::Float32, 16).pad({{1, 1}, {2, 0}});
    Tensor x = prim::add(a, b);
    return std::vector<Tensor>{x, prim::mul(prim::sqrt(x), a)};
  }, true);
}

// Nodes that must stay in kernels of their own: read at other positions than the kernel's
// (another shape, a flip), by a reduction as well, by a second kernel as well.
TEST(CpuMultiOutput, NotMerged) {
  for (DType d : kOutDtypes) {
    const std::string name(dtype_name(d));
    check_outputs("another shape " + name, [&] {
      Tensor a = random_bits_tensor({300}, d, 21), b = random_bits_tensor({3, 300}, d, 22);
      Tensor x = prim::mul(a, a);
      return std::vector<Tensor>{x, prim::add(x.reshape({1, 300}).expand({3, 300}), b)};
    }, false);
    check_outputs("read through a flip " + name, [&] {
      Tensor a = random_bits_tensor({3, 300}, d, 23), b = random_bits_tensor({3, 300}, d, 24);
      Tensor x = prim::mul(a, b);
      return std::vector<Tensor>{x, prim::add(x.flip({1}), a)};
    }, false);
    check_outputs("read by a reduction " + name, [&] {
      Tensor a = random_bits_tensor({3, 300}, d, 25), b = random_bits_tensor({3, 300}, d, 26);
      Tensor x = prim::mul(a, b);
      Tensor sum = x.reduce(ReduceOp::ADD, {1}).expand({3, 300});
      return std::vector<Tensor>{x, prim::add(prim::sqrt(x), sum)};
    }, false);
  }
  // x is read by y's and z's kernels through r, an op over realized leaves recomputed in each
  // kernel that reads it: x keeps its own kernel, and so does z (a reduction reads it); y is
  // taken over by the last kernel.
  check_outputs("read by two kernels", [] {
    Tensor a = random_bits_tensor({3, 300}, DType::Float32, 27), b = random_bits_tensor({3, 300}, DType::Float32, 28);
    Tensor x = prim::mul(a, b);
    Tensor r = prim::sqrt(x);
    Tensor y = prim::add(r, a), z = prim::mul(r, b);
    return std::vector<Tensor>{x, y, z, prim::add(y, z.reduce(ReduceOp::MAX, {1}).expand({3, 300}))};
  }, true);
}

// A state assigned in place each step, its new value an output of the kernel that also reads
// its old one, replayed by TinyJit: every replay's values against eager steps on the reference
// executor (a replay must not read a buffer it has already overwritten).
TEST(CpuMultiOutput, AssignedStateUnderTinyJit) {
  BackendSettings keep;
  const Shape s{3, 300};
  auto steps = [&](bool jit) {
    Tensor state = near_one_tensor(DType::Float32, s, 31).realized_leaf();
    auto fn = [&](const std::vector<Tensor>& in) {
      Tensor next = prim::add(prim::mul(state, 0.5), in[0]);
      Tensor out = prim::add(prim::mul(next, 3.0), state);
      out.realize();
      state.assign(next);
      return std::vector<Tensor>{out};
    };
    TinyJit step(fn);
    std::vector<std::vector<uint8_t>> got;
    for (int k = 0; k < 5; ++k) {
      Tensor in = near_one_tensor(DType::Float32, s, 40 + k, true);
      std::vector<Tensor> out = jit ? step({in}) : fn({in});
      got.push_back(out[0].bytes());
      got.push_back(state.bytes());
    }
    return got;
  };
  set_backend(Backend::Ref);
  const auto want = steps(false);
  set_backend(Backend::Cpu);
  for (const std::string& target : targets_to_test()) {
    set_simd_target(target);
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      const int64_t before = cpu::multi_output_runs();
      EXPECT_TRUE(steps(true) == want) << target << " with " << threads << " threads";
      EXPECT_GE(cpu::multi_output_runs() - before, 5) << target << ": a step did not write several outputs";
    }
  }
}

// The optimizers' steps (optim.cpp: states assigned after the parameter's value is realized
// with them): three steps of Adam, AdamW, LAMB and SGD with momentum, eager and under TinyJit,
// parameters and states against the reference executor, and one multi-output kernel per
// parameter per step at least.
TEST(CpuMultiOutput, OptimizerSteps) {
  BackendSettings keep;
  const Shape shapes[] = {{64, 33}, {33}};
  auto train = [&](int which, bool jit) {
    std::vector<Tensor> params, grads;
    for (size_t i = 0; i < 2; ++i) params.push_back(near_one_tensor(DType::Float32, shapes[i], 50 + i).realized_leaf());
    std::unique_ptr<optim::Optimizer> opt;
    if (which == 0) opt = std::make_unique<optim::Adam>(params, 1e-3);
    else if (which == 1) opt = std::make_unique<optim::AdamW>(params, 1e-3);
    else if (which == 2) opt = std::make_unique<optim::LAMB>(params, 1e-3);
    else opt = std::make_unique<optim::SGD>(params, 1e-2, 0.9, 1e-4, true);
    TrainingScope training;
    auto fn = [&](const std::vector<Tensor>& in) {
      for (size_t i = 0; i < 2; ++i) params[i].set_grad(in[i]);
      opt->step();
      return std::vector<Tensor>{params[0]};
    };
    TinyJit step(fn);
    std::vector<std::vector<uint8_t>> got;
    for (int k = 0; k < 3; ++k) {
      std::vector<Tensor> in;
      for (size_t i = 0; i < 2; ++i) in.push_back(near_one_tensor(DType::Float32, shapes[i], 60 + 2 * k + i, true));
      if (jit) step(in);
      else fn(in);
      for (const Tensor& p : params) got.push_back(p.bytes());
    }
    return got;
  };
  for (int which = 0; which < 4; ++which) {
    set_backend(Backend::Ref);
    const auto want = train(which, false);
    set_backend(Backend::Cpu);
    for (const std::string& target : targets_to_test()) {
      set_simd_target(target);
      for (int threads : {1, 2, 3})
        for (bool jit : {false, true}) {
          set_num_threads(threads);
          const int64_t before = cpu::multi_output_runs();
          EXPECT_TRUE(train(which, jit) == want) << "optimizer " << which << " on " << target << " with " << threads
                                                  << " threads" << (jit ? " under TinyJit" : "");
          EXPECT_GE(cpu::multi_output_runs() - before, 6) << "optimizer " << which << " on " << target;
        }
    }
  }
}

}  // namespace
}  // namespace maroon::test
