/* examples/example_util.h - what the gallery examples (03_ and up) share: command-line flags,
   the GPU start, a wall clock, the result line, PNG output through libpng and a colour map.
   Not part of gpuk. Include after gpuk.h; the program defines _POSIX_C_SOURCE 200809L before
   its first include and links -lpng -lm. Helpers here print what went wrong and return an
   error; only main decides to stop. */
#ifndef EXAMPLE_UTIL_H
#define EXAMPLE_UTIL_H
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Exit status of an example that found no GPU to run on (the cause was printed once, by
   gpuk's logger); a failed check or call exits 1. */
#define EX_NO_GPU 2
#define EX_PI 3.14159265358979323846

/* The most ctxs a multi-GPU example drives (gpuk tells the handles of up to 16 live ctxs apart). */
#define EX_MAX_GPUS 16

typedef struct ex_opts {
    int full;            /* --full: the full problem size instead of the quick one */
    const char* out_dir; /* --out DIR: where pictures go (default build/pictures) */
    int gpus;            /* --gpus N (multi-GPU examples): N ctxs; 0 = one per device */
    size_t size;         /* --size N (examples that say so): an N-wide problem; 0 = theirs */
    int steps;           /* --steps N (examples that say so): N steps; 0 = theirs */
} ex_opts;

/* Reads --full, --out DIR, --gpus N, --size N, --steps N and --help into *o. -1 = go on; otherwise the exit status
   for main (0 after --help, 1 after a bad flag). */
static inline int ex_parse(int argc, char** argv, const char* name, const char* what, ex_opts* o) {
    int i;
    o->full = 0;
    o->out_dir = "build/pictures";
    o->gpus = 0;
    o->size = 0;
    o->steps = 0;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0) o->full = 1;
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc && atol(argv[i + 1]) >= 3 &&
                 atol(argv[i + 1]) <= 1L << 20) o->size = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1) o->steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) o->out_dir = argv[++i];
        else if (strcmp(argv[i], "--gpus") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
                 atoi(argv[i + 1]) <= EX_MAX_GPUS) o->gpus = atoi(argv[++i]);
        else {
            int help = strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
            if (!help) fprintf(stderr, "%s: unknown argument '%s'\n", name, argv[i]);
            fprintf(help ? stdout : stderr,
                    "%s: %s\nusage: %s [--full] [--out DIR] [--gpus N] [--size N] [--steps N]\n"
                    "  --full     the full problem size (default: a quick one)\n"
                    "  --out DIR  where the pictures go (default build/pictures)\n"
                    "  --gpus N   multi-GPU examples: N ctxs (1..%d) over the devices in turn,\n"
                    "             several on one device where N is larger (default: one a device)\n"
                    "  --size N   examples that say so: an N-wide problem (3..2^20) instead of theirs\n"
                    "  --steps N  examples that say so: N steps instead of theirs\n",
                    name, what, name, EX_MAX_GPUS);
            return help ? 0 : 1;
        }
    }
    return -1;
}

/* gpuk_init with the stderr logger (so every failure's text shows, once), then want ctxs
   (0: one a device) on devices 0, 1, ... in turn, at most max. Returns how many ctx[] holds
   (>= 1), or 0 after saying that nothing ran. */
static inline int ex_start_gpus(const char* name, int want, gpuk_ctx** ctx, int max) {
    int count = -1, n, i;
    if (gpuk_init(&(gpuk_desc){ .logger = { gpuk_log_stderr, NULL } }) == GPUK_OK &&
        gpuk_device_count(&count) == GPUK_OK) {
        if (count == 0) fprintf(stderr, "%s: the driver sees no CUDA device\n", name);
        else {
            n = want > 0 ? want : count;
            if (n > max) n = max;
            for (i = 0; i < n; i++)
                if (gpuk_ctx_create(&(gpuk_ctx_desc){ .device = i % count }, &ctx[i]) != GPUK_OK) break;
            if (i == n) return n;
            while (i > 0) gpuk_ctx_destroy(ctx[--i]);
        }
    }
    fprintf(stderr, "%s: no GPU to run on; nothing was computed\n", name);
    return 0;
}

/* A ctx on device 0. Returns 1 with *ctx ready, or 0 after saying that nothing ran. */
static inline int ex_start(const char* name, gpuk_ctx** ctx) {
    *ctx = NULL;
    return ex_start_gpus(name, 1, ctx, 1);
}

/* ex_parse, then ex_start: -1 = go on with *ctx ready; otherwise the exit status for main. */
static inline int ex_begin(int argc, char** argv, const char* name, const char* what, ex_opts* o,
                    gpuk_ctx** ctx) {
    int rc = ex_parse(argc, argv, name, what, o);
    *ctx = NULL;
    if (rc >= 0) return rc;
    return ex_start(name, ctx) ? -1 : EX_NO_GPU;
}

