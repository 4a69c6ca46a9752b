#include "check_tap.h"
int main(void) { return mxr_test_skip_all("symbol JSON is being written"); }
