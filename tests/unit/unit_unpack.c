/* tests/unit/unit_unpack.c - the built-in kernels' PTX as gpuk.h stores it (deflated against a
   shared dictionary, in a base-85 alphabet, some modules as line scripts against another):
   every module and variant unpacks to exactly its file in ptx/, byte for byte; and the
   decoder refuses damaged input (every character of a piece changed in turn, cut short,
   random bytes, a wrong size, broken line scripts) without reading or writing out of bounds
   (ASan). Run from the repository root (it reads ptx/). No GPU, no driver needed.
   cc -std=c99 -I. tests/unit/unit_unpack.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include <stdlib.h>

static char* read_file(const char* path, size_t* out_len) {
    FILE* f = fopen(path, "rb");
    char* buf;
    long n;
    *out_len = 0;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (char*)malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) *out_len = (size_t)n;
    return buf;
}

/* p unpacked through the library's own path, against ptx/<name>.ptx */
static int unpacks_to_its_file(const gpuk__builtin_ptx* p) {
    char path[256], *block = NULL, *text, *want;
    size_t want_len;
    gpuk_result r = GPUK_OK;
    int same;
    snprintf(path, sizeof path, "ptx/%s.ptx", p->name);
    if (!(want = read_file(path, &want_len))) {
        fprintf(stderr, "  cannot read %s (run from the repository root)\n", path);
        return 0;
    }
    text = gpuk__builtin_text("unit_unpack", p, &block, &r);
    same = text && want_len == p->bytes && memcmp(text, want, want_len) == 0 && text[want_len] == 0;
    if (!same) fprintf(stderr, "  %s: %s\n", p->name, text ? "differs from its ptx/ file" : gpuk_last_error());
    gpuk__free(block);
    free(want);
    return same;
}

static int test_every_module_unpacks_to_its_ptx_file(void) {
    const gpuk__builtin_variant* v;
    size_t total = 0, packed = 0;
    int id, n = 0;
    for (id = 0; id < GPUK__KERNEL_COUNT; id++, n++) {
        const gpuk__builtin_ptx* p = gpuk__builtin_ptx_of(id);
        CHECK(unpacks_to_its_file(p));
        total += p->bytes;
        packed += p->packed;
    }
    for (v = gpuk__builtin_variants(); v->kernel >= 0; v++, n++) {
        CHECK(unpacks_to_its_file(&v->ptx));
        total += v->ptx.bytes;
        packed += v->ptx.packed;
    }
    printf("     %d modules: %zu bytes of PTX from %zu deflated (and a %zu-byte dictionary)\n", n, total,
           packed, gpuk__builtin_dictionary_of()->bytes);
    CHECK(n > 100 && packed * 4 < total);
    return TEST_PASS;
}

/* A copy of p whose first piece is text (and whose other pieces are p's). */
typedef struct damaged { gpuk__builtin_ptx p; const char* pieces[64]; } damaged;
static void damage(damaged* d, const gpuk__builtin_ptx* p, const char* first) {
    int i;
    d->p = *p;
    for (i = 0; i < 63 && p->pieces[i]; i++) d->pieces[i] = p->pieces[i];
    d->pieces[i] = NULL;
    d->pieces[0] = first;
    d->p.pieces = d->pieces;
}

