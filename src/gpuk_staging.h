/* src/gpuk_staging.h - part of gpuk.h: staged copies of pageable host memory, copy threads. */
/* ---- >>staging ---- */
/* Pageable host memory cannot be reached by the DMA engines: the driver copies it through a
   bounce buffer of its own, piece after piece, so the host copy and the DMA take turns
   (measured on an H100 through CuPy: 7.6 GB/s host->device, 11.6 device->host, against about
   55 pinned). gpuk's staging lets them overlap instead: while the DMA engine moves one pinned
   half, the calling thread copies the next piece into the other half (or the previous piece
   out of it). Only the stream-less copies stage: they wait for their copy anyway, so the host
   side can run on the calling thread; an async copy of pageable memory stays the driver's
   (which makes it synchronous). The pieces run on the legacy stream like the direct copy, so
   the ordering rules of stream-less copies hold unchanged. */
typedef enum gpuk__copy_dir { GPUK__HTOD, GPUK__DTOH, GPUK__DTOD } gpuk__copy_dir;

/* The piece of a staged copy: a quarter of the copy, so that a copy of a few pieces overlaps
   too, yet at least 256 KiB (each piece costs a few microseconds of driver calls) and at least
   a least slice for each copying thread (each piece wakes them), and at most a half. */
static size_t gpuk__staging_piece(size_t half, size_t bytes, unsigned threads) {
    size_t piece = (bytes / 4u + 4095u) & ~(size_t)4095,
        least = (size_t)threads * GPUK__STAGING_SLICE_LEAST;
    if (least < ((size_t)256 << 10)) least = (size_t)256 << 10;
    if (piece < least) piece = least;
    return piece < half ? piece : half;
}

/* ---- the copy threads ---- */
/* A slice's copy; with stream, its stores bypass the caches (x86-64; elsewhere memcpy). A plain
   store first reads the line it writes (read for ownership): a third more host memory traffic,
   which the DMA shares. Device to host, the destination is the caller's pageable memory, which a
   large copy outgrows the caches with anyway: streaming stores there measured clearly faster
   than memcpy (bench "pageable copies"). Host to device they measured slower than memcpy into
   the pinned half (whose lines the DMA has just read), so that way copies plainly. The sfence
   orders the streaming stores before the ack that lets the DMA go on. */
#if (defined(__GNUC__) || defined(__clang__) || defined(_MSC_VER)) && \
    (defined(__x86_64__) || defined(_M_X64))
#include <emmintrin.h>
static void gpuk__slice_copy(char* dst, const char* src, size_t n, int stream) {
    size_t head = (16u - ((uintptr_t)dst & 15u)) & 15u, i;
    if (!stream || n < 4096u) {
        memcpy(dst, src, n);
        return;
    }
    memcpy(dst, src, head);
    dst += head, src += head, n -= head;
    for (i = 0; i + 64u <= n; i += 64u) {
        __m128i a = _mm_loadu_si128((const __m128i*)(const void*)(src + i)),
                b = _mm_loadu_si128((const __m128i*)(const void*)(src + i + 16u)),
                c = _mm_loadu_si128((const __m128i*)(const void*)(src + i + 32u)),
                d = _mm_loadu_si128((const __m128i*)(const void*)(src + i + 48u));
        _mm_stream_si128((__m128i*)(void*)(dst + i), a);
        _mm_stream_si128((__m128i*)(void*)(dst + i + 16u), b);
        _mm_stream_si128((__m128i*)(void*)(dst + i + 32u), c);
        _mm_stream_si128((__m128i*)(void*)(dst + i + 48u), d);
    }
    memcpy(dst + i, src + i, n - i);
    _mm_sfence();
}
#else
static void gpuk__slice_copy(char* dst, const char* src, size_t n, int stream) {
    (void)stream;
    memcpy(dst, src, n);
}
#endif

