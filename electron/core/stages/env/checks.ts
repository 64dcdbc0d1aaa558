import type { CheckOutcome, CheckStatus } from '../../../../shared/api/stages';
import type { Localized } from '../../../../shared/api/text';
import type { Knowledge } from '../../knowledge/load';
import type { EnvFacts } from './facts';
import {
  baseRelease,
  driverMatches,
  driversFor,
  judgeTorchNpuCann,
  normCann,
  pythonsFor,
  stripLocal,
  versionLess,
} from './versions';

export type Verdict = Omit<CheckOutcome, 'id' | 'title' | 'waiver'>;

/** A check: data (id, titles) plus a pure evaluator over the probe's facts and the knowledge. */
export interface CheckDef {
  id: string;
  stage: 'env';
  title: Localized;
  evaluate(facts: EnvFacts, knowledge: Knowledge): Verdict;
}

const L = (en: string, zh: string): Localized => ({ en, 'zh-CN': zh });
const v = (
  status: CheckStatus,
  summary: Localized,
  evidence: unknown,
  remediation: Localized | null = null,
): Verdict => ({
  status,
  summary,
  evidence,
  remediation,
});

const SET_ENV_DEFAULT = '/usr/local/Ascend/ascend-toolkit/set_env.sh';
const combo = (r: { torchNpu: string; torch: string; cann: string }) =>
  `torch_npu ${r.torchNpu} + torch ${r.torch} + CANN ${r.cann}`;