/* ex_parse, then ex_start_gpus with --gpus (at most max ctxs): -1 = go on with *n ctxs in
   ctx[], each device named on stdout; otherwise the exit status for main. */
static inline int ex_begin_gpus(int argc, char** argv, const char* name, const char* what,
                                ex_opts* o, gpuk_ctx** ctx, int max, int* n) {
    int rc = ex_parse(argc, argv, name, what, o), i;
    *n = 0;
    if (rc >= 0) return rc;
    if (!(*n = ex_start_gpus(name, o->gpus, ctx, max))) return EX_NO_GPU;
    for (i = 0; i < *n; i++) {
        const gpuk_device_info* d = gpuk_ctx_device_info(ctx[i]);
        printf("GPU %d: device %d, %s%s\n", i, d->ordinal, d->name,
               i > 0 && d->ordinal == gpuk_ctx_device_info(ctx[0])->ordinal ? " (shared)" : "");
    }
    return -1;
}

/* Destroys n ctxs; 0, or 1 after printing which failed. */
static inline int ex_end_gpus(const char* name, gpuk_ctx** ctx, int n) {
    int i, bad = 0;
    for (i = 0; i < n; i++)
        if (gpuk_ctx_destroy(ctx[i]) != GPUK_OK) { fprintf(stderr, "%s: destroying GPU %d's ctx failed\n", name, i); bad = 1; }
    return bad;
}

/* The logger has printed the failure's text; TRY names the call and leaves main with 1. */
#define TRY(call) do { if ((call) != GPUK_OK) { \
    fprintf(stderr, "%s: %s failed\n", ex_name, #call); return 1; } } while (0)

static inline double ex_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Times work that queue(user) puts on ctx[0..n)'s streams (streams[i], or the default
   streams where streams is NULL), as one host thread drives all GPUs: a start event on every
   GPU, reps calls of queue, a stop event on every GPU, then a wait for all of them. queue must
   only queue work (launches, async copies), never wait, or the GPUs after it starve. Once to
   warm up (module loads, first launches), then runs times. Returns the best wall time of one
   call in ms and each GPU's own time in ms[i] (between its events in that timing, divided by
   reps); -1 after a failure (the logger said which). */
static inline double ex_time_gpus(gpuk_ctx** ctx, const gpuk_stream* streams, int n, int runs,
                                  int reps, gpuk_result (*queue)(void* user), void* user, float* ms) {
    gpuk_event ev[2 * EX_MAX_GPUS];
    gpuk_stream s;
    double best = -1, t;
    int i, run, made = 0, ok = n <= EX_MAX_GPUS;
    while (ok && made < 2 * n)
        if ((ok = gpuk_event_create(ctx[made / 2], NULL, &ev[made]) == GPUK_OK)) made++;
    for (run = 0; ok && run <= runs; run++) {
        t = ex_now_ms();
        for (i = 0; ok && i < n; i++) {
            s = streams ? streams[i] : GPUK_DEFAULT_STREAM;
            ok = gpuk_event_record(ctx[i], s, ev[2 * i]) == GPUK_OK;
        }
        for (i = 0; ok && i < reps; i++) ok = queue(user) == GPUK_OK;
        for (i = 0; ok && i < n; i++) {
            s = streams ? streams[i] : GPUK_DEFAULT_STREAM;
            ok = gpuk_event_record(ctx[i], s, ev[2 * i + 1]) == GPUK_OK;
        }
        for (i = 0; ok && i < n; i++) ok = gpuk_event_sync(ctx[i], ev[2 * i + 1]) == GPUK_OK;
        t = (ex_now_ms() - t) / reps;
        if (!ok || run == 0 || (best >= 0 && t >= best)) continue; /* run 0 warms up */
        best = t;
        for (i = 0; ok && i < n; i++) {
            ok = gpuk_event_elapsed_ms(ctx[i], ev[2 * i], ev[2 * i + 1], &ms[i]) == GPUK_OK;
            ms[i] /= (float)reps;
        }
    }
    while (made > 0) {
        made--;
        if (gpuk_event_destroy(ctx[made / 2], ev[made]) != GPUK_OK) ok = 0;
    }
    return ok ? best : -1;
}

/* The line run-gallery shows for the example: "PASSED: ..." or "FAILED: ...". Returns the
   exit status for main. */
static inline int ex_result(int ok, const char* fmt, ...) {
    va_list ap;
    printf("%s: ", ok ? "PASSED" : "FAILED");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    return ok ? 0 : 1;
}

/* Uniform in [0, 1) from a 64-bit LCG (CPU-side inputs, reproducible). */
static inline double ex_rand(uint64_t* state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*state >> 11) / 9007199254740992.0;
}

