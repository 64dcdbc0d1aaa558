// Generates large profiler outputs for the profiling benches: a kernel_details.csv in the
// Level1 + PipeUtilization layout (46 columns, quoted shapes, trailing TAB in Start Time, N/A on
// communication rows) and a trace_view.json event array (metadata, cpu_op, Ascend Hardware
// kernels, CANN API events incl. aclopCompileAndExecute, counters), both written in chunks.
import { createWriteStream } from 'node:fs';

const HEADER =
  'Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)';

const KERNELS = [
  ['aclnnMatmul_MatMulV3Common_MatMulV3', 'MatMulV3', 'AI_CORE', '"""4096,1024;4096,1024"""'],
  ['aclnnInplaceZero_ZerosLikeAiCore_ZerosLike', 'ZerosLike', 'AI_VECTOR_CORE', '"""375815680"""'],
  [
    'aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore',
    'FlashAttentionScore',
    'MIX_AIC',
    '"""4096,1,2048;4096,1,1024;4096,1,1024;;;;2048,2048"""',
  ],
  ['RmsNormGrad', 'RmsNormGrad', 'MIX_AIV', '"""4096,1,1024;4096,1,1024;4096,1,1;1024"""'],
  ['trans_Cast_5', 'Cast', 'AI_CPU', '""""""'],
] as const;

async function writeChunks(
  file: string,
  targetBytes: number,
  head: string,
  /** The i-th piece; null ends the file before targetBytes. */
  chunk: (i: number) => string | null,
  tail: string,
): Promise<{ bytes: number; rows: number }> {
  const out = createWriteStream(file);
  const write = (s: string) =>
    out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r()));
  let bytes = Buffer.byteLength(head);
  await write(head);
  let rows = 0;
  let buf = '';
  while (bytes < targetBytes) {
    const s = chunk(rows);
    if (s === null) break;
    rows++;
    buf += s;
    bytes += s.length; // ASCII only
    if (buf.length > 1 << 20) {
      await write(buf);
      buf = '';
    }
  }
  await write(buf + tail);
  await new Promise<void>((r, j) => out.end((e?: Error | null) => (e ? j(e) : r())));
  return { bytes: bytes + tail.length, rows };
}

export function writeKernelDetails(file: string, targetBytes: number) {
  const pmu = Array.from({ length: 25 }, (_, i) => (i % 3 ? '0.5' : '123.4')).join(',');
  return writeChunks(
    file,
    targetBytes,
    `${HEADER}\n`,
    (i) => {
      const step = 1 + Math.floor(i / 100_000);
      if (i % 50 === 7)
        return `${step},4294967295,N/A,N/A,hcom_allReduce__586_${i % 1000}_1,hcom_allReduce_,N/A,HCCL,${1764246877079027 + i}.200\t,${(400 + (i % 97)).toFixed(3)},12.5,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,${Array(25).fill('N/A').join(',')}\n`;
      const [name, type, core, shapes] = KERNELS[i % KERNELS.length]!;
      return `${step},4294967295,${34000 + (i % 60000)},2,${name},${type},${i % 11 ? 'dynamic' : 'static'},${core},${1764246877079027 + i}.200\t,${(10 + (i % 173) * 1.25).toFixed(3)},1.43,20,0,NO,${shapes},DT_BF16;DT_BF16,ND;ND,"""4096,4096""",DT_BF16,ND,N/A,${pmu}\n`;
    },
    '',
  );
}

export function writeTraceView(file: string, targetBytes: number) {
  const meta = [
    '{"name":"process_name","pid":100,"tid":0,"ph":"M","args":{"name":"Python"}}',
    '{"name":"process_name","pid":200,"tid":0,"ph":"M","args":{"name":"CANN"}}',
    '{"name":"process_name","pid":300,"tid":0,"ph":"M","args":{"name":"Ascend Hardware"}}',
  ].join(',');
  return writeChunks(
    file,
    targetBytes,
    `[${meta}`,
    (i) => {
      const ts = `"${1736408883704643 + i * 3}.212"`;
      switch (i % 4) {
        case 0:
          return `,{"ph":"X","name":"aten::matmul","pid":100,"tid":7,"ts":${ts},"dur":28.19,"cat":"cpu_op","args":{"Sequence number":${i},"Fwd thread id":0,"Input Dims":"4096,1024;\\r\\n1024,1024","Input type":"c10::BFloat16;\\r\\nc10::BFloat16"}}`;
        case 1:
          return `,{"ph":"X","name":"AscendCL@${(i >> 2) % 10 ? 'aclnnMatmul' : 'aclopCompileAndExecute'}","pid":200,"tid":7,"ts":${ts},"dur":5.1,"args":{"Thread Id":7,"Mode":"ACL_OP","level":"acl","id":"0","item_id":"0","connection_id":${i}}}`;
        case 2:
          return `,{"name":"MatMulV3","pid":300,"tid":2,"ts":${ts},"dur":313.88628125,"args":{"Model Id":4294967295,"Task Type":"AI_CORE","Physic Stream Id":2,"Task Id":${i % 65536},"Batch Id":0,"Subtask Id":4294967295,"connection_id":${i}},"ph":"X"}`;
        default:
          return `,{"name":"AI Core Freq","pid":400,"tid":0,"ts":${ts},"ph":"C","args":{"MHz":1800}}`;
      }
    },
    ']',
  );
}

