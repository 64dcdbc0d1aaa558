#!/bin/sh
# Inventory probe: piped to `sh -s` on the host, one round trip, nothing left behind.
# Prints ONE JSON document: {"probe":"inventory","v":1,"sections":{name:{"rc":N,"out":"<base64>"}}}.
# Raw outputs travel base64-encoded (always JSON-safe) and are parsed by the workbench, so this
# script stays POSIX sh and needs nothing but coreutils. A missing tool is an empty section with
# rc 127, never a failed inventory.

# Where python3 exists (every CANN host), the probe runs as one Python process: far fewer child
# processes. The workbench puts lib.py + the probe's .py files in place of the marker below.
if [ -z "$AMW_PROBE_SH" ] && command -v python3 >/dev/null 2>&1; then
  exec python3 - <<'AMW_PROBE_PY'
@@PROBE_PY@@
AMW_PROBE_PY
fi

b64() { base64 | tr -d '\n'; }
first=1
section() {
  name=$1; shift
  out=$( { "$@"; } 2>&1 ); rc=$?
  if [ $first = 1 ]; then first=0; else printf ','; fi
  printf '"%s":{"rc":%d,"out":"%s"}' "$name" "$rc" "$(printf '%s' "$out" | b64)"
}
with_timeout() { if command -v timeout >/dev/null 2>&1; then timeout "$@"; else shift; "$@"; fi; }
catif() { for f in "$@"; do if [ -r "$f" ]; then echo "==> $f"; cat "$f"; fi; done; }

find_npu_smi() {
  for p in "$(command -v npu-smi 2>/dev/null)" /usr/local/sbin/npu-smi /usr/local/bin/npu-smi /usr/sbin/npu-smi; do
    if [ -n "$p" ] && [ -x "$p" ]; then echo "$p"; return 0; fi
  done
  return 1
}

npu_smi() {
  smi=$(find_npu_smi) || return 127
  with_timeout 20 "$smi" info
}

toolkit_info() {
  arch=$(uname -m)
  catif "${ASCEND_TOOLKIT_HOME:-/usr/local/Ascend/ascend-toolkit/latest}/$arch-linux/ascend_toolkit_install.info" \
        /usr/local/Ascend/ascend-toolkit/latest/version.cfg \
        /usr/local/Ascend/cann/latest/"$arch"-linux/ascend_toolkit_install.info
}

set_env_path() {
  for f in "${ASCEND_TOOLKIT_HOME:+$ASCEND_TOOLKIT_HOME/../set_env.sh}" /usr/local/Ascend/ascend-toolkit/set_env.sh /usr/local/Ascend/cann/set_env.sh; do
    if [ -n "$f" ] && [ -r "$f" ]; then echo "$f"; return 0; fi
  done
  return 1
}

# Variables as a non-interactive login sees them, and after sourcing set_env.sh.
env_before() { env | grep -E '^(ASCEND|HCCL|LD_LIBRARY_PATH|PYTHONPATH)' ; return 0; }
env_after() {
  f=$(set_env_path) || return 1
  echo "# sourced $f"
  ( . "$f" >/dev/null 2>&1; env | grep -E '^(ASCEND|HCCL|LD_LIBRARY_PATH|PYTHONPATH)' ); return 0
}

python_versions() {
  py=$(command -v python3 || command -v python) || return 127
  f=$(set_env_path 2>/dev/null) && . "$f" >/dev/null 2>&1
  with_timeout 60 "$py" - <<'PY'
# Versions without importing: `import torch` costs seconds of CPU and importlib.metadata scans
# every installed distribution (most of a second on a big site-packages). Reading the package's
# own version.py costs milliseconds, which keeps a 16-host inventory close to the time of one.
import json, platform, sys, re, importlib.util
out = {"python": platform.python_version(), "executable": sys.executable}
for dist, mod in (("torch", "torch"), ("torch-npu", "torch_npu")):
    version = None
    spec = importlib.util.find_spec(mod)
    if spec is not None and spec.origin:
        try:
            text = open(spec.origin.replace("__init__.py", "version.py")).read()
            m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", text)
            version = m.group(1) if m else None
        except OSError:
            version = None
        if version is None:
            try:
                import importlib.metadata as md
                version = md.version(dist)
            except Exception:
                version = "unknown"
    out[mod] = version
print(json.dumps(out))
PY
}
printf '{"probe":"inventory","v":1,"sections":{'
section os cat /etc/os-release
section uname uname -srm
section hostname hostname
section cpu sh -c 'grep -m1 -E "^(model name|Model name|CPU part)" /proc/cpuinfo; nproc'
section lscpu sh -c 'LC_ALL=C lscpu 2>/dev/null | grep -E "^(Model name|Architecture|CPU\(s\)):"'
section meminfo sh -c 'grep -E "^(MemTotal|MemAvailable):" /proc/meminfo'
section disk sh -c 'df -Pk "$HOME" /tmp 2>/dev/null'
section npu_smi npu_smi
section toolkit toolkit_info
section driver catif /usr/local/Ascend/driver/version.info
section firmware catif /usr/local/Ascend/firmware/version.info
section install_info catif /etc/ascend_install.info
section env_before env_before
section env_after env_after
section devices sh -c 'ls -l /dev/davinci* /dev/devmm_svm /dev/hisi_hdc 2>/dev/null'
section python python_versions
printf '}}\n'
