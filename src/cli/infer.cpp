// `maroon infer MODEL --input FILE`: runs a model on images and prints the digest of its outputs
// and the classes (docs/spec-model.md, "Inference"). The work and the JSON document are the
// library's (maroon/inference.h), so Python's maroon.infer and the C ABI print the same bytes.
#include <cstdio>

#include "cli/commands.h"
#include "maroon/inference.h"

namespace maroon::cli {

namespace {

struct InferOptions {
  std::string model, input, format = "auto";
  int64_t start = 0, count = -1;
  DataOptions data;
};

int infer_run(const InferOptions& o, const Context& ctx) {
  apply_threads(o.data);
  infer::Model m = infer::load_model(o.model);
  infer::Inputs in = infer::load_inputs(o.input, infer::parse_format(o.format), o.start, o.count);
  ctx.log("running the %s model on %lld image(s) of '%s' (%s)", m.net->kind().c_str(),
          static_cast<long long>(in.count), o.input.c_str(), std::string(infer::format_name(in.format)).c_str());
  infer::Result r = infer::run(*m.net, in.x);
  if (ctx.json) {
    std::string doc = infer::to_json(m, in, r);
    std::fwrite(doc.data(), 1, doc.size(), stdout);
    return kOk;
  }
  std::string text = "inference digest  " + r.digest + "\nclasses          ";
  for (int64_t c : r.classes) text += " " + std::to_string(c);
  ctx.result({}, text + "\n");
  return kOk;
}

Runner declare_infer(CLI::App& app) {
  auto o = std::make_shared<InferOptions>();
  app.add_option("MODEL", o->model, "the model: a Maroon weights file (.safetensors of the mlp or cnn)")->required();
  app.add_option("-i,--input", o->input, "images: an IDX, .npy (uint8 or float32) or raw (N*784 uint8) file")
      ->required()
      ->type_name("FILE");
  app.add_option("--format", o->format, "the input's format (default: by the file name)")
      ->check(CLI::IsMember({"auto", "idx", "npy", "raw"}));
  app.add_option("--start", o->start, "the first image to run (0-based)")->check(integer_at_least(0))->type_name("S");
  app.add_option("--count", o->count, "how many images to run (default: to the end)")
      ->check(integer_at_least(1))
      ->type_name("N");
  add_threads_option(app, o->data);
  return [o](const Context& ctx) { return infer_run(*o, ctx); };
}

const Registration infer_command("infer", "run a model on images; print the digest of its outputs and the classes",
                                 declare_infer);

}  // namespace

}  // namespace maroon::cli
