/* Inference from C through maroon/infer.h: prints the digest of a model's outputs and the
 * classes, or with --json the document `maroon infer --json` prints. Same bytes as the CLI and
 * Python's maroon.infer for the same model and input.
 *   usage: maroon-infer-c MODEL.safetensors INPUT [--json] */
#include <stdio.h>
#include <string.h>

#include "maroon/infer.h"

int main(int argc, char** argv) {
  maroon_infer_model* model = NULL;
  maroon_infer_result r;
  maroon_infer_error err;
  size_t i;
  if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "--json") != 0)) {
    fprintf(stderr, "usage: %s MODEL.safetensors INPUT [--json]\n", argv[0]);
    return 2;
  }
  if (maroon_infer_model_load(argv[1], &model, &err) != MAROON_INFER_OK ||
      maroon_infer_run_file(model, argv[2], NULL, 0, -1, &r, &err) != MAROON_INFER_OK) {
    fprintf(stderr, "maroon-infer-c: error: %s\n", err.message);
    maroon_infer_model_free(model);
    return 2;
  }
  if (argc == 4) {
    fputs(r.json, stdout);
  } else {
    printf("digest  %s\nclasses", r.digest);
    for (i = 0; i < r.n; ++i) printf(" %d", (int)r.classes[i]);
    printf("\n");
  }
  maroon_infer_result_free(&r);
  maroon_infer_model_free(model);
  return 0;
}
