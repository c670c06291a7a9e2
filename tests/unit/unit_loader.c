/* tests/unit/unit_loader.c - the run-time library loader and the process-wide state around it: a
   second library described the way the driver is (X-macro rows, a gpuk__lib descriptor) and
   loaded through a fake resolver, by dlsym from a real library, or not found; fork() while
   another thread is inside gpuk_init; the logger read while gpuk_init writes it (run under
   ThreadSanitizer by tests/integration/analyze.sh). No GPU needed.
   cc -std=c99 -I../.. unit_loader.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(UNDER_TSAN)
#include <sys/syscall.h>
/* A fork child inherits ThreadSanitizer's record of the parent's threads and reports them as
   leaked at _exit; the raw exit skips that report (nothing of the child's is checked there). */
#define child_exit(code) syscall(SYS_exit_group, code)
#else
#define child_exit(code) _exit(code)
#endif

static void sleep_ms(long ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = ms % 1000 * 1000000L;
    while (nanosleep(&ts, &ts) != 0) {}
}

/* ---- a second library through the same macros and loader ---- */

/* An imaginary library: two required rows (one at a newer ABI through its _v2 export), two
   optional rows, one of them behind a feature bit. */
#define TESTLIB_FUNCS(X) \
    X(tlAdd, 1000, "tlAdd", 1, (int a, int b, int* out_sum)) \
    X(tlScale, 2010, "tlScale_v2", 1, (int* value, int factor)) \
    X(tlFast, 12000, "tlFast", 0, (int* out)) \
    X(tlGone, 13000, "tlGone", 0, (void))
#define TESTLIB_FEATURES(X) X(tlFast, 1u << 7) X(tlGone, 1u << 8)
GPUK__LIB_TABLE(TESTLIB_FUNCS, testlib_table)
#define GPUK__X_TABLE testlib_table
static const gpuk__lib_row testlib_rows[] = { TESTLIB_FUNCS(GPUK__X_ROW) };
static const gpuk__lib_feature testlib_features[] = { TESTLIB_FEATURES(GPUK__X_FEATURE) };
#undef GPUK__X_TABLE

static testlib_table testlib;
static gpuk__lib_state testlib_state;
static const char* const testlib_sonames[] = { "libgpuk_no_such_lib.so.3", "libgpuk_no_such_lib.so.2", NULL };
static const gpuk__lib testlib_lib = {
    "the test library", "a test library", testlib_sonames, "GPUK_TEST_LIB_PATH", NULL, NULL,
    testlib_rows, sizeof testlib_rows / sizeof testlib_rows[0],
    testlib_features, sizeof testlib_features / sizeof testlib_features[0],
    &testlib, sizeof testlib, &testlib_state, 0, GPUK_ERR_NO_DRIVER, GPUK_ERR_DRIVER_TOO_OLD,
    "install the test library", NULL, NULL, NULL
};

static unsigned tl_add(int a, int b, int* out) { *out = a + b; return 0; }
static unsigned tl_scale(int* v, int f) { *v *= f; return 0; }
static unsigned tl_fast(int* out) { *out = 42; return 0; }

static char tl_asked[256]; /* "symbol@version " for each resolver call */
static void* tl_get_proc(const char* symbol, int abi_version, void* user) {
    size_t n = strlen(tl_asked);
    void* p = NULL;
    snprintf(tl_asked + n, sizeof tl_asked - n, "%s@%d ", symbol, abi_version);
    if (user && strcmp(symbol, (const char*)user) == 0) return NULL; /* this one is missing */
    if (strcmp(symbol, "tlAdd") == 0) { unsigned (*f)(int, int, int*) = tl_add; memcpy(&p, &f, sizeof p); }
    if (strcmp(symbol, "tlScale") == 0) { unsigned (*f)(int*, int) = tl_scale; memcpy(&p, &f, sizeof p); }
    if (strcmp(symbol, "tlFast") == 0) { unsigned (*f)(int*) = tl_fast; memcpy(&p, &f, sizeof p); }
    return p;
}

static int test_second_library_through_a_resolver(void) {
    uint32_t features = 0xdead;
    int sum = 0, v = 3, fast = 0;
    tl_asked[0] = 0;
    CHECK_OK(gpuk__lib_load(&testlib_lib, NULL, tl_get_proc, NULL, "test_load", &features));
    /* every row asked for by its symbol at its ABI version, in table order */
    CHECK(strcmp(tl_asked, "tlAdd@1000 tlScale@2010 tlFast@12000 tlGone@13000 ") == 0);
    CHECK(testlib.tlAdd && testlib.tlAdd(2, 3, &sum) == 0 && sum == 5);
    CHECK(testlib.tlScale && testlib.tlScale(&v, 7) == 0 && v == 21);
    CHECK(testlib.tlFast && testlib.tlFast(&fast) == 0 && fast == 42);
    CHECK(testlib.tlGone == NULL);   /* optional and missing: no failure */
    CHECK(features == 1u << 7);      /* tlFast's bit on, tlGone's off */
    /* the driver's table is another one: untouched */
    CHECK(gpuk__g.drv.cuInit == NULL);
    /* a required row missing: named with its ABI version, the table left empty */
    CHECK_RESULT(gpuk__lib_load(&testlib_lib, NULL, tl_get_proc, (void*)"tlScale", "test_load", &features),
                 GPUK_ERR_DRIVER_TOO_OLD);
    CHECK(strcmp(gpuk_last_error(), "test_load: the test library has no tlScale (ABI of CUDA 2.1); "
                 "gpuk needs it (hint: install the test library)") == 0);
    CHECK(testlib.tlAdd == NULL && features == 0);
    return TEST_PASS;
}

