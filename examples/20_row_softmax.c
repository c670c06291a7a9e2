/* examples/20_row_softmax.c - softmax along every row of a matrix of logits, the classifier's
   last step (a batch of samples over 1000 classes), with gpuk's reductions along an axis:
   m = the largest logit of every row (gpuk_max_rows_f32), y = exp(x - m[row]) (a custom
   element-wise kernel), s = the sum of every row (gpuk_sum_rows_f32), y = y / s[row] (another
   one), and the predicted class of every row (gpuk_argmax_rows_f32 on the logits). Subtracting
   the row's largest logit first keeps exp from overflowing on large logits and changes nothing
   else (the factor exp(-m) cancels). Checked against the CPU in double: every probability, every
   row's sum, every predicted class, and the row maxima bit for bit; the time of one batch on the
   GPU beside the CPU's.
   Default 4096 x 1000 logits, --full 32768 x 1000. Needs NVRTC for the two element-wise kernels
   (the CUDA toolkit's libnvrtc; GPUK_NVRTC_PATH).
   cc -std=c99 -O2 -I.. 20_row_softmax.c -o row_softmax -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"
#include <float.h>
#include <unistd.h>

static const char ex_name[] = "20_row_softmax";

typedef struct batch {
    gpuk_ctx* ctx;
    gpuk_elementwise shift_exp, divide;
    gpuk_buffer x, y, m, s, cls;
    size_t rows, cols;
} batch;

/* One batch's softmax and predicted classes, queued on the default stream without waiting. */
static gpuk_result softmax(const batch* b) {
    const size_t n = b->rows * b->cols;
    const gpuk_array2d x = gpuk_at2d(b->x, 0, b->rows, b->cols, 0);
    const gpuk_arg cols = gpuk_arg_u64(b->cols);
    const gpuk_stream s0 = GPUK_DEFAULT_STREAM;
    gpuk_result r;
    if ((r = gpuk_max_rows_f32(b->ctx, s0, gpuk_at(b->m, 0), x)) != GPUK_OK ||
        (r = gpuk_elementwise_launch(b->ctx, s0, &b->shift_exp, n,
                                     GPUK_ARGV(cols, gpuk_arg_array(gpuk_at(b->x, 0)),
                                               gpuk_arg_array(gpuk_at(b->m, 0)),
                                               gpuk_arg_array(gpuk_at(b->y, 0))))) != GPUK_OK ||
        (r = gpuk_sum_rows_f32(b->ctx, s0, gpuk_at(b->s, 0),
                               gpuk_at2d(b->y, 0, b->rows, b->cols, 0))) != GPUK_OK ||
        (r = gpuk_elementwise_launch(b->ctx, s0, &b->divide, n,
                                     GPUK_ARGV(cols, gpuk_arg_array(gpuk_at(b->s, 0)),
                                               gpuk_arg_array(gpuk_at(b->y, 0))))) != GPUK_OK)
        return r;
    return gpuk_argmax_rows_f32(b->ctx, s0, gpuk_at(b->cls, 0), x);
}

