#include "gc_test.h"
int main (void) { return 0; }
