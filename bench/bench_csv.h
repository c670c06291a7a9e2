/* bench/bench_csv.h - the benches' results as CSV, beside the text they print (which stays as
   it is: tests/gpu-check greps it). One file per bench, $BENCH_CSV_DIR/<bench>.csv (default
   build/bench-csv/; build/bench is bench.c's program), read by tools/bench_chart.py. Columns:
     bench,name,size,time_ms,value,unit,ratio,goal,gpu,date
   ratio: what the bench compares with its limit (kernels: to device copy bandwidth; driver: raw
   driver time / gpuk time; gemm: cuBLAS time / gpuk time; cub: to CUB's own device copy), empty
   where the line has none. goal: the ratio's goal (at least) on a row with a ratio, else the
   printed bound on value (at most); BENCH_CSV_NONE writes an empty field. The file cannot be
   written: said once on stderr, the bench goes on (its printed text is the result).
   C99 and C++ (the .cu benches include it too); one bench per program. */
#ifndef BENCH_CSV_H
#define BENCH_CSV_H
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define BENCH_CSV_NONE ((double)NAN)

static struct { FILE* f; char bench[32], gpu[256], date[32]; } bench_csv;

static void bench_csv_open(const char* bench, const char* gpu) {
    const char* dir = getenv("BENCH_CSV_DIR");
    char path[1024];
    size_t i;
    time_t now = time(NULL);
    if (!dir || !*dir) dir = "build/bench-csv";
    snprintf(path, sizeof path, "%s/", dir);
    for (i = 1; path[i]; i++) /* mkdir -p; an existing folder is no error, fopen says the rest */
        if (path[i] == '/') { path[i] = 0; mkdir(path, 0777); path[i] = '/'; }
    snprintf(path, sizeof path, "%s/%s.csv", dir, bench);
    snprintf(bench_csv.bench, sizeof bench_csv.bench, "%s", bench);
    snprintf(bench_csv.gpu, sizeof bench_csv.gpu, "%s", gpu);
    strftime(bench_csv.date, sizeof bench_csv.date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    bench_csv.f = fopen(path, "w");
    if (!bench_csv.f) fprintf(stderr, "%s: cannot write %s: %s (results printed only)\n", bench, path, strerror(errno));
    else fputs("bench,name,size,time_ms,value,unit,ratio,goal,gpu,date\n", bench_csv.f);
}

/* a text field without its outer spaces, quoted where it holds a comma, quote or line break */
static void bench_csv__text(const char* s, char sep) {
    size_t n, i;
    while (*s == ' ') s++;
    for (n = strlen(s); n && s[n - 1] == ' '; n--) {}
    if (strcspn(s, ",\"\r\n") < n) {
        fputc('"', bench_csv.f);
        for (i = 0; i < n; i++) {
            if (s[i] == '"') fputc('"', bench_csv.f);
            fputc(s[i], bench_csv.f);
        }
        fputc('"', bench_csv.f);
    } else fwrite(s, 1, n, bench_csv.f);
    fputc(sep, bench_csv.f);
}
static void bench_csv__num(double v) {
    if (!isnan(v)) fprintf(bench_csv.f, "%.6g", v);
    fputc(',', bench_csv.f);
}

static void bench_csv_row(const char* name, const char* size, double time_ms, double value, const char* unit,
                          double ratio, double goal) {
    if (!bench_csv.f) return;
    bench_csv__text(bench_csv.bench, ',');
    bench_csv__text(name, ',');
    bench_csv__text(size, ',');
    bench_csv__num(time_ms);
    bench_csv__num(value);
    bench_csv__text(unit, ',');
    bench_csv__num(ratio);
    bench_csv__num(goal);
    bench_csv__text(bench_csv.gpu, ',');
    bench_csv__text(bench_csv.date, '\n');
}

static void bench_csv_close(void) {
    int bad;
    if (!bench_csv.f) return;
    bad = ferror(bench_csv.f);
    bad |= fclose(bench_csv.f);
    if (bad) fprintf(stderr, "%s: writing its CSV failed (results printed only)\n", bench_csv.bench);
    bench_csv.f = NULL;
}
#endif
