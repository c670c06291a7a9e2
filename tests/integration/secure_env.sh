#!/usr/bin/env bash
# tests/integration/secure_env.sh - gpuk reads GPUK_DRIVER_PATH with secure_getenv: a set-user-ID
# program (real and effective user differ) ignores it and loads the default libcuda.so.1, while the
# same program run normally uses it. Needs root (to make a set-user-ID binary of another user)
# and a filesystem without nosuid; counts as skipped otherwise. Run from the repository root.
set -u
mkdir -p build
dir=$(mktemp -d "$PWD/build/secure_env.XXXX"); trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
if ! gcc -std=c99 -Wall -Werror -I. tests/integration/secure_env.c -o "$dir/plain" -ldl -lpthread; then
  echo "FAIL build"; echo "0 passed, 1 failed, 0 skipped"; exit 1; fi
if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1; then
  echo "skip secure_env: needs root and a 'nobody' user"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
cp "$dir/plain" "$dir/setuid" && chown nobody "$dir/setuid" && chmod 4755 "$dir/setuid"
normal=$(GPUK_DRIVER_PATH=/nonexistent/from-env.so "$dir/plain")
secure=$(GPUK_DRIVER_PATH=/nonexistent/from-env.so "$dir/setuid")
echo "     normal:     $normal" | cut -c1-150
echo "     set-user-ID: $secure" | cut -c1-150
case "$secure" in *"uid=0 euid=0"*)
  echo "skip secure_env: set-user-ID had no effect here (nosuid mount?)"; echo "0 passed, 0 failed, 1 skipped"; exit 0;; esac
# set-user-ID: the default library, found (init=0 on a GPU machine) or not
if [[ "$normal" == *"'/nonexistent/from-env.so'"* ]] && [[ "$secure" != *from-env* ]] &&
   { [[ "$secure" == *"'libcuda.so.1'"* ]] || [[ "$secure" == *" init=0 "* ]]; }; then
  echo "ok   secure_env: GPUK_DRIVER_PATH used normally, ignored set-user-ID"; echo "1 passed, 0 failed, 0 skipped"
else
  echo "FAIL secure_env"; echo "0 passed, 1 failed, 0 skipped"; exit 1
fi