static int test_second_library_not_found(void) {
    uint32_t features = 1;
    /* no path: each soname tried in turn, all named */
    unsetenv("GPUK_TEST_LIB_PATH");
    CHECK_RESULT(gpuk__lib_load(&testlib_lib, NULL, NULL, NULL, "test_load", &features), GPUK_ERR_NO_DRIVER);
    CHECK_ERROR_MENTIONS("test_load: cannot load the test library (tried 'libgpuk_no_such_lib.so.3', "
                         "'libgpuk_no_such_lib.so.2'): libgpuk_no_such_lib.so.2: cannot open");
    CHECK_ERROR_MENTIONS("(hint: install the test library)");
    CHECK(strstr(gpuk_last_error(), "NVIDIA") == NULL); /* not the driver's hint */
    CHECK(testlib_state.handle == NULL && features == 0);
    /* its environment variable names the one path to try */
    setenv("GPUK_TEST_LIB_PATH", "/nonexistent/libgpuk_test.so", 1);
    CHECK_RESULT(gpuk__lib_load(&testlib_lib, NULL, NULL, NULL, "test_load", &features), GPUK_ERR_NO_DRIVER);
    CHECK_ERROR_MENTIONS("test_load: cannot load the test library '/nonexistent/libgpuk_test.so': ");
    CHECK(strstr(gpuk_last_error(), "libgpuk_no_such_lib") == NULL);
    /* and an explicit path wins over it */
    CHECK_RESULT(gpuk__lib_load(&testlib_lib, "/nonexistent/explicit.so", NULL, NULL, "test_load", &features),
                 GPUK_ERR_NO_DRIVER);
    CHECK_ERROR_MENTIONS("'/nonexistent/explicit.so'");
    unsetenv("GPUK_TEST_LIB_PATH");
    return TEST_PASS;
}

/* A real library by soname, rows found by their exported names with dlsym, and a probe. */
#define LIBM_FUNCS(X) \
    X(lmCos, 0, "cos", 1, (void)) \
    X(lmSin, 0, "sin", 1, (void)) \
    X(lmNope, 0, "gpuk_no_such_function", 0, (void))
GPUK__LIB_TABLE(LIBM_FUNCS, libm_table)
#define GPUK__X_TABLE libm_table
static const gpuk__lib_row libm_rows[] = { LIBM_FUNCS(GPUK__X_ROW) };
#undef GPUK__X_TABLE
static libm_table libm_t;
static gpuk__lib_state libm_state;
static const char* const libm_sonames[] = { "libgpuk_no_such_lib.so.1", "libm.so.6", NULL };
static int libm_probe(void* sym, int* out_version) {
    double (*f)(double);
    memcpy(&f, &sym, sizeof f);
    *out_version = 1234;
    return f(0.0) == 1.0; /* cos(0) */
}
static const gpuk__lib libm_lib = {
    "the C math library", "a C math library", libm_sonames, NULL, "cos", libm_probe,
    libm_rows, sizeof libm_rows / sizeof libm_rows[0], NULL, 0,
    &libm_t, sizeof libm_t, &libm_state, 0, GPUK_ERR_NO_DRIVER, GPUK_ERR_DRIVER_TOO_OLD, NULL,
    NULL, NULL, NULL
};

static int test_second_library_by_soname_and_dlsym(void) {
    uint32_t features = 1;
    void* m = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    void *want_cos = m ? dlsym(m, "cos") : NULL, *got_cos;
    CHECK(want_cos != NULL);
    CHECK_OK(gpuk__lib_load(&libm_lib, NULL, NULL, NULL, "test_load", &features));
    CHECK(libm_state.handle != NULL && libm_state.version == 1234 && features == 0);
    memcpy(&got_cos, &libm_t.lmCos, sizeof got_cos);
    CHECK(got_cos == want_cos);
    CHECK(libm_t.lmSin != NULL && libm_t.lmNope == NULL);
    CHECK(libm_state.get_proc_v1 == NULL && libm_state.get_proc_v2 == NULL); /* driver only */
    /* a library that fails the probe: named, and forgotten */
    {
        static const char* const names[] = { "libc.so.6", NULL };
        static gpuk__lib_state st;
        gpuk__lib other = libm_lib;
        other.sonames = names;
        other.state = &st;
        other.probe_symbol = "gpuk_no_such_function";
        CHECK_RESULT(gpuk__lib_load(&other, NULL, NULL, NULL, "test_load", &features), GPUK_ERR_NO_DRIVER);
        CHECK_ERROR_MENTIONS("test_load: 'libc.so.6' is not a C math library (no working gpuk_no_such_function)");
        CHECK(st.handle == NULL);
    }
    if (m) dlclose(m);
    return TEST_PASS;
}