export const versionMatrix: CheckDef = {
  id: 'env.version-matrix',
  stage: 'env',
  title: L(
    'CANN × torch × torch_npu × Python match the official matrix',
    'CANN × torch × torch_npu × Python 与官方版本矩阵一致',
  ),
  evaluate(f, k) {
    const { cann, torch, torchNpu, python } = f.inventory.versions;
    const evidence = { cann, torch, torchNpu, python };
    if (!cann)
      return v(
        'fail',
        L('CANN is not installed.', '未安装 CANN。'),
        evidence,
        L(
          'Install the CANN toolkit that matches your torch_npu (see the matrix), then source its set_env.sh.',
          '安装与 torch_npu 匹配的 CANN toolkit（见版本矩阵），然后 source 其 set_env.sh。',
        ),
      );
    if (!torchNpu) {
      const rows = k.versions.matrix.filter(
        (r) => normCann(r.cann) === normCann(cann) && r.status === 'active',
      );
      const pick =
        rows.find((r) => torch && baseRelease(r.torch) === baseRelease(torch)) ?? rows[0];
      return v(
        'fail',
        L(
          `torch_npu is not installed (CANN ${cann}${torch ? `, torch ${stripLocal(torch)}` : ''}).`,
          `未安装 torch_npu（CANN ${cann}${torch ? `，torch ${stripLocal(torch)}` : ''}）。`,
        ),
        { ...evidence, candidates: rows.map(combo) },
        pick
          ? L(
              `pip install torch==${pick.torch} torch-npu==${pick.torchNpu}  (pairs with CANN ${pick.cann})`,
              `pip install torch==${pick.torch} torch-npu==${pick.torchNpu}（与 CANN ${pick.cann} 配套）`,
            )
          : L(
              `No torch_npu release lists CANN ${cann}; upgrade CANN to one in the matrix.`,
              `没有 torch_npu 版本对应 CANN ${cann}；请把 CANN 升级到矩阵中的版本。`,
            ),
      );
    }
    const problems: Localized[] = [];
    if (torch && baseRelease(torch) !== baseRelease(torchNpu)) {
      problems.push(
        L(
          `torch ${stripLocal(torch)} does not match torch_npu ${torchNpu} (it needs torch ${baseRelease(torchNpu)}).`,
          `torch ${stripLocal(torch)} 与 torch_npu ${torchNpu} 不匹配（需要 torch ${baseRelease(torchNpu)}）。`,
        ),
      );
    }
    const judged = judgeTorchNpuCann(k, torchNpu, cann);
    const suggest = judged.suggestions.map(combo);
    if (judged.kind === 'unknown-torch-npu')
      problems.push(
        L(
          `torch_npu ${torchNpu} is not in the official matrix.`,
          `torch_npu ${torchNpu} 不在官方矩阵中。`,
        ),
      );
    if (judged.kind === 'mismatch') {
      problems.push(
        L(
          `torch_npu ${torchNpu} is not built for CANN ${cann} (it pairs with CANN ${[...new Set(judged.rows.map((r) => r.cann))].join(', ')}).`,
          `torch_npu ${torchNpu} 不适配 CANN ${cann}（它配套 CANN ${[...new Set(judged.rows.map((r) => r.cann))].join('、')}）。`,
        ),
      );
    }
    const pys = torch ? pythonsFor(k, torch) : null;
    const py = python ? python.split('.').slice(0, 2).join('.') : null;
    if (pys && py && !pys.includes(py))
      problems.push(
        L(
          `Python ${py} is not supported by torch ${baseRelease(torch!)} (supported: ${pys.join(', ')}).`,
          `torch ${baseRelease(torch!)} 不支持 Python ${py}（支持：${pys.join('、')}）。`,
        ),
      );
    // Seed 000 §2.1: settle PyTorch first, then the torch_npu wheel for it, then the matching
    // CANN; rolling back a CANN/driver install is the expensive step.
    const order = L(
      ' Fix them in this order: PyTorch, then the torch_npu wheel built for it, then the CANN it pairs with; rolling back CANN and the driver is the costly step.',
      '修复顺序：先定 PyTorch，再选对应的 torch_npu wheel，最后装与之配套的 CANN；CANN 和驱动一旦装上，回退代价很大。',
    );
    const remediation = suggest.length
      ? L(
          `Nearest valid combinations: ${suggest.join('; ')}.${order.en}`,
          `最接近的有效组合：${suggest.join('；')}。${order['zh-CN']}`,
        )
      : order;
    if (problems.length) {
      return v(
        'fail',
        {
          en: problems.map((p) => p.en).join(' '),
          'zh-CN': problems.map((p) => p['zh-CN']).join(''),
        },
        { ...evidence, suggestions: suggest },
        remediation,
      );
    }
    if (judged.kind === 'compatible') {
      return v(
        'warn',
        L(
          `torch_npu ${torchNpu} with CANN ${cann} is a documented cross-version pairing, not the one it was released with.`,
          `torch_npu ${torchNpu} 搭配 CANN ${cann} 属于文档允许的跨版本组合，并非发布时的配套版本。`,
        ),
        { ...evidence, releasedWith: judged.rows.map((r) => r.cann) },
        remediation,
      );
    }
    return v(
      'pass',
      L(
        `torch_npu ${torchNpu}, torch ${stripLocal(torch ?? '?')}, CANN ${cann}, Python ${py ?? '?'}: an official combination.`,
        `torch_npu ${torchNpu}、torch ${stripLocal(torch ?? '?')}、CANN ${cann}、Python ${py ?? '?'}：官方配套组合。`,
      ),
      evidence,
    );
  },
};

export const driverCann: CheckDef = {
  id: 'env.driver-cann',
  stage: 'env',
  title: L('Driver and firmware fit the CANN version', '驱动与固件适配当前 CANN 版本'),
  evaluate(f, k) {
    const { cann, driver, firmware } = f.inventory.versions;
    const evidence = { cann, driver, firmware };
    if (!driver)
      return v(
        'fail',
        L(
          'No NPU driver found (/usr/local/Ascend/driver/version.info).',
          '未找到 NPU 驱动（/usr/local/Ascend/driver/version.info）。',
        ),
        evidence,
        L(
          'Install the Ascend HDK (driver and firmware) for your card, then reboot.',
          '为板卡安装昇腾 HDK（驱动与固件）后重启。',
        ),
      );
    if (!cann)
      return v(
        'skip',
        L('No CANN to compare the driver with.', '没有 CANN，无法比较驱动版本。'),
        evidence,
      );
    const wanted = driversFor(k, cann);
    if (!wanted)
      return v(
        'skip',
        L(
          `The knowledge base has no driver table for CANN ${cann}.`,
          `知识库中没有 CANN ${cann} 的驱动配套表。`,
        ),
        evidence,
      );
    if (wanted.some((w) => driverMatches(driver, w))) {
      return v(
        'pass',
        L(
          `Driver ${driver} is listed for CANN ${cann}.`,
          `驱动 ${driver} 在 CANN ${cann} 的配套列表中。`,
        ),
        { ...evidence, listed: wanted },
      );
    }
    return v(
      'warn',
      L(
        `Driver ${driver} is not among those listed for CANN ${cann} (${wanted.join(', ')}).`,
        `驱动 ${driver} 不在 CANN ${cann} 的配套列表中（${wanted.join('、')}）。`,
      ),
      { ...evidence, listed: wanted },
      L(
        `Upgrade the driver and firmware (Ascend HDK) to ${wanted[0]}, or use a CANN that lists ${driver}.`,
        `把驱动和固件（昇腾 HDK）升级到 ${wanted[0]}，或改用配套 ${driver} 的 CANN。`,
      ),
    );
  },
};

