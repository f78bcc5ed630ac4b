// Only the header matters (the libFuzzer declaration); SwiftPM needs one source file per C target.
#include "CFuzzDriver.h"
