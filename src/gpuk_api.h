/* gpuk.h - v0.3.0 - run CUDA kernels from C99

   One header that loads the NVIDIA driver (libcuda.so.1 / nvcuda.dll) at run time and wraps
   devices, contexts, memory, copies, streams, events, modules and kernel launch. No CUDA toolkit,
   no cuda.h, no link to libcuda.

USAGE
   In exactly one C or C++ file:
       #define GPUK_IMPLEMENTATION
       #include "gpuk.h"
   Everywhere else just #include "gpuk.h". Build: cc -std=c99 app.c -ldl (nothing on Windows;
   add -lpthread on glibc older than 2.34).

CONFIGURATION (define before the implementation include)
   GPUK_IMPLEMENTATION   emit the implementation in this translation unit
   GPUK_API              declaration prefix (default extern)
   GPUK_STATIC           make every function static (one private copy per translation unit)
   GPUK_ASSERT(c)        internal invariants (default assert(c))
   GPUK_DEBUG            1 unless NDEBUG: desc canaries, kernel argument count/size checks with
                         cuFuncGetParamInfo (driver >= 12.4), pageable-"async"-copy reports
   GPUK_NO_KERNELS       leave out the built-in kernels and their PTX
   GPUK_ONLY_<FAMILY>    keep only the built-in families so named (REDUCE, SCAN, GEMM...: the
                         list is at the kernels' declarations); GPUK_NO_<FAMILY> leaves one out
   GPUK_NO_STDIO         leave out gpuk_log_stderr and <stdio.h> (and with it the NVRTC disk
                         cache: nvrtc_cache_dir and GPUK_CACHE_DIR are then ignored)
   GPUK_NO_THREAD_LOCAL  gpuk_last_error() becomes process-global
   Environment (read with secure_getenv: set-user-ID programs ignore it): GPUK_DRIVER_PATH
   names the driver library when gpuk_desc.driver_path is NULL; GPUK_NVRTC_PATH names NVRTC
   when gpuk_desc.nvrtc_path is (unset: NVRTC's search, KERNELS, which also reads CUDA_PATH,
   CUDA_HOME, VIRTUAL_ENV, CONDA_PREFIX and HOME); GPUK_NVJITLINK_PATH names nvJitLink
   when gpuk_desc.nvjitlink_path is NULL (unset: the same search); GPUK_CACHE_DIR turns on
   the NVRTC disk cache in that folder when gpuk_desc.nvrtc_cache_dir is NULL.

gpuk DOES NOT
   need the CUDA toolkit (gpuk_module_compile loads NVRTC only when called); create non-primary
   contexts; wrap textures or graphics interop; share memory between machines (IPC is one
   machine's: MEMORY); build graphs node by node (gpuk makes
   them by stream capture); print anything unless given a logger; exit or abort on caller
   error.

QUICK START (examples/01_vector_add.c has the whole program)
   gpuk_ctx* ctx; gpuk_buffer a; gpuk_module mod; gpuk_kernel k;
   gpuk_init(&(gpuk_desc){ .logger = { gpuk_log_stderr, NULL } }); // prints every failure
   if (gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 0 }, &ctx) != GPUK_OK) return 1;
   gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { host, sizeof host } }, &a); // + upload
   gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { ptx_text, 0 } }, &mod);
   gpuk_kernel_get(ctx, mod, "scale", &k);
   gpuk_devptr p = gpuk_buffer_devptr(ctx, a); float s = 2.0f; unsigned n = 1024;
   gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1((n + 255) / 256),
                                            .block = GPUK_DIM1(256), GPUK_ARGS(&p, &s, &n) });
   gpuk_buffer_read(ctx, a, 0, host, sizeof host);   // waits for the launch
   gpuk_ctx_destroy(ctx);                              // frees a, mod, k too

ERRORS
   Every fallible call returns gpuk_result: GPUK_OK (0); a positive CUresult passed through from
   the driver unchanged (2 = out of memory, 222 = PTX too new for the driver...); or one of gpuk's
   own negative codes. On failure out_* parameters are zeroed and gpuk_last_error() holds this
   thread's text: "gpuk_call: driver_call: CUDA_ERROR_NAME (code): detail (hint: ...)".
   gpuk_result_str() never returns NULL. After an asynchronous kernel fault (700 illegal address,
   710 a device-side assert, 716 misaligned, 719 launch failed and the other sticky codes; a
   __trap() gives 715 or 719) CUDA is unusable for the whole process: gpuk records the first
   cause and every later call fails fast with it. The fault's text names the last launch gpuk
   recorded on each live ctx ("; last launch on device 0: kernel 'k'": gpuk_launch, custom
   kernels and graph launches; faults are reported late, so a later kernel may be named) and
   how to find the line: compute-sanitizer ./app, with device code built with -lineinfo. For a
   failed assert the driver prints its file, line and condition to stderr.
   gpuk_shutdown forgets that record, but the driver's own state in the process stays broken:
   the next ctx create fails with the same code (700...). Only a new process recovers; run
   work that may fault in a child process if the parent must go on. In a child created by
   fork() after the parent initialised gpuk, every call fails with GPUK_ERR_FORKED; a fork()
   while another thread is inside gpuk_init waits for that init to finish (so a logger or
   get_proc resolver must not call fork() itself).
   Install a logger or print gpuk_last_error(), not both: the logger already gets the same
   text for every failure (at GPUK_LOG_ERROR).

MEMORY
   Host memory: only in gpuk_init, ctx create/destroy, module load, a built-in kernel's
   first use on a ctx, gpuk_buffer_download (freed by gpuk_host_free) and a few bytes where a
   stream gives up scratch a graph capture used (CUDA graphs, under KERNELS), through
   gpuk_desc.allocator (default malloc/free); copies, launches and syncs never allocate from
   it. Device memory of gpuk's own: a per-stream scratch area for built-in
   reductions and scans (256 KiB, more for long scans), and a per-stream GEMM workspace (split-K
   parts where tiles are few; on an H100 the TF32 GEMM's transposed copy of a row-major B, n x k
   floats), and a per-stream sort area (a second key and value buffer and status words for
   sorts longer than one tile), all grown as calls need and freed with their stream or ctx;
   an area a graph capture used is kept until the ctx has no graph or capture left.
   Pinned memory of gpuk's own (from the driver, cuMemHostAlloc): the staging area of a ctx,
   gpuk_ctx_desc.staging_bytes (default 32 MiB, two halves) and two events, allocated by the
   first staged copy and freed with the ctx; gpuk_ctx_desc.no_staging = true: never. Staged
   copies: gpuk_buffer_write/read (and a create's desc.data upload, gpuk_buffer_download) of
   pageable host memory (memory the driver does not know: malloc, the stack) of at least
   staging_min_bytes (default 1 MiB, from where staging measured clearly faster on an H100
   machine with 8 copying threads: 1.5x / 2.0x at 1 MiB, 256 MiB at 5.7x host->device and 2.5x
   device->host the driver's own pageable copy, see README; staging_threads 1 lost at every
   size): the host side copies piece after piece into one half while the DMA engine moves the
   other, instead of the driver's own pageable path, where the two take turns. Each piece's
   memcpy is cut into slices (4 KiB boundaries, at least 64 KiB each) copied by the calling
   thread and up to gpuk_ctx_desc.staging_threads - 1 threads of gpuk's own (THREADS); between
   pieces they spin (2^14 CPU pause hints, some hundreds of microseconds) before they sleep, so
   each staged copy keeps that many CPUs busy until shortly after it returns. Pinned,
   registered and managed memory and smaller copies go direct. Same results and ordering as
   the direct copy; the call returns once done. If the staging memory cannot be allocated the copy goes direct (whole), the logger hears once at
   GPUK_LOG_WARN, and the ctx's copies stay direct. A copy finding the staging busy with
   another thread's copy goes direct instead of waiting. A failure in the middle returns the
   driver's code (the destination then holds part of the data), with nothing left in flight.
   The *_async copies never stage (staging needs the calling thread to copy; an async copy
   of pageable memory is synchronous in the driver anyway): use pinned memory for those.
   Threads of gpuk's own: staging_threads - 1 per ctx (default min(8, CPUs / 2) - 1, the CPUs
   of the GPU's NUMA node where known: THREADS), started by its first staged copy, with the
   staging memory, and joined by gpuk_ctx_destroy; none with staging_threads = 1, no_staging
   or staging off (see THREADS).
   gpuk_stream_join/fork create one event per ctx at their first call, freed with the ctx.
   Size 0: a buffer or pinned block of 0 bytes is a valid handle with no memory behind it
   (devptr 0 / NULL); copies and memsets of 0 bytes validate their handles and do nothing.
   Calls without a stream argument (gpuk_buffer_write/read/copy) are synchronous and ordered
   like cudaMemcpy: they run on the CUDA context's legacy stream, so they start only after all
   work queued earlier on the ctx's default stream and on every blocking stream of the device's
   primary context (gpuk's, and those of other libraries sharing it; gpuk creates streams
   blocking unless gpuk_stream_desc.non_blocking is set), and they return once done;
   work queued later on those streams runs after them. Work on a non-blocking stream, or on a
   wrapped stream created non-blocking, is not ordered with them: sync it (or record an event
   and wait) first. Calls taking a stream (the *_async copies, memset, launch, record) only
   enqueue. An async copy from pageable (not pinned) host memory is made synchronous by the
   driver; debug builds say so in the log at GPUK_LOG_DEBUG. Copies are checked against the
   buffer's size before the driver sees them; a device-to-device copy whose source and
   destination overlap is refused (the driver's copy has no memmove semantics).
   Wrapped device pointers (gpuk_buffer_desc.wrap) and streams (gpuk_stream_desc.wrap) must
   belong to the ctx's device and primary context: gpuk asks the driver and refuses others
   (streams where the driver has cuStreamGetCtx, 9.2+). Memory of a peer device cannot be
   wrapped; a wrapped stream keeps the blocking or non-blocking kind it was created with.
   Units: copy, memset and buffer offsets and sizes count BYTES; views (gpuk_array,
   gpuk_array2d: first, rows, cols, row_stride) and the built-in kernels' n count ELEMENTS of
   the kernel's type. gpuk_buffer_desc.data uploads initial contents at create (one call);
   gpuk_buffer_download copies a whole buffer into new host memory.
   Stream-ordered buffers (gpuk_buffer_create_async, gpuk_buffer_free_async; driver >= 11.2,
   GPUK_FEATURE_STREAM_MEMORY, and a device with memory pools) are allocated and freed in the
   order of a stream from the device's current memory pool (cuMemAllocAsync, cuMemFreeAsync),
   without cuMemFree's wait for the whole device or a trip to the driver's allocator each
   time: for temporaries made and freed often. Such a handle is an ordinary gpuk_buffer;
   after its free every call refuses it. gpuk_buffer_destroy frees one on the stream it was
   created on (refused once that stream is destroyed: free it with gpuk_buffer_free_async);
   gpuk_ctx_destroy frees what is left once the device is idle. The pool keeps freed memory
   for reuse up to its release threshold (the driver's default 0: it goes back at the next
   synchronize of a stream, event or ctx; gpuk_mempool_set_release_threshold), and
   gpuk_mempool_trim gives it back. In a capture the allocation and the free become graph
   nodes (KERNELS).
   Host-visible buffers: gpuk_buffer_create_mapped (zero-copy: page-locked host memory the
   device reads and writes in place) and gpuk_buffer_create_managed (managed memory, moved by
   the driver where it is used) make ordinary gpuk_buffer handles that every call takes, plus a
   CPU pointer (gpuk_buffer_host_ptr). On an integrated GPU (gpuk_device_info.integrated, e.g.
   Jetson) device and host share one DRAM: zero-copy or managed buffers save the copies
   outright. On a discrete GPU each kernel access of mapped memory crosses the bus: copies
   into device memory usually win unless the data is read once; managed memory there pays
   page faults unless prefetched (gpuk_buffer_prefetch) before its use. gpuk_device_info says
   what the device can: can_map_host_memory, managed_memory, concurrent_managed_access,
   pageable_memory_access.

   Sharing with other processes on the same machine (CUDA IPC, Linux): gpuk_buffer_export
   and gpuk_event_export fill a gpuk_ipc_handle, GPUK_IPC_HANDLE_BYTES plain bytes with no
   pointer in them, which the program sends as they are (write(fd, &h, sizeof h)) through a
   pipe, a socket, a file or shared memory; the other process's gpuk_buffer_import gives an
   ordinary gpuk_buffer on the same device memory, no copy (every call, built-in and
   gpuk_launch takes it), and gpuk_event_import an event its streams can wait for
   (gpuk_stream_wait), so its kernels start after the exporter's work without a host round
   trip. Only buffers of gpuk_buffer_create (cuMemAlloc) can be exported, and only events
   created with gpuk_event_desc.interprocess. The importer never frees the memory:
   gpuk_buffer_destroy of an imported buffer closes its mapping (after waiting for the device)
   and gpuk_event_destroy releases the imported event. The exporter must keep the buffer and
   the event until every importer has destroyed its import; a handle opened in the process
   that exported it is refused (the driver maps each export into other processes only). Across
   machines use MPI or NCCL. Where the platform has no CUDA IPC (Windows under WDDM, some
   Jetson boards) the calls return GPUK_ERR_UNSUPPORTED or the driver's
   CUDA_ERROR_NOT_SUPPORTED (801), said in the text.
HANDLES
   Buffers, pinned blocks, streams, events, modules, kernels and graphs are 32-bit handles
   owned by one ctx. {0} never names a live object (a zero stream, GPUK_DEFAULT_STREAM, means the ctx's
   default stream). A zero,
   destroyed or other-ctx handle returns GPUK_ERR_INVALID_HANDLE and never reaches the driver.
   Destroying a ctx destroys everything it owns; unloading a module destroys its kernels.
   An id holds a slot of its ctx's pool, a generation per slot and a tag of its ctx. Guarantees:
   - a handle of one ctx is refused by every other ctx alive at the same time while at most 16
     ctxs are alive (tags go round: a destroyed ctx's tag is handed out again only after the
     other 15 have been handed out or are taken, so a new ctx refuses its handles too);
   - a destroyed handle stays refused until its slot has been reused 2^(28 - b) times, where b
     is the bits of the pool size (max_* + 1 <= 2^b: 13 for 4096 buffers, 16 at most), i.e.
     32,768 reuses for the default buffer pool, 4,096 for a pool of 65535; free slots are
     reused oldest first, so that takes at least that many times the pool's free slots of
     creations of that kind (2^27, about 134 million, with the pool otherwise idle).
   Destroy failures: the driver releases the object first; when that fails (or making the
   ctx current does) the handle stays valid and the destroy can be retried. The same holds
   for gpuk_ctx_destroy: what it released is gone, the rest (and the ctx) stays for a retry.
   After a sticky fault or in a fork child (the result is then a sticky code, see ERRORS, or
   GPUK_ERR_FORKED) nothing is left to retry: no driver call is made and the handle or ctx is
   freed all the same.

THREADS
   gpuk_init and gpuk_last_error are safe from any thread; so is logging while another thread's
   gpuk_init or gpuk_shutdown replaces the logger (a message being logged then may still reach
   the old one). A ctx may be used from many threads at once: handle create/destroy take the ctx's lock; copy, launch, record and sync take no gpuk
   lock (a staged copy tries the ctx's staging lock and goes direct when another thread holds
   it; gpuk_stream_join/fork hold a ctx lock between their event's record and wait); built-in reductions and scans take their stream's scratch lock up to their launch (a
   scratch regrowth waits for that stream only), and a first-use JIT holds no lock, so calls
   on other streams never wait for it. gpuk makes the ctx's CUDA context current on the calling
   thread when it is not (a failed gpuk_ctx_create leaves the thread's current context as it
   was). Destroying a ctx or a handle must not race with its use. gpuk_shutdown while a
   gpuk_ctx_create runs on another thread returns GPUK_ERR_BUSY (the create goes on).
   Threads gpuk creates: only for pinned staging (MEMORY), and only where a ctx stages: its
   first staged copy starts gpuk_ctx_desc.staging_threads - 1 copy threads (default
   min(8, CPUs / 2), at least 1, so none with 2 or 3 CPUs), which the ctx's staged copies
   share, one copy at a time; gpuk_ctx_destroy joins them (after a sticky fault too). The CPUs
   counted are those of the GPU's NUMA node that the process may use (its affinity mask),
   where Linux's sysfs tells the node (gpuk_device_info.numa_node), else the online CPUs; with
   the node known each copy thread also binds itself to those CPUs as it starts (the node's
   set, sched_setaffinity), so that its copies and the DMA meet in that node's memory. The
   calling thread is never moved. gpuk_ctx_desc.no_staging_numa = true: online CPUs, threads
   left where the system puts them. The copy threads copy host memory and nothing else: no
   driver call, no current context, no gpuk lock but their own, no allocation of gpuk's (their
   stacks are the system's). staging_threads = 1 (or no_staging, or no pageable copy of
   staging_min_bytes or more) creates none. A thread that cannot start is done without:
   staged copies use the threads that started (the calling thread alone at worst), and the
   logger hears once at GPUK_LOG_WARN; no call fails for it. A fork() child has none of them:
   its calls fail with GPUK_ERR_FORKED, and its gpuk_ctx_destroy frees the ctx without
   waiting for them. Windows: CreateThread and condition variables (Windows 7 and newer).
   Ordering across threads and streams: a stream-less call waits for work queued earlier (on
   any thread) on the ctx's default stream and its blocking streams; see MEMORY.
   Several ctxs (one per device): any thread may use any of them, one thread all or one thread
   each; calls on different ctxs share no gpuk lock. Work on different devices is ordered only
   by events (gpuk_stream_wait_peer) or synchronous calls; a ctx must not be destroyed while a
   peer call names it. One thread is enough to keep every GPU busy, since calls with a stream
   only enqueue: queue the work of every device, then wait for each (event or stream sync); a
   synchronous call (gpuk_buffer_read/write/copy(_peer), gpuk_timer_stop, *_sync) blocks the
   thread, and devices queued after it wait for work meanwhile. Libraries on the CUDA runtime
   (NCCL, cuBLAS) share gpuk's primary contexts: give them gpuk_stream_native and
   gpuk_buffer_devptr. They may change the thread's current context (cudaSetDevice); gpuk checks
   it on every call, but a raw driver call after gpuk calls on another ctx needs
   gpuk_ctx_make_current first.

KERNELS
   Bring your own as PTX text, cubin or fatbin (gpuk_module_load). PTX's .version is checked
   against the driver first: "PTX .version 9.0 needs a driver for CUDA 13.0 or newer", its
   .target against the device (newer than it, or sm_90a on anything but 9.0: GPUK_ERR_INVALID_ARG).
   Or as CUDA C: tools/gpuk_embed.py my_kernels.cu -o my_kernels.h writes one lowered PTX
   module with a typed C wrapper per extern "C" __global__ kernel (pointers as gpuk_array
   views, checked like the built-ins'), needing only this header (README "Your own kernels").
   Or as CUDA C at run time: gpuk_module_compile loads NVRTC on first use and compiles for
   the ctx's device: a cubin where that NVRTC knows the architecture, else PTX for the newest
   one it knows below it. Where NVRTC is looked for, in order: gpuk_desc.nvrtc_path (then
   only there), GPUK_NVRTC_PATH (the same), the sonames libnvrtc.so.13, .so.12, .so.11.2,
   .so.11.1, .so.11.0, .so.10.2 (nvrtc64_130_0.dll ... nvrtc64_102_0.dll) through the system
   loader, then those names in $CUDA_PATH and $CUDA_HOME (lib64, lib; Windows: bin\x64, bin),
   and, not on Windows, /usr/local/cuda/lib64, /usr/local/cuda-X.Y/lib64 (newest version
   first) and the pip wheels (nvidia/cu13/lib, nvidia/cuda_nvrtc/lib) in the site-packages and
   dist-packages of python3.X under $VIRTUAL_ENV/lib, $CONDA_PREFIX/lib, ~/.local/lib,
   /usr/local/lib and /usr/lib (newest first). NVRTC's builtins library is loaded from the
   folder NVRTC came from (NVRTC itself looks for it by name only). GPUK_LOG_INFO says which
   file loaded, GPUK_LOG_DEBUG each folder tried; without NVRTC the call fails with
   GPUK_ERR_NO_NVRTC, the error listing the places tried.
   Results are cached in the process, and on disk where asked (gpuk_desc.nvrtc_cache_dir,
   GPUK_CACHE_DIR; see gpuk_module_compile).
   Every compile gets the header "gpuk_device.cuh" from this file, so a source may
   #include "gpuk_device.cuh" with no file: gpuk's Philox random numbers (gpuk_uniform_f32(seed,
   e) is element e of gpuk_random_uniform_f32's stream, bit for bit), warp and block sums, a
   warp scan (docs/own-kernels.md). With nvcc, include it from the folder of gpuk.h.
   Or linked: gpuk_module_link joins relocatable inputs (PTX, cubins, fatbins, archives,
   NVRTC programs compiled with -rdc=true) with the driver's own linker into one module;
   with desc.gpuk_device it adds gpuk_device.cuh's functions as extern "C" definitions, so a
   kernel that only declares gpuk_uniform_f32 (or gpuk_block_sum_f64...) links against them.
   A link with an LTO-IR input (kind GPUK_LINK_LTOIR, or a compiled input with .lto, which
   NVRTC compiles with -dlto) goes through nvJitLink instead, for the device (-arch=sm_XY,
   -lto), taking the other kinds as well; the cubin it makes loads as an ordinary module.
   nvJitLink is loaded then and only then, looked for as NVRTC is (gpuk_desc.nvjitlink_path,
   GPUK_NVJITLINK_PATH, libnvJitLink.so.13, .so.12, the same folders and nvidia/nvjitlink/lib
   wheels); without it such a link fails with GPUK_ERR_NO_NVRTC naming nvJitLink.
   Launch arguments: GPUK_ARGS(&p, &s, &n) inside a gpuk_launch_desc (C only) fills args,
   arg_sizes and num_args, so debug builds compare each argument's size with the kernel's
   parameter (driver >= 12.4) and refuse &buffer (a 4-byte gpuk_buffer handle) where the
   kernel takes an 8-byte device pointer, instead of faulting the GPU. C++ sets the three
   fields itself. GPUK_DIM1/2/3 build grid and block shapes (warning-free under -Wextra).
   Argument order everywhere: ctx, then the stream where there is one, then the object.
   Or call a built-in one (gpuk_add_f32, gpuk_sum_f64, gpuk_scan_inclusive_i32, ... below):
   typed, argument-checked, JIT-loaded per kernel on first use, PTX lowered to run on every
   driver gpuk supports and every GPU from sm_52 on, with faster variants picked on newer GPUs
   (the highest .target the device, the driver and gpuk_ctx_desc.kernels_max_sm allow; an
   architecture-specific one, .target sm_90a with Hopper's wgmma, only on compute capability
   9.0 itself and a CUDA 12.0+ driver, ahead of an sm_90 one). A module of your own with
   .target sm_90a is refused on any other device by gpuk_module_load, before the driver.
   Device printf: what a kernel prints goes into a buffer on the device (1 MiB by default,
   circular: a kernel printing more overwrites its oldest output; GPUK_LIMIT_PRINTF_FIFO_SIZE,
   set before the ctx's first launch, see gpuk_ctx_set_limit), which the driver writes to the
   process's stdout at the next synchronisation: gpuk_ctx_sync, gpuk_stream_sync,
   gpuk_event_sync, gpuk_timer_stop, a stream-less copy (gpuk_buffer_read...), gpuk_ctx_destroy,
   and the start of a later launch; never at exit, so sync before the program ends. The text
   may then sit in stdio's buffer: fflush(stdout) before reading stdout redirected to a pipe or
   a file.
   CUDA graphs (driver >= 11.4, GPUK_FEATURE_GRAPHS): gpuk_graph_begin_capture(ctx, s, mode),
   then gpuk calls on s (launches, built-ins, *_async copies, memsets, event records, waits,
   stream-ordered buffer creates and frees) are recorded instead of run;
   gpuk_graph_end_capture(ctx, s, &graph) turns them into a
   graph, gpuk_graph_launch(ctx, stream, graph) runs it again, each time afresh on what the
   buffers and host memory hold then, with one launch call: far less host cost a kernel
   than launching each (bench.c: 64 tiny kernels). To change arguments (pointers, scalars,
   sizes, launch shapes), capture the same calls again and gpuk_graph_update(ctx, s, graph):
   other work or another order returns 910 with the reason and leaves the graph as it was.
   What a capture cannot hold: a sync or query of the capturing stream, a stream-less call
   (gpuk_buffer_write/read/copy: synchronous) on a blocking stream's capture, a copy to or
   from pageable host memory (use gpuk_pinned), a first-use JIT or a scratch allocation of a
   built-in. The driver invalidates the capture at the first of these (that call fails, the
   end returns 901); a built-in that would load or allocate returns GPUK_ERR_CAPTURING
   instead and leaves the capture intact: load the kernels (gpuk_kernels_load) and reserve
   the stream's scratch for the longest scan or select (gpuk_kernels_reserve) and the largest
   sort (gpuk_kernels_reserve_sort) before capturing. The graph keeps the scratch it was
   captured with: a later growth or destroy of that stream keeps the old area until the ctx
   has no graph and no capture open (then it is freed), or until gpuk_ctx_destroy. A graph
   made by the driver's own calls on gpuk_stream_native is not counted: keep its stream and
   scratch size while it lives.
   Capture in thread-local (the default) or relaxed mode when other threads use gpuk
   meanwhile (in global mode the driver refuses their module loads and allocations), and on
   a stream created non_blocking when stream-less calls may run meanwhile: they use the
   legacy stream, which would join a blocking stream's capture and invalidate it.
   Stream-ordered buffers in a capture: gpuk_buffer_create_async records an allocation (the
   handle is usable by the calls captured after it), gpuk_buffer_free_async a free. Free the
   buffer in the capture that created it: each launch of the graph then allocates and frees
   it afresh, at the same address, and the handle is gone after the captured free. A buffer
   still allocated when its capture ends names the memory of the graph's next launch: free it
   after that launch (gpuk_buffer_free_async on a stream ordered after it) before launching
   the graph again, which the driver refuses until then. Freeing inside a capture a buffer
   not created in one returns GPUK_ERR_CAPTURING and leaves the capture intact (a graph frees
   only its own allocations). Graph allocations come from the driver's graph memory, not the
   pool: the release threshold does not apply to them.
   Graphs that loop on the GPU (conditional nodes, driver >= 12.4; IF alone 12.3):
   gpuk_graph_begin_while (or _if), the head's work, gpuk_graph_begin_body, the body's work,
   gpuk_graph_end_capture make one graph whose launch repeats the body until a kernel in it
   clears the condition (cudaGraphSetConditional): for work that decides on the GPU when to
   stop (a solver run to a tolerance) without a read back and a launch per step.
   Extended launch (cuLaunchKernelEx, driver >= 11.8, GPUK_FEATURE_LAUNCH_EX):
   gpuk_launch_desc.cluster (thread-block clusters, sm_90+, distributed shared memory),
   .cooperative (every block resident at once, for a grid-wide sync: the grid is checked
   against gpuk_kernel_max_cooperative_grid first) and .priority; all zero keeps the plain
   launch. Each is checked before the driver: GPUK_ERR_UNSUPPORTED where the device cannot,
   GPUK_ERR_LIMIT for a grid or cluster too large, GPUK_ERR_DRIVER_TOO_OLD without the entry
   point.

GENERATED
   This file is generated: tools/gen_ptx.py joins the hand-written sources in src/ and fills
   the GPUK_GENERATED_BEGIN/END sections (the built-in kernels' declarations, ids, wrappers and
   PTX, from gpuk_kernels.cuh through ptx/). Change src/ or gpuk_kernels.cuh, never this file.

LICENSE
   MIT; see the end of this file.
*/
#ifndef GPUK_H_INCLUDED
#define GPUK_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* Usable in #if: GPUK_VERSION >= 300 is 0.3.0 or newer. */
#define GPUK_VERSION_MAJOR 0
#define GPUK_VERSION_MINOR 3
#define GPUK_VERSION_PATCH 0
#define GPUK_VERSION (GPUK_VERSION_MAJOR * 10000 + GPUK_VERSION_MINOR * 100 + GPUK_VERSION_PATCH)
#define GPUK_VERSION_STRING "0.3.0"