/* A hint to the CPU inside a spin loop (x86 pause, Arm yield). */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define GPUK__CPU_RELAX() __builtin_ia32_pause()
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__aarch64__) || defined(__arm__))
#define GPUK__CPU_RELAX() __asm__ __volatile__("yield")
#else
#define GPUK__CPU_RELAX() ((void)0)
#endif
/* How long a wait of the crew spins before it sleeps: 2^14 pauses, some hundreds of
   microseconds on current x86 (a piece's DMA is 100-200), so the threads sleep soon after a
   staged copy ends. */
#define GPUK__CREW_SPINS (1u << 14)

/* Until *word != value (or, with quit, the crew quits): spins, then sleeps on cond. */
static unsigned gpuk__crew_wait(gpuk__crew* cr, const unsigned* word, unsigned value,
                                gpuk__cond* cond, int quit) {
    unsigned i, v;
    for (i = 0; i < GPUK__CREW_SPINS; i++) {
        if ((v = GPUK__ATOMIC_LOAD(word)) != value || (quit && GPUK__ATOMIC_LOAD(&cr->quit)))
            return v;
        GPUK__CPU_RELAX();
    }
    gpuk__mutex_lock(&cr->lock);
    while ((v = GPUK__ATOMIC_LOAD(word)) == value && !(quit && GPUK__ATOMIC_LOAD(&cr->quit))) {
        GPUK__ATOMIC_ADD(&cr->asleep, 1u);
        gpuk__cond_wait(cond, &cr->lock);
        GPUK__ATOMIC_ADD(&cr->asleep, (unsigned)-1);
    }
    gpuk__mutex_unlock(&cr->lock);
    return v;
}

/* A worker: takes its index, then copies slice `index` of each job posted and acks it, until
   quit. */
GPUK__THREAD_MAIN(gpuk__crew_main) {
    gpuk__crew* cr = (gpuk__crew*)gpuk__thread_arg;
    unsigned seen = 0, index;
    if (cr->pin) gpuk__affinity_set(&cr->cpus); /* the GPU's node (see gpuk__crew_start) */
    gpuk__mutex_lock(&cr->lock);
    index = ++cr->started;
    gpuk__mutex_unlock(&cr->lock);
    for (;;) {
        seen = gpuk__crew_wait(cr, &cr->gen, seen, &cr->go, 1);
        if (GPUK__ATOMIC_LOAD(&cr->quit)) break;
        if (index < cr->slices) {
            size_t off = index * cr->slice,
                n = cr->bytes - off < cr->slice ? cr->bytes - off : cr->slice;
            gpuk__slice_copy(cr->dst + off, cr->src + off, n, cr->stream);
            GPUK__ATOMIC_ADD(&cr->worker_slices, 1u);
        }
        /* the last: wake a sleeping caller */
        if (GPUK__ATOMIC_ADD_ACQREL(&cr->acks, 1u) + 1u == cr->workers) {
            gpuk__mutex_lock(&cr->lock);
            gpuk__cond_signal(&cr->done);
            gpuk__mutex_unlock(&cr->lock);
        }
    }
    GPUK__THREAD_END;
}

/* Starts up to threads - 1 workers (with the staging memory, by its first copy). Threads that
   cannot start are done without: the copies use fewer (the calling thread alone at worst),
   and the logger hears once at GPUK_LOG_WARN. Never fails. With pin, each worker binds itself
   to the CPUs of the GPU's NUMA node as it starts (the set, so the scheduler still balances
   them within it): the DMA engine moves the pinned halves through that node, and a copying
   thread on another node would cross the link between the sockets for every byte it copies
   there. The calling thread is left where its program put it. */
