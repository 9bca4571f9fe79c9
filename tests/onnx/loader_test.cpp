// The ONNX loader and runner on models built here with protobuf's API: results equal the Tensor
// API composition bit for bit, dynamic dimensions bind per run, the Shape->Reshape chain folds,
// and every kind of bad input (malformed or truncated bytes, flipped bytes, unsupported operators,
// external data escaping its folder, lying sizes, wrong inputs) is an OnnxError naming the fault.
#include <sys/stat.h>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "maroon/onnx.h"
#include "util.h"

namespace fs = std::filesystem;
using maroon::Tensor;
using maroon::onnx::OnnxError;
using namespace maroon::onnx_test;

namespace {

const std::vector<float> kW{1.5f, -2, 0.25f, 3, 1, -1};  // (3, 2)
const std::vector<float> kB{0.5f, -0.125f};

// Y = Relu(X) @ W + B, X (N, 3) with N dynamic; W in raw_data, B in the typed float_data field.
::onnx::ModelProto mlp() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("loader_test");
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "X", ::onnx::TensorProto::FLOAT, {"N", "3"});
  set_type(g->add_output(), "Y", ::onnx::TensorProto::FLOAT, {"N", "2"});
  add_raw_floats(g, "W", kW, {3, 2});
  auto* b = g->add_initializer();
  b->set_name("B");
  b->set_data_type(::onnx::TensorProto::FLOAT);
  b->add_dims(2);
  for (float f : kB) b->add_float_data(f);
  add_node(g, "Relu", {"X"}, {"R"}, "relu1");
  add_node(g, "MatMul", {"R", "W"}, {"M"}, "mm");
  add_node(g, "Add", {"M", "B"}, {"Y"}, "bias");
  return m;
}

std::string bytes_of(const ::onnx::ModelProto& m) { return m.SerializeAsString(); }

// mlp() with W's data moved out to the file `location` (relative to the model's folder).
::onnx::ModelProto mlp_with_external_w(const std::string& location) {
  ::onnx::ModelProto m = mlp();
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  return m;
}

Tensor input(int64_t n) {
  std::vector<float> v;
  for (int64_t i = 0; i < n * 3; ++i) v.push_back(static_cast<float>(i % 7) - 2.75f);
  return Tensor::from_vector(v, {n, 3});
}

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const OnnxError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(OnnxLoader, RunsEqualTheTensorApiBitForBitForAnyBatch) {
  maroon::onnx::Model model = maroon::onnx::load_bytes(bytes_of(mlp()));
  ASSERT_EQ(model.inputs().size(), 1u);
  EXPECT_EQ(model.inputs()[0].dims, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(model.opset(), 17);
  for (int64_t n : {1, 2, 5}) {
    Tensor x = input(n);
    Tensor want = x.relu().matmul(Tensor::from_vector(kW, {3, 2})).add(Tensor::from_vector(kB, {2}));
    std::vector<Tensor> got = model.run({x});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].shape(), (maroon::Shape{n, 2}));
    EXPECT_EQ(got[0].bytes(), want.bytes()) << "batch " << n;
  }
}

TEST(OnnxLoader, ShapeGatherConcatReshapeFolds) {
  ::onnx::ModelProto m;
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "X", ::onnx::TensorProto::FLOAT, {"N", "2", "3"});
  set_type(g->add_output(), "Y", ::onnx::TensorProto::FLOAT, {"N", "6"});
  auto* zero = g->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(::onnx::TensorProto::INT64);
  zero->add_int64_data(0);
  auto* minus1 = g->add_initializer();
  minus1->set_name("minus1");
  minus1->set_data_type(::onnx::TensorProto::INT64);
  minus1->add_dims(1);
  minus1->add_int64_data(-1);
  auto* axes = g->add_initializer();
  axes->set_name("axes");
  axes->set_data_type(::onnx::TensorProto::INT64);
  axes->add_dims(1);
  axes->add_int64_data(0);
  add_node(g, "Shape", {"X"}, {"s"});
  add_node(g, "Gather", {"s", "zero"}, {"n"});
  add_node(g, "Unsqueeze", {"n", "axes"}, {"n1"});
  auto* cat = add_node(g, "Concat", {"n1", "minus1"}, {"shape"});
  auto* a = cat->add_attribute();
  a->set_name("axis");
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(0);
  add_node(g, "Reshape", {"X", "shape"}, {"Y"});
  maroon::onnx::Model model = maroon::onnx::load_bytes(bytes_of(m));
  std::vector<float> v(4 * 6);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  Tensor x = Tensor::from_vector(v, {4, 2, 3});
  Tensor y = model.run({x})[0];
  EXPECT_EQ(y.shape(), (maroon::Shape{4, 6}));
  EXPECT_EQ(y.bytes(), x.bytes());
}

