// Fixture for layer_check.sh's self-test (not compiled).
#pragma once
#include "core/upward.h"
