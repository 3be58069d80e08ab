// A core header that reaches up into model/: layer_check.sh must refuse it.
#pragma once
#include "model/model.h"
