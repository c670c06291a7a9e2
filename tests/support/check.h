/* tests/support/check.h - the few macros the tests share. Each test is a function returning
   TEST_PASS/TEST_SKIP; CHECK records a failure with the file, line and gpuk_last_error().
   A test binary ends with the line "N passed, N failed, N skipped" (tests/run-tests sums them). */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
#include <string.h>

enum { TEST_PASS = 0, TEST_SKIP = 77 };
static int check_failures, tests_passed, tests_failed, tests_skipped;

#define CHECK(cond) \
    do { if (!(cond)) { check_failures++; \
        fprintf(stderr, "  %s:%d: CHECK(%s) failed\n    last error: %s\n", __FILE__, __LINE__, #cond, gpuk_last_error()); } } while (0)
/* r must equal want; prints both names otherwise. */
#define CHECK_RESULT(expr, want) \
    do { gpuk_result got_ = (expr); if (got_ != (want)) { check_failures++; \
        fprintf(stderr, "  %s:%d: %s\n    returned %s (%d), wanted %s (%d)\n    last error: %s\n", __FILE__, __LINE__, #expr, \
                gpuk_result_str(got_), (int)got_, gpuk_result_str(want), (int)(want), gpuk_last_error()); } } while (0)
#define CHECK_OK(expr) CHECK_RESULT(expr, GPUK_OK)
#define CHECK_ERROR_MENTIONS(text) CHECK(strstr(gpuk_last_error(), text) != NULL)

static void run_test(const char* name, int (*fn)(void)) {
    int before = check_failures;
    int r = fn();
    if (check_failures != before) { tests_failed++; printf("FAIL %s\n", name); }
    else if (r == TEST_SKIP) { tests_skipped++; printf("skip %s\n", name); }
    else { tests_passed++; printf("ok   %s\n", name); }
    fflush(stdout);
}
#define RUN(fn) run_test(#fn, fn)

static int test_summary(void) {
    printf("%d passed, %d failed, %d skipped\n", tests_passed, tests_failed, tests_skipped);
    return tests_failed ? 1 : 0;
}
#endif
