/* src/gpuk_custom.h - part of gpuk.h: element-wise and reduction kernels from C expressions. */
#if defined(GPUK__FAMILY_CUSTOM)
/* ---- >>custom: element-wise and reduction kernels from C expressions ---- */
/* The types a custom kernel's parameter list takes: the spelling there, CUDA's spelling (the
   generated source uses it, so int64_t needs no header), bytes, and the gpuk_arg kind a
   scalar of it takes (0: pointers only). */
typedef struct gpuk__ctype { const char* name; const char* cuda; uint8_t bytes, arg; } gpuk__ctype;
static const gpuk__ctype gpuk__ctypes[] = {
    { "", "", 0, 0 },
    { "float", "float", 4, GPUK_ARG_F32 },
    { "double", "double", 8, GPUK_ARG_F64 },
    { "int", "int", 4, GPUK_ARG_I32 },
    { "int32_t", "int", 4, GPUK_ARG_I32 },
    { "unsigned", "unsigned int", 4, GPUK_ARG_U32 },
    { "unsigned int", "unsigned int", 4, GPUK_ARG_U32 },
    { "uint32_t", "unsigned int", 4, GPUK_ARG_U32 },
    { "long long", "long long", 8, GPUK_ARG_I64 },
    { "int64_t", "long long", 8, GPUK_ARG_I64 },
    { "unsigned long long", "unsigned long long", 8, GPUK_ARG_U64 },
    { "uint64_t", "unsigned long long", 8, GPUK_ARG_U64 },
    { "char", "char", 1, 0 },
    { "signed char", "signed char", 1, 0 },
    { "int8_t", "signed char", 1, 0 },
    { "unsigned char", "unsigned char", 1, 0 },
    { "uint8_t", "unsigned char", 1, 0 },
    { "short", "short", 2, 0 },
    { "int16_t", "short", 2, 0 },
    { "unsigned short", "unsigned short", 2, 0 },
    { "uint16_t", "unsigned short", 2, 0 }
};
#define GPUK__CTYPE_COUNT (sizeof gpuk__ctypes / sizeof gpuk__ctypes[0])
/* A parameter's code (gpuk_elementwise.param): the type's index, and what kind of parameter */
#define GPUK__P_TYPE 0x1fu
#define GPUK__P_PTR 0x20u
#define GPUK__P_CONST 0x40u
#define GPUK__P_RAW 0x80u
#define GPUK__CUSTOM_NAME 64 /* bytes of a name, its NUL included */

static const char* const gpuk__arg_kind_name[GPUK_ARG_NUM] = {
    "no argument (GPUK_ARG_DEFAULT)", "a view (gpuk_arg_array)", "gpuk_arg_f32", "gpuk_arg_f64",
    "gpuk_arg_i32", "gpuk_arg_u32", "gpuk_arg_i64", "gpuk_arg_u64"
};

typedef struct gpuk__csig {
    uint32_t count;
    uint8_t code[GPUK_CUSTOM_MAX_PARAMS];
    char name[GPUK_CUSTOM_MAX_PARAMS][GPUK__CUSTOM_NAME];
} gpuk__csig;

static int gpuk__ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int gpuk__ident_char(char c) { return gpuk__ident_start(c) || (c >= '0' && c <= '9'); }

/* A C identifier of at most GPUK__CUSTOM_NAME - 1 characters. */
static int gpuk__ident_ok(const char* s) {
    const char* p;
    if (!s || !gpuk__ident_start(*s)) return 0;
    for (p = s; *p; p++)
        if (!gpuk__ident_char(*p)) return 0;
    return p - s < GPUK__CUSTOM_NAME;
}

/* Why an identifier cannot name a custom kernel or its parameter, or NULL: the generated
   source is CUDA C++ that uses CUDA's built-ins and gpuk's own names, so any of these would
   break it with an error pointing at gpuk's lines. */
static const char* gpuk__name_taken(const char* s) {
    static const char* const keywords[] = { /* C++20's, its alternative tokens, C's restrict */
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
        "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
        "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
        "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
        "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
        "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
        "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
        "reinterpret_cast", "requires", "restrict", "return", "short", "signed", "sizeof",
        "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
        "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union",
        "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
        NULL
    };
    /* CUDA's built-in variables, what the generated code calls, the entry point, the
       parameter list's own word */
    static const char* const builtins[] = {
        "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "atomicAdd", "main", "raw", NULL
    };
    const char* const* k;
    for (k = keywords; *k; k++)
        if (strcmp(*k, s) == 0) return "a C++ keyword";
    for (k = builtins; *k; k++)
        if (strcmp(*k, s) == 0) return "a name CUDA or the generated code uses";
    if (strcmp(s, "i") == 0 || strcmp(s, "n") == 0)
        return "i and n are the element index and count";
    if (strncmp(s, "gpuk_", 5) == 0) return "names starting gpuk_ are gpuk's";
    if (s[0] == '_' || strstr(s, "__")) return "names starting _ or holding __ are reserved in C++";
    return NULL;
}

