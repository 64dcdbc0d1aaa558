# Inventory sections (see lib.py): system, npu-smi, CANN/driver/firmware versions, set_env.sh,
# device nodes, Python/torch/torch_npu versions.
u = os.uname()
put("os", 0 if read("/etc/os-release") is not None else 1, read("/etc/os-release") or "")
put("uname", 0, "%s %s %s" % (u.sysname, u.release, u.machine))
put("hostname", 0, socket.gethostname())
cpuinfo = read("/proc/cpuinfo") or ""
m = re.search(r"^(model name|Model name|CPU part)\s*:.*$", cpuinfo, re.M)
put("cpu", 0, "%s\n%d" % (m.group(0) if m else "", os.cpu_count() or 0))
put("lscpu", 1, "")
meminfo = read("/proc/meminfo") or ""
put("meminfo", 0, "\n".join(l for l in meminfo.splitlines() if l.startswith(("MemTotal:", "MemAvailable:"))))
disk = "Filesystem 1024-blocks Used Available Capacity Mounted on"
for path in (os.path.expanduser("~"), "/tmp"):
    try:
        s = os.statvfs(path)
        total, free = s.f_blocks * s.f_frsize // 1024, s.f_bavail * s.f_frsize // 1024
        disk += "\n- %d %d %d - %s" % (total, total - free, free, path)
    except OSError:
        pass
put("disk", 0, disk)

smi = shutil.which("npu-smi") or next((p for p in ("/usr/local/sbin/npu-smi", "/usr/local/bin/npu-smi", "/usr/sbin/npu-smi") if os.access(p, os.X_OK)), None)
put("npu_smi", *(run([smi, "info"]) if smi else (127, "")))

arch = u.machine
home = os.environ.get("ASCEND_TOOLKIT_HOME", "/usr/local/Ascend/ascend-toolkit/latest")
put("toolkit", 0, catif(home + "/%s-linux/ascend_toolkit_install.info" % arch,
                        "/usr/local/Ascend/ascend-toolkit/latest/version.cfg",
                        "/usr/local/Ascend/cann/latest/%s-linux/ascend_toolkit_install.info" % arch))
put("driver", 0, catif("/usr/local/Ascend/driver/version.info"))
put("firmware", 0, catif("/usr/local/Ascend/firmware/version.info"))
put("install_info", 0, catif("/etc/ascend_install.info"))

ENV_RE = re.compile(r"^(ASCEND|HCCL|LD_LIBRARY_PATH|PYTHONPATH)")
put("env_before", 0, "\n".join("%s=%s" % kv for kv in sorted(os.environ.items()) if ENV_RE.match(kv[0])))
candidates = [os.path.normpath(os.path.join(os.environ["ASCEND_TOOLKIT_HOME"], "..", "set_env.sh"))] if os.environ.get("ASCEND_TOOLKIT_HOME") else []
candidates += ["/usr/local/Ascend/ascend-toolkit/set_env.sh", "/usr/local/Ascend/cann/set_env.sh"]
set_env = next((p for p in candidates if os.access(p, os.R_OK)), None)
if set_env:
    rc, out = run(["sh", "-c", '. "$1" >/dev/null 2>&1; env', "sh", set_env])
    after = "\n".join(l for l in out.splitlines() if ENV_RE.match(l))
    put("env_after", 0, "# sourced %s\n%s" % (set_env, after))
else:
    put("env_after", 1, "")

devs = []
for name in sorted(os.listdir("/dev")):
    if name.startswith("davinci") or name in ("devmm_svm", "hisi_hdc"):
        devs.append("/dev/" + name)
put("devices", 0 if devs else 2, "\n".join(devs))

py = {"python": platform.python_version(), "executable": os.sys.executable}
for dist, mod in (("torch", "torch"), ("torch-npu", "torch_npu")):
    version = None
    spec = importlib.util.find_spec(mod)
    if spec is not None and spec.origin:
        text = read(spec.origin.replace("__init__.py", "version.py")) or ""
        vm = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", text)
        version = vm.group(1) if vm else None
        if version is None:
            try:
                import importlib.metadata as md
                version = md.version(dist)
            except Exception:
                version = "unknown"
    py[mod] = version
put("python", 0, json.dumps(py))