/* ---- fork() while another thread is inside gpuk_init ---- */

/* A resolver that, on the first cuInit lookup, says so and then stalls: the init thread holds
   gpuk's lock while the main thread forks. */
static pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slow_cond = PTHREAD_COND_INITIALIZER;
static int slow_entered;

static void* slow_get_proc(const char* symbol, int abi_version, void* user) {
    if (strcmp(symbol, "cuInit") == 0) {
        pthread_mutex_lock(&slow_lock);
        slow_entered = 1;
        pthread_cond_broadcast(&slow_cond);
        pthread_mutex_unlock(&slow_lock);
        sleep_ms(300);
    }
    return fake_get_proc(symbol, abi_version, user);
}

static void* init_thread(void* p) {
    gpuk_desc d;
    memset(&d, 0, sizeof d);
    d.get_proc = slow_get_proc;
    *(gpuk_result*)p = gpuk_init(&d);
    return NULL;
}

static int test_fork_while_another_thread_inits(void) {
    pthread_t t;
    gpuk_result init_r = GPUK_RESULT_FORCE_32;
    int status = 0;
    pid_t pid;
    gpuk_shutdown();
    fake_reset(NULL);
    slow_entered = 0;
    CHECK(pthread_create(&t, NULL, init_thread, &init_r) == 0);
    pthread_mutex_lock(&slow_lock);
    while (!slow_entered) pthread_cond_wait(&slow_cond, &slow_lock);
    pthread_mutex_unlock(&slow_lock);
    /* the init thread is inside gpuk_init now, holding its lock */
    pid = fork();
    if (pid == 0) {
        int n = -1;
        gpuk_result r;
        alarm(5); /* a deadlocked child dies of SIGALRM instead of hanging the test */
        r = gpuk_device_count(&n);
        child_exit(r == GPUK_ERR_FORKED && n == 0 ? 0 : 1);
    }
    CHECK(pid > 0);
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status))
        fprintf(stderr, "  the child died of signal %d (SIGALRM = %d: deadlocked in gpuk)\n",
                WTERMSIG(status), SIGALRM);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pthread_join(t, NULL);
    CHECK_OK(init_r);
    /* the parent goes on as before */
    CHECK_OK(gpuk_device_count(&(int){ 0 }));
    CHECK_OK(gpuk_shutdown());
    CHECK(fake_all_released());
    return TEST_PASS;
}

/* ---- the logger, read by one thread while another runs gpuk_init/gpuk_shutdown ---- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static long log_count;
static void count_log(void* user, gpuk_log_level level, int code, const char* msg) {
    (void)user; (void)level; (void)code; (void)msg;
    pthread_mutex_lock(&log_lock);
    log_count++;
    pthread_mutex_unlock(&log_lock);
}

static void* init_shutdown_loop(void* p) {
    int i;
    gpuk_desc d;
    (void)p;
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.logger.func = count_log;
    d.log_level = GPUK_LOG_ERROR;
    for (i = 0; i < 300; i++) {
        if (gpuk_init(&d) != GPUK_OK) return (void*)1;
        if (gpuk_shutdown() != GPUK_OK) return (void*)1;
    }
    return NULL;
}

static void* failing_call_loop(void* p) {
    int i;
    long bad = 0;
    for (i = 0; i < 3000; i++) bad += gpuk_driver_version(NULL) != GPUK_ERR_INVALID_ARG;
    *(long*)p = bad;
    return NULL;
}

static int test_logger_read_while_init_writes_it(void) {
    pthread_t a, b;
    void* a_r = NULL;
    long bad = -1;
    gpuk_desc d;
    gpuk_shutdown();
    fake_reset(NULL);
    log_count = 0;
    CHECK(pthread_create(&a, NULL, init_shutdown_loop, NULL) == 0);
    CHECK(pthread_create(&b, NULL, failing_call_loop, &bad) == 0);
    pthread_join(a, &a_r);
    pthread_join(b, NULL);
    CHECK(a_r == NULL);
    CHECK(bad == 0);
    /* whatever the interleaving, an error after init reaches the logger exactly once */
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.logger.func = count_log;
    CHECK_OK(gpuk_init(&d));
    log_count = 0;
    CHECK_RESULT(gpuk_driver_version(NULL), GPUK_ERR_INVALID_ARG);
    CHECK(log_count == 1);
    CHECK_OK(gpuk_shutdown());
    /* and after shutdown gpuk is silent again */
    CHECK_RESULT(gpuk_driver_version(NULL), GPUK_ERR_INVALID_ARG);
    CHECK(log_count == 1);
    return TEST_PASS;
}

int main(void) {
    RUN(test_second_library_through_a_resolver);
    RUN(test_second_library_not_found);
    RUN(test_second_library_by_soname_and_dlsym);
    RUN(test_fork_while_another_thread_inits);
    RUN(test_logger_read_while_init_writes_it);
    return test_summary();
}