static int gpuk__ctype_find(const char* name) {
    int i;
    for (i = 1; i < (int)GPUK__CTYPE_COUNT; i++)
        if (strcmp(gpuk__ctypes[i].name, name) == 0) return i;
    return 0;
}

#define GPUK__KNOWN_TYPES "float, double, int, unsigned, int32_t, uint32_t, int64_t, uint64_t, " \
    "long long, unsigned long long; for pointers also char, (u)int8_t, (u)int16_t, short, " \
    "signed/unsigned char, unsigned short"

/* One entry of a parameter list, text [b, e), number no (from 0), into sig. */
static gpuk_result gpuk__param_parse(const char* fn, const char* b, const char* e, uint32_t no,
                                     gpuk__csig* sig) {
    char tok[8][GPUK__CUSTOM_NAME], type[GPUK__CUSTOM_NAME], text[72];
    const char* taken;
    int ntok = 0, i, stars = 0, t;
    uint8_t code = 0;
    size_t len;
    const char* p;
    uint32_t j;
    while (b < e && (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r')) b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) e--;
    len = (size_t)(e - b) < sizeof text - 1 ? (size_t)(e - b) : sizeof text - 1;
    memcpy(text, b, len);
    text[len] = 0;
    if (b == e)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.params: parameter %u is empty", no);
    for (p = b; p < e;) {
        size_t n = 0;
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') { p++; continue; }
        if (ntok == 8)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                              "desc.params: parameter %u '%s' has too many words", no, text);
        if (*p == '*') {
            tok[ntok][0] = '*';
            tok[ntok++][1] = 0;
            p++;
            continue;
        }
        if (!gpuk__ident_start(*p))
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                              "desc.params: parameter %u '%s': unexpected character '%c' (a "
                              "parameter is a type, an optional '*' and a name)", no, text, *p);
        while (p < e && gpuk__ident_char(*p)) {
            if (n + 1 >= GPUK__CUSTOM_NAME)
                return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.params: parameter %u: a word of "
                                  "more than %d characters", no, GPUK__CUSTOM_NAME - 1);
            tok[ntok][n++] = *p++;
        }
        tok[ntok++][n] = 0;
    }
    if (ntok < 2 || tok[ntok - 1][0] == '*' || gpuk__ctype_find(tok[ntok - 1]) ||
        strcmp(tok[ntok - 1], "unsigned") == 0 || strcmp(tok[ntok - 1], "long") == 0 ||
        strcmp(tok[ntok - 1], "const") == 0)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.params: parameter %u '%s' has no name "
                          "(a parameter is a type, an optional '*' and a name)", no, text);
    type[0] = 0;
    for (i = 0; i < ntok - 1; i++) {
        const char* w = tok[i];
        if (strcmp(w, "raw") == 0 && i == 0) code |= GPUK__P_RAW;
        else if (strcmp(w, "const") == 0 && !stars) code |= GPUK__P_CONST;
        else if (w[0] == '*' && ++stars > 1)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                              "desc.params: parameter %u '%s': pointers to pointers are not taken",
                              no, text);
        else if (w[0] != '*' && stars)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                              "desc.params: parameter %u '%s': '%s' after the '*' (only a name may "
                              "follow it)", no, text, w);
        else if (w[0] != '*') {
            size_t have = strlen(type), add = strlen(w);
            if (have + add + 2 > sizeof type)
                return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                                  "desc.params: parameter %u '%s': unknown type", no, text);
            if (have) type[have++] = ' ';
            memcpy(type + have, w, add + 1);
        }
    }
    if (stars) code |= GPUK__P_PTR;
    if (!type[0])
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "desc.params: parameter %u '%s' has no type", no, text);
    if (!(t = gpuk__ctype_find(type)))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "desc.params: parameter %u '%s': unknown type '%s' "
                          "(known: " GPUK__KNOWN_TYPES ")", no, text, type);
    code |= (uint8_t)t;
    if (!stars && (code & GPUK__P_RAW))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.params: parameter %u '%s': raw is for "
                          "pointers", no, text);
    if (!stars && !gpuk__ctypes[t].arg)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "desc.params: parameter %u '%s': a scalar of type '%s' is not taken "
                          "(scalars are float, double and 32- or 64-bit integers)", no, text, type);
    if ((taken = gpuk__name_taken(tok[ntok - 1])) != NULL)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "desc.params: parameter %u '%s': the name '%s' is taken (%s)",
                          no, text, tok[ntok - 1], taken);
    for (j = 0; j < sig->count; j++)
        if (strcmp(sig->name[j], tok[ntok - 1]) == 0)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.params: parameter %u '%s': '%s' is "
                              "parameter %u's name too", no, text, tok[ntok - 1], j);
    if (sig->count == GPUK_CUSTOM_MAX_PARAMS)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.params: more than %d parameters",
                          GPUK_CUSTOM_MAX_PARAMS);
    sig->code[sig->count] = code;
    memcpy(sig->name[sig->count], tok[ntok - 1], strlen(tok[ntok - 1]) + 1);
    sig->count++;
    return GPUK_OK;
}

