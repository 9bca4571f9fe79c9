// Provenance: this build (version, commit, spec, compiler) and process (SIMD target, backend,
// threads). Informational: every configuration gives the same bits.
#include "build_info.h"
#include "maroon/backend.h"
#include "maroon/verify.h"

namespace maroon::verify {

namespace {
std::string compiler() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "gcc " __VERSION__;
#else
  return "unknown";
#endif
}
}  // namespace

Provenance current_provenance(const std::string& command_line) {
  Provenance p;
  p.maroon_version = MAROON_BUILD_VERSION;
  p.git_commit = MAROON_BUILD_COMMIT;
  p.spec_sha256 = MAROON_BUILD_SPEC_SHA256;
  p.compiler = compiler();
  p.build_type = MAROON_BUILD_TYPE;
  p.simd_target = backend() == Backend::Cpu ? simd_target() : "scalar";
  p.backend = backend() == Backend::Cpu ? "cpu" : "ref";
  p.threads = num_threads();
  p.command_line = command_line;
  return p;
}

}  // namespace maroon::verify