const REQUIRED_VARS = ['ASCEND_TOOLKIT_HOME', 'ASCEND_OPP_PATH', 'LD_LIBRARY_PATH'];

export const setEnv: CheckDef = {
  id: 'env.set-env',
  stage: 'env',
  title: L(
    'set_env.sh is sourced for non-interactive shells',
    '非交互式 shell 已 source set_env.sh',
  ),
  evaluate(f) {
    const inv = f.inventory;
    const evidence = {
      setEnvPath: inv.setEnvPath,
      sourcedByDefault: inv.envSourcedByDefault,
      after: inv.env,
      rcLines: f.rcLines,
    };
    if (!inv.versions.cann && !inv.setEnvPath)
      return v('skip', L('No CANN installed.', '未安装 CANN。'), evidence);
    if (!inv.setEnvPath)
      return v(
        'fail',
        L(
          'CANN is installed but its set_env.sh was not found.',
          '已安装 CANN，但找不到其 set_env.sh。',
        ),
        evidence,
        L(
          'Reinstall the toolkit, or point ASCEND_TOOLKIT_HOME at it.',
          '重新安装 toolkit，或把 ASCEND_TOOLKIT_HOME 指向它。',
        ),
      );
    const missing = REQUIRED_VARS.filter((k) => !inv.env[k]);
    const ld = inv.env.LD_LIBRARY_PATH ?? '';
    const ldProblems = [
      ld.includes('lib64') ? null : 'toolkit lib64',
      ld.includes('/driver') ? null : 'driver',
    ].filter(Boolean);
    if (missing.length || ldProblems.length) {
      return v(
        'fail',
        L(
          `After sourcing ${inv.setEnvPath}: ${[...missing.map((m) => `${m} unset`), ...ldProblems.map((p) => `LD_LIBRARY_PATH lacks the ${p} path`)].join('; ')}.`,
          `source ${inv.setEnvPath} 之后：${[...missing.map((m) => `${m} 未设置`), ...ldProblems.map((p) => `LD_LIBRARY_PATH 缺少 ${p} 路径`)].join('；')}。`,
        ),
        evidence,
        L(
          'Check the toolkit installation; set_env.sh should export these.',
          '请检查 toolkit 安装；set_env.sh 应导出这些变量。',
        ),
      );
    }
    const line = `source ${inv.setEnvPath ?? SET_ENV_DEFAULT}`;
    if (!inv.envSourcedByDefault) {
      const inBashrcAfterGuard = f.rcLines.some((l) => l.text.includes('set_env.sh'));
      return v(
        'warn',
        inBashrcAfterGuard
          ? L(
              'set_env.sh is sourced in a login script, but only for interactive shells: ssh commands, schedulers and CI jobs do not get it.',
              '登录脚本中 source 了 set_env.sh，但仅对交互式 shell 生效：ssh 命令、调度器和 CI 任务拿不到。',
            )
          : L(
              'Non-interactive shells (ssh commands, schedulers, CI) do not source set_env.sh.',
              '非交互式 shell（ssh 命令、调度器、CI）没有 source set_env.sh。',
            ),
        evidence,
        L(
          `Add this line at the top of ~/.bashrc, before the "interactive only" guard:\n${line}`,
          `在 ~/.bashrc 顶部、"仅交互式" 判断之前加入：\n${line}`,
        ),
      );
    }
    return v(
      'pass',
      L(
        `Non-interactive shells already have the toolkit environment (${inv.env.ASCEND_TOOLKIT_HOME}).`,
        `非交互式 shell 已具备 toolkit 环境（${inv.env.ASCEND_TOOLKIT_HOME}）。`,
      ),
      evidence,
    );
  },
};

