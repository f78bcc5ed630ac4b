// SwiftPM needs one source file per C target; everything this module offers is in its header.
#include "CAuthPlatform.h"