#ifndef GPUK_API
#if defined(GPUK_STATIC)
#define GPUK_API static
#else
#define GPUK_API extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A device address, the same type as the driver's CUdeviceptr. */
typedef unsigned long long gpuk_devptr;

/* gpuk_result: 0 ok, > 0 a CUresult from the driver unchanged, < 0 gpuk's own. */
typedef enum gpuk_result {
    GPUK_OK = 0,
    GPUK_ERR_NO_DRIVER = -1,       /* driver library not found or not loadable */
    GPUK_ERR_DRIVER_TOO_OLD = -2,  /* missing entry point or too old for the request, named */
    GPUK_ERR_INVALID_ARG = -3,     /* NULL, zero, overflowing or malformed argument, named */
    GPUK_ERR_INVALID_HANDLE = -4,  /* zero, destroyed or other-ctx handle */
    GPUK_ERR_POOL_FULL = -5,       /* raise the ctx desc's max_* for that object */
    GPUK_ERR_HOST_ALLOC = -6,      /* the host allocator returned NULL */
    GPUK_ERR_FORKED = -7,          /* CUDA cannot be used in a child after fork() */
    GPUK_ERR_BUSY = -8,            /* gpuk_shutdown with contexts alive or being created */
    GPUK_ERR_LIMIT = -9,           /* launch shape or shared memory over a device/kernel limit */
    GPUK_ERR_OUT_OF_BOUNDS = -10,  /* copy or memset outside the buffer */
    GPUK_ERR_CAPTURING = -11,      /* needs work a CUDA graph capture cannot hold (a first-use
                                      kernel load, a scratch allocation): prepare it first */
    GPUK_ERR_NO_NVRTC = -12,       /* NVRTC (the runtime compiler) not found, or too old; also
                                      nvJitLink (the LTO-IR linker) for an LTO-IR link */
    GPUK_ERR_COMPILE = -13,        /* NVRTC refused the program: the log is in last_error */
    GPUK_ERR_UNSUPPORTED = -14,    /* the device cannot do what was asked (thread-block clusters
                                      before sm_90, cooperative launch where it has none) */
    GPUK_RESULT_FORCE_32 = 0x7FFFFFFF
} gpuk_result;