static void gpuk__crew_start(const char* fn, gpuk__crew* cr, unsigned threads) {
    char msg[256];
    if (threads <= 1u) return;
    gpuk__mutex_init(&cr->lock);
    gpuk__cond_init(&cr->go);
    gpuk__cond_init(&cr->done);
    cr->owner_pid = gpuk__process_id();
    cr->live = 1;
    while (cr->workers < threads - 1u) {
        if (GPUK__THREAD_START_REFUSED() ||
            !gpuk__thread_start(&cr->th[cr->workers], gpuk__crew_main, cr))
            break;
        cr->workers++;
    }
    if (cr->workers == threads - 1u) return;
    gpuk__fmt(msg, sizeof msg, 0,
              "%s: could start only %u of the %u staging copy threads asked for "
              "(gpuk_ctx_desc.staging_threads %u); this ctx's staged copies use %u thread%s", fn,
              cr->workers, threads - 1u, threads, cr->workers + 1u, cr->workers ? "s" : "");
    gpuk__log(GPUK_LOG_WARN, 0, msg);
}

/* Joins the workers (ctx destroy). A fork child has none of its parent's threads, and their
   lock may have been held at the fork: it leaves them alone. */
static void gpuk__crew_stop(gpuk__crew* cr) {
    unsigned i;
    if (!cr->live || cr->owner_pid != gpuk__process_id()) return;
    gpuk__mutex_lock(&cr->lock);
    GPUK__ATOMIC_STORE(&cr->quit, 1);
    gpuk__cond_broadcast(&cr->go);
    gpuk__mutex_unlock(&cr->lock);
    for (i = 0; i < cr->workers; i++) gpuk__thread_join(cr->th[i]);
    cr->workers = 0;
    gpuk__cond_fini(&cr->go);
    gpuk__cond_fini(&cr->done);
    gpuk__mutex_fini(&cr->lock);
    cr->live = 0;
}

/* memcpy(dst, src, bytes) by the calling thread and the workers: as many slices as threads
   (fewer when slices would be under GPUK__STAGING_SLICE_LEAST), each at an offset that is a
   multiple of 4 KiB (the pinned side's pages and cache lines are a thread's alone); returns
   once every slice is copied. */
static void gpuk__crew_memcpy(gpuk__crew* cr, void* dst, const void* src, size_t bytes,
                              int stream) {
    size_t n = bytes / GPUK__STAGING_SLICE_LEAST, slice;
    if (n > cr->workers + 1u) n = cr->workers + 1u;
    if (n <= 1u) {
        gpuk__slice_copy((char*)dst, (const char*)src, bytes, stream);
        return;
    }
    slice = ((bytes + n - 1u) / n + 4095u) & ~(size_t)4095;
    /* every worker acked the last job: none reads these until gen moves */
    cr->dst = (char*)dst;
    cr->src = (const char*)src;
    cr->bytes = bytes;
    cr->slice = slice;
    cr->stream = stream;
    cr->slices = (unsigned)((bytes + slice - 1u) / slice);
    GPUK__ATOMIC_STORE(&cr->acks, 0u);
    GPUK__ATOMIC_STORE(&cr->gen, GPUK__ATOMIC_LOAD(&cr->gen) + 1u); /* posted */
    gpuk__mutex_lock(&cr->lock); /* wakes the workers that stopped spinning */
    gpuk__cond_broadcast(&cr->go);
    gpuk__mutex_unlock(&cr->lock);
    gpuk__slice_copy((char*)dst, (const char*)src, slice, stream); /* slice 0; at least two */
    for (;;) { /* until every worker has acked (acks only grows, up to workers) */
        unsigned a = GPUK__ATOMIC_LOAD(&cr->acks);
        if (a == cr->workers) break;
        gpuk__crew_wait(cr, &cr->acks, a, &cr->done, 0);
    }
}

/* The first staged copy of a ctx allocates the halves and their events. Where that fails
   (pinned memory is a scarce resource), staging stays off for the ctx: the copy, and every
   later one, goes the driver's way; the logger hears of it once (GPUK_LOG_WARN). Returns a
   sticky fault only. Called with the staging lock held. */
