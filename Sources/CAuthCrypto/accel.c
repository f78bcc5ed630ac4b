#include "CAuthCrypto.h"
int cauth_placeholder(void) { return 0; }
