# Probe library: prepended to every Python probe (inventory.py, env.py) before it is piped to the
# host. Probes fill `sections` and end with emit(NAME), printing ONE JSON document:
# {"probe":NAME,"v":1,"sections":{name:{"rc":N,"out":"<base64>"}}} — inventory.sh's format exactly.
# Spawning processes is the dominant cost of a probe (10 ms each on small VMs), so files are read
# directly and only the tools themselves run as child processes.
import base64, json, os, platform, re, shutil, socket, subprocess, importlib.util

sections = {}


def put(name, rc, text):
    sections[name] = {"rc": rc, "out": base64.b64encode(text.encode("utf-8", "replace")).decode()}


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def catif(*paths):
    out = ""
    for p in paths:
        text = read(p)
        if text is not None:
            out += "==> %s\n%s" % (p, text)
    return out


def run(args, timeout=20, env=None, cwd=None):
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env, cwd=cwd)
        return p.returncode, p.stdout.decode("utf-8", "replace").rstrip("\n")
    except FileNotFoundError:
        return 127, ""
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s" % timeout




def python_check(code, timeout, extra_env=None, cwd=None):
    """Runs Python code in a child process with CANN's set_env.sh sourced (set_env comes from
    inventory.py), as a login shell would have it; stdout and stderr together."""
    import sys
    env = dict(os.environ)
    env["ASCEND_SLOG_PRINT_TO_STDOUT"] = "1"
    env["ASCEND_GLOBAL_LOG_LEVEL"] = "2"
    env.update(extra_env or {})
    if set_env:
        args = ["sh", "-c", '. "$1" >/dev/null 2>&1; shift; exec "$@"', "sh", set_env, sys.executable, "-c", code]
    else:
        args = [sys.executable, "-c", code]
    return run(args, timeout=timeout, env=env, cwd=cwd)


def emit(name):
    print(json.dumps({"probe": name, "v": 1, "sections": sections}))