typedef enum gpuk_log_level {
    GPUK_LOG_DEFAULT = 0, /* -> GPUK_LOG_WARN */
    GPUK_LOG_ERROR,
    GPUK_LOG_WARN,
    GPUK_LOG_INFO,
    GPUK_LOG_DEBUG,
    GPUK_LOG_NUM,
    GPUK_LOG_FORCE_U32 = 0x7FFFFFFF
} gpuk_log_level;

/* Optional features: bits of gpuk_features(), set where the driver has the entry points. */
enum {
    GPUK_FEATURE_PROC_ADDRESS = 1u << 0, /* resolved through cuGetProcAddress (driver >= 11.3) */
    GPUK_FEATURE_PARAM_INFO = 1u << 1,   /* cuFuncGetParamInfo (>= 12.4): launch arg checks */
    GPUK_FEATURE_LAUNCH_EX = 1u << 2,    /* cuLaunchKernelEx (>= 11.8) */
    GPUK_FEATURE_GRAPHS = 1u << 3,       /* cuGraphInstantiateWithFlags (>= 11.4) */
    GPUK_FEATURE_LIBRARY = 1u << 4,      /* cuLibraryLoadData (>= 12.0) */
    GPUK_FEATURE_PEER = 1u << 5,         /* cuMemcpyPeerAsync (>= 4.0): calls between ctxs */
    GPUK_FEATURE_STREAM_MEMORY = 1u << 6 /* cuMemAllocAsync (>= 11.2): buffers made on a stream */
};

typedef struct gpuk_ctx gpuk_ctx; /* one per device, on its primary context; the only pointer */
typedef struct gpuk_buffer { uint32_t id; } gpuk_buffer; /* device memory; {0} = none */
typedef struct gpuk_pinned { uint32_t id; } gpuk_pinned; /* page-locked host memory */
typedef struct gpuk_stream { uint32_t id; } gpuk_stream; /* {0} = the ctx default stream */
typedef struct gpuk_event { uint32_t id; } gpuk_event;
typedef struct gpuk_module { uint32_t id; } gpuk_module;
typedef struct gpuk_kernel { uint32_t id; } gpuk_kernel;
typedef struct gpuk_graph { uint32_t id; } gpuk_graph;   /* captured work, ready to launch */

/* A pointer and a size. GPUK_RANGE(x) takes an array or struct by name. */
typedef struct gpuk_range { const void* ptr; size_t bytes; } gpuk_range;
#ifdef __cplusplus
#define GPUK_RANGE(x) gpuk_range{ &x, sizeof(x) }
#else
#define GPUK_RANGE(x) (gpuk_range){ &(x), sizeof(x) }
#endif

/* The ctx's default stream ({0}) as a value, in C and C++: gpuk_stream_sync(ctx,
   GPUK_DEFAULT_STREAM). Any zero gpuk_stream means the same. */
#ifdef __cplusplus
#define GPUK_DEFAULT_STREAM (gpuk_stream{ 0u })
#else
#define GPUK_DEFAULT_STREAM ((gpuk_stream){ 0u })
#endif

/* Logger: func must be reentrant; msg is valid for the call only. */
typedef void (*gpuk_log_fn)(void* user_data, gpuk_log_level level, int code, const char* msg);
typedef struct gpuk_logger { gpuk_log_fn func; void* user_data; } gpuk_logger;

/* Host allocator: both functions or neither (default malloc/free). */
typedef struct gpuk_allocator {
    void* (*alloc_fn)(size_t bytes, void* user_data);
    void (*free_fn)(void* ptr, void* user_data);
    void* user_data;
} gpuk_allocator;

/* Resolver for driver entry points (a fake driver in tests, or a program's own loader).
   Returns NULL for a symbol it does not have. */
typedef void* (*gpuk_get_proc_fn)(const char* symbol, int abi_version, void* user_data);

/* gpuk_desc: process-wide settings for gpuk_init. All zero = defaults. */
typedef struct gpuk_desc {
    uint32_t _start_canary;
    const char* driver_path;     // NULL -> $GPUK_DRIVER_PATH, then libcuda.so.1 / nvcuda.dll
                                 //   (at most 4095 characters: longer is refused)
    gpuk_get_proc_fn get_proc;   // NULL -> load the driver library and resolve from it
    void* get_proc_user_data;
    gpuk_logger logger;          // NULL func -> silent
    gpuk_log_level log_level;    // 0 -> GPUK_LOG_WARN
    gpuk_allocator allocator;    // NULL -> malloc/free
    const char* nvrtc_path;      // NULL -> $GPUK_NVRTC_PATH, else the search (KERNELS):
                                 //   libnvrtc.so.13, .so.12, ... by name, then $CUDA_PATH,
                                 //   $CUDA_HOME, /usr/local/cuda*, pip wheels. Set: only it
                                 //   (copied, at most 4095 characters; loaded by the first
                                 //   gpuk_module_compile)
    gpuk_get_proc_fn nvrtc_get_proc; // NULL -> load NVRTC and resolve from it (tests: a fake)
    void* nvrtc_get_proc_user_data;
    const char* nvrtc_cache_dir; // NULL -> $GPUK_CACHE_DIR; unset or "": no disk cache (the
                                 //   default). A folder: compiles cached there too, across
                                 //   processes (gpuk_module_compile; made 0700 if missing)
    const char* nvjitlink_path;  // NULL -> $GPUK_NVJITLINK_PATH, else NVRTC's search for
                                 //   libnvJitLink.so.13, .so.12 (loaded by the first link
                                 //   with an LTO-IR input; at most 4095 characters)
    gpuk_get_proc_fn nvjitlink_get_proc; // NULL -> load nvJitLink and resolve from it; asked
    void* nvjitlink_get_proc_user_data;  //   for the exports' names (__nvJitLinkCreate_13_0)
    uint32_t _end_canary;
} gpuk_desc;

typedef struct gpuk_device_info {
    char name[256];
    char pci_bus_id[32];           // "0000:3b:00.0"
    int numa_node;                 // the host's NUMA node nearest the GPU (Linux sysfs); -1:
                                   //   unknown (other systems, firmware that does not tell)
    int ordinal;
    int cc_major, cc_minor;        // compute capability
    int sm_count;
    int clock_khz, mem_clock_khz, mem_bus_bits;
    size_t total_bytes;            // global memory; free memory: gpuk_ctx_mem_info
    int l2_bytes;
    int shared_per_block, shared_per_block_optin, shared_per_sm;
    int regs_per_block;
    int max_threads_per_block, max_threads_per_sm, warp_size;
    int max_block[3], max_grid[3];
    int integrated, async_engines;
    int driver_version;            // e.g. 13000 for CUDA 13.0
    int can_map_host_memory;       // 1: gpuk_buffer_create_mapped works (zero-copy)
    int managed_memory;            // 1: gpuk_buffer_create_managed works
    int concurrent_managed_access; // 1: CPU and GPU may touch managed memory at once, and
                                   //   gpuk_buffer_prefetch works; 0 (Windows, some Jetson):
                                   //   the CPU only while the device is idle
    int pageable_memory_access;    // 1: kernels may read plain malloc'd memory (HMM, ATS)
} gpuk_device_info;

typedef struct gpuk_ctx_desc {
    uint32_t _start_canary;
    int device;              // ordinal; 0 = first device
    uint32_t max_buffers;    // 0 -> 4096 (each pool at most 65535)
    uint32_t max_pinned;     // 0 -> 256
    uint32_t max_streams;    // 0 -> 256
    uint32_t max_events;     // 0 -> 1024
    uint32_t max_modules;    // 0 -> 64
    uint32_t max_kernels;    // 0 -> 1024
    uint32_t kernels_max_sm; // 0 -> built-in kernels take the fastest variant the device runs;
                             //   e.g. 52 -> the portable sm_52 baseline only, 80 -> none newer
                             //   than sm_80 (tests, and results that match older GPUs); 90
                             //   admits sm_90a (compute capability 9.0 only) as 0 does
    bool no_staging;         // false -> gpuk_buffer_write/read of pageable host memory of at
                             //   least staging_min_bytes go through pinned staging (MEMORY);
                             //   true -> always the driver's own pageable copy
    size_t staging_bytes;    // 0 -> 32 MiB: the pinned staging memory (two halves), allocated
                             //   at the first staged copy, freed with the ctx; >= 64 KiB
    size_t staging_min_bytes; // 0 -> 1 MiB (measured crossover); N -> copies of N bytes and
                              //   more staged; 1 -> every size; SIZE_MAX -> none
    uint32_t max_graphs;     // 0 -> 64
    uint32_t staging_threads; // 0 -> min(8, CPUs / 2), at least 1, counting the CPUs of the
                              //   GPU's NUMA node the process may use (Linux, node known),
                              //   else the online CPUs: threads copying each staged piece's
                              //   host side, the calling one and up to N - 1 of gpuk's own
                              //   (started with the staging memory, joined at ctx destroy);
                              //   1 -> the calling thread only; at most 64
    bool no_staging_numa;     // false -> where the GPU's NUMA node is known (Linux), gpuk's
                              //   copy threads run on its CPUs and staging_threads 0 counts
                              //   them; true -> online CPUs counted, threads left where the
                              //   system puts them (programs that place their own threads)
    uint32_t _end_canary;
} gpuk_ctx_desc;

typedef struct gpuk_buffer_desc {
    uint32_t _start_canary;
    size_t bytes;            // 0 -> data.bytes; both 0 -> a valid empty buffer (devptr 0)
    gpuk_devptr wrap;        // nonzero: wrap this existing allocation (not freed by gpuk)
    const char* label;       // copied; shown in errors
    gpuk_range data;         // copied to the start of the buffer at create (synchronous);
                             // data.bytes > bytes is an error; NULL ptr -> left uninitialised
    uint32_t _end_canary;
} gpuk_buffer_desc;