TEST(OnnxLoader, EveryTruncationAndByteFlipIsAnErrorOrAModelNeverACrash) {
  const std::string good = bytes_of(mlp());
  int refused = 0;
  for (size_t len = 0; len < good.size(); ++len) {
    try {
      maroon::onnx::Model m = maroon::onnx::load_bytes(good.substr(0, len));
      m.run({input(2)});
    } catch (const maroon::Error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, static_cast<int>(good.size()) / 2);
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    try {
      maroon::onnx::Model m = maroon::onnx::load_bytes(bad);
      m.run({input(2)});
    } catch (const maroon::Error&) {
    }
  }
  EXPECT_NE(error_of([] { maroon::onnx::load_bytes("\xff\xff\xff\xff garbage"); }).find("malformed or truncated"),
            std::string::npos);
}

TEST(OnnxLoader, UnsupportedOperatorNamesTheNodeAndOperator) {
  ::onnx::ModelProto m = mlp();
  m.mutable_graph()->mutable_node(1)->set_op_type("FancyOp");
  std::string e = error_of([&] { maroon::onnx::load_bytes(bytes_of(m)); });
  EXPECT_NE(e.find("node 'mm' (FancyOp)"), std::string::npos) << e;
  EXPECT_NE(e.find("not supported"), std::string::npos) << e;
  m = mlp();
  m.mutable_graph()->mutable_node(2)->set_input(0, "nowhere");
  e = error_of([&] { maroon::onnx::load_bytes(bytes_of(m)); });
  EXPECT_NE(e.find("node 'bias' (Add): input 'nowhere' is not defined"), std::string::npos) << e;
}

TEST(OnnxLoader, BadInputsAreNamed) {
  maroon::onnx::Model model = maroon::onnx::load_bytes(bytes_of(mlp()));
  EXPECT_NE(error_of([&] { model.run(std::vector<Tensor>{}); }).find("takes 1 input(s), got 0"), std::string::npos);
  EXPECT_NE(error_of([&] { model.run({Tensor::zeros({2, 4})}); }).find("dimension 1 must be 3"), std::string::npos);
  EXPECT_NE(error_of([&] { model.run({Tensor::zeros({2, 3}, maroon::DType::Float64)}); }).find("must be float32"),
            std::string::npos);
  EXPECT_NE(error_of([&] { model.run(std::map<std::string, Tensor>{{"x", input(1)}}); }).find("input 'X' is missing"),
            std::string::npos);
  ::onnx::ModelProto m = mlp();  // a MatMul that cannot work: the node is named
  m.mutable_graph()->mutable_node(1)->set_input(1, "R");
  std::string e = error_of([&] { maroon::onnx::load_bytes(bytes_of(m)).run({input(2)}); });
  EXPECT_NE(e.find("node 'mm' (MatMul)"), std::string::npos) << e;
}

TEST(OnnxLoader, InitializerSizesMustMatchTheirDims) {
  ::onnx::ModelProto m = mlp();
  m.mutable_graph()->mutable_initializer(0)->add_dims(2);  // (3, 2, 2): 48 bytes, raw_data has 24
  std::string e = error_of([&] { maroon::onnx::load_bytes(bytes_of(m)); });
  EXPECT_NE(e.find("initializer 'W': holds 24 bytes"), std::string::npos) << e;
  m = mlp();
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, -3);
  EXPECT_NE(error_of([&] { maroon::onnx::load_bytes(bytes_of(m)); }).find("negative dimension"), std::string::npos);
  m = mlp();
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, INT64_C(1) << 40);
  m.mutable_graph()->mutable_initializer(0)->set_dims(1, INT64_C(1) << 40);
  EXPECT_NE(error_of([&] { maroon::onnx::load_bytes(bytes_of(m)); }).find("overflow"), std::string::npos);
}