static int test_damaged_input_is_refused(void) {
    const gpuk__builtin_ptx* dict = gpuk__builtin_dictionary_of();
    const gpuk__builtin_ptx* p = gpuk__builtin_ptx_of(0);
    const size_t len = strlen(p->pieces[0]);
    unsigned char* out = (unsigned char*)malloc(dict->bytes + p->bytes + 1);
    unsigned char* scratch = (unsigned char*)malloc(p->packed > dict->packed ? p->packed : dict->packed);
    char* piece = (char*)malloc(len + 1);
    unsigned char junk[4096];
    damaged d;
    size_t i, refused = 0, changed = 0;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    CHECK(gpuk__unpack(dict, out, 0, scratch));
    CHECK(gpuk__unpack(p, out, dict->bytes, scratch));
    /* every character of the first piece changed in turn: to one outside the alphabet (always
       refused), or to another digit (refused, or a stream that no longer fills the size) */
    for (i = 0; i < len; i++) {
        memcpy(piece, p->pieces[0], len + 1);
        piece[i] = i % 2 ? '"' : (char)(piece[i] == 'A' ? 'B' : 'A');
        damage(&d, p, piece);
        changed++;
        refused += !gpuk__unpack(&d.p, out, dict->bytes, scratch);
    }
    printf("     %zu of %zu one-character changes refused\n", refused, changed);
    CHECK(refused * 10 >= changed * 9); /* a digit change may leave a valid stream: few do */
    /* cut short, a lone last character, a size that does not match */
    memcpy(piece, p->pieces[0], len + 1);
    piece[len / 2] = 0;
    damage(&d, p, piece);
    CHECK(!gpuk__unpack(&d.p, out, dict->bytes, scratch));
    damage(&d, p, p->pieces[0]);
    d.p.bytes = p->bytes - 1;
    CHECK(!gpuk__unpack(&d.p, out, dict->bytes, scratch));
    d.p.bytes = p->bytes;
    d.p.packed = p->packed - 1;
    CHECK(!gpuk__unpack(&d.p, out, dict->bytes, scratch));
    CHECK(gpuk__b85_decode("A", 1, junk, sizeof junk) == (size_t)-1);
    CHECK(gpuk__b85_decode("AAAAA", 5, junk, 3) == (size_t)-1); /* no room */
    /* random streams: refused or not, never out of bounds (ASan watches) */
    for (i = 0; i < 2000; i++) {
        size_t k, n = 1 + (size_t)(i * 7 % sizeof junk);
        for (k = 0; k < n; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            junk[k] = (unsigned char)(seed >> 56);
        }
        (void)gpuk__inflate(junk, n, out, dict->bytes, dict->bytes + p->bytes);
    }
    free(out);
    free(scratch);
    free(piece);
    return TEST_PASS;
}

/* Line scripts (gpuk__patch): small ones against a CPU-made expectation, then damaged scripts
   refused (a wrong op, a count past the base, a line without its newline, an output of the
   wrong size), never out of bounds (ASan watches). */
static int patch_gives(const char* base, const char* script, const char* want) {
    const size_t n = strlen(want);
    char* out = (char*)malloc(n + 1);
    int ok = gpuk__patch(base, strlen(base), script, strlen(script), out, n) && memcmp(out, want, n + 1) == 0;
    free(out);
    return ok;
}
static int patch_refused(const char* base, const char* script, size_t out_len) {
    char* out = (char*)malloc(out_len + 1);
    int refused = !gpuk__patch(base, strlen(base), script, strlen(script), out, out_len);
    free(out);
    return refused;
}

static int test_line_scripts(void) {
    const gpuk__builtin_variant* v;
    int id, scripts = 0;
    CHECK(patch_gives("a\nb\nc", "=3\n", "a\nb\nc"));
    CHECK(patch_gives("a\nb\nc\n", "=1\n-1\n+2\nx\ny\n=2\n", "a\nx\ny\nc\n"));
    CHECK(patch_gives("a\nb", "-2\n+1\nz\n", "z"));
    CHECK(patch_gives("", "+2\nq\n\n", "q\n"));
    CHECK(patch_refused("a\nb\nc", "=4\n", 5));         /* past the base */
    CHECK(patch_refused("a\nb\nc", "*3\n", 5));         /* no such op */
    CHECK(patch_refused("a\nb\nc", "=\n", 5));          /* no count */
    CHECK(patch_refused("a\nb\nc", "=3", 5));            /* no newline after the count */
    CHECK(patch_refused("a\nb\nc", "+1\nxyz", 3));      /* an added line without its newline */
    CHECK(patch_refused("a\nb\nc", "=3\n", 4));         /* too short an output */
    CHECK(patch_refused("a\nb\nc", "=3\n", 6));         /* too long */
    CHECK(patch_refused("a\nb\nc", "=99999999999999999999\n", 5));
    /* the stored scripts: each edits a module stored whole, of its own family */
    for (id = 0; id < GPUK__KERNEL_COUNT; id++) {
        const gpuk__builtin_ptx* p = gpuk__builtin_ptx_of(id);
        if (p->base < 0) continue;
        scripts++;
        CHECK(p->base < GPUK__KERNEL_COUNT && gpuk__builtin_ptx_of(p->base)->base < 0 && p->script > 0);
    }
    for (v = gpuk__builtin_variants(); v->kernel >= 0; v++)
        if (v->ptx.base >= 0) {
            scripts++;
            CHECK(gpuk__builtin_ptx_of(v->ptx.base)->base < 0);
        }
    printf("     %d modules stored as line scripts\n", scripts);
    CHECK(scripts > 0);
    return TEST_PASS;
}

int main(void) {
    RUN(test_every_module_unpacks_to_its_ptx_file);
    RUN(test_damaged_input_is_refused);
    RUN(test_line_scripts);
    return test_summary();
}