/* A parameter list, "float a, const float* x, float* y" ("" or blanks: none). */
static gpuk_result gpuk__params_parse(const char* fn, const char* params, gpuk__csig* sig) {
    const char* p = params;
    const char* end;
    gpuk_result r;
    memset(sig, 0, sizeof *sig);
    if (!params) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.params is NULL (\"\" for none)");
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) return GPUK_OK;
    for (;;) {
        for (end = p; *end && *end != ','; end++) {}
        if ((r = gpuk__param_parse(fn, p, end, sig->count, sig)) != GPUK_OK) return r;
        if (!*end) return GPUK_OK;
        p = end + 1;
    }
}

/* Text built in two passes: with buf NULL only len and lines count. */
typedef struct gpuk__text { char* buf; size_t cap, len, lines; } gpuk__text;
static void gpuk__put(gpuk__text* t, const char* s) {
    size_t n = strlen(s), k;
    for (k = 0; k < n; k++) t->lines += s[k] == '\n';
    if (t->buf && t->len + n < t->cap) {
        memcpy(t->buf + t->len, s, n + 1);
    }
    t->len += n;
}
static void gpuk__put_num(gpuk__text* t, size_t v) {
    char num[24];
    gpuk__fmt(num, sizeof num, 0, "%zu", v);
    gpuk__put(t, num);
}
/* #line directives: user text reads as "<name>: <what>(line)" in NVRTC's log, the rest as
   "<name>.cu(line)". */
static void gpuk__put_user(gpuk__text* t, const char* name, const char* what, const char* text) {
    gpuk__put(t, "#line 1 \"");
    gpuk__put(t, name);
    gpuk__put(t, ": ");
    gpuk__put(t, what);
    gpuk__put(t, "\"\n");
    gpuk__put(t, text);
    gpuk__put(t, "\n#line ");
    /* the directive is on line lines + 1 (the number is of the line after it) */
    gpuk__put_num(t, t->lines + 2);
    gpuk__put(t, " \"");
    gpuk__put(t, name);
    gpuk__put(t, ".cu\"\n");
}

typedef struct gpuk__custom_src {
    const char* name;
    const char* preamble;
    const char* body;      /* element-wise; NULL: a reduction of the next four */
    const char* map;
    const char* reduce;
    const char* identity;
    int type;
    const gpuk__csig* sig;
} gpuk__custom_src;

