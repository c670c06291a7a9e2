/* tests/gpu/gpu_stress.c - 16 threads share one ctx for 60 s of mixed work with random sizes:
   create a buffer, write it, copy it, run built-in kernels on it (fill, add, sum) on the
   thread's own stream, record and wait on events, read back and check values, destroy. Passes
   with 0 errors, every checked value right, and the device's free memory back to its value
   after a short first round. GPUK_STRESS_SECONDS and GPUK_STRESS_THREADS change the 60 and
   the 16. Skipped where no driver or GPU exists. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

enum { MAX_THREADS = 16 };
static int threads = MAX_THREADS; /* GPUK_STRESS_THREADS lowers it (racecheck hangs with several) */
static gpuk_ctx* ctx;
static double seconds = 60;

typedef struct worker {
    int id;
    long ops, checks, errors;
    char first_error[512];
} worker;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t next(uint64_t* s) { /* xorshift64 */
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

/* Counts a call; a failure counts as an error and keeps the first text. Returns r. */
static gpuk_result note(worker* w, gpuk_result r) {
    w->ops++;
    if (r != GPUK_OK && !w->errors++) snprintf(w->first_error, sizeof w->first_error, "%s", gpuk_last_error());
    return r;
}
#define W_TRY(w, call) do { if (note((w), (call)) != GPUK_OK) goto done; } while (0)

static void* work(void* arg) {
    worker* w = (worker*)arg;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (uint64_t)(w->id + 1);
    gpuk_stream s;
    gpuk_event e;
    float* host = (float*)malloc((1u << 21) * sizeof(float));
    double end = now_s() + seconds;
    if (gpuk_stream_create(ctx, NULL, &s) != GPUK_OK || gpuk_event_create(ctx, NULL, &e) != GPUK_OK) {
        w->errors++;
        free(host);
        return NULL;
    }
    while (now_s() < end) {
        size_t n = 1 + next(&rng) % (1u << 21); /* up to 8 MiB of floats */
        gpuk_buffer a = { 0 }, b = { 0 }, t = { 0 };
        float value = (float)(next(&rng) % 1000), sum = 0, got = 0;
        size_t i, probe = next(&rng) % n;
        W_TRY(w, gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4 }, &a));
        W_TRY(w, gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4 }, &b));
        W_TRY(w, gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 8 }, &t));
        switch (next(&rng) % 3) {
        case 0: /* host -> a, a -> b, b -> host */
            for (i = 0; i < n; i++) host[i] = (float)((i + (size_t)w->id) % 251);
            W_TRY(w, gpuk_buffer_write_async(ctx, s, a, 0, host, n * 4));
            W_TRY(w, gpuk_buffer_copy_async(ctx, s, b, 0, a, 0, n * 4));
            W_TRY(w, gpuk_event_record(ctx, s, e));
            W_TRY(w, gpuk_event_sync(ctx, e));
            W_TRY(w, gpuk_buffer_read(ctx, b, probe * 4, &got, 4));
            w->checks++;
            if (got != (float)((probe + (size_t)w->id) % 251)) w->errors++;
            break;
        case 1: /* fill a, b; b = a + b; read one element */
            W_TRY(w, gpuk_fill_f32(ctx, s, gpuk_at(a, 0), n, value));
            W_TRY(w, gpuk_fill_f32(ctx, s, gpuk_at(b, 0), n, 1.0f));
            W_TRY(w, gpuk_add_f32(ctx, s, gpuk_at(b, 0), gpuk_at(a, 0), gpuk_at(b, 0), n));
            W_TRY(w, gpuk_stream_sync(ctx, s));
            W_TRY(w, gpuk_buffer_read(ctx, b, probe * 4, &got, 4));
            w->checks++;
            if (got != value + 1.0f) w->errors++;
            break;
        default: /* fill and sum on the stream's scratch; exact for small integers */
            W_TRY(w, gpuk_fill_f32(ctx, s, gpuk_at(a, 0), n, 2.0f));
            W_TRY(w, gpuk_sum_f32(ctx, s, gpuk_at(t, 0), gpuk_at(a, 0), n));
            W_TRY(w, gpuk_stream_sync(ctx, s));
            W_TRY(w, gpuk_buffer_read(ctx, t, 0, &sum, 4));
            w->checks++;
            if (sum != 2.0f * (float)n) w->errors++;
            break;
        }
    done:
        if (a.id) note(w, gpuk_buffer_destroy(ctx, a));
        if (b.id) note(w, gpuk_buffer_destroy(ctx, b));
        if (t.id) note(w, gpuk_buffer_destroy(ctx, t));
        if (w->errors) break;
    }
    if (gpuk_event_destroy(ctx, e) != GPUK_OK || gpuk_stream_destroy(ctx, s) != GPUK_OK) w->errors++;
    free(host);
    return NULL;
}

/* One round of `threads` workers for secs seconds; returns the errors, adds up the counts. */
static long round_of(double secs, long* ops, long* checks) {
    pthread_t th[MAX_THREADS];
    worker w[MAX_THREADS];
    long errors = 0;
    int i;
    seconds = secs;
    for (i = 0; i < threads; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
    }
    for (i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        *ops += w[i].ops; *checks += w[i].checks; errors += w[i].errors;
        if (w[i].errors) fprintf(stderr, "  thread %d: %ld errors; first: %s\n", i, w[i].errors, w[i].first_error);
    }
    CHECK_OK(gpuk_ctx_sync(ctx));
    return errors;
}

/* A short first round lets the driver set up what it keeps for a process that used 16 streams
   at once (8 MiB on an H100, measured); the free memory after it is the baseline the full
   round must come back to, to the byte. */
static int test_sixteen_threads_mixed_work(void) {
    const double full = seconds;
    size_t free_before = 0, free_after = 0, free_start = 0;
    long ops = 0, checks = 0, errors;
    CHECK_OK(gpuk_ctx_mem_info(ctx, &free_start, NULL));
    errors = round_of(full < 3 ? full : 3, &ops, &checks);
    CHECK_OK(gpuk_ctx_mem_info(ctx, &free_before, NULL));
    ops = checks = 0;
    errors += round_of(full, &ops, &checks);
    CHECK_OK(gpuk_ctx_mem_info(ctx, &free_after, NULL));
    printf("     %d threads, %.0f s: %ld gpuk calls, %ld values checked, %ld errors; free memory %zu -> %zu bytes "
           "(%lld leaked; the first round left %lld with the driver)\n", threads, full, ops, checks, errors,
           free_before, free_after, (long long)free_before - (long long)free_after,
           (long long)free_start - (long long)free_before);
    CHECK(errors == 0 && checks > 0);
    if (!under_sanitizer()) CHECK(free_after == free_before);
    return TEST_PASS;
}

int main(void) {
    int code;
    if (getenv("GPUK_STRESS_SECONDS")) seconds = atof(getenv("GPUK_STRESS_SECONDS"));
    if (getenv("GPUK_STRESS_THREADS")) threads = atoi(getenv("GPUK_STRESS_THREADS"));
    if (threads < 1 || threads > MAX_THREADS) threads = MAX_THREADS;
    if (!gpu_setup("gpu_stress", 1, &ctx, &code)) return code;
    RUN(test_sixteen_threads_mixed_work);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
