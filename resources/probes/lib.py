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


def run(args, timeout=20, env=None):
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace").rstrip("\n")
    except FileNotFoundError:
        return 127, ""
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s" % timeout




def emit(name):
    print(json.dumps({"probe": name, "v": 1, "sections": sections}))