export const deviceNodes: CheckDef = {
  id: 'env.device-nodes',
  stage: 'env',
  title: L(
    'NPU device nodes exist and the login user can use them',
    'NPU 设备节点存在且当前用户可用',
  ),
  evaluate(f) {
    const evidence = { nodes: f.deviceAccess, groups: f.groups };
    const chips = f.deviceAccess.filter((d) => /\/davinci\d+$/.test(d.path));
    const mgmt = ['/dev/davinci_manager', '/dev/devmm_svm', '/dev/hisi_hdc'];
    if (!f.inventory.versions.driver && !chips.length)
      return v('skip', L('No NPU driver on this host.', '此主机没有 NPU 驱动。'), evidence);
    const missing = mgmt.filter((m) => !f.deviceAccess.some((d) => d.path === m));
    if (!chips.length) missing.unshift('/dev/davinciN');
    const denied = f.deviceAccess.filter((d) => !d.read || !d.write).map((d) => d.path);
    if (missing.length)
      return v(
        'fail',
        L(`Missing: ${missing.join(', ')}.`, `缺少：${missing.join('、')}。`),
        evidence,
        L(
          'Load the driver (reinstall the HDK or reboot); in a container, pass these devices with --device.',
          '加载驱动（重装 HDK 或重启）；容器中请用 --device 传入这些设备。',
        ),
      );
    if (denied.length)
      return v(
        'fail',
        L(
          `The login user cannot open ${denied.join(', ')}.`,
          `当前用户无法打开 ${denied.join('、')}。`,
        ),
        evidence,
        L(
          'Add the user to the driver group and log in again: sudo usermod -aG HwHiAiUser $USER',
          '把用户加入驱动用户组后重新登录：sudo usermod -aG HwHiAiUser $USER',
        ),
      );
    return v(
      'pass',
      L(
        `${chips.length} chip nodes and the management nodes are usable.`,
        `${chips.length} 个芯片节点和管理节点均可用。`,
      ),
      evidence,
    );
  },
};

