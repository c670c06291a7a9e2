/* tests/real_driver.c - gpuk_init against a driver library given by path (run by
   tests/real_driver.sh, one library per process since a loaded driver stays loaded): prints
   what init, an implicit init (gpuk_device_count) and a second explicit init return, with their
   texts, for the script to check. */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include <stdio.h>

int main(int argc, char** argv) {
    gpuk_desc d;
    int n = -1, v = 0;
    gpuk_result r;
    if (argc != 2) return 2;
    memset(&d, 0, sizeof d);
    d.driver_path = argv[1];
    r = gpuk_init(&d);
    printf("init=%d features=0x%x text=%s\n", (int)r, gpuk_features(), r ? gpuk_last_error() : "");
    if (r == GPUK_OK && gpuk_driver_version(&v) == GPUK_OK) printf("version=%d\n", v);
    r = gpuk_device_count(&n);
    printf("count=%d n=%d text=%s\n", (int)r, n, r ? gpuk_last_error() : "");
    r = gpuk_init(&d);
    printf("again=%d\n", (int)r);
    printf("shutdown=%d\n", (int)gpuk_shutdown());
    return 0;
}
