/* src/gpuk_inflate.h - part of gpuk.h: unpacking the built-in kernels' PTX (base 85, inflate). */
#if !defined(GPUK_NO_KERNELS)
/* ---- >>inflate ---- */
/* The built-in kernels' PTX is stored deflated (RFC 1951, by the generator's zlib: about a fifth
   of the text) and written in a base-85 alphabet that C string literals take as they are; a
   module is unpacked at its first use on a ctx. The decoder is the canonical-Huffman inflate of
   the RFC, kept small: it trusts nothing in its input (every length and distance is checked),
   and needs no window beyond the output, which holds the whole module. */

/* The 85 characters of the text form: printable ASCII without the quote, the backslash, the
   question mark (no trigraph can form) and the six least useful others. */
static const char gpuk__b85_alphabet[] =
    "!#$%&()*+-./0123456789:=@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_abcdefghijklmnopqrstuvwxyz{|}~";

/* Text of n characters (a multiple of 5, but the last group may be short) into bytes; returns
   the bytes written, or (size_t)-1 on a character outside the alphabet or too little room. */
static size_t gpuk__b85_decode(const char* text, size_t n, unsigned char* out, size_t cap) {
    signed char value[128];
    size_t i, o = 0;
    int k;
    memset(value, -1, sizeof value);
    for (k = 0; k < 85; k++) value[(unsigned char)gpuk__b85_alphabet[k]] = (signed char)k;
    for (i = 0; i < n; i += 5) {
        const size_t group = n - i < 5 ? n - i : 5;
        uint32_t acc = 0;
        size_t j;
        if (group == 1) return (size_t)-1; /* a lone character holds no byte */
        for (j = 0; j < 5; j++) {
            /* a short last group is padded with the largest digit, as the encoder assumed */
            const int c = j < group ? (unsigned char)text[i + j] : '~';
            const int v = c < 128 ? value[c] : -1;
            if (v < 0) return (size_t)-1;
            acc = acc * 85u + (uint32_t)v;
        }
        for (j = 0; j + 1 < group; j++) {
            if (o == cap) return (size_t)-1;
            out[o++] = (unsigned char)(acc >> (24 - 8 * j));
        }
    }
    return o;
}

typedef struct gpuk__inflater {
    const unsigned char* in;
    size_t in_len, in_pos;
    uint32_t bits;             /* unread bits, lowest first */
    int nbits;
    unsigned char* out;
    size_t out_len, out_pos;
} gpuk__inflater;

/* A canonical Huffman code: how many codes of each length, and the symbols in code order. */
typedef struct gpuk__huffman {
    short count[16];
    short symbol[288];
} gpuk__huffman;

/* need (0..16) bits, lowest first; -1 past the end of the input */
static int32_t gpuk__inflate_bits(gpuk__inflater* s, int need) {
    int32_t v;
    while (s->nbits < need) {
        if (s->in_pos == s->in_len) return -1;
        s->bits |= (uint32_t)s->in[s->in_pos++] << s->nbits;
        s->nbits += 8;
    }
    v = (int32_t)(s->bits & ((1u << need) - 1u));
    s->bits >>= need;
    s->nbits -= need;
    return v;
}

/* The code from n code lengths; 0 when it is over-subscribed (incomplete codes are allowed,
   as the RFC allows a single distance code). */
static int gpuk__huffman_build(gpuk__huffman* h, const short* length, int n) {
    short offs[16];
    int len, sym, left = 1;
    memset(h->count, 0, sizeof h->count);
    for (sym = 0; sym < n; sym++) h->count[length[sym]]++;
    if (h->count[0] == n) return 1; /* no codes: any use of it fails */
    for (len = 1; len < 16; len++) {
        left = left * 2 - h->count[len];
        if (left < 0) return 0;
    }
    offs[1] = 0;
    for (len = 1; len < 15; len++) offs[len + 1] = (short)(offs[len] + h->count[len]);
    for (sym = 0; sym < n; sym++)
        if (length[sym]) h->symbol[offs[length[sym]]++] = (short)sym;
    return 1;
}

/* The next symbol of code h; -1 on a bad code or the end of the input. */
static int gpuk__huffman_decode(gpuk__inflater* s, const gpuk__huffman* h) {
    int code = 0, first = 0, index = 0, len;
    for (len = 1; len < 16; len++) {
        const int32_t bit = gpuk__inflate_bits(s, 1);
        int count;
        if (bit < 0) return -1;
        code |= bit;
        count = h->count[len];
        if (code - count < first) return h->symbol[index + (code - first)];
        index += count;
        first = (first + count) << 1;
        code <<= 1;
    }
    return -1;
}

