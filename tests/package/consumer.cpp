// A C++ program built against the installed Maroon (tests/package/CMakeLists.txt): a 48x40 by
// 40x24 matmul of small integers, whose every product and sum is exact in float32, so a double
// loop here is the oracle; and the version the library was built as, from maroon/version.h.
// usage: consumer VERSION (exit status 0 when both agree)
#include <cstdio>
#include <cstring>
#include <vector>

#include "maroon/maroon.h"
#include "maroon/version.h"

int main(int argc, char** argv) {
  using maroon::Tensor;
  const int m = 48, k = 40, n = 24;
  std::vector<float> a(m * k), b(k * n);
  for (int i = 0; i < m * k; ++i) a[i] = static_cast<float>(i * 7 % 9 - 4);
  for (int i = 0; i < k * n; ++i) b[i] = static_cast<float>(i * 5 % 7 - 3) * 0.5f;
  std::vector<float> got = Tensor::from_vector<float>(a, {m, k}).matmul(Tensor::from_vector<float>(b, {k, n})).to_vector<float>();
  int wrong = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int t = 0; t < k; ++t) s += static_cast<double>(a[i * k + t]) * b[t * n + j];
      float want = static_cast<float>(s);
      wrong += std::memcmp(&want, &got[i * n + j], sizeof want) != 0;
    }
  bool version_ok = argc > 1 && std::strcmp(argv[1], MAROON_VERSION) == 0;
  std::printf("maroon %s: %d of %d matmul results differ from the exact ones; version %s\n", MAROON_VERSION, wrong,
              m * n, version_ok ? "as expected" : "NOT as expected");
  return wrong == 0 && version_ok ? 0 : 1;
}