static gpuk_result gpuk__staging_setup(const char* fn, gpuk__staging* st) {
    void* mem = NULL;
    gpuk__cu_event ev[2] = { NULL, NULL };
    const char* call = "cuMemHostAlloc";
    gpuk__cu_result cr;
    char msg[256];
    /* flags 0: pinned for this primary context, the only one that copies through it */
    if ((cr = GPUK__DRV.cuMemHostAlloc(&mem, 2u * st->half, 0u)) == 0) {
        call = "cuEventCreate";
        if ((cr = GPUK__DRV.cuEventCreate(&ev[0], GPUK__CU_EVENT_DISABLE_TIMING)) == 0)
            cr = GPUK__DRV.cuEventCreate(&ev[1], GPUK__CU_EVENT_DISABLE_TIMING);
    }
    if (cr == 0) {
        st->mem = (char*)mem;
        st->ev[0] = ev[0];
        st->ev[1] = ev[1];
        gpuk__crew_start(fn, &st->crew, st->threads);
        GPUK__ATOMIC_STORE(&st->state, GPUK__STAGING_READY);
        return GPUK_OK;
    }
    if (gpuk__is_sticky((int)cr))
        return gpuk__fail_cu(fn, call, cr, "allocating pinned staging memory");
    if (ev[0]) GPUK__DRV.cuEventDestroy(ev[0]);
    if (mem) GPUK__DRV.cuMemFreeHost(mem);
    GPUK__ATOMIC_STORE(&st->state, GPUK__STAGING_OFF);
    gpuk__fmt(msg, sizeof msg, 0, "%s: cannot allocate %zu bytes of pinned staging memory (%s: %s "
              "(%d)); this ctx's pageable copies take the driver's own, slower way from now on",
              fn, 2u * st->half, call, gpuk_result_str((gpuk_result)cr), (int)cr);
    gpuk__log(GPUK_LOG_WARN, (int)cr, msg);
    return GPUK_OK;
}

/* The staged copy itself: pieces j = 0 .. m-1, piece j through half j % 2. Host to device:
   piece j is copied into its half once the DMA of piece j - 2 out of that half is done, then
   queued. Device to host: piece j is queued before piece j - 1 is copied out (after its DMA),
   so the DMA of one overlaps the host copy of the other. Returns once every piece is done. On
   a failure nothing queued may outlive the call (the next copy reuses the halves): the legacy
   stream is waited for, and if even that fails staging stays off for the ctx (its halves are
   freed with the ctx, after its device sync). The destination then holds part of the data. */
static gpuk_result gpuk__staged_run(const char* fn, gpuk__staging* st, gpuk__copy_dir dir,
                                    gpuk_devptr dev, char* host, size_t bytes) {
    const size_t piece = gpuk__staging_piece(st->half, bytes, st->crew.workers + 1u);
    const size_t m = (bytes + piece - 1u) / piece;
    const char* call = "";
    gpuk__cu_result cr = 0;
    size_t j, off = 0, n = 0;
    char detail[96];
    gpuk_result r;
    for (j = 0; j <= m && !cr; j++) {
        char* half = st->mem + (j & 1u) * st->half;
        off = j * piece;
        n = j < m ? (bytes - off < piece ? bytes - off : piece) : 0;
        if (dir == GPUK__HTOD && j < m) {
            if (j >= 2 && (cr = GPUK__DRV.cuEventSynchronize(st->ev[j & 1u])) != 0) {
                call = "cuEventSynchronize";
                break;
            }
            gpuk__crew_memcpy(&st->crew, half, host + off, n, 0);
            call = "cuMemcpyHtoDAsync";
            cr = GPUK__DRV.cuMemcpyHtoDAsync(dev + off, half, n, GPUK__CU_STREAM_LEGACY);
        } else if (dir == GPUK__DTOH) {
            if (j < m) {
                call = "cuMemcpyDtoHAsync";
                cr = GPUK__DRV.cuMemcpyDtoHAsync(half, dev + off, n, GPUK__CU_STREAM_LEGACY);
            }
            if (!cr && j < m &&
                (cr = GPUK__DRV.cuEventRecord(st->ev[j & 1u], GPUK__CU_STREAM_LEGACY)) != 0)
                call = "cuEventRecord";
            if (!cr && j > 0) { /* piece j - 1 out of the other half */
                size_t prev = (j - 1u) * piece, k = (j - 1u) & 1u;
                size_t pn = bytes - prev < piece ? bytes - prev : piece;
                if ((cr = GPUK__DRV.cuEventSynchronize(st->ev[k])) != 0) {
                    call = "cuEventSynchronize";
                    off = prev;
                    break;
                }
                gpuk__crew_memcpy(&st->crew, host + prev, st->mem + k * st->half, pn, 1);
            }
            continue;
        }
        if (!cr && j < m &&
            (cr = GPUK__DRV.cuEventRecord(st->ev[j & 1u], GPUK__CU_STREAM_LEGACY)) != 0)
            call = "cuEventRecord";
    }
    if (!cr) {
        /* like the direct copy: done, and the legacy stream's earlier work with it */
        call = "cuStreamSynchronize";
        cr = GPUK__DRV.cuStreamSynchronize(GPUK__CU_STREAM_LEGACY);
        if (!cr) return GPUK_OK;
        off = bytes;
    }
    gpuk__fmt(detail, sizeof detail, 0, "staged copy of %zu bytes, at byte %zu", bytes, off);
    r = gpuk__fail_cu(fn, call, cr, detail);
    if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken) &&
        GPUK__DRV.cuStreamSynchronize(GPUK__CU_STREAM_LEGACY) != 0)
        GPUK__ATOMIC_STORE(&st->state, GPUK__STAGING_OFF);
    return r;
}

