/* bench/bench_batch.h - the median time of one queued GPU operation, for the kernel benches
   (bench_kernels.c, bench_shapes.c): events on one stream around one run, or around a batch of
   runs where one is short. With one operation between the events, the start event fires at once
   on an idle GPU and the kernel starts only when the host has submitted it, so a short kernel
   was charged the submission too (a copy of 64 MiB each way timed alone took about 8 % longer
   than one in a batch of 10). So operations under BENCH_BATCH_MS run in batches of about
   BENCH_BATCH_MS between the events, and the time is the batch's over its size.
   The includer defines TRY(call) (exits with gpuk_last_error() on failure) first. */
#ifndef BENCH_BATCH_H
#define BENCH_BATCH_H
#include "gpuk.h"
#include "bench_clock.h"

#define BENCH_BATCH_MS 0.5
enum { BENCH_REPEATS = 11, BENCH_WARMUP = 2 };
typedef void (*bench_work_fn)(void);

/* Median milliseconds of one work() on ctx's default stream, timed with timer. */
static double bench_time_ms(gpuk_ctx* ctx, gpuk_timer* timer, bench_work_fn work) {
    const gpuk_stream s = { 0 };
    double t[BENCH_REPEATS];
    float one = 0;
    int i, k, batch;
    for (i = 0; i < BENCH_WARMUP; i++) work();
    TRY(gpuk_timer_start(ctx, s, timer));
    work();
    TRY(gpuk_timer_stop(ctx, timer, &one));
    batch = one >= BENCH_BATCH_MS ? 1 : one * 64 < BENCH_BATCH_MS ? 64 : (int)(BENCH_BATCH_MS / one) + 1;
    for (i = 0; i < BENCH_REPEATS; i++) {
        float ms = 0;
        TRY(gpuk_timer_start(ctx, s, timer));
        for (k = 0; k < batch; k++) work();
        TRY(gpuk_timer_stop(ctx, timer, &ms));
        t[i] = ms / batch;
    }
    return median(t, BENCH_REPEATS);
}
#endif
