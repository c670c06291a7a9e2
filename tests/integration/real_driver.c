/* tests/integration/real_driver.c - gpuk_init against a driver library given by path (run by
   tests/integration/real_driver.sh, one library per process since a loaded driver stays
   loaded): prints what init, an implicit init (gpuk_device_count) and a second explicit init
   return, with their texts, for the script to check.
   real_driver FIRST SECOND [shutdown]: gpuk_init with FIRST, then (after gpuk_shutdown when
   asked) a retry with SECOND: a library FIRST that failed must not stand in for SECOND. */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include <stdio.h>

static int retry(const char* first, const char* second, int shutdown_between) {
    gpuk_desc d;
    int n = -1;
    gpuk_result r;
    memset(&d, 0, sizeof d);
    d.driver_path = first;
    r = gpuk_init(&d);
    printf("first=%d text=%s\n", (int)r, r ? gpuk_last_error() : "");
    if (shutdown_between) printf("shutdown1=%d\n", (int)gpuk_shutdown());
    d.driver_path = second;
    r = gpuk_init(&d);
    printf("retry=%d features=0x%x text=%s\n", (int)r, gpuk_features(), r ? gpuk_last_error() : "");
    r = gpuk_device_count(&n);
    printf("count=%d n=%d text=%s\n", (int)r, n, r ? gpuk_last_error() : "");
    printf("shutdown=%d\n", (int)gpuk_shutdown());
    return 0;
}

int main(int argc, char** argv) {
    gpuk_desc d;
    int n = -1, v = 0;
    gpuk_result r;
    if (argc == 3 || argc == 4) return retry(argv[1], argv[2], argc == 4);
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
