"""gpuk_gen - the generator of gpuk.h's built-in kernels and of users' kernel headers, one
module a step: kernels (the kernel list read from gpuk_kernels.cuh), nvcc (PTX, a module per
entry), lowering (each module's .version/.target), ptxas_checks (compiles for real targets),
emit (C text), amalgamate (src/ joined into gpuk.h), docs (docs/kernels.md), user_kernels
(--embed and --wrap: tools/gpuk_embed.py), common (the tables and helpers they share).
tools/gen_ptx.py is its command line."""
