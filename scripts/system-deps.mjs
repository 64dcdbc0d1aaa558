// System packages the tests need, from Debian's archive: Chromium for the e2e specs, OpenSSH
// server for simulated Ascend hosts, CPU PyTorch for op tracing on those hosts. Installed when
// missing and we are root with apt; otherwise we say exactly what to install.
import { execSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const SYSTEM_PACKAGES = [
  { pkg: 'chromium', check: () => existsSync('/usr/bin/chromium') },
  { pkg: 'openssh-server', check: () => existsSync('/usr/sbin/sshd') },
  { pkg: 'openssh-client', check: () => existsSync('/usr/bin/ssh-keygen') },
  { pkg: 'iproute2', check: () => existsSync('/usr/sbin/ip') || existsSync('/sbin/ip') },
  // the fault suite drops packets inside a network namespace (this kernel has no netem)
  { pkg: 'nftables', check: () => existsSync('/usr/sbin/nft') },
  // simulated hosts log in as an ordinary user, who cannot reach a root-only Python
  { pkg: 'python3', check: () => existsSync('/usr/bin/python3') },
  // real CPU PyTorch on the simulated hosts (the torch_npu there is a stand-in)
  {
    pkg: 'python3-torch',
    check: () => existsSync('/usr/lib/python3/dist-packages/torch/__init__.py'),
  },
  // the report tests read exported PDFs as text and validate JUnit XML against its schema
  { pkg: 'poppler-utils', check: () => existsSync('/usr/bin/pdftotext') },
  { pkg: 'libxml2-utils', check: () => existsSync('/usr/bin/xmllint') },
  // zh-CN in the e2e run and the screenshots: without a CJK font Chromium draws boxes
  {
    pkg: 'fonts-noto-cjk',
    check: () => existsSync('/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc'),
  },
  {
    pkg: 'fonts-wqy-microhei',
    check: () => existsSync('/usr/share/fonts/truetype/wqy/wqy-microhei.ttc'),
  },
];

export function ensureSystemPackages() {
  const missing = SYSTEM_PACKAGES.filter((p) => !p.check()).map((p) => p.pkg);
  if (!missing.length) return;
  const root = process.getuid?.() === 0;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).stdout.trim();
  if (!root || !apt) {
    console.error(
      `missing system packages: ${missing.join(' ')} — install them (Debian: sudo apt-get install ${missing.join(' ')}) and run again`,
    );
    process.exit(2);
  }
  console.log(`installing system packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execSync('apt-get update -qq', { stdio: 'inherit', env });
  execSync(`apt-get install -y -qq --no-install-recommends ${missing.join(' ')}`, {
    stdio: 'inherit',
    env,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) ensureSystemPackages();