/* mkdir -p; 0 or -1 after printing why. */
static inline int ex_mkdir_p(const char* dir) {
    char path[1024];
    size_t i, n = strlen(dir);
    if (n == 0 || n >= sizeof path) { fprintf(stderr, "output folder '%s': bad length\n", dir); return -1; }
    memcpy(path, dir, n + 1);
    for (i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != 0) continue;
        path[i] = 0;
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "cannot create folder '%s': %s\n", path, strerror(errno));
            return -1;
        }
        if (i < n) path[i] = '/';
    }
    return 0;
}

/* Writes width x height pixels of channels bytes each (1 gray, 3 RGB), rows top to bottom,
   to out_dir/file as PNG (creating out_dir). 0, or -1 after printing why. */
static inline int ex_png(const char* out_dir, const char* file, int width, int height, int channels,
                  const uint8_t* pixels) {
    char path[1200];
    FILE* volatile f = NULL;
    png_structp png;
    png_infop info = NULL;
    int y;
    if (ex_mkdir_p(out_dir) != 0) return -1;
    snprintf(path, sizeof path, "%s/%s", out_dir, file);
    if (!(f = fopen(path, "wb"))) { fprintf(stderr, "cannot write '%s': %s\n", path, strerror(errno)); return -1; }
    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    if (png) info = png_create_info_struct(png);
    if (!png || !info || setjmp(png_jmpbuf(png))) { /* libpng's handler printed the cause */
        png_destroy_write_struct(&png, &info);
        fclose(f);
        fprintf(stderr, "writing '%s' failed\n", path);
        return -1;
    }
    png_init_io(png, f);
    png_set_compression_level(png, 3); /* fast: big pictures of a quick run */
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
                 channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (y = 0; y < height; y++)
        png_write_row(png, pixels + (size_t)y * (size_t)width * (size_t)channels);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(f) != 0) { fprintf(stderr, "cannot write '%s': %s\n", path, strerror(errno)); return -1; }
    printf("picture: %s (%dx%d)\n", path, width, height);
    return 0;
}

/* Colour for t in [0, 1], dark blue through green and yellow to dark red (Google's Turbo map,
   polynomial approximation). */
static inline void ex_colormap(double t, uint8_t rgb[3]) {
    double r, g, b;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    r = 0.13572138 + t * (4.61539260 + t * (-42.66032258 + t * (132.13108234 + t * (-152.94239396 + t * 59.28637943))));
    g = 0.09140261 + t * (2.19418839 + t * (4.84296658 + t * (-14.18503333 + t * (4.27729857 + t * 2.82956604))));
    b = 0.10667330 + t * (12.64194608 + t * (-60.58204836 + t * (110.36276771 + t * (-89.90310912 + t * 27.34824973))));
    rgb[0] = (uint8_t)(255.0 * (r < 0 ? 0 : r > 1 ? 1 : r) + 0.5);
    rgb[1] = (uint8_t)(255.0 * (g < 0 ? 0 : g > 1 ? 1 : g) + 0.5);
    rgb[2] = (uint8_t)(255.0 * (b < 0 ? 0 : b > 1 ? 1 : b) + 0.5);
}

/* Escape counts (Mandelbrot, Julia) as RGB: black where the count reached max_iter (inside
   the set), elsewhere Turbo colours by the log of the count. */
static inline void ex_escape_rgb(const unsigned* iters, size_t pixels, int max_iter, uint8_t* rgb) {
    size_t i;
    for (i = 0; i < pixels; i++) {
        if (iters[i] >= (unsigned)max_iter) rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = 0;
        else ex_colormap(log(1.0 + iters[i]) / log(1.0 + max_iter), rgb + 3 * i);
    }
}

/* A width x height RGB picture of a float field, colour-mapped from lo to hi. NULL if out of
   memory (said). Free it with free(). */
static inline uint8_t* ex_field_rgb(const float* v, int width, int height, double lo, double hi) {
    size_t i, n = (size_t)width * (size_t)height;
    uint8_t* rgb = (uint8_t*)malloc(n * 3);
    if (!rgb) { fprintf(stderr, "out of host memory for a %dx%d picture\n", width, height); return NULL; }
    for (i = 0; i < n; i++) ex_colormap(hi > lo ? ((double)v[i] - lo) / (hi - lo) : 0.0, rgb + 3 * i);
    return rgb;
}

/* Fills the rectangle [x0, x1) x [y0, y1), clipped, of an RGB picture with one colour. */
static inline void ex_rect(uint8_t* rgb, int width, int height, int x0, int y0, int x1, int y1,
                    uint32_t colour) {
    int x, y;
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > width) x1 = width;
    if (y1 > height) y1 = height;
    for (y = y0; y < y1; y++)
        for (x = x0; x < x1; x++) {
            uint8_t* p = rgb + 3 * ((size_t)y * (size_t)width + (size_t)x);
            p[0] = (uint8_t)(colour >> 16);
            p[1] = (uint8_t)(colour >> 8);
            p[2] = (uint8_t)colour;
        }
}
#endif
