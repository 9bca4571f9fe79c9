// Whether an MPI launcher started this process (maroon/dist.h). Built with or without MPI, so a
// build without it can still say that mpirun was used in vain.
#include <cstdlib>

#include "maroon/dist.h"

namespace maroon::dist {

bool launched_by_mpi() {
  // Open MPI's mpirun, PMIx launchers (Open MPI 5, Slurm) and MPICH/Hydra, in that order.
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (const char* s = std::getenv(v); s && *s) return true;
  return false;
}

}  // namespace maroon::dist
