// Maroon: a deterministic tensor engine. Every result is bit-identical on any machine.
#pragma once
#include "maroon/dtype.h"
#include "maroon/error.h"
#include "maroon/reduce.h"
#include "maroon/round.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"
#include "maroon/nn.h"
#include "maroon/optim.h"
#include "maroon/jit.h"
