#!/usr/bin/python3
# TEST DOUBLE: a stub `hccn_tool` for simulated hosts (there is no NPU NIC here). It prints the
# real sample outputs quoted in ../shared/knowledge/ascend-distributed.md §2 (samples/*.txt and the
# one-line formats below, each from the driver's own printf), per device and per option, with the
# values a test chose in the host's config file: link DOWN on a device, the TLS switch, the IPs.
#   -link -g       "link status: UP|DOWN"                          (tool_ops.c:1764-1766)
#   -ip -g         "ipaddr:%s" / "netmask:%s", empty when unset    (tool_ops_ext.c:1337-1338)
#   -net_health -g "net health status: %s"                         (tool_ops.c:36-47)
#   -netdetect -g  "netdetect addr: %s"                            (tool_ops.c:1149)
#   -tls -g        "dev_id:%d, tls switch[%u](0:disable, 1:enable), ..." (tool_tls.c:170)
#   -ping -g address A  "device %d PING %s" … "%d packets transmitted, %d received, %.2f%% packet loss"
#                  (the knowledge's §2 ping sample; loss 100% for addresses in "unreachable")
#   -optical/-stat/-link_stat/-lldp -g  samples/*.txt (npu_info_before.txt, MindCluster docs;
#                  the LLDP sample is MindCluster's synthetic unit-test string, the only full one)
# Config (JSON, written by the test): {"devices": 8, "link": {"3": "DOWN"}, "tls": {"0": 1},
#   "ip": {"0": "192.161.200.10"}, "netmask": "255.255.255.0", "netHealth": {"1": "Socket fail"},
#   "netdetect": {"0": "192.161.200.1"}, "missing": ["lldp"], "busy": false,
#   "unreachable": ["192.52.3.10"]}
import json
import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
CONFIG = os.path.join(HERE, 'hccn_tool.stub.json')
SAMPLES = os.path.join(HERE, 'hccn_tool.samples')


def sample(name, dev):
    with open(os.path.join(SAMPLES, name + '.txt')) as f:
        return f.read().replace('@@DEV@@', str(dev))


def main(argv):
    try:
        with open(CONFIG) as f:
            cfg = json.load(f)
    except (OSError, ValueError):
        cfg = {}
    if cfg.get('busy'):
        print('hccn_tool is busy, please try again')
        return 1
    if '-i' not in argv or argv.index('-i') + 1 >= len(argv):
        print('Usage: hccn_tool -i <device_id> -<command> -g')
        return 1
    raw = argv[argv.index('-i') + 1]
    if not raw.isdigit() or int(raw) >= int(cfg.get('devices', 8)):
        print('Invalid device id: %s' % raw)
        return 1
    dev = int(raw)
    key = str(dev)
    ops = [a[1:] for a in argv if a.startswith('-') and a not in ('-i', '-g', '-s')]
    op = ops[0] if ops else ''
    if op in cfg.get('missing', []):
        print('Command or option is not found.')
        return 1
    if op == 'link':
        print('link status: %s' % cfg.get('link', {}).get(key, 'UP'))
    elif op == 'ip':
        addr = cfg.get('ip', {}).get(key, '192.161.%d.10' % (200 + dev))
        if addr:
            print('ipaddr:%s' % addr)
            print('netmask:%s' % cfg.get('netmask', '255.255.255.0'))
        print('')
    elif op == 'net_health':
        print('net health status: %s' % cfg.get('netHealth', {}).get(key, 'Success'))
    elif op == 'netdetect':
        print('netdetect addr: %s' % cfg.get('netdetect', {}).get(key, ''))
    elif op == 'tls':
        switch = int(cfg.get('tls', {}).get(key, 0))
        print(
            'dev_id:%d, tls switch[%d](0:disable, 1:enable), tls preconfigured[1](0:non-preset, '
            '1:preset), tls alarm time threshold[60]days' % (dev, switch)
        )
    elif op == 'ping':
        to = argv[argv.index('address') + 1] if 'address' in argv[:-1] else ''
        lost = to in cfg.get('unreachable', [])
        print('device %d PING %s' % (dev, to))
        for seq, ms in enumerate(('0.067000', '0.049000', '0.047000')):
            print('recv time out seq=%d' % seq if lost else 'recv seq=%d,time=%sms' % (seq, ms))
        print('3 packets transmitted, %d received, %.2f%% packet loss' % (0 if lost else 3, 100.0 if lost else 0.0))
    elif op in ('optical', 'stat', 'link_stat', 'lldp'):
        sys.stdout.write(sample(op, dev))
    else:
        print('Command or option is not found.')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