/* A stream-less copy between host memory and dev (gpuk_buffer_write/read, a create's upload):
   on the legacy stream, after the work queued earlier on it and on every blocking stream, and
   waited for. Pageable host memory of at least the ctx's staging_min_bytes goes through the
   staging halves when they are free; everything else (pinned, registered or managed memory,
   small copies, a copy while another thread's uses the halves) is one driver copy. */
static gpuk_result gpuk__copy_host_sync(const char* fn, gpuk_ctx* ctx, gpuk__copy_dir dir,
                                        gpuk_devptr dev, void* host, size_t bytes,
                                        const char* detail) {
    gpuk__staging* st = &ctx->staging;
    const char* cu_fn;
    gpuk__cu_result cr;
    if (st->min_bytes && bytes >= st->min_bytes &&
        GPUK__ATOMIC_LOAD(&st->state) != GPUK__STAGING_OFF) {
        /* memory the driver does not know is pageable; it knows pinned, registered, managed */
        unsigned int type = 0;
        cr = GPUK__DRV.cuPointerGetAttribute(&type, GPUK__CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                             (gpuk_devptr)(uintptr_t)host);
        if (cr && gpuk__is_sticky((int)cr))
            return gpuk__fail_cu(fn, "cuPointerGetAttribute", cr, NULL);
        if (cr && gpuk__mutex_trylock(&st->lock)) {
            gpuk_result r = GPUK_OK;
            if (st->state == GPUK__STAGING_UNSET) r = gpuk__staging_setup(fn, st);
            if (r == GPUK_OK && st->state == GPUK__STAGING_READY) {
                r = gpuk__staged_run(fn, st, dir, dev, (char*)host, bytes);
                gpuk__mutex_unlock(&st->lock);
                return r;
            }
            gpuk__mutex_unlock(&st->lock);
            if (r != GPUK_OK) return r;
        }
    }
    if (dir == GPUK__HTOD) {
        cu_fn = "cuMemcpyHtoDAsync";
        cr = GPUK__DRV.cuMemcpyHtoDAsync(dev, host, bytes, GPUK__CU_STREAM_LEGACY);
    } else {
        cu_fn = "cuMemcpyDtoHAsync";
        cr = GPUK__DRV.cuMemcpyDtoHAsync(host, dev, bytes, GPUK__CU_STREAM_LEGACY);
    }
    if (!cr) {
        cu_fn = "cuStreamSynchronize";
        cr = GPUK__DRV.cuStreamSynchronize(GPUK__CU_STREAM_LEGACY);
    }
    return cr ? gpuk__fail_cu(fn, cu_fn, cr, detail) : GPUK_OK;
}