int main(int argc, char** argv) {
    ex_opts o;
    batch b;
    int rc = ex_begin(argc, argv, ex_name, "softmax along the rows of a matrix of logits", &o,
                      &b.ctx);
    gpuk_ctx* ctx = b.ctx;
    gpuk_timer timer;
    gpuk_result r;
    const int reps = 10;
    size_t n, i, j, bad_p = 0, bad_sum = 0, bad_cls = 0, bad_max = 0;
    float *h_x, *h_y, *h_m, gpu_ms = 0;
    uint64_t* h_cls;
    size_t* ref_cls;
    double* ref;
    double t0, cpu_ms, worst_p = 0, worst_sum = 0, tol;
    if (rc >= 0) return rc;
    b.rows = o.full ? 32768 : 4096;
    b.cols = 1000;
    n = b.rows * b.cols;
    h_x = (float*)malloc(n * sizeof(float));
    h_y = (float*)malloc(n * sizeof(float));
    h_m = (float*)malloc(b.rows * sizeof(float));
    h_cls = (uint64_t*)malloc(b.rows * sizeof(uint64_t));
    ref = (double*)malloc(n * sizeof(double));
    ref_cls = (size_t*)malloc(b.rows * sizeof(size_t));
    if (!h_x || !h_y || !h_m || !h_cls || !ref || !ref_cls)
        return ex_result(0, "out of host memory");
    /* the toolkit's NVRTC where it is not on the library path and none is named */
    if (!getenv("GPUK_NVRTC_PATH") && access("/usr/local/cuda/lib64/libnvrtc.so.13", R_OK) == 0)
        setenv("GPUK_NVRTC_PATH", "/usr/local/cuda/lib64/libnvrtc.so.13", 0);

    /* m holds one element a row, not one an element: "raw" tells gpuk not to ask n of it */
    r = gpuk_elementwise_create(ctx, &(gpuk_elementwise_desc){
                                    .params = "unsigned long long cols, const float* x, "
                                              "raw const float* m, float* y",
                                    .body = "y[i] = expf(x[i] - m[i / cols])",
                                    .name = "shift_exp" }, &b.shift_exp);
    if (r == GPUK_ERR_NO_NVRTC) return EX_NO_GPU; /* the logger said what to install */
    TRY(r);
    TRY(gpuk_elementwise_create(ctx, &(gpuk_elementwise_desc){
                                    .params = "unsigned long long cols, raw const float* s, "
                                              "float* y",
                                    .body = "y[i] = y[i] / s[i / cols]",
                                    .name = "divide" }, &b.divide));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(float),
                                                     .label = "logits" }, &b.x));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(float),
                                                     .label = "probabilities" }, &b.y));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = b.rows * sizeof(float),
                                                     .label = "row max" }, &b.m));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = b.rows * sizeof(float),
                                                     .label = "row sum" }, &b.s));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = b.rows * sizeof(uint64_t),
                                                     .label = "classes" }, &b.cls));
    TRY(gpuk_timer_create(ctx, &timer));
    TRY(gpuk_random_normal_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(b.x, 0), n, 20, 0));
    TRY(gpuk_buffer_read(ctx, b.x, 0, h_x, n * sizeof(float)));

    /* once to warm up, then reps batches timed together */
    TRY(softmax(&b));
    TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
    for (i = 0; i < (size_t)reps; i++) TRY(softmax(&b));
    TRY(gpuk_timer_stop(ctx, &timer, &gpu_ms));
    gpu_ms /= (float)reps;
    /* the checked run writes over all-ones bits (NaN; class 2^64 - 1), so a result a step
       left unwritten cannot pass for the warm-up's */
    TRY(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, b.y, 0, 0xFFFFFFFFu, 4, n));
    TRY(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, b.m, 0, 0xFFFFFFFFu, 4, b.rows));
    TRY(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, b.cls, 0, 0xFFFFFFFFu, 4, 2 * b.rows));
    TRY(softmax(&b));
    TRY(gpuk_buffer_read(ctx, b.y, 0, h_y, n * sizeof(float)));
    TRY(gpuk_buffer_read(ctx, b.m, 0, h_m, b.rows * sizeof(float)));
    TRY(gpuk_buffer_read(ctx, b.cls, 0, h_cls, b.rows * sizeof(uint64_t)));

    /* the CPU's softmax in double, timed: row maxima and predicted classes, then the
       probabilities */
    t0 = ex_now_ms();
    for (i = 0; i < b.rows; i++) {
        const float* x = h_x + i * b.cols;
        double* p = ref + i * b.cols;
        double m, s = 0;
        size_t arg = 0;
        for (j = 1; j < b.cols; j++)
            if (x[j] > x[arg]) arg = j;
        ref_cls[i] = arg;
        m = x[arg];
        for (j = 0; j < b.cols; j++) s += p[j] = exp(x[j] - m);
        for (j = 0; j < b.cols; j++) p[j] /= s;
    }
    cpu_ms = ex_now_ms() - t0;

    /* the float steps' worst case: the sum's cols - 1 roundings (in any order) and a few more
       for x - m, exp and the division; a wrong row, max or sum is off by far more */
    tol = (double)(b.cols + 16) * FLT_EPSILON / 2;
    for (i = 0; i < b.rows; i++) {
        const float* y = h_y + i * b.cols;
        const double* p = ref + i * b.cols;
        double sum_y = 0, e;
        bad_cls += h_cls[i] != ref_cls[i];
        bad_max += memcmp(&h_m[i], &h_x[i * b.cols + ref_cls[i]], sizeof(float)) != 0;
        for (j = 0; j < b.cols; j++) {
            e = fabs((double)y[j] - p[j]) / p[j];
            if (!(e <= tol)) bad_p++; /* NaN counts as wrong */
            if (!(e <= worst_p)) worst_p = e;
            sum_y += y[j];
        }
        e = fabs(sum_y - 1);
        if (!(e <= tol)) bad_sum++;
        if (!(e <= worst_sum)) worst_sum = e;
    }
    printf("%zu rows x %zu classes: GPU %.3f ms a batch (max, exp, sum, divide, argmax), "
           "CPU in double %.1f ms\n", b.rows, b.cols, (double)gpu_ms, cpu_ms);
    printf("largest relative error of a probability %.2e, of a row's sum %.2e (bound %.2e); "
           "%zu probabilities, %zu sums, %zu classes, %zu maxima wrong\n",
           worst_p, worst_sum, tol, bad_p, bad_sum, bad_cls, bad_max);

    TRY(gpuk_timer_destroy(ctx, &timer));
    TRY(gpuk_elementwise_destroy(ctx, &b.shift_exp));
    TRY(gpuk_elementwise_destroy(ctx, &b.divide));
    TRY(gpuk_ctx_destroy(ctx));
    free(h_x); free(h_y); free(h_m); free(h_cls); free(ref); free(ref_cls);
    return ex_result(bad_p + bad_sum + bad_cls + bad_max == 0,
                     "softmax of %zu x %zu logits: GPU %.3f ms a batch, CPU %.1f ms; largest "
                     "relative error %.1e; %zu wrong", b.rows, b.cols, (double)gpu_ms, cpu_ms,
                     worst_p, bad_p + bad_sum + bad_cls + bad_max);
}
