// Choosing how graphs run. Every choice gives the same bits (that is the point of Maroon); these
// settings only change speed, and exist so tests and users can prove it.
#pragma once
#include <string>
#include <vector>

namespace maroon {

// Ref: the scalar reference executor (the oracle). Cpu: SIMD kernels, fusion and threads.
// Default: Cpu, or MAROON_BACKEND=ref|cpu.
enum class Backend { Ref, Cpu };
Backend backend();
void set_backend(Backend b);
// By name: "ref" or "cpu" (ShapeError for anything else).
void set_backend(const std::string& name);
std::string backend_name();

// Worker threads of the Cpu backend. Default: MAROON_THREADS, else all cores. ShapeError for a
// count outside 1..1024.
int num_threads();
void set_num_threads(int n);

// The SIMD target of the Cpu backend: "scalar", "sse4", "avx2", "avx512" on x86 (others where
// the build has them). Default: MAROON_SIMD, else the best this CPU supports. Throws
// maroon::Error for a target this machine or build lacks.
std::string simd_target();
void set_simd_target(const std::string& name);
std::vector<std::string> available_simd_targets();

}  // namespace maroon