static void gpuk__custom_gen(gpuk__text* t, const gpuk__custom_src* c) {
    const char* T = c->body ? "" : gpuk__ctypes[c->type].cuda;
    uint32_t j;
    gpuk__put(t, "/* generated by gpuk: ");
    gpuk__put(t, c->body ? "gpuk_elementwise_create" : "gpuk_reduction_create");
    gpuk__put(t, " */\n");
    if (c->preamble && *c->preamble) gpuk__put_user(t, c->name, "preamble", c->preamble);
    if (!c->body) {
        gpuk__put(t, "static __device__ __forceinline__ ");
        gpuk__put(t, T);
        gpuk__put(t, " gpuk_reduce_(");
        gpuk__put(t, T);
        gpuk__put(t, " a, ");
        gpuk__put(t, T);
        gpuk__put(t, " b)\n{\n    return (\n");
        gpuk__put_user(t, c->name, "reduce", c->reduce);
        gpuk__put(t, "    );\n}\nstatic __device__ __forceinline__ ");
        gpuk__put(t, T);
        gpuk__put(t, " gpuk_identity_()\n{\n    return (");
        gpuk__put(t, T);
        gpuk__put(t, ")(\n");
        gpuk__put_user(t, c->name, "identity", c->identity);
        gpuk__put(t,
                  "    );\n}\n/* a block's values folded in a fixed tree */\nstatic __device__ ");
        gpuk__put(t, T);
        gpuk__put(t, " gpuk_fold_(");
        gpuk__put(t, T);
        gpuk__put(t, " gpuk_v_, ");
        gpuk__put(t, T);
        gpuk__put(t, "* gpuk_sm_)\n{\n    __syncthreads();\n    gpuk_sm_[threadIdx.x] = gpuk_v_;\n"
                     "    __syncthreads();\n#pragma unroll\n    for (int gpuk_w_ = ");
        gpuk__put_num(t, GPUK__BLOCK / 2);
        gpuk__put(t, "; gpuk_w_ > 0; gpuk_w_ /= 2) {\n"
                     "        if ((int)threadIdx.x < gpuk_w_)\n"
                     "            gpuk_sm_[threadIdx.x] = gpuk_reduce_(gpuk_sm_[threadIdx.x], "
                     "gpuk_sm_[threadIdx.x + gpuk_w_]);\n"
                     "        __syncthreads();\n    }\n    return gpuk_sm_[0];\n}\n");
    }
    gpuk__put(t, "extern \"C\" __global__ void ");
    gpuk__put(t, c->name);
    gpuk__put(t, "(");
    for (j = 0; j < c->sig->count; j++) {
        uint8_t code = c->sig->code[j];
        if (j) gpuk__put(t, ", ");
        if ((code & GPUK__P_PTR) && (code & GPUK__P_CONST)) gpuk__put(t, "const ");
        gpuk__put(t, gpuk__ctypes[code & GPUK__P_TYPE].cuda);
        gpuk__put(t, code & GPUK__P_PTR ? "* " : " ");
        gpuk__put(t, c->sig->name[j]);
    }
    if (c->sig->count) gpuk__put(t, ", ");
    if (!c->body) {
        gpuk__put(t, T);
        gpuk__put(t, "* gpuk_out_, ");
    }
    gpuk__put(t, "unsigned long long gpuk_n_");
    if (!c->body) gpuk__put(t, ", void* gpuk_scratch_");
    gpuk__put(t, ")\n{\n    const long long n = (long long)gpuk_n_;\n");
    if (!c->body) {
        gpuk__put(t, "    __shared__ ");
        gpuk__put(t, T);
        gpuk__put(t, " gpuk_smem_[");
        gpuk__put_num(t, GPUK__BLOCK);
        gpuk__put(t, "];\n    __shared__ bool gpuk_last_;\n    ");
        gpuk__put(t, T);
        gpuk__put(t, " gpuk_acc_ = gpuk_identity_();\n");
    }
    gpuk__put(t, "    for (long long gpuk_i_ = (long long)blockIdx.x * ");
    gpuk__put_num(t, GPUK__BLOCK);
    gpuk__put(t, " + threadIdx.x; gpuk_i_ < n;\n         gpuk_i_ += (long long)gridDim.x * ");
    gpuk__put_num(t, GPUK__BLOCK);
    gpuk__put(t, ") {\n        const long long i = gpuk_i_;\n        (void)i;\n");
    if (c->body) {
        gpuk__put_user(t, c->name, "body", c->body);
        gpuk__put(t, "        ;\n    }\n}\n");
        return;
    }
    gpuk__put(t, "        gpuk_acc_ = gpuk_reduce_(gpuk_acc_, (");
    gpuk__put(t, T);
    gpuk__put(t, ")(\n");
    gpuk__put_user(t, c->name, "map", c->map);
    gpuk__put(t, "        ));\n    }\n"
                 "    gpuk_acc_ = gpuk_fold_(gpuk_acc_, gpuk_smem_);\n"
                 "    /* each block's partial, then the last block to finish folds them in "
                 "order */\n"
                 "    unsigned int* gpuk_ticket_ = (unsigned int*)gpuk_scratch_;\n    ");
    gpuk__put(t, T);
    gpuk__put(t, "* gpuk_part_ = (");
    gpuk__put(t, T);
    gpuk__put(t, "*)((char*)gpuk_scratch_ + 16);\n"
                 "    if (threadIdx.x == 0) {\n"
                 "        gpuk_part_[blockIdx.x] = gpuk_acc_;\n"
                 "        __threadfence();\n"
                 "        gpuk_last_ = atomicAdd(gpuk_ticket_, 1u) == gridDim.x - 1;\n"
                 "    }\n    __syncthreads();\n    if (!gpuk_last_) return;\n    __threadfence();\n"
                 "    gpuk_acc_ = gpuk_identity_();\n"
                 "    for (unsigned int gpuk_b_ = threadIdx.x; gpuk_b_ < gridDim.x; gpuk_b_ += ");
    gpuk__put_num(t, GPUK__BLOCK);
    gpuk__put(t, ")\n        gpuk_acc_ = gpuk_reduce_(gpuk_acc_, *(const volatile ");
    gpuk__put(t, T);
    gpuk__put(t, "*)(gpuk_part_ + gpuk_b_));\n"
                 "    gpuk_acc_ = gpuk_fold_(gpuk_acc_, gpuk_smem_);\n"
                 "    if (threadIdx.x == 0) {\n        *gpuk_out_ = gpuk_acc_;\n"
                 "        *gpuk_ticket_ = 0;\n    }\n}\n");
}