export const npuHealth: CheckDef = {
  id: 'env.npu-health',
  stage: 'env',
  title: L('Every chip is healthy and free', '每颗芯片健康且空闲'),
  evaluate(f) {
    const npu = f.inventory.npu;
    if (!npu) return v('skip', L('npu-smi is not on this host.', '此主机没有 npu-smi。'), null);
    const evidence = {
      devices: npu.devices.map((d) => ({ npu: d.npu, chip: d.chip, health: d.health })),
      processes: npu.processes,
    };
    if (npu.error)
      return v(
        'fail',
        L(
          `npu-smi failed: ${npu.error.message}${npu.error.meaning ? ` (${npu.error.meaning})` : ''}`,
          `npu-smi 执行失败：${npu.error.message}${npu.error.meaning ? `（${npu.error.meaning}）` : ''}`,
        ),
        { ...evidence, error: npu.error },
        L(
          'Free the device (other containers or processes), run privileged in a container, or reboot after a firmware upgrade.',
          '释放设备（其他容器或进程占用）、容器内以特权模式运行，或在固件升级后重启。',
        ),
      );
    const bad = npu.devices.filter((d) => d.health === 'Alarm' || d.health === 'Critical');
    const warn = npu.devices.filter(
      (d) => d.health === 'Warning' || d.health === 'UNKNOWN' || d.health === null,
    );
    const name = (d: { npu: number; chip: number }) => `NPU ${d.npu}.${d.chip}`;
    const busy = npu.processes.map(
      (p) =>
        `${name({ npu: p.npu, chip: p.chip ?? 0 })}: pid ${p.pid} ${p.name || '?'} ${p.memMB ?? '?'} MB`,
    );
    if (bad.length) {
      return v(
        'fail',
        L(
          `${bad.map((d) => `${name(d)} ${d.health}`).join(', ')}${busy.length ? `; in use: ${busy.join('; ')}` : ''}.`,
          `${bad.map((d) => `${name(d)} ${d.health}`).join('、')}${busy.length ? `；占用：${busy.join('；')}` : ''}。`,
        ),
        evidence,
        L(
          'Read the alarm with `npu-smi info -t health -i ID`; fix or exclude the chip (ASCEND_RT_VISIBLE_DEVICES) before training.',
          '用 `npu-smi info -t health -i ID` 查看告警；训练前修复或排除该芯片（ASCEND_RT_VISIBLE_DEVICES）。',
        ),
      );
    }
    if (warn.length || busy.length) {
      return v(
        'warn',
        L(
          [
            warn.length
              ? `${warn.map((d) => `${name(d)} ${d.health ?? 'unknown'}`).join(', ')}`
              : '',
            busy.length ? `in use: ${busy.join('; ')}` : '',
          ]
            .filter(Boolean)
            .join('; ') + '.',
          [
            warn.length ? warn.map((d) => `${name(d)} ${d.health ?? '未知'}`).join('、') : '',
            busy.length ? `占用：${busy.join('；')}` : '',
          ]
            .filter(Boolean)
            .join('；') + '。',
        ),
        evidence,
        L(
          'Stop the processes that hold the chips, or pick free chips with ASCEND_RT_VISIBLE_DEVICES.',
          '停止占用芯片的进程，或用 ASCEND_RT_VISIBLE_DEVICES 选择空闲芯片。',
        ),
      );
    }
    return v(
      'pass',
      L(
        `${npu.devices.length} chips, all OK, none in use.`,
        `${npu.devices.length} 颗芯片均为 OK，无进程占用。`,
      ),
      evidence,
    );
  },
};

export const visibleDevices: CheckDef = {
  id: 'env.visible-devices',
  stage: 'env',
  title: L(
    'ASCEND_VISIBLE_DEVICES / ASCEND_RT_VISIBLE_DEVICES match the chips present',
    'ASCEND_VISIBLE_DEVICES / ASCEND_RT_VISIBLE_DEVICES 与实际芯片一致',
  ),
  evaluate(f) {
    const env = f.inventory.env;
    const vars = ['ASCEND_VISIBLE_DEVICES', 'ASCEND_RT_VISIBLE_DEVICES'].filter(
      (k) => env[k] !== undefined,
    );
    const present = f.deviceAccess
      .map((d) => /\/davinci(\d+)$/.exec(d.path)?.[1])
      .filter((x): x is string => !!x)
      .map(Number);
    const evidence = { vars: Object.fromEntries(vars.map((k) => [k, env[k]])), present };
    if (!vars.length)
      return v('pass', L('Not set: every chip is visible.', '未设置：所有芯片均可见。'), evidence);
    const problems: string[] = [];
    for (const k of vars) {
      const ids = env[k]!.split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = ids.filter((id) => !/^\d+$/.test(id));
      if (bad.length) problems.push(`${k}=${env[k]}: not a list of numbers`);
      else if (
        k === 'ASCEND_RT_VISIBLE_DEVICES' &&
        ids.some((id) => Number(id) >= Math.max(present.length, 1))
      )
        problems.push(`${k}=${env[k]}: only ${present.length} chips are visible`);
      else if (k === 'ASCEND_VISIBLE_DEVICES' && ids.some((id) => !present.includes(Number(id))))
        problems.push(
          `${k}=${env[k]}: no /dev/davinci${ids.find((id) => !present.includes(Number(id)))}`,
        );
    }
    if (problems.length)
      return v(
        'fail',
        L(problems.join('; '), problems.join('；')),
        evidence,
        L(
          'Use logic ids of chips that exist (see npu-smi info), or unset the variable.',
          '使用存在的芯片逻辑 ID（见 npu-smi info），或取消该变量。',
        ),
      );
    return v(
      'pass',
      L(
        `${vars.map((k) => `${k}=${env[k]}`).join(', ')} fits the ${present.length} chips present.`,
        `${vars.map((k) => `${k}=${env[k]}`).join('、')} 与现有 ${present.length} 颗芯片一致。`,
      ),
      evidence,
    );
  },
};

