// The MPI entry points of maroon/dist.h in a build without MPI (libopenmpi-dev was not found):
// single-process sharded runs work, multi-process ones say what is missing.
#include <cstdio>
#include <cstdlib>

#include "maroon/dist.h"

namespace maroon::dist {

bool have_mpi() { return false; }

std::unique_ptr<Comm> mpi_world() {
  throw Error("[dist] this Maroon was built without MPI: install Open MPI (apt-get install libopenmpi-dev "
              "openmpi-bin) and rebuild");
}

void abort_world(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::exit(code);
}

}  // namespace maroon::dist