/* Writes the source, compiles it (cached; NVRTC's log into log, as gpuk_compile_desc's) and
   gets the kernel. */
static gpuk_result gpuk__custom_build(const char* fn, gpuk_ctx* ctx, const gpuk__custom_src* c,
                                      const char* const* options, uint32_t num_options,
                                      char* log, size_t log_bytes, gpuk_module* out_module,
                                      gpuk_kernel* out_kernel) {
    gpuk__text t;
    gpuk_compile_desc cd;
    char program[GPUK__CUSTOM_NAME + 4];
    gpuk_result r;
    memset(&t, 0, sizeof t);
    gpuk__custom_gen(&t, c);
    t.cap = t.len + 1;
    if (!(t.buf = (char*)gpuk__alloc(t.cap)))
        return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "'%s': cannot allocate %zu bytes for its source",
                          c->name, t.cap);
    t.len = t.lines = 0;
    t.buf[0] = 0;
    gpuk__custom_gen(&t, c);
    GPUK_ASSERT(t.len + 1 == t.cap);
    gpuk__fmt(program, sizeof program, 0, "%s.cu", c->name);
    memset(&cd, 0, sizeof cd);
    cd.source = t.buf;
    cd.name = program;
    cd.options = options;
    cd.num_options = num_options;
    cd.log = log;
    cd.log_bytes = log_bytes;
    r = gpuk__module_compile(fn, ctx, &cd, out_module);
    if (r == GPUK_ERR_COMPILE) {
        gpuk__log(GPUK_LOG_ERROR, GPUK_ERR_COMPILE, "the generated source that failed to compile:");
        gpuk__log(GPUK_LOG_ERROR, GPUK_ERR_COMPILE, t.buf);
    } else if (r == GPUK_OK && gpuk__log_wants(GPUK_LOG_DEBUG)) {
        gpuk__log(GPUK_LOG_DEBUG, 0, t.buf);
    }
    gpuk__free(t.buf);
    if (r != GPUK_OK) return r;
    if ((r = gpuk_kernel_get(ctx, *out_module, c->name, out_kernel)) != GPUK_OK) {
        gpuk_module_unload(ctx, *out_module);
        out_module->id = 0;
    }
    return r;
}

/* The checks every create makes first: out, ctx, desc, canaries, the name. */
static gpuk_result gpuk__custom_head(const char* fn, gpuk_ctx* ctx, const void* desc,
                                     const void* out, uint32_t start_canary, uint32_t end_canary,
                                     const char* desc_type) {
    if (!out) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_kernel is NULL");
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!desc) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    if (gpuk__desc_canaries_bad(start_canary, end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s canaries are not zero", desc_type);
    return GPUK_OK;
}

static gpuk_result gpuk__custom_name(const char* fn, const char* name, const char* dflt,
                                     const char** out) {
    const char* taken;
    *out = name ? name : dflt;
    if (!gpuk__ident_ok(*out))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "desc.name '%s' is not a C identifier of at most %d characters",
                          *out, GPUK__CUSTOM_NAME - 1);
    if (name && (taken = gpuk__name_taken(name)) != NULL)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.name '%s' is taken (%s)", name, taken);
    return GPUK_OK;
}

static gpuk_result gpuk__custom_code(const char* fn, const char* what, const char* code) {
    const char* p = code;
    if (p) while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!p || !*p) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.%s is NULL or empty", what);
    return GPUK_OK;
}