TEST(OnnxLoader, ExternalDataStaysInTheModelsFolder) {
  fs::path dir = fs::temp_directory_path() / ("maroon_onnx_ext_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "model");
  {
    std::ofstream(dir / "model" / "w.bin", std::ios::binary)
        .write("padding!", 8)
        .write(reinterpret_cast<const char*>(kW.data()), kW.size() * 4);
    std::ofstream(dir / "outside.bin", std::ios::binary).write(reinterpret_cast<const char*>(kW.data()), kW.size() * 4);
  }
  fs::create_symlink(dir / "outside.bin", dir / "model" / "link.bin");
  auto with_location = [&](const std::string& loc, const std::string& offset) {
    ::onnx::ModelProto m = mlp_with_external_w(loc);
    auto* kv = m.mutable_graph()->mutable_initializer(0)->add_external_data();
    kv->set_key("offset");
    kv->set_value(offset);
    std::ofstream((dir / "model" / "m.onnx"), std::ios::binary) << bytes_of(m);
    return (dir / "model" / "m.onnx").string();
  };
  maroon::onnx::Model ok = maroon::onnx::load(with_location("w.bin", "8"));
  Tensor want = maroon::onnx::load_bytes(bytes_of(mlp())).run({input(3)})[0];
  EXPECT_EQ(ok.run({input(3)})[0].bytes(), want.bytes());
  EXPECT_NE(error_of([&] { maroon::onnx::load(with_location("../outside.bin", "0")); }).find("leaves the model's folder"),
            std::string::npos);
  EXPECT_NE(error_of([&] { maroon::onnx::load(with_location((dir / "outside.bin").string(), "0")); })
                .find("must be a relative path"),
            std::string::npos);
  EXPECT_NE(error_of([&] { maroon::onnx::load(with_location("link.bin", "0")); }).find("resolves outside"),
            std::string::npos);
  EXPECT_NE(error_of([&] { maroon::onnx::load(with_location("w.bin", "30")); }).find("holds"), std::string::npos);
  EXPECT_NE(error_of([&] { maroon::onnx::load(with_location("w.bin", "99")); }).find("lies outside"),
            std::string::npos);
  EXPECT_NE(error_of([&] { maroon::onnx::load(with_location("w.bin", "x")); }).find("not an integer"),
            std::string::npos);
  EXPECT_NE(error_of([&] { maroon::onnx::load_bytes(bytes_of(::onnx::ModelProto())); }).find("no opset"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(OnnxLoader, DocsListEveryOperator) {
  std::ifstream f(std::string(MAROON_SOURCE_DIR) + "/docs/onnx.md");
  std::string doc((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(doc.empty());
  std::vector<std::string> ops = maroon::onnx::supported_ops();
  EXPECT_GT(ops.size(), 100u);
  for (const std::string& op : ops) EXPECT_NE(doc.find("`" + op + "`"), std::string::npos) << op << " is not in docs/onnx.md";
}

// A model path or external data file that is a FIFO, a device or over the size cap is refused
// (io::open_bounded), never read for ever (docs/reliability.md).
TEST(OnnxLoader, NonRegularFilesAreRefused) {
  fs::path dir = fs::temp_directory_path() / ("maroon_onnx_fifo_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir / "m.onnx").c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { maroon::onnx::load((dir / "m.onnx").string()); }).find("not a regular file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { maroon::onnx::load("/dev/zero"); }).find("not a regular file"), std::string::npos);
  EXPECT_NE(error_of([&] { maroon::onnx::load(dir.string()); }).find("is a directory"), std::string::npos);
  EXPECT_NE(error_of([&] { maroon::onnx::load_tensor_pb((dir / "m.onnx").string()); }).find("not a regular file"),
            std::string::npos);
  ASSERT_EQ(::mkfifo((dir / "w.bin").c_str(), 0600), 0);
  std::ofstream(dir / "ext.onnx", std::ios::binary) << bytes_of(mlp_with_external_w("w.bin"));
  EXPECT_NE(error_of([&] { maroon::onnx::load((dir / "ext.onnx").string()); }).find("not a regular file"),
            std::string::npos);
  fs::remove_all(dir);
}