/** Known failure texts and what they mean, from the host-format notes (§4). */
const IMPORT_CAUSES: { re: RegExp; en: string; zh: string }[] = [
  {
    re: /libhccl\.so|libascendcl\.so|libascend_hal\.so/,
    en: 'CANN libraries are not on the library path: set_env.sh was not sourced, or the driver is missing.',
    zh: 'CANN 库不在库路径中：没有 source set_env.sh，或缺少驱动。',
  },
  {
    re: /No module named 'torch_npu'/,
    en: 'torch_npu is not installed in this Python.',
    zh: '当前 Python 未安装 torch_npu。',
  },
  {
    re: /No module named 'torch'/,
    en: 'torch is not installed in this Python.',
    zh: '当前 Python 未安装 torch。',
  },
  {
    re: /undefined symbol|version `GLIBCXX/,
    en: 'torch_npu was built for another torch; install the torch version it pairs with.',
    zh: 'torch_npu 是为其他 torch 版本构建的；请安装与之配套的 torch。',
  },
  {
    re: /npu is selected as device, but torch_npu is not available|import torch_npu/,
    en: '`import torch_npu` must come right after `import torch`, before any NPU device is used.',
    zh: '`import torch_npu` 应紧跟 `import torch`，在使用任何 NPU 设备之前。',
  },
  {
    re: /EE1001|507033|507899/,
    en: 'The device cannot be opened: in use by another process or container, a wrong id, or no permission.',
    zh: '无法打开设备：被其他进程或容器占用、ID 错误或没有权限。',
  },
];

function explainPython(run: NonNullable<EnvFacts['importTest']>): Localized | null {
  const text = `${String(run.result?.error ?? '')}\n${String(run.result?.traceback ?? '')}\n${run.log}`;
  const cause = IMPORT_CAUSES.find((c) => c.re.test(text));
  return cause ? L(cause.en, cause.zh) : null;
}

export const torchNpuImport: CheckDef = {
  id: 'env.torch-npu-import',
  stage: 'env',
  title: L(
    'import torch; import torch_npu works and sees the NPUs',
    'import torch; import torch_npu 正常且能看到 NPU',
  ),
  evaluate(f) {
    const run = f.importTest;
    if (!run || run.rc === 127)
      return v(
        'fail',
        L('python3 was not found on this host.', '此主机上找不到 python3。'),
        null,
        L(
          'Install Python 3 supported by your torch (see the matrix).',
          '安装 torch 支持的 Python 3（见版本矩阵）。',
        ),
      );
    if (run.rc === 124)
      return v('error', L('The import did not finish within 120 s.', '导入在 120 秒内未完成。'), {
        log: run.log,
      });
    const r = run.result;
    const evidence = { result: r, log: run.log.slice(-3000) };
    if (!r)
      return v(
        'error',
        L(
          `The import check printed no result (exit ${run.rc}).`,
          `导入检查没有输出结果（退出码 ${run.rc}）。`,
        ),
        evidence,
      );
    if (r.error) {
      const cause = explainPython(run);
      return v(
        'fail',
        L(
          `${String(r.error)}${cause ? ` — ${cause.en}` : ''}`,
          `${String(r.error)}${cause ? ` —— ${cause['zh-CN']}` : ''}`,
        ),
        evidence,
        cause,
      );
    }
    if (!r.available || !r.count)
      return v(
        'fail',
        L(
          'torch_npu imports, but torch.npu.is_available() is False.',
          'torch_npu 可以导入，但 torch.npu.is_available() 为 False。',
        ),
        evidence,
        L(
          'Check the device nodes and driver (env.device-nodes), and ASCEND_RT_VISIBLE_DEVICES.',
          '检查设备节点与驱动（env.device-nodes）以及 ASCEND_RT_VISIBLE_DEVICES。',
        ),
      );
    return v(
      'pass',
      L(
        `torch ${String(r.torch)}, torch_npu ${String(r.torch_npu)}: ${String(r.count)} × ${String(r.name)}.`,
        `torch ${String(r.torch)}，torch_npu ${String(r.torch_npu)}：${String(r.count)} × ${String(r.name)}。`,
      ),
      evidence,
    );
  },
};

const FALLBACK_RE =
  /The operator '([^']+)' is not currently supported on the NPU backend and will fall back to run on the CPU/g;

export const npuOpRuns: CheckDef = {
  id: 'env.npu-op-runs',
  stage: 'env',
  title: L('A small computation really runs on the NPU', '一段小计算确实在 NPU 上运行'),
  evaluate(f) {
    const run = f.opTest;
    if (!run || run.rc === 127)
      return v('skip', L('python3 was not found on this host.', '此主机上找不到 python3。'), null);
    const r = run.result;
    const evidence = { result: r, log: run.log.slice(-3000) };
    if (run.rc === 124)
      return v(
        'error',
        L('The computation did not finish within 180 s.', '计算在 180 秒内未完成。'),
        evidence,
      );
    if (!r || r.error) {
      if (f.importTest?.result && !f.importTest.result.ok)
        return v(
          'skip',
          L(
            'Skipped: torch_npu does not import (see env.torch-npu-import).',
            '已跳过：torch_npu 无法导入（见 env.torch-npu-import）。',
          ),
          evidence,
        );
      const cause = run && explainPython(run);
      return v(
        'fail',
        L(
          `The computation failed: ${String(r?.error ?? `exit ${run.rc}`)}`,
          `计算失败：${String(r?.error ?? `退出码 ${run.rc}`)}`,
        ),
        evidence,
        cause,
      );
    }
    const fallbacks = [...new Set([...run.log.matchAll(FALLBACK_RE)].map((m) => m[1]!))];
    if (!r.ok)
      return v(
        'fail',
        L(
          `Wrong result: softmax rows summed to ${String(r.value)} instead of 128.`,
          `结果错误：softmax 各行之和为 ${String(r.value)}，应为 128。`,
        ),
        evidence,
      );
    if (fallbacks.length) {
      return v(
        'warn',
        L(
          `It ran, but these ops fell back to the CPU: ${fallbacks.join(', ')}.`,
          `可以运行，但以下算子回退到了 CPU：${fallbacks.join('、')}。`,
        ),
        { ...evidence, fallbacks },
        L(
          'CPU fallback is slow: a newer torch_npu may have NPU kernels for them (see the ops stage).',
          'CPU 回退很慢：更新的 torch_npu 可能提供了这些算子的 NPU 实现（见算子阶段）。',
        ),
      );
    }
    return v(
      'pass',
      L(
        `matmul + softmax + nonzero ran on ${String(r.device)} in ${String(r.seconds)} s, result correct.`,
        `matmul + softmax + nonzero 在 ${String(r.device)} 上 ${String(r.seconds)} 秒完成，结果正确。`,
      ),
      evidence,
    );
  },
};

export const pythonPackages: CheckDef = {
  id: 'env.python-packages',
  stage: 'env',
  title: L('No CUDA-only Python packages in the way', '没有只支持 CUDA 的 Python 包'),
  evaluate(f, k) {
    const found: {
      dist: string;
      version: string;
      status: 'warn' | 'fail';
      en: string;
      zh: string;
      fixEn: string;
      fixZh: string;
    }[] = [];
    for (const p of k.packages.packages) {
      const version = f.dists[p.dist];
      if (version === undefined) continue;
      if (p.unlessDist && f.dists[p.unlessDist] !== undefined) continue;
      found.push({ ...p, version });
    }
    const numpy = f.dists.numpy;
    const cann = f.inventory.versions.cann;
    if (
      numpy &&
      Number.parseInt(numpy, 10) > k.packages.numpy.maxMajor &&
      cann &&
      versionLess(cann.replace(/\.RC\d+$/i, ''), k.packages.numpy.cannBefore)
    ) {
      found.push({
        dist: 'numpy',
        version: numpy,
        status: 'warn',
        en: k.packages.numpy.en.replace('{{version}}', numpy),
        zh: k.packages.numpy.zh.replace('{{version}}', numpy),
        fixEn: 'pip install "numpy<2"',
        fixZh: 'pip install "numpy<2"',
      });
    }
    const evidence = {
      checked: Object.keys(f.dists).length,
      found: found.map((x) => `${x.dist} ${x.version}`),
    };
    if (!found.length)
      return v(
        'pass',
        L(
          `None of the known troublemakers among ${Object.keys(f.dists).length} installed packages.`,
          `已安装的 ${Object.keys(f.dists).length} 个包中没有已知问题包。`,
        ),
        evidence,
      );
    const status = found.some((x) => x.status === 'fail') ? 'fail' : 'warn';
    return v(
      status,
      {
        en: found.map((x) => `${x.dist} ${x.version}: ${x.en}`).join(' '),
        'zh-CN': found.map((x) => `${x.dist} ${x.version}：${x.zh}`).join(''),
      },
      evidence,
      {
        en: found.map((x) => `${x.dist}: ${x.fixEn}`).join('\n'),
        'zh-CN': found.map((x) => `${x.dist}：${x.fixZh}`).join('\n'),
      },
    );
  },
};

const GB = 1024;

export const limits: CheckDef = {
  id: 'env.limits',
  stage: 'env',
  title: L(
    'Open files, locked memory, disk and memory are enough for training',
    '打开文件数、锁定内存、磁盘和内存足以训练',
  ),
  evaluate(f) {
    const inv = f.inventory;
    const issues: Localized[] = [];
    const nofile = f.limits?.nofile[0];
    if (nofile !== undefined && nofile !== -1 && nofile < 65536)
      issues.push(L(`open files limit ${nofile} < 65536`, `打开文件数上限 ${nofile} < 65536`));
    const memlock = f.limits?.memlock[0];
    if (memlock !== undefined && memlock !== -1 && memlock < 64 * 1024 * 1024)
      issues.push(
        L(
          `locked-memory limit ${Math.round(memlock / 1024)} KB (HCCL wants unlimited)`,
          `锁定内存上限 ${Math.round(memlock / 1024)} KB（HCCL 需要 unlimited）`,
        ),
      );
    for (const d of inv.disks)
      if (d.freeMB < 20 * GB)
        issues.push(
          L(
            `only ${(d.freeMB / GB).toFixed(1)} GB free in ${d.mount}`,
            `${d.mount} 仅剩 ${(d.freeMB / GB).toFixed(1)} GB`,
          ),
        );
    if (inv.memoryMB !== null && inv.memoryMB < 64 * GB)
      issues.push(
        L(
          `${(inv.memoryMB / GB).toFixed(0)} GB of memory (data loaders and checkpoints like more)`,
          `内存 ${(inv.memoryMB / GB).toFixed(0)} GB（数据加载和 checkpoint 需要更多）`,
        ),
      );
    const evidence = { limits: f.limits, disks: inv.disks, memoryMB: inv.memoryMB };
    if (!issues.length)
      return v(
        'pass',
        L('Limits, disk and memory look fine.', '各项上限、磁盘与内存均充足。'),
        evidence,
      );
    return v(
      'warn',
      {
        en: `${issues.map((i) => i.en).join('; ')}.`,
        'zh-CN': `${issues.map((i) => i['zh-CN']).join('；')}。`,
      },
      evidence,
      L(
        'Raise limits in /etc/security/limits.conf (nofile 65536+, memlock unlimited: multi-card HCCL fails to register memory with a small ulimit -l) and free disk space.',
        '在 /etc/security/limits.conf 中调高上限（nofile 65536 以上、memlock unlimited：ulimit -l 太小时多卡 HCCL 会报内存注册失败），并清理磁盘空间。',
      ),
    );
  },
};

/** The environment stage, in the order a porter fixes things. Ids are stable. */
export const ENV_CHECKS: CheckDef[] = [
  versionMatrix,
  driverCann,
  setEnv,
  deviceNodes,
  npuHealth,
  visibleDevices,
  torchNpuImport,
  npuOpRuns,
  pythonPackages,
  limits,
];
