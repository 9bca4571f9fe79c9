// Internal to src/verify: the record's canonical text and seal as verify recomputes them (without
// resetting the recorded digests, as record_json does).
#pragma once
#include <string>

#include "maroon/verify.h"

namespace maroon::verify {

std::string canonical_record(const RunRecord& r);  // with r.seal
std::string seal_of(const RunRecord& r);           // SHA-256 of the text with an empty seal

}  // namespace maroon::verify
