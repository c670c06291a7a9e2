/* tests/integration/secure_env.c - prints the user ids and what gpuk_init says, for
   tests/integration/secure_env.sh: run set-user-ID (real and effective ids differ), gpuk must
   ignore GPUK_DRIVER_PATH. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include <stdio.h>
#include <unistd.h>

int main(void) {
    gpuk_result r = gpuk_init(NULL);
    printf("uid=%d euid=%d init=%d text=%s\n", (int)getuid(), (int)geteuid(), (int)r, gpuk_last_error());
    return 0;
}