typedef struct gpuk_pinned_desc {
    uint32_t _start_canary;
    size_t bytes;            // 0 -> data.bytes; both 0 -> a valid empty block (ptr NULL)
    void* host_ptr;          // non-NULL: page-lock (register) this memory instead of allocating
    const char* label;
    gpuk_range data;         // copied to the start of the block at create; data.bytes <= bytes
    uint32_t _end_canary;
} gpuk_pinned_desc;

typedef struct gpuk_stream_desc {
    uint32_t _start_canary;
    int priority;            // 0 -> default; lower is higher (gpuk_stream_priority_range)
    bool non_blocking;       // false -> blocking: stream-less calls wait for its earlier work
                             // (see MEMORY); true -> not ordered with them (CU_STREAM_NON_BLOCKING)
    void* wrap;              // non-NULL: wrap this CUstream (not destroyed by gpuk)
    uint32_t _end_canary;
} gpuk_stream_desc;

typedef struct gpuk_event_desc {
    uint32_t _start_canary;
    bool no_timing;          // false -> the event records time (gpuk_event_elapsed_ms)
    bool blocking_sync;      // true -> gpuk_event_sync sleeps instead of spinning
    bool interprocess;       // true -> can be shared with another process (gpuk_event_export;
                             //   CU_EVENT_INTERPROCESS); records no time (no_timing implied)
    uint32_t _end_canary;
} gpuk_event_desc;

typedef enum gpuk_image_kind {
    GPUK_IMAGE_DEFAULT = 0,  /* detect: ELF -> cubin, fatbin magic -> fatbin, else PTX text */
    GPUK_IMAGE_PTX,
    GPUK_IMAGE_CUBIN,
    GPUK_IMAGE_FATBIN,
    GPUK_IMAGE_NUM,
    GPUK_IMAGE_FORCE_U32 = 0x7FFFFFFF
} gpuk_image_kind;

typedef struct gpuk_module_desc {
    uint32_t _start_canary;
    gpuk_range image;        // PTX text (bytes 0 -> NUL-terminated), cubin or fatbin
    gpuk_image_kind kind;    // 0 -> detect
    const char* label;       // copied; shown in errors
    uint32_t _end_canary;
} gpuk_module_desc;

/* A header a compiled program may #include "name", given as text. */
typedef struct gpuk_compile_header { const char* name; const char* source; } gpuk_compile_header;

/* gpuk_module_compile: CUDA C++ source compiled by NVRTC for the ctx's device. */
typedef struct gpuk_compile_desc {
    uint32_t _start_canary;
    const char* source;              // CUDA C++ text, NUL-terminated (required)
    const char* name;                // program name in logs and errors; NULL -> "program.cu"
    const char* const* options;      // NVRTC options ("-use_fast_math", "-DN=4"...); gpuk adds
    uint32_t num_options;            //   -arch itself, so none may name one
    const gpuk_compile_header* headers; // #include-able texts, num_headers of them
    uint32_t num_headers;
    const char* const* name_expressions; // e.g. "scale<float>": kernels to instantiate, whose
    uint32_t num_name_expressions;   //   lowered names gpuk_module_lowered_name gives
    bool ptx_only;                   // true -> PTX even where a cubin could be made
    char* log;                       // NULL -> none; else receives NVRTC's whole log of this
    size_t log_bytes;                //   compile, cut to log_bytes - 1 characters and
                                     //   NUL-terminated ("" where NVRTC did not run: a cache
                                     //   hit or a refused desc); both set or neither
    uint32_t _end_canary;
} gpuk_compile_desc;

/* What one input of gpuk_module_link holds. */
typedef enum gpuk_link_kind {
    GPUK_LINK_DEFAULT = 0,   /* detect: an image by its first bytes (ELF -> cubin, fatbin magic,
                                "!<arch>" -> library, else PTX), a path by its ending (.ptx
                                .cubin .fatbin, .a/.lib -> library, .o/.obj -> object) */
    GPUK_LINK_PTX,           /* PTX text; its functions may be .extern (made with -rdc) */
    GPUK_LINK_CUBIN,         /* a cubin, relocatable (nvcc -rdc -cubin) to be linked against */
    GPUK_LINK_FATBIN,
    GPUK_LINK_LIBRARY,       /* an archive of device code (nvcc -lib; libcudadevrt.a) */
    GPUK_LINK_OBJECT,        /* a host object holding device code (nvcc -rdc -c) */
    GPUK_LINK_LTOIR,         /* LTO-IR (nvcc -dlto -dc, NVRTC -dlto); never detected: name it
                                (a path ending in .ltoir is one). The link then goes through
                                nvJitLink (KERNELS) */
    GPUK_LINK_NUM,
    GPUK_LINK_FORCE_U32 = 0x7FFFFFFF
} gpuk_link_kind;

/* One input: exactly one of image, path and compile. */
typedef struct gpuk_link_input {
    gpuk_range image;                   // in memory: PTX (bytes 0 -> NUL-terminated), cubin...
    const char* path;                   // or a file, read by the driver (cuLinkAddFile)
    const gpuk_compile_desc* compile;   // or CUDA C compiled by NVRTC with -rdc=true added
                                        //   (cached like gpuk_module_compile; its log and
                                        //   errors as there)
    gpuk_link_kind kind;                // image and path: 0 -> detect
    const char* label;                  // in errors; NULL -> path, compile->name, "input N"
    bool lto;                           // compile: true -> NVRTC -dlto makes LTO-IR (linked
                                        //   by nvJitLink, like GPUK_LINK_LTOIR inputs)
} gpuk_link_input;

/* gpuk_module_link: inputs linked into one module by the driver's linker. */
typedef struct gpuk_link_desc {
    uint32_t _start_canary;
    const gpuk_link_input* inputs;   // linked in this order (at least one)
    uint32_t num_inputs;
    bool gpuk_device;                // true -> also link gpuk_device.cuh's functions as extern
                                     //   "C" definitions (gpuk_uniform_f32...; KERNELS)
    const char* label;               // the module's, in errors; NULL -> "linked"
    char* log;                       // NULL -> none; else the linker's error log and then its
    size_t log_bytes;                //   info log, cut to log_bytes - 1 characters; both set
                                     //   or neither
    uint32_t _end_canary;
} gpuk_link_desc;

typedef struct gpuk_kernel_info {
    int num_regs;
    int static_shared_bytes, const_bytes, local_bytes;
    int max_threads_per_block;     // for this kernel on this device
    int max_dynamic_shared_bytes;  // current limit; raise with gpuk_kernel_set_max_dynamic_shared
    int ptx_version, binary_version;
    int num_params;                // -1 where the driver cannot tell (< 12.4)
} gpuk_kernel_info;

typedef struct gpuk_dim3 { uint32_t x, y, z; } gpuk_dim3; /* y, z: 0 -> 1 */
/* Launch shapes without a missing-initializer warning: .grid = GPUK_DIM1(n), .block =
   GPUK_DIM2(16, 16). Each value is converted to uint32_t. */
#ifdef __cplusplus
#define GPUK_DIM3(x, y, z) (gpuk_dim3{ (uint32_t)(x), (uint32_t)(y), (uint32_t)(z) })
#else
#define GPUK_DIM3(x, y, z) ((gpuk_dim3){ (uint32_t)(x), (uint32_t)(y), (uint32_t)(z) })
#endif
#define GPUK_DIM2(x, y) GPUK_DIM3(x, y, 1)
#define GPUK_DIM1(x) GPUK_DIM3(x, 1, 1)

typedef struct gpuk_launch_desc {
    uint32_t _start_canary;
    gpuk_dim3 grid;              // x required
    gpuk_dim3 block;             // x required
    uint32_t shared_bytes;       // dynamic shared memory
    gpuk_stream stream;          // {0} -> ctx default stream
    void** args;                 // one pointer per kernel parameter, as cuLaunchKernel takes
    uint32_t num_args;           // 0 -> not checked; else must match the kernel (debug builds)
    const size_t* arg_sizes;     // NULL -> not checked; else each must match (debug builds)
    /* Extended launch (cuLaunchKernelEx, driver >= 11.8, GPUK_FEATURE_LAUNCH_EX); all zero ->
       the plain cuLaunchKernel path, at no extra cost. */
    gpuk_dim3 cluster;           // x 0 and y, z 0 or 1 (GPUK_DIM1(0)) -> no clusters; else
                                 //   blocks per thread-block cluster: x required (y, z: 0 ->
                                 //   1), sm_90+, dividing the grid, at most 8 blocks, fitting
                                 //   the device at once
    bool cooperative;            // true -> cooperative launch (grid-wide sync): the whole grid
                                 //   must be resident at once (checked against occupancy first)
    int priority;                // 0 -> the stream's; else this launch's priority (lower is
                                 //   higher, clamped to gpuk_stream_priority_range; driver 12.0+)
    uint32_t _end_canary;
} gpuk_launch_desc;

/* GPUK_ARGS(&a, &b, ...): up to 16 pointers to the kernel's arguments, in a gpuk_launch_desc
   initialiser (C only: it builds two compound-literal arrays). Expands to .args, .arg_sizes
   (sizeof each pointed-to object) and .num_args, so debug builds check every size against
   the kernel's parameters. Pass the variables themselves: &devptr, not &buffer. Pointers to
   const objects are fine (the driver only reads through args). */
#ifndef __cplusplus
#define GPUK_ARGS(...) .args = (void*[]){ GPUK__EACH(GPUK__ARG, __VA_ARGS__) }, \
    .arg_sizes = (const size_t[]){ GPUK__EACH(GPUK__SZ, __VA_ARGS__) }, \
    .num_args = GPUK__NARGS(__VA_ARGS__)
/* cuLaunchKernel takes void** but only reads through it: the uintptr_t step drops const
   without a -Wcast-qual warning (a non-pointer still fails to compile in GPUK__SZ) */
#define GPUK__ARG(a) (void*)(uintptr_t)(a)
#define GPUK__SZ(a) (sizeof *(a))
#define GPUK__EACH(f, ...) GPUK__CAT(GPUK__EACH, GPUK__NARGS(__VA_ARGS__))(f, __VA_ARGS__)
#define GPUK__CAT(a, b) GPUK__CAT_(a, b)
#define GPUK__CAT_(a, b) a##b
#define GPUK__NARGS(...) GPUK__NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, \
                                      3, 2, 1, 0)
#define GPUK__NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, n, \
                     ...) n
#define GPUK__EACH1(f, a) f(a)
#define GPUK__EACH2(f, a, ...) f(a), GPUK__EACH1(f, __VA_ARGS__)
#define GPUK__EACH3(f, a, ...) f(a), GPUK__EACH2(f, __VA_ARGS__)
#define GPUK__EACH4(f, a, ...) f(a), GPUK__EACH3(f, __VA_ARGS__)
#define GPUK__EACH5(f, a, ...) f(a), GPUK__EACH4(f, __VA_ARGS__)
#define GPUK__EACH6(f, a, ...) f(a), GPUK__EACH5(f, __VA_ARGS__)
#define GPUK__EACH7(f, a, ...) f(a), GPUK__EACH6(f, __VA_ARGS__)
#define GPUK__EACH8(f, a, ...) f(a), GPUK__EACH7(f, __VA_ARGS__)
#define GPUK__EACH9(f, a, ...) f(a), GPUK__EACH8(f, __VA_ARGS__)
#define GPUK__EACH10(f, a, ...) f(a), GPUK__EACH9(f, __VA_ARGS__)
#define GPUK__EACH11(f, a, ...) f(a), GPUK__EACH10(f, __VA_ARGS__)
#define GPUK__EACH12(f, a, ...) f(a), GPUK__EACH11(f, __VA_ARGS__)
#define GPUK__EACH13(f, a, ...) f(a), GPUK__EACH12(f, __VA_ARGS__)
#define GPUK__EACH14(f, a, ...) f(a), GPUK__EACH13(f, __VA_ARGS__)
#define GPUK__EACH15(f, a, ...) f(a), GPUK__EACH14(f, __VA_ARGS__)
#define GPUK__EACH16(f, a, ...) f(a), GPUK__EACH15(f, __VA_ARGS__)
#endif

/* How to launch one kernel: grid and block shapes (y, z: 0 -> 1), dynamic shared memory bytes
   and the stream ({0} = the ctx default stream); the wrappers tools/gpuk_embed.py writes take
   one (launch.stream = s puts a launch on stream s). Those headers carry the same definition
   under the same guard, for a gpuk.h older than 0.3.0: either may be included first. */
#ifndef GPUK_GRID_DEFINED
#define GPUK_GRID_DEFINED
typedef struct gpuk_grid {
    gpuk_dim3 grid, block;
    uint32_t shared_bytes;
    gpuk_stream stream;
} gpuk_grid;
/* A 1-D launch of at least threads threads in blocks of block, on the default stream
   (threads 0: an empty grid, grid.x 0). */