/* One block's literals and matches until its end code; 0 on bad input. */
static int gpuk__inflate_codes(gpuk__inflater* s, const gpuk__huffman* lit, const gpuk__huffman* dist) {
    static const short len_base[29] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                        35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
    static const short len_extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                         3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
    static const short dist_base[30] = { 1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129,
                                         193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
                                         6145, 8193, 12289, 16385, 24577 };
    static const short dist_extra[30] = { 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7,
                                          8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };
    for (;;) {
        int sym = gpuk__huffman_decode(s, lit);
        int32_t extra;
        size_t len, d;
        if (sym < 0 || sym > 285) return 0;
        if (sym < 256) {
            if (s->out_pos == s->out_len) return 0;
            s->out[s->out_pos++] = (unsigned char)sym;
            continue;
        }
        if (sym == 256) return 1;
        sym -= 257;
        if ((extra = gpuk__inflate_bits(s, len_extra[sym])) < 0) return 0;
        len = (size_t)len_base[sym] + (size_t)extra;
        if ((sym = gpuk__huffman_decode(s, dist)) < 0 || sym > 29) return 0;
        if ((extra = gpuk__inflate_bits(s, dist_extra[sym])) < 0) return 0;
        d = (size_t)dist_base[sym] + (size_t)extra;
        if (d > s->out_pos || len > s->out_len - s->out_pos) return 0;
        for (; len; len--, s->out_pos++) s->out[s->out_pos] = s->out[s->out_pos - d];
    }
}

/* A dynamic block's two codes, read from its header; 0 on bad input. */
static int gpuk__inflate_dynamic(gpuk__inflater* s, gpuk__huffman* lit, gpuk__huffman* dist) {
    static const unsigned char order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2,
                                             14, 1, 15 };
    short length[320];
    gpuk__huffman lens;
    int32_t nlen = gpuk__inflate_bits(s, 5), ndist = gpuk__inflate_bits(s, 5),
            ncode = gpuk__inflate_bits(s, 4);
    int i = 0;
    if (nlen < 0 || ndist < 0 || ncode < 0) return 0;
    nlen += 257;
    ndist += 1;
    ncode += 4;
    if (nlen > 286 || ndist > 30) return 0;
    memset(length, 0, sizeof length);
    for (i = 0; i < ncode; i++) {
        const int32_t v = gpuk__inflate_bits(s, 3);
        if (v < 0) return 0;
        length[order[i]] = (short)v;
    }
    if (!gpuk__huffman_build(&lens, length, 19)) return 0;
    for (i = 0; i < nlen + ndist;) {
        int sym = gpuk__huffman_decode(s, &lens);
        int32_t rep;
        short value = 0;
        if (sym < 0) return 0;
        if (sym < 16) {
            length[i++] = (short)sym;
            continue;
        }
        if (sym == 16) {
            if (i == 0) return 0; /* nothing to repeat */
            value = length[i - 1];
            rep = gpuk__inflate_bits(s, 2);
            if (rep >= 0) rep += 3;
        } else {
            rep = gpuk__inflate_bits(s, sym == 17 ? 3 : 7);
            if (rep >= 0) rep += sym == 17 ? 3 : 11;
        }
        if (rep < 0 || i + rep > nlen + ndist) return 0;
        while (rep--) length[i++] = value;
    }
    if (length[256] == 0) return 0; /* no end code */
    return gpuk__huffman_build(lit, length, nlen) && gpuk__huffman_build(dist, length + nlen, ndist);
}

/* Inflates in[0, in_len) into out[start, out_len), out[0, start) holding the preset dictionary
   the stream was deflated against (matches may reach into it); 1 when the stream is well
   formed and fills out exactly. */
static int gpuk__inflate(const unsigned char* in, size_t in_len, unsigned char* out, size_t start,
                         size_t out_len) {
    gpuk__inflater s;
    gpuk__huffman lit, dist;
    int32_t last;
    memset(&s, 0, sizeof s);
    s.in = in;
    s.in_len = in_len;
    s.out = out;
    s.out_pos = start;
    s.out_len = out_len;
    do {
        int32_t type;
        if ((last = gpuk__inflate_bits(&s, 1)) < 0 || (type = gpuk__inflate_bits(&s, 2)) < 0) return 0;
        if (type == 0) { /* stored: to the byte boundary, then LEN, NLEN and the bytes */
            size_t n;
            s.bits = 0;
            s.nbits = 0;
            if (s.in_len - s.in_pos < 4) return 0;
            n = (size_t)s.in[s.in_pos] | (size_t)s.in[s.in_pos + 1] << 8;
            if ((n ^ 0xffffu) != ((size_t)s.in[s.in_pos + 2] | (size_t)s.in[s.in_pos + 3] << 8)) return 0;
            s.in_pos += 4;
            if (n > s.in_len - s.in_pos || n > s.out_len - s.out_pos) return 0;
            memcpy(s.out + s.out_pos, s.in + s.in_pos, n);
            s.in_pos += n;
            s.out_pos += n;
        } else if (type == 1) { /* the fixed codes */
            short length[320];
            int i;
            for (i = 0; i < 144; i++) length[i] = 8;
            for (; i < 256; i++) length[i] = 9;
            for (; i < 280; i++) length[i] = 7;
            for (; i < 288; i++) length[i] = 8;
            for (; i < 318; i++) length[i] = 5;
            if (!gpuk__huffman_build(&lit, length, 288) || !gpuk__huffman_build(&dist, length + 288, 30) ||
                !gpuk__inflate_codes(&s, &lit, &dist))
                return 0;
        } else if (type == 2) {
            if (!gpuk__inflate_dynamic(&s, &lit, &dist) || !gpuk__inflate_codes(&s, &lit, &dist)) return 0;
        } else {
            return 0;
        }
    } while (!last);
    return s.out_pos == s.out_len;
}
#endif /* GPUK_NO_KERNELS */
