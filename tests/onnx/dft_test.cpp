// DFT, STFT and MelWeightMatrix (src/onnx/ops_dft.cpp): every option gives the same bits on the
// reference executor and the CPU backend; a length-4 transform, whose twiddles are exactly 0 and
// ±1, gives the exact sums (integers, computed here in double); bad attributes and inputs are an
// OnnxError naming the node.
#include <gtest/gtest.h>

#include <complex>
#include <string>

#include "maroon/backend.h"
#include "maroon/onnx.h"
#include "util.h"

using maroon::Tensor;
using maroon::onnx::OnnxError;
using namespace maroon::onnx_test;

namespace {

// One node "dft" over the graph inputs `ins` (float32 of the given dims, or int64 scalars for
// names starting with "n_"); `attrs` adds attributes.
template <class F>
maroon::onnx::Model dft_model(const std::string& op, const std::vector<std::pair<std::string, std::vector<int64_t>>>& ins,
                              F attrs) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  std::vector<std::string> names;
  for (const auto& [name, dims] : ins) {
    names.push_back(name);
    if (name.empty()) continue;
    std::vector<std::string> d;
    for (int64_t x : dims) d.push_back(std::to_string(x));
    set_type(g->add_input(), name, name.rfind("n_", 0) == 0 ? ::onnx::TensorProto::INT64 : ::onnx::TensorProto::FLOAT, d);
  }
  set_type(g->add_output(), "y", ::onnx::TensorProto::FLOAT, {});
  attrs(add_node(g, op, names, {"y"}, "dft"));
  return maroon::onnx::load_bytes(m.SerializeAsString());
}

Tensor dft_ramp(const maroon::Shape& s, float scale) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = scale * static_cast<float>((i * 7919) % 41 - 20);
  return Tensor::from_vector(v, s);
}

Tensor dft_int(int64_t v) { return Tensor::from_vector(std::vector<int64_t>{v}, {}); }

std::vector<uint8_t> dft_bytes_on(const char* backend, const maroon::onnx::Model& m, const std::vector<Tensor>& in) {
  const maroon::Backend saved = maroon::backend();
  maroon::set_backend(backend);
  std::vector<uint8_t> b = m.run(in)[0].bytes();
  maroon::set_backend(saved);
  return b;
}

std::string dft_error(const maroon::onnx::Model& m, const std::vector<Tensor>& in) {
  try {
    m.run(in);
  } catch (const OnnxError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(OnnxDft, EveryOptionGivesTheSameBitsOnEveryBackend) {
  struct Case { int64_t axis, inverse, onesided, length; int64_t last; };
  for (const Case& k : {Case{1, 0, 0, 0, 2}, Case{2, 1, 0, 0, 2}, Case{1, 0, 1, 0, 1}, Case{-2, 0, 0, 16, 2},
                        Case{1, 0, 1, 9, 1}}) {
    std::vector<std::pair<std::string, std::vector<int64_t>>> ins{{"x", {2, 12, 5, k.last}}};
    if (k.length) ins.push_back({"n_len", {}});
    auto m = dft_model("DFT", ins, [&](auto* n) {
      set_attr(n, "axis", k.axis);
      set_attr(n, "inverse", k.inverse);
      set_attr(n, "onesided", k.onesided);
    });
    std::vector<Tensor> in{dft_ramp({2, 12, 5, k.last}, 0.37f)};
    if (k.length) in.push_back(dft_int(k.length));
    std::vector<uint8_t> want = dft_bytes_on("ref", m, in);
    EXPECT_EQ(dft_bytes_on("cpu", m, in), want) << "axis " << k.axis << " inverse " << k.inverse;
    EXPECT_FALSE(want.empty());
  }
  auto stft = dft_model("STFT", {{"x", {2, 40, 2}}, {"n_step", {}}, {"w", {8}}}, [](auto*) {});
  std::vector<Tensor> in{dft_ramp({2, 40, 2}, 0.5f), dft_int(5), dft_ramp({8}, 0.03f)};
  EXPECT_EQ(dft_bytes_on("cpu", stft, in), dft_bytes_on("ref", stft, in));
}

TEST(OnnxDft, LengthFourIsExact) {
  auto m = dft_model("DFT", {{"x", {3, 4, 2}}}, [](auto*) {});
  Tensor x = dft_ramp({3, 4, 2}, 1.0f);
  std::vector<float> xv = x.to_vector<float>(), got = m.run({x})[0].to_vector<float>();
  ASSERT_EQ(got.size(), xv.size());
  const std::complex<double> w[4] = {{1, 0}, {0, -1}, {-1, 0}, {0, 1}};  // e^{-2πi·m/4}
  for (int b = 0; b < 3; ++b)
    for (int k = 0; k < 4; ++k) {
      std::complex<double> y = 0;
      for (int j = 0; j < 4; ++j) y += std::complex<double>(xv[b * 8 + j * 2], xv[b * 8 + j * 2 + 1]) * w[(j * k) % 4];
      EXPECT_EQ(got[b * 8 + k * 2], static_cast<float>(y.real())) << b << " " << k;
      EXPECT_EQ(got[b * 8 + k * 2 + 1], static_cast<float>(y.imag())) << b << " " << k;
    }
}

TEST(OnnxDft, BadAttributesAndInputsAreNamed) {
  auto axis = dft_model("DFT", {{"x", {1, 4, 2}}}, [](auto* n) { set_attr(n, "axis", int64_t{2}); });
  EXPECT_NE(dft_error(axis, {dft_ramp({1, 4, 2}, 1)}).find("node 'dft' (DFT): axis 2 must name a signal axis"), std::string::npos);
  auto three = dft_model("DFT", {{"x", {1, 4, 3}}}, [](auto*) {});
  EXPECT_NE(dft_error(three, {dft_ramp({1, 4, 3}, 1)}).find("last axis must be 1 (real) or 2 (complex)"), std::string::npos);
  auto inv = dft_model("DFT", {{"x", {1, 4, 2}}}, [](auto* n) {
    set_attr(n, "inverse", int64_t{1});
    set_attr(n, "onesided", int64_t{1});
  });
  EXPECT_NE(dft_error(inv, {dft_ramp({1, 4, 2}, 1)}).find("inverse onesided DFT is refused"), std::string::npos);
  auto stft = dft_model("STFT", {{"x", {1, 10, 1}}, {"n_step", {}}, {"w", {4}}, {"n_len", {}}}, [](auto*) {});
  EXPECT_NE(dft_error(stft, {dft_ramp({1, 10, 1}, 1), dft_int(2), dft_ramp({4}, 1), dft_int(5)}).find("frame_length must be"),
            std::string::npos);
  EXPECT_NE(dft_error(stft, {dft_ramp({1, 10, 1}, 1), dft_int(0), dft_ramp({4}, 1), dft_int(4)}).find("frame_step must be"),
            std::string::npos);
}