/* The checks both kinds of custom kernel share: the name, the parameter list, the options;
   fills c's name, preamble and signature. */
static gpuk_result gpuk__custom_start(const char* fn, const char* name, const char* dflt,
                                      const char* params, const char* const* options,
                                      uint32_t num_options, const char* preamble,
                                      gpuk__custom_src* c, gpuk__csig* sig) {
    gpuk_result r;
    memset(c, 0, sizeof *c);
    if ((r = gpuk__custom_name(fn, name, dflt, &c->name)) != GPUK_OK) return r;
    if ((r = gpuk__params_parse(fn, params, sig)) != GPUK_OK) return r;
    if (num_options && !options)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "desc.num_options is %u but desc.options is NULL", num_options);
    c->preamble = preamble;
    c->sig = sig;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_elementwise_create(gpuk_ctx* ctx, const gpuk_elementwise_desc* desc,
                                               gpuk_elementwise* out_kernel) {
    const char* const fn = __func__;
    gpuk__custom_src c;
    gpuk__csig sig;
    gpuk_result r;
    if (out_kernel) memset(out_kernel, 0, sizeof *out_kernel);
    if ((r = gpuk__custom_head(fn, ctx, desc, out_kernel, GPUK__CANARIES(desc),
                               "gpuk_elementwise_desc")) != GPUK_OK)
        return r;
    if (desc->log && desc->log_bytes) desc->log[0] = 0; /* a refused desc: no log */
    if ((r = gpuk__custom_start(fn, desc->name, "gpuk_elementwise", desc->params, desc->options,
                                desc->num_options, desc->preamble, &c, &sig)) != GPUK_OK ||
        (r = gpuk__custom_code(fn, "body", desc->body)) != GPUK_OK)
        return r;
    c.body = desc->body;
    if ((r = gpuk__custom_build(fn, ctx, &c, desc->options, desc->num_options, desc->log,
                                desc->log_bytes, &out_kernel->module, &out_kernel->kernel)) !=
        GPUK_OK)
        return r;
    out_kernel->num_params = sig.count;
    memcpy(out_kernel->param, sig.code, sizeof sig.code);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_reduction_create(gpuk_ctx* ctx, const gpuk_reduction_desc* desc,
                                             gpuk_reduction* out_kernel) {
    const char* const fn = __func__;
    gpuk__custom_src c;
    gpuk__csig sig;
    gpuk_result r;
    if (out_kernel) memset(out_kernel, 0, sizeof *out_kernel);
    if ((r = gpuk__custom_head(fn, ctx, desc, out_kernel, GPUK__CANARIES(desc),
                               "gpuk_reduction_desc")) != GPUK_OK)
        return r;
    if (desc->log && desc->log_bytes) desc->log[0] = 0; /* a refused desc: no log */
    if ((r = gpuk__custom_start(fn, desc->name, "gpuk_reduction", desc->params, desc->options,
                                desc->num_options, desc->preamble, &c, &sig)) != GPUK_OK ||
        (r = gpuk__custom_code(fn, "map", desc->map)) != GPUK_OK ||
        (r = gpuk__custom_code(fn, "reduce", desc->reduce)) != GPUK_OK ||
        (r = gpuk__custom_code(fn, "identity", desc->identity)) != GPUK_OK ||
        (r = gpuk__custom_code(fn, "type", desc->type)) != GPUK_OK)
        return r;
    c.type = gpuk__ctype_find(desc->type);
    if (!c.type || !gpuk__ctypes[c.type].arg)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "desc.type '%s' is not a result type (float, double, int, unsigned, "
                          "int32_t, uint32_t, int64_t, uint64_t, long long, unsigned long long)",
                          desc->type);
    c.map = desc->map;
    c.reduce = desc->reduce;
    c.identity = desc->identity;
    if ((r = gpuk__custom_build(fn, ctx, &c, desc->options, desc->num_options, desc->log,
                                desc->log_bytes, &out_kernel->module, &out_kernel->kernel)) !=
        GPUK_OK)
        return r;
    out_kernel->num_params = sig.count;
    memcpy(out_kernel->param, sig.code, sizeof sig.code);
    out_kernel->type = (uint8_t)c.type;
    return GPUK_OK;
}

/* A parameter's spelling for errors: "const float*". */
static void gpuk__param_text(char* buf, size_t cap, uint8_t code) {
    gpuk__fmt(buf, cap, 0, "%s%s%s%s", code & GPUK__P_RAW ? "raw " : "",
              (code & GPUK__P_CONST) && (code & GPUK__P_PTR) ? "const " : "",
              gpuk__ctypes[code & GPUK__P_TYPE].name, code & GPUK__P_PTR ? "*" : "");
}