static inline gpuk_grid gpuk_grid_1d(size_t threads, uint32_t block) {
    gpuk_grid g;
    g.grid.x = block ? (uint32_t)((threads + block - 1) / block) : 0u;
    g.grid.y = g.grid.z = 0u;
    g.block.x = block;
    g.block.y = g.block.z = 0u;
    g.shared_bytes = 0u;
    g.stream.id = 0u;
    return g;
}
#endif
/* A 2-D launch of at least cols x rows threads in blocks of block_x x block_y, on the default
   stream: x runs over columns (grid.x = ceil(cols / block_x)), y over rows (grid.y =
   ceil(rows / block_y); block_y 0 -> 1, as in gpuk_dim3). cols or rows 0: an empty grid
   (grid.x 0); block_x 0 is left for the launch to refuse. */
static inline gpuk_grid gpuk_grid_2d(size_t cols, size_t rows, uint32_t block_x,
                                     uint32_t block_y) {
    gpuk_grid g = gpuk_grid_1d(0, block_x);
    g.block.y = block_y ? block_y : 1u;
    if (cols && rows) {
        g.grid.x = block_x ? (uint32_t)((cols - 1) / block_x + 1) : 1u;
        g.grid.y = (uint32_t)((rows - 1) / g.block.y + 1);
    }
    return g;
}

/* Two timing events on one stream: start, run work, stop -> milliseconds. */
typedef struct gpuk_timer { gpuk_event start, stop; gpuk_stream stream; } gpuk_timer;

// --- library ---
/* Load the driver and cuInit, once per process. Optional: the first call that needs the driver
   does it with defaults. Once it has succeeded, later calls return GPUK_OK and ignore their desc;
   after a failure the next call tries again, with its own desc: a library that failed before
   cuInit (not a driver, too old, an entry point missing) is unloaded, so a retry naming another
   driver_path loads that one. A driver on which cuInit ran stays loaded for the process.
   Calls that may run before gpuk_init without starting it: gpuk_result_str, gpuk_last_error,
   gpuk_desc_defaults (and the other *_desc_defaults), gpuk_shutdown, and gpuk_nvrtc_version,
   which loads NVRTC from GPUK_NVRTC_PATH or the default search; a later gpuk_init that sets
   nvrtc_path or nvrtc_get_proc replaces that NVRTC with the one it names. The calls that need
   the driver and take no ctx (gpuk_driver_version, gpuk_device_*, gpuk_ctx_create) run
   gpuk_init(NULL) first when it has not run; the rest need a ctx, which comes after it. */
GPUK_API gpuk_result gpuk_init(const gpuk_desc* desc);
/* Forget the driver table and any recorded fault; every ctx must be destroyed first. After a
   sticky fault (700...) the driver itself stays broken in this process, so the next ctx
   create fails with the same code: only a new process recovers. */
GPUK_API gpuk_result gpuk_shutdown(void);
GPUK_API gpuk_result gpuk_driver_version(int* out_version);
GPUK_API uint32_t gpuk_features(void);
/* Any driver entry point by name and ABI version, for calls gpuk does not wrap; NULL if none. */
GPUK_API void* gpuk_driver_symbol(const char* symbol, int abi_version);
GPUK_API const char* gpuk_result_str(gpuk_result result);
GPUK_API const char* gpuk_last_error(void);
#ifndef GPUK_NO_STDIO
GPUK_API void gpuk_log_stderr(void* user_data, gpuk_log_level level, int code, const char* msg);
#endif

// --- desc defaults ---
/* A desc with every zero member replaced by the default that create would use (NULL desc =
   all zero). What gpuk itself resolves; descs of streams and events have no defaults.
   gpuk_ctx_desc.staging_threads 0 counts the CPUs of the GPU's NUMA node (THREADS) once the
   driver is loaded (gpuk_init; the node comes from the GPU's bus id), online CPUs before. */
GPUK_API gpuk_desc gpuk_desc_defaults(const gpuk_desc* desc);
GPUK_API gpuk_ctx_desc gpuk_ctx_desc_defaults(const gpuk_ctx_desc* desc);
GPUK_API gpuk_buffer_desc gpuk_buffer_desc_defaults(const gpuk_buffer_desc* desc);
GPUK_API gpuk_pinned_desc gpuk_pinned_desc_defaults(const gpuk_pinned_desc* desc);
GPUK_API gpuk_module_desc gpuk_module_desc_defaults(const gpuk_module_desc* desc);
GPUK_API gpuk_launch_desc gpuk_launch_desc_defaults(const gpuk_launch_desc* desc);

// --- devices ---
GPUK_API gpuk_result gpuk_device_count(int* out_count);
GPUK_API gpuk_result gpuk_device_query(int device, gpuk_device_info* out_info);
/* Any CU_DEVICE_ATTRIBUTE_* by its number. */
GPUK_API gpuk_result gpuk_device_attribute(int device, int cu_attribute, int* out_value);

// --- contexts ---
GPUK_API gpuk_result gpuk_ctx_create(const gpuk_ctx_desc* desc, gpuk_ctx** out_ctx);
/* Waits for the device, then destroys everything the ctx owns and releases its primary ctx. */
GPUK_API gpuk_result gpuk_ctx_destroy(gpuk_ctx* ctx);
GPUK_API gpuk_result gpuk_ctx_sync(gpuk_ctx* ctx);
GPUK_API gpuk_result gpuk_ctx_mem_info(gpuk_ctx* ctx, size_t* out_free, size_t* out_total);
GPUK_API const gpuk_device_info* gpuk_ctx_device_info(const gpuk_ctx* ctx);
/* Make the ctx current on this thread, for raw driver calls (interop). */
GPUK_API gpuk_result gpuk_ctx_make_current(gpuk_ctx* ctx);

/* The ctx's limits (cuCtxSetLimit, cuCtxGetLimit): the driver keeps them for the device's
   primary context, so they are shared with every user of it (the CUDA runtime, libraries).
   When each may change:
   - GPUK_LIMIT_STACK_SIZE at any time: the device first finishes the work queued before, and
     the driver raises it by itself for a kernel that needs more (it stays raised);
   - GPUK_LIMIT_PRINTF_FIFO_SIZE and GPUK_LIMIT_MALLOC_HEAP_SIZE only before the ctx's first
     kernel launch. The driver refuses them (CUDA_ERROR_INVALID_VALUE) once a kernel calling
     printf (malloc, free) has run; gpuk cannot tell which kernels do, so after the ctx's
     first launch (gpuk_launch, a built-in or custom kernel, gpuk_graph_launch) it refuses them
     itself with GPUK_ERR_INVALID_ARG and a text naming the rule and the kernel;
   - the device runtime's two (CUDA dynamic parallelism) before launching a kernel that uses
     it, as the driver documents; gpuk leaves their timing to the driver. */
typedef enum gpuk_limit {
    GPUK_LIMIT_DEFAULT = 0,              /* none: refused */
    GPUK_LIMIT_STACK_SIZE,               /* bytes of stack of each GPU thread */
    GPUK_LIMIT_PRINTF_FIFO_SIZE,         /* bytes of the buffer device printf writes to (KERNELS) */
    GPUK_LIMIT_MALLOC_HEAP_SIZE,         /* bytes of the heap of device malloc and free */
    GPUK_LIMIT_DEV_RUNTIME_SYNC_DEPTH,   /* grid depth up to which device code may wait for its
                                            child grids; below compute capability 9.0 only
                                            (else CUDA_ERROR_UNSUPPORTED_LIMIT, 215) */
    GPUK_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, /* device-side launches outstanding at once */
    GPUK_LIMIT_NUM,
    GPUK_LIMIT_FORCE_U32 = 0x7FFFFFFF
} gpuk_limit;
/* Asks for value; the driver may round or clamp it (read it back with gpuk_ctx_get_limit) and
   answers CUDA_ERROR_OUT_OF_MEMORY where it cannot reserve what the value needs. Any other
   which (0, GPUK_LIMIT_NUM...) is GPUK_ERR_INVALID_ARG, before the driver sees it. */
GPUK_API gpuk_result gpuk_ctx_set_limit(gpuk_ctx* ctx, gpuk_limit which, size_t value);
GPUK_API gpuk_result gpuk_ctx_get_limit(gpuk_ctx* ctx, gpuk_limit which, size_t* out_value);

// --- buffers (device memory) ---
/* Offsets and sizes of buffer calls count bytes (views of the built-in kernels count
   elements). A buffer without a label shows as "unlabelled buffer 0x<handle>" in errors. */
GPUK_API gpuk_result gpuk_buffer_create(gpuk_ctx* ctx, const gpuk_buffer_desc* desc,
                                        gpuk_buffer* out_buffer);
GPUK_API gpuk_result gpuk_buffer_destroy(gpuk_ctx* ctx, gpuk_buffer buffer);
GPUK_API size_t gpuk_buffer_size(const gpuk_ctx* ctx, gpuk_buffer buffer);         /* 0 if bad */
GPUK_API gpuk_devptr gpuk_buffer_devptr(const gpuk_ctx* ctx, gpuk_buffer buffer);  /* 0 if bad */
GPUK_API gpuk_result gpuk_buffer_write(gpuk_ctx* ctx, gpuk_buffer dst, size_t dst_offset,
                                       const void* src, size_t bytes);
GPUK_API gpuk_result gpuk_buffer_read(gpuk_ctx* ctx, gpuk_buffer src, size_t src_offset,
                                      void* dst, size_t bytes);
GPUK_API gpuk_result gpuk_buffer_copy(gpuk_ctx* ctx, gpuk_buffer dst, size_t dst_offset,
                                      gpuk_buffer src, size_t src_offset, size_t bytes);
/* The whole buffer into new host memory from gpuk_desc.allocator (synchronous, like
   gpuk_buffer_read). Free it with gpuk_host_free before gpuk_shutdown. A 0-byte buffer gives
   NULL and 0. */
GPUK_API gpuk_result gpuk_buffer_download(gpuk_ctx* ctx, gpuk_buffer src, void** out_ptr,
                                          size_t* out_bytes);
/* Frees host memory gpuk handed out (gpuk_buffer_download); NULL does nothing. */
GPUK_API void gpuk_host_free(void* ptr);
GPUK_API gpuk_result gpuk_buffer_write_async(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer dst,
                                             size_t dst_offset, const void* src, size_t bytes);
GPUK_API gpuk_result gpuk_buffer_read_async(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer src,
                                            size_t src_offset, void* dst, size_t bytes);
GPUK_API gpuk_result gpuk_buffer_copy_async(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer dst,
                                            size_t dst_offset, gpuk_buffer src,
                                            size_t src_offset, size_t bytes);
/* Set count elements of elem_bytes (1, 2 or 4) each to value, from byte_offset (aligned to
   elem_bytes). Enqueued on stream. */
GPUK_API gpuk_result gpuk_buffer_memset(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer dst,
                                        size_t byte_offset, uint32_t value, uint32_t elem_bytes,
                                        size_t count);

// --- stream-ordered buffers and the device's memory pool (driver >= 11.2) ---
/* A buffer allocated on stream from the device's memory pool (cuMemAllocAsync): usable by work
   queued on stream after this call (other streams: order them after it first), an ordinary
   gpuk_buffer otherwise. desc: bytes and label (bytes 0: a valid empty buffer, no driver
   call); wrap and data must be zero (upload with gpuk_buffer_write_async). Inside a capture of
   stream it becomes the graph's allocation (KERNELS, CUDA graphs). GPUK_ERR_DRIVER_TOO_OLD
   without the entry points, GPUK_ERR_UNSUPPORTED on a device without memory pools. */
GPUK_API gpuk_result gpuk_buffer_create_async(gpuk_ctx* ctx, gpuk_stream stream,
                                              const gpuk_buffer_desc* desc,
                                              gpuk_buffer* out_buffer);
/* Frees a buffer of gpuk_buffer_create_async once work queued on stream before it is done
   (cuMemFreeAsync); returns at once. The handle is refused from here on. Work on other streams
   that uses the buffer must be ordered before it. gpuk_buffer_destroy of such a buffer is this
   call on the stream it was created on. Buffers of gpuk_buffer_create are refused. */
GPUK_API gpuk_result gpuk_buffer_free_async(gpuk_ctx* ctx, gpuk_stream stream,
                                            gpuk_buffer buffer);
/* The release threshold of the device's current memory pool, the one stream-ordered buffers
   come from (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD): the bytes of freed memory the pool keeps
   through a synchronize (stream, event or ctx) instead of giving them back to the device.
   The driver's default is 0; UINT64_MAX keeps everything. Shared by every user of the pool. */
GPUK_API gpuk_result gpuk_mempool_set_release_threshold(gpuk_ctx* ctx, uint64_t bytes);
GPUK_API gpuk_result gpuk_mempool_get_release_threshold(gpuk_ctx* ctx, uint64_t* out_bytes);
/* Gives the pool's unused memory back to the device until it holds at most keep_bytes
   (cuMemPoolTrimTo). Memory whose free its stream has not yet reached stays. */
GPUK_API gpuk_result gpuk_mempool_trim(gpuk_ctx* ctx, size_t keep_bytes);

// --- several ctxs: peer access, copies and waits between ctxs ---
/* Whether kernels on device can read and write peer_device's memory directly (P2P over NVLink
   or PCIe). The same device twice is GPUK_ERR_INVALID_ARG. */
GPUK_API gpuk_result gpuk_device_can_access_peer(int device, int peer_device, bool* out_can);
/* Lets kernels of ctx access memory of peer's device (one direction: call it both ways for
   both). Idempotent: already enabled is GPUK_OK. Where the hardware cannot, it returns
   CUDA_ERROR_PEER_ACCESS_UNSUPPORTED (217) saying so; copies between the ctxs still work.
   Both ctxs on one device (one primary context): GPUK_ERR_INVALID_ARG. Lasts while both ctxs
   live (it belongs to the primary contexts). */
