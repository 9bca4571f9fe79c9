/* Compiled as C (not C++): the inference header is plain C. Loads a model, runs it on a file and
   on the same pixels in memory, and checks the digest and JSON against the C++ API's (passed in
   by infer_test.cpp), the model-agnostic digest of the returned logits, and an error's code and
   message. Returns 0 when everything agrees, else the number of the failed check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maroon/infer.h"

int maroon_infer_c_check(const char* model_path, const char* input_path, const char* want_digest,
                         const char* want_json) {
  maroon_infer_model* model = NULL;
  maroon_infer_result r, p;
  maroon_infer_error err;
  maroon_infer_tensor t;
  int64_t shape[2];
  char digest[65];
  unsigned char* px;
  long size;
  FILE* f;
  int bad = 0;
  if (maroon_infer_model_load(model_path, &model, &err) != MAROON_INFER_OK) return 1;
  if (strcmp(maroon_infer_model_kind(model), "cnn") != 0) bad = 2;
  if (!bad && maroon_infer_run_file(model, input_path, NULL, 0, -1, &r, &err) != MAROON_INFER_OK) bad = 3;
  if (!bad) {
    if (strcmp(r.digest, want_digest) != 0 || strcmp(r.json, want_json) != 0 || r.n_outputs != 1) bad = 4;
    /* The digest of the logits handed back, through the model-agnostic function. */
    shape[0] = (int64_t)r.n;
    shape[1] = 10;
    t.dtype = "float32";
    t.shape = shape;
    t.rank = 2;
    t.data = r.logits;
    t.nbytes = r.n * 10 * sizeof(float);
    if (!bad && (maroon_infer_digest(&t, 1, digest, &err) != MAROON_INFER_OK || strcmp(digest, want_digest) != 0))
      bad = 5;
    /* The same pixels from memory: format "raw", the same digest and document. */
    f = fopen(input_path, "rb");
    if (!bad && !f) bad = 6;
    if (!bad) {
      fseek(f, 0, SEEK_END);
      size = ftell(f);
      fseek(f, 0, SEEK_SET);
      px = (unsigned char*)malloc((size_t)size);
      if (fread(px, 1, (size_t)size, f) != (size_t)size) bad = 7;
      if (!bad && maroon_infer_run_pixels(model, px, (size_t)size / 784, &p, &err) != MAROON_INFER_OK) bad = 8;
      if (!bad && (strcmp(p.digest, want_digest) != 0 || strcmp(p.json, want_json) != 0 ||
                   memcmp(p.classes, r.classes, r.n * sizeof(int32_t)) != 0))
        bad = 9;
      if (!bad) maroon_infer_result_free(&p);
      free(px);
    }
    if (f) fclose(f);
    maroon_infer_result_free(&r);
  }
  /* Errors are codes and messages, never a crash. */
  if (!bad && (maroon_infer_run_file(model, input_path, "png", 0, -1, &r, &err) != MAROON_INFER_EARG ||
               strstr(err.message, "png") == NULL))
    bad = 10;
  if (!bad && (maroon_infer_run_file(model, input_path, "raw", 5, 1, &r, &err) != MAROON_INFER_EINPUT ||
               strstr(err.message, "out of range") == NULL))
    bad = 11;
  if (!bad && maroon_infer_run_file(NULL, input_path, NULL, 0, -1, &r, &err) != MAROON_INFER_EARG) bad = 12;
  maroon_infer_model_free(model);
  model = NULL;
  if (!bad && (maroon_infer_model_load("/nonexistent.safetensors", &model, &err) != MAROON_INFER_EINPUT ||
               strstr(err.message, "/nonexistent.safetensors") == NULL || model != NULL))
    bad = 13;
  return bad;
}
