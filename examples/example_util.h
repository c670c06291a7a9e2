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

typedef struct ex_opts {
    int full;            /* --full: the book's size instead of the quick one */
    const char* out_dir; /* --out DIR: where pictures go (default build/pictures) */
} ex_opts;

/* Reads --full, --out DIR and --help into *o. -1 = go on; otherwise the exit status for main
   (0 after --help, 1 after a bad flag). */
static inline int ex_parse(int argc, char** argv, const char* name, const char* what, ex_opts* o) {
    int i;
    o->full = 0;
    o->out_dir = "build/pictures";
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0) o->full = 1;
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) o->out_dir = argv[++i];
        else {
            int help = strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
            if (!help) fprintf(stderr, "%s: unknown argument '%s'\n", name, argv[i]);
            fprintf(help ? stdout : stderr,
                    "%s: %s\nusage: %s [--full] [--out DIR]\n"
                    "  --full     the book's full size (default: a quick one)\n"
                    "  --out DIR  where the pictures go (default build/pictures)\n",
                    name, what, name);
            return help ? 0 : 1;
        }
    }
    return -1;
}

/* gpuk_init with the stderr logger (so every failure's text shows, once), then a ctx on
   device 0. Returns 1 with *ctx ready, or 0 after saying that nothing ran. */
static inline int ex_start(const char* name, gpuk_ctx** ctx) {
    int count = -1;
    *ctx = NULL;
    if (gpuk_init(&(gpuk_desc){ .logger = { gpuk_log_stderr, NULL } }) == GPUK_OK &&
        gpuk_device_count(&count) == GPUK_OK) {
        if (count == 0) fprintf(stderr, "%s: the driver sees no CUDA device\n", name);
        else if (gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 0 }, ctx) == GPUK_OK) return 1;
    }
    fprintf(stderr, "%s: no GPU to run on; nothing was computed\n", name);
    return 0;
}

/* ex_parse, then ex_start: -1 = go on with *ctx ready; otherwise the exit status for main. */
static inline int ex_begin(int argc, char** argv, const char* name, const char* what, ex_opts* o,
                    gpuk_ctx** ctx) {
    int rc = ex_parse(argc, argv, name, what, o);
    *ctx = NULL;
    if (rc >= 0) return rc;
    return ex_start(name, ctx) ? -1 : EX_NO_GPU;
}

/* The logger has printed the failure's text; TRY names the call and leaves main with 1. */
#define TRY(call) do { if ((call) != GPUK_OK) { \
    fprintf(stderr, "%s: %s failed\n", ex_name, #call); return 1; } } while (0)

static inline double ex_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
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

#ifdef GPUK_GRID_DEFINED /* a header from tools/gpuk_embed.py came first */
/* A 2-D launch of width x height threads in 16 x 16 blocks, on the default stream. */
static inline gpuk_grid ex_grid_2d(int width, int height) {
    gpuk_grid g = gpuk_grid_1d(0, 16);
    g.block = GPUK_DIM2(16, 16);
    g.grid = GPUK_DIM2((width + 15) / 16, (height + 15) / 16);
    return g;
}
#endif

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