GPUK_API gpuk_result gpuk_ctx_enable_peer_access(gpuk_ctx* ctx, gpuk_ctx* peer);
/* Copies between buffers of two ctxs (cuMemcpyPeer / cuMemcpyPeerAsync): peer to peer where
   the devices can, else staged through the host by the driver; peer access need not be
   enabled. Handles are checked against their own ctx, bounds as gpuk_buffer_copy; both ctxs
   must be live (a destroyed one is refused). dst_ctx == src_ctx is the ordinary copy. The
   synchronous form waits for earlier work on both ctxs' default and blocking streams and
   returns when done; the async form is queued on stream, a stream of dst_ctx, and ordered
   there like gpuk_buffer_copy_async: make it wait for the source's writer first
   (gpuk_event_record on src_ctx, gpuk_stream_wait_peer). */
GPUK_API gpuk_result gpuk_buffer_copy_peer(gpuk_ctx* dst_ctx, gpuk_buffer dst, size_t dst_offset,
                                           gpuk_ctx* src_ctx, gpuk_buffer src, size_t src_offset,
                                           size_t bytes);
GPUK_API gpuk_result gpuk_buffer_copy_peer_async(gpuk_ctx* dst_ctx, gpuk_stream stream,
                                                 gpuk_buffer dst, size_t dst_offset,
                                                 gpuk_ctx* src_ctx, gpuk_buffer src,
                                                 size_t src_offset, size_t bytes);

// --- sharing with other processes on the same machine (CUDA IPC; MEMORY) ---
/* An exported buffer or event, for another process: plain bytes (the driver's handle, the
   buffer's size and label, the exporter's identity), no pointers, so a program sends the
   struct as it is through a pipe, socket, file or shared memory. Meaningful on the machine
   that made it only, between programs of the same gpuk version. */
#define GPUK_IPC_HANDLE_BYTES 128
typedef struct gpuk_ipc_handle { unsigned char bytes[GPUK_IPC_HANDLE_BYTES]; } gpuk_ipc_handle;
/* Fills *out_handle for buffer (cuIpcGetMemHandle), made by gpuk_buffer_create: buffers made
   on a stream (gpuk_buffer_create_async: the memory pool's), host-visible, managed and
   imported buffers are refused with GPUK_ERR_INVALID_ARG; a wrapped pointer must be the start
   of a cuMemAlloc allocation (else the driver's error). The buffer must outlive its imports.
   0 bytes: a handle to an empty buffer, no driver call. */
GPUK_API gpuk_result gpuk_buffer_export(gpuk_ctx* ctx, gpuk_buffer buffer,
                                        gpuk_ipc_handle* out_handle);
/* A buffer of ctx on the memory another process exported (cuIpcOpenMemHandle, with
   CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: memory of another device is mapped through peer access
   where the devices have it). An ordinary handle with the exporter's size and label; writes
   are seen by the exporter and the other importers (order them with an event). Destroying it
   waits for the device, then closes the mapping (cuIpcCloseMemHandle); it never frees. A
   handle of this process's own export, an event's handle or bytes that are no gpuk handle
   are GPUK_ERR_INVALID_ARG; a handle whose buffer is gone gives the driver's error. */
GPUK_API gpuk_result gpuk_buffer_import(gpuk_ctx* ctx, const gpuk_ipc_handle* handle,
                                        gpuk_buffer* out_buffer);
/* Fills *out_handle for event (cuIpcGetEventHandle), created with
   gpuk_event_desc.interprocess; others are GPUK_ERR_INVALID_ARG. */
GPUK_API gpuk_result gpuk_event_export(gpuk_ctx* ctx, gpuk_event event,
                                       gpuk_ipc_handle* out_handle);
/* An event of ctx on another process's exported event (cuIpcOpenEventHandle): record, wait
   (gpuk_stream_wait), sync and query work in both processes; it records no time. Destroying
   it releases this process's handle only. The exporter must keep its event meanwhile. */
GPUK_API gpuk_result gpuk_event_import(gpuk_ctx* ctx, const gpuk_ipc_handle* handle,
                                       gpuk_event* out_event);

// --- pinned host memory ---
GPUK_API gpuk_result gpuk_pinned_create(gpuk_ctx* ctx, const gpuk_pinned_desc* desc,
                                        gpuk_pinned* out_pinned);
/* Frees what gpuk allocated, or unregisters what it registered (the memory stays the caller's). */
GPUK_API gpuk_result gpuk_pinned_destroy(gpuk_ctx* ctx, gpuk_pinned pinned);
GPUK_API void* gpuk_pinned_ptr(const gpuk_ctx* ctx, gpuk_pinned pinned);     /* NULL if bad */
GPUK_API size_t gpuk_pinned_size(const gpuk_ctx* ctx, gpuk_pinned pinned);   /* 0 if bad */

// --- host-visible buffers: zero-copy (mapped pinned) and managed (MEMORY) ---
/* A buffer whose memory is page-locked host memory mapped into the device's address space
   (cuMemHostAlloc with DEVICEMAP | PORTABLE, or desc.host_ptr registered with
   cuMemHostRegister's DEVICEMAP | PORTABLE): kernels and copies reach it over the bus (on an
   integrated GPU: the same DRAM), the CPU through gpuk_buffer_host_ptr, with no copy between.
   A gpuk_buffer like any other: built-ins, views and gpuk_launch (gpuk_buffer_devptr) take it.
   Destroy frees it (or unregisters host_ptr, which stays the caller's). GPUK_ERR_UNSUPPORTED
   where the device cannot map host memory, GPUK_ERR_DRIVER_TOO_OLD without
   cuMemHostGetDevicePointer. */
GPUK_API gpuk_result gpuk_buffer_create_mapped(gpuk_ctx* ctx, const gpuk_pinned_desc* desc,
                                               gpuk_buffer* out_buffer);
/* A buffer of managed memory (cuMemAllocManaged, attached globally): one address for the CPU
   (gpuk_buffer_host_ptr) and every device, pages moved by the driver where they are used.
   desc: bytes, label, data (uploaded at create); wrap must be 0. GPUK_ERR_UNSUPPORTED on a
   device without managed memory, GPUK_ERR_DRIVER_TOO_OLD without cuMemAllocManaged. */
GPUK_API gpuk_result gpuk_buffer_create_managed(gpuk_ctx* ctx, const gpuk_buffer_desc* desc,
                                                gpuk_buffer* out_buffer);
/* The CPU's pointer to a mapped or managed buffer; NULL for device memory, a bad handle, or
   0 bytes. The CPU may read what kernels wrote once their stream (or the ctx) is synced; on a
   device without concurrent managed access it may touch managed memory only while the device
   is idle (gpuk cannot check that: the process gets a fault). */
GPUK_API void* gpuk_buffer_host_ptr(const gpuk_ctx* ctx, gpuk_buffer buffer);
/* The host as the place of a prefetch or an advice; devices are named by their ordinal. */
enum { GPUK_DEVICE_HOST = -1 };
/* Moves bytes of a managed buffer from offset to device (an ordinal, or GPUK_DEVICE_HOST)
   ahead of their use, queued on stream (cuMemPrefetchAsync). Needs concurrent managed access
   (gpuk_device_info; else GPUK_ERR_UNSUPPORTED); other buffers are GPUK_ERR_INVALID_ARG;
   bytes 0 does nothing. */
GPUK_API gpuk_result gpuk_buffer_prefetch(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer buffer,
                                          size_t offset, size_t bytes, int device);
/* cuMemAdvise's hints for a managed range; values are CUmem_advise's. */
typedef enum gpuk_advice {
    GPUK_ADVICE_DEFAULT = 0,              /* none: refused */
    GPUK_ADVICE_SET_READ_MOSTLY,          /* read copies on every processor that reads it;
                                             a write drops them (device is ignored) */
    GPUK_ADVICE_UNSET_READ_MOSTLY,
    GPUK_ADVICE_SET_PREFERRED_LOCATION,   /* keep the pages on device (or the host) */
    GPUK_ADVICE_UNSET_PREFERRED_LOCATION,
    GPUK_ADVICE_SET_ACCESSED_BY,          /* device keeps a mapping: its accesses do not fault */
    GPUK_ADVICE_UNSET_ACCESSED_BY,
    GPUK_ADVICE_NUM,
    GPUK_ADVICE_FORCE_U32 = 0x7FFFFFFF
} gpuk_advice;
/* Gives bytes of a managed buffer from offset an advice for device (an ordinal or
   GPUK_DEVICE_HOST). Immediate, not on a stream. Other buffers: GPUK_ERR_INVALID_ARG. */
GPUK_API gpuk_result gpuk_buffer_advise(gpuk_ctx* ctx, gpuk_buffer buffer, size_t offset,
                                        size_t bytes, gpuk_advice advice, int device);

// --- streams ---
GPUK_API gpuk_result gpuk_stream_create(gpuk_ctx* ctx, const gpuk_stream_desc* desc,
                                        gpuk_stream* out_stream);
GPUK_API gpuk_result gpuk_stream_destroy(gpuk_ctx* ctx, gpuk_stream stream);
GPUK_API gpuk_result gpuk_stream_sync(gpuk_ctx* ctx, gpuk_stream stream);
/* *out_done = true when all work enqueued so far has finished. */
GPUK_API gpuk_result gpuk_stream_query(gpuk_ctx* ctx, gpuk_stream stream, bool* out_done);
/* Later work on stream waits until event's last record has completed. */
GPUK_API gpuk_result gpuk_stream_wait(gpuk_ctx* ctx, gpuk_stream stream, gpuk_event event);
/* gpuk_stream_wait across ctxs: later work on stream (of ctx) waits for event, an event of
   event_ctx (any device), to complete its last record. event_ctx == ctx is gpuk_stream_wait. */
GPUK_API gpuk_result gpuk_stream_wait_peer(gpuk_ctx* ctx, gpuk_stream stream, gpuk_ctx* event_ctx,
                                           gpuk_event event);
/* Joining and forking streams without events of your own (gpuk records an internal event):
   join: later work on stream waits for everything enqueued so far on each of others[0..count);
   fork: later work on each of others waits for everything enqueued so far on stream. Only
   enqueues. Every handle is checked before the driver sees any; others may hold stream
   itself (skipped) and the default stream {0}; count 0 does nothing. */
GPUK_API gpuk_result gpuk_stream_join(gpuk_ctx* ctx, gpuk_stream stream, const gpuk_stream* others,
                                      uint32_t count);
GPUK_API gpuk_result gpuk_stream_fork(gpuk_ctx* ctx, gpuk_stream stream, const gpuk_stream* others,
                                      uint32_t count);
/* fn(user_data) runs on a driver thread once earlier work on stream is done; it must not call
   gpuk or CUDA. */
GPUK_API gpuk_result gpuk_stream_host_func(gpuk_ctx* ctx, gpuk_stream stream,
                                           void (*fn)(void* user_data), void* user_data);
GPUK_API void* gpuk_stream_native(const gpuk_ctx* ctx, gpuk_stream stream); /* CUstream, NULL if bad */
GPUK_API gpuk_result gpuk_stream_priority_range(gpuk_ctx* ctx, int* out_least,
                                                int* out_greatest);

// --- events and timing ---
GPUK_API gpuk_result gpuk_event_create(gpuk_ctx* ctx, const gpuk_event_desc* desc,
                                       gpuk_event* out_event);
GPUK_API gpuk_result gpuk_event_destroy(gpuk_ctx* ctx, gpuk_event event);
GPUK_API gpuk_result gpuk_event_record(gpuk_ctx* ctx, gpuk_stream stream, gpuk_event event);
GPUK_API gpuk_result gpuk_event_sync(gpuk_ctx* ctx, gpuk_event event);
GPUK_API gpuk_result gpuk_event_query(gpuk_ctx* ctx, gpuk_event event, bool* out_done);
/* Milliseconds between two completed records of timing events. */
GPUK_API gpuk_result gpuk_event_elapsed_ms(gpuk_ctx* ctx, gpuk_event start, gpuk_event stop,
                                           float* out_ms);
GPUK_API gpuk_result gpuk_timer_create(gpuk_ctx* ctx, gpuk_timer* out_timer);
/* Destroys both events and zeroes *timer; where an event's destroy fails the timer keeps
   that event, so calling it again retries what is left. */
GPUK_API gpuk_result gpuk_timer_destroy(gpuk_ctx* ctx, gpuk_timer* timer);
GPUK_API gpuk_result gpuk_timer_start(gpuk_ctx* ctx, gpuk_stream stream, gpuk_timer* timer);
/* Records the stop, waits for it, returns the milliseconds since gpuk_timer_start. */
GPUK_API gpuk_result gpuk_timer_stop(gpuk_ctx* ctx, gpuk_timer* timer, float* out_ms);

// --- modules and kernels ---
/* JIT error/info logs are always captured: the error log's first lines go to gpuk_last_error,
   the whole logs to the logger. */
GPUK_API gpuk_result gpuk_module_load(gpuk_ctx* ctx, const gpuk_module_desc* desc,
                                      gpuk_module* out_module);
