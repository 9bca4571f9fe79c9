/* A C program built against the installed Lagoon C library with pkg-config
   (tools/test_packages.sh): it runs the C ABI checks of tests/lagoon/c_abi_check.c. */
#include <stdio.h>

int maroon_lagoon_c_smoke(void);

int main(void) {
  int rc = maroon_lagoon_c_smoke();
  printf("lagoon C ABI: %s\n", rc == 0 ? "ok" : "FAILED");
  return rc;
}