/* A launch's common part: the kernel handle and each argument against its parameter; fills
   k's function and argv (views resolved into ptrs, scalars pointing into args). */
static gpuk_result gpuk__custom_args(const char* fn, gpuk__kcall* k, gpuk_kernel kernel,
                                     uint32_t num_params, const uint8_t* param, size_t n,
                                     const gpuk_arg* args, uint32_t num_args, gpuk_devptr* ptrs,
                                     void** argv) {
    const gpuk__kernel_slot* ks = gpuk__kernel_lookup(k->ctx, kernel.id);
    char what[64];
    uint32_t j, m;
    gpuk_result r;
    if (!ks) return gpuk__bad_handle(fn, "kernel (not created, or destroyed)", kernel.id);
    if (num_params > GPUK_CUSTOM_MAX_PARAMS)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "the kernel struct is damaged (%u parameters)", num_params);
    for (j = 0; j < num_params; j++)
        if ((param[j] & GPUK__P_TYPE) == 0 || (param[j] & GPUK__P_TYPE) >= GPUK__CTYPE_COUNT)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                              "the kernel struct is damaged (parameter %u)", j);
    if (num_args != num_params)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%u arguments for %u parameters",
                          num_args, num_params);
    if (num_args && !args) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "args is NULL");
    k->func = ks->cu;
    k->func_name = ks->name;
    for (j = 0; j < num_params; j++) {
        const uint8_t code = param[j];
        const gpuk__ctype* t = &gpuk__ctypes[code & GPUK__P_TYPE];
        const gpuk_arg_kind want = code & GPUK__P_PTR ? GPUK_ARG_ARRAY : (gpuk_arg_kind)t->arg;
        char ptext[40];
        gpuk__param_text(ptext, sizeof ptext, code);
        if (args[j].kind != want) {
            const uint32_t got = (uint32_t)args[j].kind;
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                              "args[%u] is %s; parameter %u (%s) takes %s", j,
                              got < GPUK_ARG_NUM ? gpuk__arg_kind_name[got] : "not a gpuk_arg kind",
                              j, ptext, gpuk__arg_kind_name[want]);
        }
        if (want != GPUK_ARG_ARRAY) {
            argv[j] = (void*)(uintptr_t)&args[j].value;
            continue;
        }
        gpuk__fmt(what, sizeof what, 0, "args[%u] (%s)", j, ptext);
        if ((r = gpuk__array(fn, k->ctx, what, args[j].value.array, t->bytes,
                             code & GPUK__P_RAW ? 0 : n, &ptrs[j])) != GPUK_OK)
            return r;
        argv[j] = &ptrs[j];
    }
    /* views one of which is written: the same start (in place) or apart */
    for (j = 0; j < num_params; j++)
        for (m = j + 1; m < num_params; m++) {
            const uint8_t a = param[j], b = param[m];
            const size_t ea = gpuk__ctypes[a & GPUK__P_TYPE].bytes,
                eb = gpuk__ctypes[b & GPUK__P_TYPE].bytes;
            if (!(a & b & GPUK__P_PTR) || ((a | b) & GPUK__P_RAW) || (a & b & GPUK__P_CONST))
                continue;
            gpuk__fmt(what, sizeof what, 0, "args[%u] and args[%u]", j, m);
            /* in place needs one element size: a 4-byte y[i] written over half of an 8-byte
               x[i / 2] that thread i / 2 has still to read is a race */
            if (n && ptrs[j] == ptrs[m] && ea != eb) {
                char pa[40], pb[40];
                gpuk__param_text(pa, sizeof pa, a);
                gpuk__param_text(pb, sizeof pb, b);
                return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                                  "%s (%s and %s) start at the same element with elements of %zu "
                                  "and %zu bytes: in place needs one element size (thread i would "
                                  "write over an element another thread has still to read)",
                                  what, pa, pb, ea, eb);
            }
            if ((r = gpuk__overlap(fn, what, ptrs[j], ptrs[m], n * ea, n * eb, 1)) != GPUK_OK)
                return r;
        }
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_elementwise_launch(gpuk_ctx* ctx, gpuk_stream stream,
                                               const gpuk_elementwise* kernel, size_t n,
                                               const gpuk_arg* args, uint32_t num_args) {
    const char* const fn = __func__;
    gpuk_devptr ptrs[GPUK_CUSTOM_MAX_PARAMS];
    void* argv[GPUK_CUSTOM_MAX_PARAMS + 1];
    unsigned long long n64 = n;
    size_t cap;
    gpuk__kcall k;
    gpuk_result r;
    if ((r = gpuk__kcall_init(&k, fn, 0, ctx, stream)) != GPUK_OK) return r;
    if (!kernel) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel is NULL");
    if ((r = gpuk__custom_args(fn, &k, kernel->kernel, kernel->num_params, kernel->param, n, args,
                               num_args, ptrs, argv)) != GPUK_OK)
        return r;
    if (n == 0) return GPUK_OK;
    argv[kernel->num_params] = &n64;
    k.args = argv;
    /* up to 32 blocks an SM; the grid-stride loop takes the rest */
    cap = gpuk__sm_blocks(ctx, 32);
    if (cap > (size_t)ctx->info.max_grid[0]) cap = (size_t)ctx->info.max_grid[0];
    k.grid_x = gpuk__grid(n, GPUK__BLOCK, cap);
    return gpuk__builtin_go(&k);
}