GPUK_API gpuk_result gpuk_module_unload(gpuk_ctx* ctx, gpuk_module module);
/* CUDA C++ source -> a module loaded on ctx, through NVRTC (loaded on the first call: see
   gpuk_desc.nvrtc_path). Compiles to a cubin for the device (-arch=sm_XX) where this NVRTC
   lists the architecture, else to PTX (-arch=compute_XX, the newest it lists at or below the
   device); GPUK_LOG_INFO says which. A compile error returns GPUK_ERR_COMPILE with the log's
   first lines in gpuk_last_error and the whole log at GPUK_LOG_ERROR (warnings: GPUK_LOG_WARN)
   and in desc.log where given. Cache: the image of every successful compile stays in the
   process, keyed by source, name, options, headers, name expressions, target and NVRTC
   version, so compiling the same again (on any ctx of the same architecture) skips NVRTC.
   Unbounded; freed by gpuk_shutdown. Disk cache (opt-in: gpuk_desc.nvrtc_cache_dir or
   GPUK_CACHE_DIR): one file per key, nvrtc-<hash>.gpuk, written whole under a temporary name
   and renamed; read back only when its key, sizes and checksum match (anything else is a
   miss, compiled and written again). A folder that cannot be read or written costs the
   compile nothing but a GPUK_LOG_WARN (once per gpuk_init, then GPUK_LOG_INFO). Anyone who
   can write the folder chooses the code your kernels run: keep it your own. Never pruned. */
GPUK_API gpuk_result gpuk_module_compile(gpuk_ctx* ctx, const gpuk_compile_desc* desc,
                                         gpuk_module* out_module);
/* The lowered (mangled) name of one of the compile's name expressions, for gpuk_kernel_get;
   NULL for a module not compiled with it. Valid until gpuk_shutdown. */
GPUK_API const char* gpuk_module_lowered_name(const gpuk_ctx* ctx, gpuk_module module,
                                              const char* name_expression);
/* NVRTC's version (13000 for 13.0), loading it if needed; GPUK_ERR_NO_NVRTC without it. */
GPUK_API gpuk_result gpuk_nvrtc_version(int* out_version);
/* desc's inputs linked by the driver's linker (cuLinkCreate ... cuLinkComplete; driver >= 6.5,
   else GPUK_ERR_DRIVER_TOO_OLD) into one cubin, loaded as a module of ctx: relocatable code
   (-rdc) whose .extern functions another input defines. PTX inputs are checked as
   gpuk_module_load's. A linker error (an undefined function, a mismatched target) returns the
   driver's code with the error log's first lines in gpuk_last_error and the whole log at
   GPUK_LOG_ERROR and in desc.log. */
GPUK_API gpuk_result gpuk_module_link(gpuk_ctx* ctx, const gpuk_link_desc* desc,
                                      gpuk_module* out_module);
GPUK_API gpuk_result gpuk_kernel_get(gpuk_ctx* ctx, gpuk_module module, const char* name,
                                     gpuk_kernel* out_kernel);
GPUK_API gpuk_result gpuk_kernel_query(gpuk_ctx* ctx, gpuk_kernel kernel,
                                      gpuk_kernel_info* out_info);
GPUK_API gpuk_result gpuk_kernel_set_max_dynamic_shared(gpuk_ctx* ctx, gpuk_kernel kernel,
                                                        uint32_t bytes);
/* Block size with the best occupancy for shared_bytes of dynamic shared memory, and the
   smallest grid that fills the device at that size. */
GPUK_API gpuk_result gpuk_kernel_suggest_block(gpuk_ctx* ctx, gpuk_kernel kernel,
                                               uint32_t shared_bytes, int* out_block,
                                               int* out_min_grid);

// --- launch ---
/* Queues kernel on desc->stream. With cluster, cooperative or priority set it goes through
   cuLaunchKernelEx: GPUK_ERR_DRIVER_TOO_OLD without it, GPUK_ERR_UNSUPPORTED on a device
   without clusters (before sm_90) or cooperative launch, GPUK_ERR_LIMIT for a cooperative
   grid larger than the device holds at once (blocks per SM at this block size and shared
   memory x SMs, said in the text), a cluster over 8 blocks or one whose blocks cannot be
   resident together (cuOccupancyMaxActiveClusters, where the driver has it),
   GPUK_ERR_INVALID_ARG for a cluster that does not divide the grid or has x = 0 beside a
   y or z over 1. */
GPUK_API gpuk_result gpuk_launch(gpuk_ctx* ctx, gpuk_kernel kernel, const gpuk_launch_desc* desc);
/* The largest grid a cooperative launch of kernel may use at block threads and shared_bytes
   of dynamic shared memory: blocks per SM (occupancy) x SMs. */
GPUK_API gpuk_result gpuk_kernel_max_cooperative_grid(gpuk_ctx* ctx, gpuk_kernel kernel,
                                                      uint32_t block, uint32_t shared_bytes,
                                                      uint32_t* out_blocks);

// --- CUDA graphs (driver >= 11.4: GPUK_FEATURE_GRAPHS) ---
/* How a capture treats other threads' CUDA calls that could break it (cudaStreamCaptureMode):
   thread-local (the default) refuses only this thread's unsafe calls; global refuses them on
   every thread; relaxed refuses none. */
typedef enum gpuk_capture_mode {
    GPUK_CAPTURE_DEFAULT = 0,    /* -> GPUK_CAPTURE_THREAD_LOCAL */
    GPUK_CAPTURE_GLOBAL,
    GPUK_CAPTURE_THREAD_LOCAL,
    GPUK_CAPTURE_RELAXED,
    GPUK_CAPTURE_NUM,
    GPUK_CAPTURE_FORCE_U32 = 0x7FFFFFFF
} gpuk_capture_mode;
/* From here until gpuk_graph_end_capture (or _update) on the same thread, work queued on
   stream (launches, built-in kernels, async copies, memsets, event records, waits, host
   functions) is recorded instead of run. Stream-less calls (gpuk_buffer_write...) must not
   run meanwhile on a blocking stream's capture: they would join and invalidate it (see
   KERNELS). A stream already being captured is refused. */
GPUK_API gpuk_result gpuk_graph_begin_capture(gpuk_ctx* ctx, gpuk_stream stream,
                                              gpuk_capture_mode mode);
/* Ends stream's capture and instantiates what it recorded as a new graph. A capture that
   the driver invalidated (an unsupported call during it) ends with its error (901...) and no
   graph; the stream is usable again either way. With the graph pool full (GPUK_ERR_POOL_FULL,
   raise gpuk_ctx_desc.max_graphs) the capture is left open: destroy a graph, call again. */
GPUK_API gpuk_result gpuk_graph_end_capture(gpuk_ctx* ctx, gpuk_stream stream,
                                            gpuk_graph* out_graph);
/* Ends stream's capture and updates graph in place from it (cuGraphExecUpdate): the same
   work in the same order with new arguments (kernel parameters, copy and memset addresses
   and sizes, launch shapes) changes graph's next launches. Where the two differ in shape
   (other nodes, order, kernels from another module) it returns
   CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE (910) naming the reason, and graph keeps its old
   work. */
GPUK_API gpuk_result gpuk_graph_update(gpuk_ctx* ctx, gpuk_stream stream, gpuk_graph graph);
/* Queues one run of graph on stream (any stream of ctx; it may run while an earlier launch
   of the same graph is queued: launches of one graph run one after the other). */
GPUK_API gpuk_result gpuk_graph_launch(gpuk_ctx* ctx, gpuk_stream stream, gpuk_graph graph);
GPUK_API gpuk_result gpuk_graph_destroy(gpuk_ctx* ctx, gpuk_graph graph);
/* Graphs that loop or branch on the GPU (conditional nodes): one launch runs a body while (or
   if) a value that kernels set on the GPU is non-zero, with no host round trip per step.
   begin_while / begin_if start a capture of stream (thread-local mode) into a new graph and
   give the node's condition handle in *out_cond: pass it to a kernel as an unsigned long long,
   which calls cudaGraphSetConditional(cond, value) (declared extern "C" __device__ void
   cudaGraphSetConditional(unsigned long long, unsigned int); the driver supplies it, nothing
   is linked; examples/19_heat_until_converged.c). What is queued on stream next is the head,
   work before the node that may set the value (or nothing); gpuk_graph_begin_body starts the
   body, and gpuk_graph_end_capture ends the whole into an ordinary gpuk_graph. Each launch
   starts with the value at initial_value. A WHILE node checks it on arrival and after each
   run of the body, and runs the body again while it is non-zero (a body's kernel clears it to
   stop); an IF node runs the body once where it is non-zero after the head. A body holds
   kernels, copies and memsets only (no host functions, event records, stream-ordered
   allocations or syncs: the end returns 901); load the built-ins it uses and reserve their
   scratch before (see KERNELS). GPUK_ERR_DRIVER_TOO_OLD below CUDA 12.3 (IF) or 12.4 (WHILE);
   a stream already being captured is refused (conditional nodes do not nest here); at most 4
   conditional captures are open at once per ctx (GPUK_ERR_POOL_FULL). */
GPUK_API gpuk_result gpuk_graph_begin_while(gpuk_ctx* ctx, gpuk_stream stream,
                                            uint32_t initial_value, uint64_t* out_cond);
GPUK_API gpuk_result gpuk_graph_begin_if(gpuk_ctx* ctx, gpuk_stream stream,
                                         uint32_t initial_value, uint64_t* out_cond);
/* Ends the head of stream's conditional capture: the node follows its work, and what is
   queued on stream from here until gpuk_graph_end_capture is the body. */
GPUK_API gpuk_result gpuk_graph_begin_body(gpuk_ctx* ctx, gpuk_stream stream);

// --- built-in kernels (left out by GPUK_NO_KERNELS) ---
/* The library in gpuk_kernels.cuh, shipped below as PTX. Each call checks its arguments, loads
   that one kernel's PTX the first time it is used on the ctx (the JIT costs milliseconds once;
   a program pays only for the kernels it uses), and queues the kernel on stream ({0} = the ctx
   default stream); it returns without waiting. Arrays are gpuk_array views: a buffer and the
   index of the first element, counted in the kernel's element type, so sub-arrays at any
   element offset work. Sizes are size_t: any n the memory holds. The rule for n = 0, here and
   for custom kernels and generated wrappers (an empty grid): the arguments are checked, then
   nothing runs, except that reductions write their identity to out[0] (the sum of nothing is
   0); min/max/argmin/argmax have none and refuse n = 0 with GPUK_ERR_INVALID_ARG.
   Every element-wise call may run in place (out the same view as an input). Reductions write
   one element to out[0]; they are deterministic: the same input on the same device gives the
   same bits every run. Float scans are not: which earlier tiles' totals a tile adds up
   depends on timing, so the last bits of a float prefix sum may differ from run to run
   (integer scans are exact). Scans, selects and reductions use a small scratch area per stream,
   allocated on first use (it grows for long scans; a sync of that stream precedes a regrowth;
   gpuk_kernels_reserve allocates it ahead); sorts longer than one tile take a second key and
   value buffer the same way (gpuk_kernels_reserve_sort). Streams wrapping CU_STREAM_PER_THREAD
   are refused by reductions, scans, selects and such sorts (one handle, a different CUDA
   stream on each thread). Integer
   arithmetic wraps modulo 2^32; float min/max skip NaN like fmin/fmax; argmin/argmax skip NaN
   and give 0 for an input that is all NaN.
   64-bit outputs: argmin/argmax write a uint64 index (of the first extreme element, counted
   from x's first; 0 for all-NaN input) and histograms uint64 counts; there, out.first and
   counts.first count uint64 elements (8 bytes each). Histograms overwrite: counts is zeroed
   first, then nbins counts are written (to add up several inputs, sum the count arrays).
   Selects (select_if, select_flagged, count_if, partition_if, unique, run_length_encode)
   write how many they keep to count[0], a uint64 in device memory (0 for n = 0), so a graph replays them with no
   host round trip; out holds n elements, those past the count left as they were, except
   partition_if's: its rejected elements fill the rest in reverse input order. */
typedef struct gpuk_array {
    gpuk_buffer buffer;
    size_t first;        /* element index in buffer where the array starts */
} gpuk_array;

/* A 2-D view for matrix and stencil calls: rows x cols elements, row r starting at element
   first + r * row_stride of buffer. All counts are elements; row_stride 0 -> cols, else it
   must be >= cols. gpuk checks the whole strided region against the buffer, without
   overflow, before a kernel sees it. */
typedef struct gpuk_array2d {
    gpuk_buffer buffer;
    size_t first;        /* element index of row 0, column 0 */
    size_t rows, cols;
    size_t row_stride;   /* elements from one row's start to the next; 0 -> cols */
} gpuk_array2d;

static inline gpuk_array2d gpuk_at2d(gpuk_buffer buffer, size_t first, size_t rows, size_t cols,
                                     size_t row_stride) {
    gpuk_array2d a;
    a.buffer = buffer;
    a.first = first;
    a.rows = rows;
    a.cols = cols;
    a.row_stride = row_stride;
    return a;
}
/* For a kernel of your own: checks view (handle, rows not overlapping, the whole strided
   region inside the buffer without overflow, alignment to elem_bytes = 1, 2, 4, 8 or 16) and
   gives the device address of element (0, 0) and the row stride in elements. */
GPUK_API gpuk_result gpuk_array2d_resolve(gpuk_ctx* ctx, gpuk_array2d view, size_t elem_bytes,
                                          gpuk_devptr* out_devptr, size_t* out_row_stride);

/* The boundary rule of gpuk_stencil3x3_*: neighbours outside the view are left out (and the
   sum scaled by the weight sum over all nine / over those present: normalized weights then
   average the neighbours present, as box smoothing does), read as the nearest edge element,
   or read as 0. */
