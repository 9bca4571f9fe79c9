// maroon-vectors OUT_DIR [--data MNIST_DIR] [--no-mnist]: writes the conformance vectors
// (manifest.json and one .safetensors per group) that spec/vectors/ holds; the spec_vectors test
// regenerates them and compares bytes. MNIST_DIR defaults to the source tree's data/mnist;
// --no-mnist leaves the training run out (the manifest then lacks it; the other files are the
// same), for quick runs on the slow reference backend.
#include <cstdio>
#include <cstring>
#include <string>

#include "core/ops.h"
#include "maroon/backend.h"
#include "vectors.h"

namespace {

// Ops with no vector of their own, and why: a new op of include/maroon/ops.def is not in this
// list, so the generator fails, naming it, until it has vectors.
bool without_vectors(std::string_view op) {
  return op == "CONST" || op == "BUFFER" ||  // every vector's inputs and literals are these
         op == "DETACH" || op == "CONTIGUOUS_BACKWARD";  // graph markers: the value passes unchanged
}

// The ops of ops.def that no vector runs, comma-separated.
std::string missing_ops(const maroon::vectors::Book& book) {
  std::string missing;
  for (const maroon::OpInfo& info : maroon::all_ops())
    if (!without_vectors(info.name) && !book.has_op(std::string(info.name)))
      missing += (missing.empty() ? "" : ", ") + std::string(info.name);
  return missing;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace maroon;
  std::string out, data = std::string(MAROON_SOURCE_DIR) + "/data/mnist";
  bool mnist = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
    else if (!std::strcmp(argv[i], "--no-mnist")) mnist = false;
    else if (out.empty() && argv[i][0] != '-') out = argv[i];
    else out.clear(), i = argc;
  }
  if (out.empty()) {
    std::fprintf(stderr, "usage: maroon-vectors OUT_DIR [--data MNIST_DIR] [--no-mnist]\n");
    return 2;
  }
  try {
    vectors::Book book;
    vectors::add_primitives(book);
    vectors::add_composites(book);
    vectors::add_random(book);
    if (mnist) vectors::add_mnist(book, data);
    // Last: the composites seed their upstream gradients with the count of vectors before them.
    vectors::add_gather(book);
    if (std::string m = missing_ops(book); !m.empty()) {
      std::fprintf(stderr, "maroon-vectors: error: no vector runs these ops of include/maroon/ops.def: %s "
                   "(tools/vectors)\n", m.c_str());
      return 1;
    }
    book.write(out);
    std::printf("%zu vectors written to %s\n", book.size(), out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "maroon-vectors: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