GPUK__IMPL gpuk_result gpuk_reduction_launch(gpuk_ctx* ctx, gpuk_stream stream,
                                             const gpuk_reduction* kernel, gpuk_array out, size_t n,
                                             const gpuk_arg* args, uint32_t num_args) {
    const char* const fn = __func__;
    gpuk_devptr ptrs[GPUK_CUSTOM_MAX_PARAMS], po, scratch = 0;
    void* argv[GPUK_CUSTOM_MAX_PARAMS + 3];
    unsigned long long n64 = n;
    size_t cap;
    gpuk__kcall k;
    gpuk_result r;
    if ((r = gpuk__kcall_init(&k, fn, 0, ctx, stream)) != GPUK_OK) return r;
    if (!kernel) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel is NULL");
    if ((r = gpuk__custom_args(fn, &k, kernel->kernel, kernel->num_params, kernel->param, n, args,
                               num_args, ptrs, argv)) != GPUK_OK)
        return r;
    if (!kernel->type || kernel->type >= GPUK__CTYPE_COUNT || !gpuk__ctypes[kernel->type].arg)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "the kernel struct is damaged (its type)");
    if ((r = gpuk__array(fn, ctx, "out", out, gpuk__ctypes[kernel->type].bytes, 1, &po)) != GPUK_OK)
        return r;
    argv[kernel->num_params] = &po;
    argv[kernel->num_params + 1] = &n64;
    argv[kernel->num_params + 2] = &scratch;
    k.args = argv;
    k.scratch_arg = &scratch;
    /* fixed by n and the device alone, as the built-ins' (their partials' room: 4096) */
    cap = gpuk__sm_blocks(ctx, 8);
    k.grid_x = gpuk__grid(n, (size_t)GPUK__BLOCK * 4,
                          cap < GPUK__REDUCE_MAX_GRID ? cap : GPUK__REDUCE_MAX_GRID);
    return gpuk__builtin_go(&k);
}

/* The destroys: the module (and its kernel with it), then the struct zeroed. */
static gpuk_result gpuk__custom_destroy(const char* fn, gpuk_ctx* ctx, gpuk_module* module) {
    gpuk_result r;
    GPUK__CTX_CHECK(fn, ctx);
    if (!gpuk__module_lookup(ctx, module->id)) return gpuk__bad_handle(fn, "module", module->id);
    r = gpuk_module_unload(ctx, *module);
    return r;
}

GPUK__IMPL gpuk_result gpuk_elementwise_destroy(gpuk_ctx* ctx, gpuk_elementwise* kernel) {
    gpuk_result r;
    if (!kernel) return gpuk__fail(__func__, GPUK_ERR_INVALID_ARG, "kernel is NULL");
    if ((r = gpuk__custom_destroy(__func__, ctx, &kernel->module)) == GPUK_OK)
        memset(kernel, 0, sizeof *kernel);
    return r;
}

GPUK__IMPL gpuk_result gpuk_reduction_destroy(gpuk_ctx* ctx, gpuk_reduction* kernel) {
    gpuk_result r;
    if (!kernel) return gpuk__fail(__func__, GPUK_ERR_INVALID_ARG, "kernel is NULL");
    if ((r = gpuk__custom_destroy(__func__, ctx, &kernel->module)) == GPUK_OK)
        memset(kernel, 0, sizeof *kernel);
    return r;
}
#endif /* GPUK__FAMILY_CUSTOM */
