# Distributed-stage sections (after inventory.py, see lib.py): every NPU's hccn_tool getters,
# serially (hccn_tool is not safe to run concurrently on one host: "hccn_tool is busy"), the
# HCCL environment a non-interactive job sees after set_env.sh, ulimit -l, /etc/hccn.conf, the
# firewall listing and the host's NICs. Host output is untrusted: every piece is bounded here and
# parsed, never run, by the workbench.
import resource

OUT_LIMIT = 8192
GETTERS = ["link", "ip", "net_health", "netdetect", "tls", "optical", "lldp", "stat"]


def bounded(text, limit=OUT_LIMIT):
    return text if len(text) <= limit else text[:limit] + "\n[... %d bytes cut]" % (len(text) - limit)


hccn = next((p for p in ("/usr/local/Ascend/driver/tools/hccn_tool", shutil.which("hccn_tool") or "") if p and os.access(p, os.X_OK)), None)
npu_ids = sorted(int(n[7:]) for n in os.listdir("/dev") if re.match(r"^davinci\d+$", n))
# hccn_tool -i takes the logical id (0..n-1, npu-smi's numbering), not the /dev node's number
ids = list(range(len(npu_ids)))[:64]
calls = []
if hccn:
    for dev in ids:
        for cmd in GETTERS:
            rc, out = run([hccn, "-i", str(dev), "-" + cmd, "-g"], timeout=15)
            calls.append({"dev": dev, "cmd": cmd, "rc": rc, "out": bounded(out)})
put("dist_hccn", 0, json.dumps({"tool": hccn, "devices": ids, "calls": calls}))

DIST_ENV = re.compile(r"^(HCCL_|ASCEND_RT_VISIBLE_DEVICES$|ASCEND_VISIBLE_DEVICES$|RANK_TABLE_FILE$|GLOO_SOCKET_IFNAME$|TP_SOCKET_IFNAME$|MASTER_ADDR$|MASTER_PORT$)")
if set_env:
    rc, out = run(["sh", "-c", '. "$1" >/dev/null 2>&1; env', "sh", set_env])
    pairs = [l.split("=", 1) for l in out.splitlines() if "=" in l]
else:
    pairs = list(os.environ.items())
env = {k: bounded(v, 1024) for k, v in pairs if DIST_ENV.match(k)}
put("dist_env", 0, json.dumps(env))

soft, _hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
put("dist_memlock", 0, "unlimited" if soft == resource.RLIM_INFINITY else str(soft // 1024))
conf = read("/etc/hccn.conf")
put("dist_hccn_conf", 0 if conf is not None else 1, bounded(conf or "", 65536))

fw = {"tool": None, "rc": 127, "out": ""}
for tool, args in (("nft", ["nft", "list", "ruleset"]), ("iptables", ["iptables", "-S"])):
    if shutil.which(tool) or os.access("/usr/sbin/" + tool, os.X_OK):
        path = shutil.which(tool) or "/usr/sbin/" + tool
        rc, out = run([path] + args[1:], timeout=15)
        fw = {"tool": tool, "rc": rc, "out": bounded(out, 65536)}
        if rc == 0 and out.strip():
            break
put("dist_firewall", 0, json.dumps(fw))

nics = []
try:
    names = sorted(os.listdir("/sys/class/net"))[:256]
except OSError:
    names = []
rc, out = run(["ip", "-o", "addr", "show"], timeout=10)
addrs = {}
for line in out.splitlines() if rc == 0 else []:
    parts = line.split()
    if len(parts) >= 4 and parts[2] in ("inet", "inet6"):
        addrs.setdefault(parts[1], []).append(parts[3].split("/")[0])
for name in names:
    state = (read("/sys/class/net/%s/operstate" % name) or "").strip()
    flags = (read("/sys/class/net/%s/flags" % name) or "0").strip()
    try:
        up = state == "up" or (state == "unknown" and int(flags, 16) & 1 == 1)
    except ValueError:
        up = state == "up"
    nics.append({"name": name, "up": up, "addresses": addrs.get(name, [])[:16]})
put("dist_nics", 0, json.dumps(nics))
# "client port server port" of our own SSH session: the server address is one of this host's
# that something outside reached (the collective's address when HCCL_IF_IP is not set)
put("dist_ssh", 0, bounded(os.environ.get("SSH_CONNECTION", ""), 256))
