// The C ABI from a C translation unit (c_abi_check.c).
#include <gtest/gtest.h>

extern "C" int maroon_lagoon_c_smoke(void);

TEST(LagoonCAbi, UsableFromC) { EXPECT_EQ(maroon_lagoon_c_smoke(), 0); }
