/* Maroon inference through a plain C ABI: load a model, run it on images, get the digest of its
 * outputs (docs/spec-model.md, "Inference digest") and, for classifiers, the classes. The digest
 * and the JSON document are the ones `maroon infer`, Python's maroon.infer and the C++ API
 * (maroon/inference.h) give for the same model and input, byte for byte.
 *
 * Nothing crosses this ABI as an exception: every function returns a status code (0 is success)
 * and, if `err` is not NULL, fills it with the code and a message naming the file and the
 * problem. Results are allocated by Maroon and released with maroon_infer_result_free. The
 * caller's floating-point environment and Maroon's thread settings (rounding mode, fused
 * products, training mode) do not change any result. */
#ifndef MAROON_INFER_H
#define MAROON_INFER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

enum {
  MAROON_INFER_OK = 0,
  MAROON_INFER_EARG = 1,     /* a NULL argument, an unknown format name or dtype name */
  MAROON_INFER_EINPUT = 2,   /* a file that is missing, unreadable or malformed, a model file that
                                holds the wrong tensors, images of the wrong dtype or shape, an
                                empty or out-of-range selection */
  MAROON_INFER_EINTERNAL = 3 /* out of memory, or a bug */
};

typedef struct {
  int code;
  char message[256];
} maroon_infer_error;

/* A loaded model (today a Maroon weights file: the MNIST MLP or CNN as .safetensors). */
typedef struct maroon_infer_model maroon_infer_model;

typedef struct {
  char digest[65];  /* the inference digest: lowercase hex SHA-256, NUL-terminated */
  size_t n;         /* how many inputs (images) were run */
  int32_t* classes; /* n classes: the first index of each row's maximum (10 for a row with NaN) */
  size_t n_outputs; /* how many output tensors the digest covers (1: the (n,10) float32 logits) */
  float* logits;    /* the first output's n * 10 float32 elements, row-major */
  char* json;       /* the document `maroon infer --json` prints, NUL-terminated */
} maroon_infer_result;

/* The tensor a caller passes to maroon_infer_digest: dtype by its spec name ("float32",
 * "uint8", ...), shape, and the row-major little-endian elements. */
typedef struct {
  const char* dtype;
  const int64_t* shape;
  uint32_t rank;
  const void* data;
  size_t nbytes;
} maroon_infer_tensor;

int maroon_infer_model_load(const char* path, maroon_infer_model** out, maroon_infer_error* err);
void maroon_infer_model_free(maroon_infer_model* model);
/* "mlp" or "cnn"; the model owns the string. */
const char* maroon_infer_model_kind(const maroon_infer_model* model);

/* Runs the model on images [start, start + count) of a file (count < 0: to the end). format is
 * "idx", "npy", "raw", or NULL / "auto" to decide by the file name. */
int maroon_infer_run_file(const maroon_infer_model* model, const char* input_path, const char* format,
                          int64_t start, int64_t count, maroon_infer_result* out, maroon_infer_error* err);
/* Runs the model on n images of 28 * 28 uint8 pixels, converted as the spec says (x / 255). The
 * JSON's input names format "raw" and the SHA-256 of the n * 784 pixel bytes. */
int maroon_infer_run_pixels(const maroon_infer_model* model, const uint8_t* pixels, size_t n,
                            maroon_infer_result* out, maroon_infer_error* err);
void maroon_infer_result_free(maroon_infer_result* result);

/* The model-agnostic digest of a list of output tensors (tag "maroon-inference/1"). */
int maroon_infer_digest(const maroon_infer_tensor* tensors, size_t n, char digest[65], maroon_infer_error* err);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* MAROON_INFER_H */