enum { GPUK_BOUNDARY_SKIP = 1, GPUK_BOUNDARY_CLAMP = 2, GPUK_BOUNDARY_ZERO = 3 };

/* trans_a and trans_b of gpuk_gemm_* and gpuk_gemm_batched_* (uint32_t parameters), as in
   BLAS: C = alpha * op(A) * op(B) + beta * C with C m x n (m = c.rows, n = c.cols), op(A)
   m x k and op(B) k x n, k being the dimension the product sums over. The views describe A
   and B as stored: with GPUK_OP_N, a is m x k (a.rows = m, a.cols = k) and op(A) = A; with
   GPUK_OP_T, a is k x m and op(A) = A^T. Likewise b: k x n as stored, or n x k transposed.
   Any other value is refused with GPUK_ERR_INVALID_ARG naming the parameter. */
typedef enum gpuk_op {
    GPUK_OP_N = 0,               /* the default: the view as stored */
    GPUK_OP_T = 1,               /* the view's transpose */
    GPUK_OP_NUM,
    GPUK_OP_FORCE_U32 = 0x7FFFFFFF
} gpuk_op;

/* op of gpuk_select_if_*, gpuk_count_if_* and gpuk_partition_if_* (uint32_t parameters): the
   test x op value each element x passes to be kept, as C compares (a NaN is unequal to
   everything, itself included: only GPUK_CMP_NE holds for it). NONZERO keeps x != 0 (NaN
   too, as C's `if (x)`), value unused; FINITE (f32 and f64 only) keeps what is neither an
   infinity nor a NaN, value unused. Any other value is refused with GPUK_ERR_INVALID_ARG. */
typedef enum gpuk_cmp {
    GPUK_CMP_LT = 1,             /* x < value */
    GPUK_CMP_LE = 2,             /* x <= value */
    GPUK_CMP_GT = 3,             /* x > value */
    GPUK_CMP_GE = 4,             /* x >= value */
    GPUK_CMP_EQ = 5,             /* x == value */
    GPUK_CMP_NE = 6,             /* x != value */
    GPUK_CMP_NONZERO = 7,        /* x != 0 */
    GPUK_CMP_FINITE = 8,         /* x is finite (floats) */
    GPUK_CMP_NUM,
    GPUK_CMP_FORCE_U32 = 0x7FFFFFFF
} gpuk_cmp;

static inline gpuk_array gpuk_at(gpuk_buffer buffer, size_t first) {
    gpuk_array a;
    a.buffer = buffer;
    a.first = first;
    return a;
}
/* For a kernel of your own (the wrappers tools/gpuk_embed.py writes call it): checks view (the
   handle, first at most the buffer's element count, the address aligned to elem_bytes = 1, 2,
   4, 8 or 16) and gives the device address of element first and the elements from there to
   the buffer's end. what names the view in the error text ("my_kernels_saxpy: x"; NULL ->
   "view"). How far the kernel goes past first is its own business. */
GPUK_API gpuk_result gpuk_array_resolve(gpuk_ctx* ctx, gpuk_array view, size_t elem_bytes,
                                        const char* what, gpuk_devptr* out_devptr,
                                        size_t* out_elems);

#if !defined(GPUK_NO_KERNELS)
/* Number of built-in kernels whose PTX is loaded on ctx (each loads on first use). */
GPUK_API int gpuk_kernels_loaded(gpuk_ctx* ctx);
/* Loads built-in kernels now instead of on first use. names: kernel names separated by
   spaces or commas, with or without the "gpuk_" ("scan_inclusive_i32, sum_f32"); a name
   ending in '*' is a prefix ("scan_*"), and "*" loads every kernel (seconds with a cold JIT
   cache). A kernel whose variant leaves some views to the baseline (the 3x3's, for rows not
   16-byte aligned apart) loads that baseline too. Unknown names fail with
   GPUK_ERR_INVALID_ARG. */
GPUK_API gpuk_result gpuk_kernels_load(gpuk_ctx* ctx, const char* names);
/* Allocates stream's scratch now, with room for scans and selects of up to max_scan_n
   elements of any type (and for every reduction), so no later built-in call on stream
   allocates. */
GPUK_API gpuk_result gpuk_kernels_reserve(gpuk_ctx* ctx, gpuk_stream stream, size_t max_scan_n);
/* Allocates stream's sort scratch now, with room for sorts of up to max_sort_n keys of any
   type, with values (a second key and value buffer of max_sort_n each and the pass status
   words: about 13 bytes a key), so no later gpuk_sort_* call on stream allocates. Sorts of at
   most one tile (3072 keys) need none. */
GPUK_API gpuk_result gpuk_kernels_reserve_sort(gpuk_ctx* ctx, gpuk_stream stream,
                                               size_t max_sort_n);
#endif

/* GPUK_GENERATED_BEGIN(kernels) */
/* GPUK_GENERATED_END(kernels) */

// --- custom kernels from C expressions (need NVRTC; the CUSTOM family above) ---
#if defined(GPUK__FAMILY_CUSTOM)
/* Like PyCUDA's ElementwiseKernel and ReductionKernel. params is a C parameter list,
   "float a, const float* x, float* y": each entry a type, an optional '*', a name. Types:
   float double int unsigned int32_t uint32_t int64_t uint64_t "long long" "unsigned long
   long", and for pointers also char int8_t uint8_t short int16_t uint16_t (their unsigned
   spellings too). Scalars are passed by value; a pointer is a gpuk_array view that must hold
   n elements from its first (checked, like the built-ins); "raw const float* t" marks one the
   code indexes some other way (only its handle, first and alignment are checked). Names (the
   kernel's and the parameters') are C identifiers other than i, n, main, C++ keywords
   (alternative tokens such as and/or/not too), CUDA's threadIdx, blockIdx, blockDim, gridDim,
   warpSize and atomicAdd, names starting gpuk_ or _, and names holding __: each is refused
   before anything is compiled. A reduction's reduce sees its own a and b, so parameters may
   be named a and b too (the map sees the parameters). The code sees i and n
   (long long: element i of n) and the parameters; int64_t and the like are not defined in it
   (the parameter list maps them to long long ...; typedef them in the preamble if wanted).
   create parses params (an error names the bad entry before anything is compiled), writes the
   CUDA C, compiles it through gpuk_module_compile (cached: the same desc again costs one
   module load) and gets the kernel; a compile error's log refers to "<name>: body(1)" etc.,
   and the whole generated source goes to the logger at GPUK_LOG_ERROR. */
#define GPUK_CUSTOM_MAX_PARAMS 16

typedef struct gpuk_elementwise_desc {
    uint32_t _start_canary;
    const char* params;          // the parameter list (required; "" for none)
    const char* body;            // statements for element i: "y[i] = a * x[i] + y[i]" (required)
    const char* name;            // the kernel's name, a C identifier; NULL -> "gpuk_elementwise"
    const char* preamble;        // CUDA C put before the kernel (device functions...); NULL: none
    const char* const* options;  // NVRTC options, as gpuk_compile_desc's (no -arch)
    uint32_t num_options;
    char* log;                   // NULL -> none; NVRTC's log, as gpuk_compile_desc's
    size_t log_bytes;
    uint32_t _end_canary;
} gpuk_elementwise_desc;

/* Deterministic like the built-in reductions: the grid depends on n and the device only,
   each thread folds its elements in index order, blocks fold in a fixed tree and the last
   block folds the blocks' partials in index order, so the same input on the same device gives
   the same bits every run. reduce must be associative and commutative with identity as its
   neutral element (how elements are split over threads and blocks is gpuk's choice). */
typedef struct gpuk_reduction_desc {
    uint32_t _start_canary;
    const char* params;          // the parameter list (required; "" for none)
    const char* map;             // the value of element i: "x[i] * x[i]" (required)
    const char* reduce;          // two values a and b combined: "a + b", "fmaxf(a, b)" (required)
    const char* identity;        // the value of no elements: "0.0f", "-INFINITY" (required)
    const char* type;            // the values' and the result's type (required; a scalar type)
    const char* name;            // the kernel's name; NULL -> "gpuk_reduction"
    const char* preamble;        // CUDA C put before the kernel; NULL: none
    const char* const* options;  // NVRTC options (no -arch)
    uint32_t num_options;
    char* log;                   // NULL -> none; NVRTC's log, as gpuk_compile_desc's
    size_t log_bytes;
    uint32_t _end_canary;
} gpuk_reduction_desc;

/* A created custom kernel: its module and kernel (ordinary handles of the ctx) and the parsed
   parameter list, which the launch checks the arguments against. Do not change the members. */
typedef struct gpuk_elementwise {
    gpuk_module module;
    gpuk_kernel kernel;
    uint32_t num_params;
    uint8_t param[GPUK_CUSTOM_MAX_PARAMS];
} gpuk_elementwise;
typedef struct gpuk_reduction {
    gpuk_module module;
    gpuk_kernel kernel;
    uint32_t num_params;
    uint8_t param[GPUK_CUSTOM_MAX_PARAMS];
    uint8_t type;
} gpuk_reduction;

/* A launch argument: a view for a pointer parameter, a scalar of exactly the parameter's type
   (float takes GPUK_ARG_F32 only: no conversions). */
typedef enum gpuk_arg_kind {
    GPUK_ARG_DEFAULT = 0,        /* none: refused */
    GPUK_ARG_ARRAY, GPUK_ARG_F32, GPUK_ARG_F64, GPUK_ARG_I32, GPUK_ARG_U32, GPUK_ARG_I64,
    GPUK_ARG_U64,
    GPUK_ARG_NUM,
    GPUK_ARG_FORCE_U32 = 0x7FFFFFFF
} gpuk_arg_kind;
typedef struct gpuk_arg {
    gpuk_arg_kind kind;
    union { gpuk_array array; float f32; double f64; int32_t i32; uint32_t u32; int64_t i64;
            uint64_t u64; } value;
} gpuk_arg;
static inline gpuk_arg gpuk_arg_array(gpuk_array view) {
    gpuk_arg a; a.kind = GPUK_ARG_ARRAY; a.value.array = view; return a;
}
static inline gpuk_arg gpuk_arg_f32(float v) { gpuk_arg a; a.kind = GPUK_ARG_F32; a.value.f32 = v; return a; }
static inline gpuk_arg gpuk_arg_f64(double v) { gpuk_arg a; a.kind = GPUK_ARG_F64; a.value.f64 = v; return a; }
static inline gpuk_arg gpuk_arg_i32(int32_t v) { gpuk_arg a; a.kind = GPUK_ARG_I32; a.value.i32 = v; return a; }
static inline gpuk_arg gpuk_arg_u32(uint32_t v) { gpuk_arg a; a.kind = GPUK_ARG_U32; a.value.u32 = v; return a; }
static inline gpuk_arg gpuk_arg_i64(int64_t v) { gpuk_arg a; a.kind = GPUK_ARG_I64; a.value.i64 = v; return a; }
static inline gpuk_arg gpuk_arg_u64(uint64_t v) { gpuk_arg a; a.kind = GPUK_ARG_U64; a.value.u64 = v; return a; }
/* GPUK_ARGV(a, b, ...) (C only): the args array and its count, for the launches' last two
   parameters: gpuk_elementwise_launch(ctx, s, &k, n, GPUK_ARGV(gpuk_arg_f32(2), ...)). */
#ifndef __cplusplus
#define GPUK_ARGV(...) (const gpuk_arg[]){ __VA_ARGS__ }, \
    (uint32_t)(sizeof((gpuk_arg[]){ __VA_ARGS__ }) / sizeof(gpuk_arg))
#endif

GPUK_API gpuk_result gpuk_elementwise_create(gpuk_ctx* ctx, const gpuk_elementwise_desc* desc,
                                             gpuk_elementwise* out_kernel);
/* Runs the body for i = 0 .. n-1 on stream (grid chosen by gpuk, a grid-stride loop); args in
   the parameters' order. Each view must hold n elements; two views one of which is not const
   must not overlap unless they start at the same element and have the same element size (in
   place: the body must then read and write element i alone, as gpuk cannot see its indexing).
   n = 0 checks, runs nothing. Returns without waiting. */
GPUK_API gpuk_result gpuk_elementwise_launch(gpuk_ctx* ctx, gpuk_stream stream,
                                             const gpuk_elementwise* kernel, size_t n,
                                             const gpuk_arg* args, uint32_t num_args);
/* Unloads the module (its kernel goes with it) and zeroes *kernel. */
GPUK_API gpuk_result gpuk_elementwise_destroy(gpuk_ctx* ctx, gpuk_elementwise* kernel);
GPUK_API gpuk_result gpuk_reduction_create(gpuk_ctx* ctx, const gpuk_reduction_desc* desc,
                                           gpuk_reduction* out_kernel);
/* out[0] = identity reduce map(0) reduce ... map(n-1), written on stream (out: one element of
   desc.type; n = 0 writes the identity). Uses the stream's scratch like the built-in
   reductions (refused on CU_STREAM_PER_THREAD). Returns without waiting. */
GPUK_API gpuk_result gpuk_reduction_launch(gpuk_ctx* ctx, gpuk_stream stream,
                                           const gpuk_reduction* kernel, gpuk_array out, size_t n,
                                           const gpuk_arg* args, uint32_t num_args);
GPUK_API gpuk_result gpuk_reduction_destroy(gpuk_ctx* ctx, gpuk_reduction* kernel);
#endif

#ifdef __cplusplus
}
#endif
#endif /* GPUK_H_INCLUDED */