/**
 * A trace_view.json whose ProfilerStep#1 holds `events` complete events, as torch_npu writes them
 * (string ts, process_name metadata): the Python thread's nested aten ops, CANN's aclnn calls and
 * kernels back to back on 8 Ascend Hardware streams; then a small ProfilerStep#2.
 */
export function writeStepTrace(file: string, events: number) {
  const base = 1736408883704643;
  const ts = (us: number) => `"${(base + us).toFixed(3)}"`;
  const streams = 8;
  const kernels = Math.floor(events * 0.79);
  const perStream = Math.ceil(kernels / streams);
  const stepUs = perStream * 10 + 100; // kernels of 4–9 µs, 10 µs apart on each stream
  const layers = Math.floor((events * 0.006) / 3);
  const cann = events - kernels - layers * 3 - 1;
  const head = [
    '{"name":"process_name","pid":100,"tid":0,"ph":"M","args":{"name":"Python"}}',
    '{"name":"thread_name","pid":100,"tid":7,"ph":"M","args":{"name":"MainThread"}}',
    '{"name":"process_name","pid":200,"tid":0,"ph":"M","args":{"name":"CANN"}}',
    '{"name":"process_name","pid":300,"tid":0,"ph":"M","args":{"name":"Ascend Hardware"}}',
    `{"ph":"X","name":"ProfilerStep#1","pid":100,"tid":7,"ts":${ts(0)},"dur":${stepUs},"cat":"cpu_op","args":{}}`,
  ].join(',');
  const ops = ['MatMulV3', 'FlashAttentionScore', 'RmsNorm', 'Add', 'Cast', 'ZerosLike'];
  return writeChunks(
    file,
    Infinity,
    `[${head}`,
    (i) => {
      if (i < layers * 3) {
        const layer = Math.floor(i / 3);
        const at = (layer * stepUs) / layers;
        const w = stepUs / layers;
        const [name, start, dur] =
          i % 3 === 0
            ? ['aten::linear', at + 1, w - 2]
            : i % 3 === 1
              ? ['aten::matmul', at + 2, w / 2 - 2]
              : ['aten::add', at + w / 2 + 1, w / 2 - 4];
        return `,{"ph":"X","name":"${name}","pid":100,"tid":7,"ts":${ts(start)},"dur":${dur.toFixed(3)},"cat":"cpu_op","args":{"Sequence number":${i}}}`;
      }
      const j = i - layers * 3;
      if (j < cann)
        return `,{"ph":"X","name":"AscendCL@aclnn${ops[j % ops.length]}","pid":200,"tid":7,"ts":${ts(3 + (j * (stepUs - 10)) / cann)},"dur":2.5,"args":{"connection_id":${j}}}`;
      const k = j - cann;
      if (k < kernels) {
        const stream = k % streams;
        const n = Math.floor(k / streams);
        return `,{"ph":"X","name":"${ops[(n + stream) % ops.length]}","pid":300,"tid":${stream},"ts":${ts(5 + n * 10 + stream * 0.3)},"dur":${(4 + ((n * 7 + stream) % 6)).toFixed(3)},"args":{"Task Type":"AI_CORE","Stream Id":${stream}}}`;
      }
      const m = k - kernels;
      if (m === 0)
        return `,{"ph":"X","name":"ProfilerStep#2","pid":100,"tid":7,"ts":${ts(stepUs + 10)},"dur":500,"cat":"cpu_op","args":{}}`;
      if (m <= 100)
        return `,{"ph":"X","name":"MatMulV3","pid":300,"tid":0,"ts":${ts(stepUs + 10 + m * 4)},"dur":3,"args":{}}`;
      return null;
    },
    ']',
  );
}
