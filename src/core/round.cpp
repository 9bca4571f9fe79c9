#include "maroon/round.h"

namespace maroon {

namespace {
thread_local Round g_round = Round::NearestEven;
}

Round current_round() { return g_round; }
void set_current_round(Round r) { g_round = r; }

}  // namespace maroon
