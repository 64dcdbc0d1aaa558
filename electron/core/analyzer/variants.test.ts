// The constructs of issue 19 spelled the other ways real code spells them: aliases (`from triton
// import language as tl`, `import pkg._ext as m`, `from torch.cuda.amp import GradScaler as GS`),
// keyword forms (`GradScaler(device="cuda")`, `spawn(fn=…)`), defaults (`torch.GradScaler()` is
// CUDA's), methods (`(scores + mask).softmax()`, `masked_fill_`), nested functions, multi-line
// calls. Each fixture under tests/fixtures/code/variants/<family> is written for these tests.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../tests/support/temp';
import { analyzeSource } from './analyze-file';
import { migratedFiles } from './fix';
import { pythonParser } from './python-parser';
import { loadRules } from './rules';
import { scanProject } from './scan';

const VARIANTS = join(__dirname, '../../../tests/fixtures/code/variants');
type Scan = Awaited<ReturnType<typeof scanProject>>;
const where = (scan: Scan) => scan.findings.map((f) => `${f.file}:${f.line}:${f.ruleId}`);
const find = (scan: Scan, at: string) =>
  scan.findings.find((f) => `${f.file}:${f.line}:${f.ruleId}` === at)!;

// Exactly these, per family. What is NOT in a list is as deliberate as what is: the scaler's
// scale/step/update calls (porters keep them: 1 of 18 such lines changed in the development
// corpus), pin_memory=args.pin_mem (0 of 6 changed), a finite masked_fill, torch.finfo(dtype).min,
// a sum inside a call before .softmax(), an extension's CPU kernel.
const EXPECTED: Record<string, string[]> = {
  amp: [
    // torch.cuda and torch.cuda.amp bound to aliases: the imports are renamed, the uses told
    'amp_module.py:2:add.import-torch-npu',
    'amp_module.py:3:cuda.api',
    'amp_module.py:4:cuda.api',
    'amp_module.py:8:amp.cuda-amp',
    'amp_module.py:13:cuda.api',
    'amp_module.py:18:amp.cuda-amp',
    'apex_required.py:1:add.import-torch-npu',
    'apex_required.py:5:amp.apex',
    'apex_required.py:6:amp.apex',
    'apex_required.py:13:lib.apex-call',
    'apex_required.py:14:lib.apex-call',
    'apex_train.py:2:amp.apex',
    'apex_train.py:2:add.import-torch-npu',
    'apex_train.py:6:lib.apex-call',
    'apex_train.py:9:lib.apex-call',
    // an apex kernel switched on in a config (false, and a key merely starting so, quiet)
    'corrdiff.yaml:2:script.cuda-env',
    // the device type cut from a device string (LivePortrait's `device_type=self.device[:4]`:
    // "npu:0"[:4] is "npu:"); the type taken from torch.device quiet
    'device_type_slice.py:3:add.import-torch-npu',
    'device_type_slice.py:7:device.cuda-string',
    'device_type_slice.py:13:device.type-slice',
    'fp32_train.py:18:amp.fp32-training',
    // the autocast state and dtype asked of CUDA (no device); a device named, and the CPU's own
    // function, quiet
    'grouped.py:1:add.import-torch-npu',
    'grouped.py:6:amp.autocast-state-cuda',
    'grouped.py:7:amp.autocast-gpu-dtype',
    'norms.py:3:add.import-torch-npu',
    'norms.py:21:amp.overflow-check',
    'pkg/net.py:3:add.import-torch-npu',
    'pkg/net.py:12:amp.autocast-cuda',
    'pkg/net.py:12:device.cuda-string',
    // above the imports the fix rewrites to torch.npu (before torch_npu 2.5.1 torch does not load it)
    'train.py:1:add.import-torch-npu',
    'train.py:2:amp.cuda-amp',
    'train.py:3:amp.cuda-amp',
    'train.py:10:amp.cuda-amp',
    'train.py:11:amp.cuda-amp',
    'train.py:14:amp.cuda-amp',
    'train.py:23:amp.grad-scaler-cuda',
    'train.py:23:device.cuda-string',
    'train.py:25:amp.autocast-cuda',
    'train.py:25:device.cuda-string',
    'train.py:33:amp.grad-scaler-default',
    'train.py:35:amp.autocast-cuda',
    'train.py:35:device.cuda-string',
  ],
  attention: [
    // aten's CUDA attention kernels called for the log-sum-exp (a save list naming one quiet)
    'aten_kernels.py:13:attn.aten-cuda-kernel',
    'aten_kernels.py:20:attn.aten-cuda-kernel',
    'aten_kernels.py:25:attn.aten-cuda-kernel',
    'aten_kernels.py:33:attn.sdpa',
    'attn.py:13:attn.inf-mask',
    'attn.py:19:attn.masked-fill-inf',
    'attn.py:20:attn.masked-softmax-method',
    'attn.py:26:attn.masked-softmax',
    'attn.py:44:attn.masked-fill-inf',
    'attn.py:55:attn.masked-softmax',
    'attn.py:61:attn.masked-softmax',
    'attn.py:77:attn.masked-softmax-method',
    'attn.py:92:attn.masked-softmax',
    // an attention kernel chosen through an environment variable, set or as a read's default
    // (TRELLIS's ATTN_BACKEND, vLLM's VLLM_ATTENTION_BACKEND); sdpa, a read, a message quiet
    'backend_env.py:4:attn.backend-env',
    'backend_env.py:5:attn.backend-env',
    'backend_env.py:6:attn.backend-env',
    // a settings template users copy (`config.env.example`): SageAttention chosen by value, the prose quiet
    'config.env.example:3:script.cuda-env',
    // optional imports the code then demands (`if flash_attn_func is None: raise`, `assert
    // gmm_ops is not None`): required, their uses told (not the handler's `= None`); xformers
    // with a real fallback, and Horovod demanded under an opt-in `if args.horovod:`, quiet
    'demanded.py:4:add.import-torch-npu',
    'demanded.py:8:lib.flash-attn',
    'demanded.py:9:lib.flash-attn',
    'demanded.py:15:lib.cuda-ops',
    'demanded.py:35:lib.flash-attn-call',
    'demanded.py:41:lib.flash-attn-call',
    'demanded.py:42:lib.flash-attn-call',
    'demanded.py:48:lib.cuda-ops-call',
    'demanded.py:52:lib.cuda-ops-call',
    'demanded.py:58:attn.sdpa',
    'diffusers_cli.py:6:attn.xformers-flag',
    'diffusers_train.py:6:attn.diffusers-xformers',
    // an availability flag asserted where the other library's branch falls through (Wan's `else:
    // assert FLASH_ATTN_2_AVAILABLE`); FA3's branch, a flag asserted under an opt-in switch and
    // one only tested, quiet
    'flags.py:1:add.import-torch-npu',
    'flags.py:13:lib.flash-attn',
    'flags.py:40:lib.flash-attn-call',
    'flags.py:47:attn.sdpa',
    // a function whose handler stops it (`except: raise`) needs flash-attn; the same under an
    // opt-in `if use_xformers:` is a feature's, optional still (no finding on lines 22-25)
    'flash_fn.py:2:add.import-torch-npu',
    'flash_fn.py:6:attn.xformers-switch',
    'flash_fn.py:8:lib.flash-attn',
    'flash_fn.py:14:lib.flash-attn-call',
    'flash_fn.py:26:attn.sdpa',
    // an ImportError handler that imports flash-attn again (a version shim) is no fallback
    'flash_shim.py:1:add.import-torch-npu',
    'flash_shim.py:4:lib.flash-attn',
    'flash_shim.py:7:lib.flash-attn',
    'flash_shim.py:13:lib.flash-attn-call',
    // transformers' older use_flash_attention_2=True (False quiet), SDPA's enable_flash_sdp switch
    'hf_legacy.py:8:attn.use-flash-attention-2',
    'hf_legacy.py:10:attn.sdp-kernel',
    // kohya's TOML config turning xformers on (switched off, SDPA chosen: quiet)
    'kohya_lora.toml:5:script.cuda-env',
    // latent-diffusion's `attn_type: "vanilla-xformers"` (commented, vanilla quiet)
    'ldm.yaml:5:script.cuda-env',
    // a name the handler leaves None, called on the path a mode's default takes (HunyuanVideo's
    // `mode="flash"` … `elif mode == "flash":`); another default, and a call where the name is
    // tested, quiet
    'mode_default.py:1:add.import-torch-npu',
    'mode_default.py:5:lib.flash-attn',
    'mode_default.py:23:attn.sdpa',
    'mode_default.py:25:lib.flash-attn-call',
    'mode_default.py:32:attn.sdpa',
    'mode_default.py:38:attn.sdpa',
    // any setting whose value is flash_attn (`implementation: flash_attn`), not a name that merely starts so
    'pfn.yaml:4:script.cuda-env',
    // flash-attn demanded by an option on by default (Point Transformer V3's enable_flash=True);
    // off by default it stays optional (ptv3_optional.py quiet)
    'ptv3_flash.py:1:add.import-torch-npu',
    'ptv3_flash.py:4:lib.flash-attn',
    'ptv3_flash.py:18:lib.flash-attn-call',
    // SageAttention and FlashAttention-3's `flash_attn_interface`: imports and calls (SDPA kept)
    'sage_fa3.py:5:lib.flash-attn',
    'sage_fa3.py:6:lib.cuda-ops',
    'sage_fa3.py:6:add.import-torch-npu',
    'sage_fa3.py:11:lib.cuda-ops-call',
    'sage_fa3.py:13:lib.flash-attn-call',
    'sage_fa3.py:16:attn.sdpa',
    'sdp_select.py:2:add.import-torch-npu',
    'sdp_select.py:4:cuda.backends',
    'sdp_select.py:8:attn.sdp-kernel',
    'sdp_select.py:14:attn.sdpa',
    // a flash-attn call's replacement is torch_npu's: the file imports torch_npu
    'varlen.py:2:lib.flash-attn',
    'varlen.py:2:add.import-torch-npu',
    'varlen.py:7:lib.flash-attn-call',
    // ring-flash-attn, built on flash-attn's kernels
    'varlen.py:12:lib.flash-attn',
    'varlen.py:14:lib.flash-attn-call',
  ],
  // under a decorator (`@unique`)
  'backend-flag': ['kernels.py:9:project.backend-switch', 'kernels.py:21:project.backend-choice'],
  horovod: [
    // Horovod built on NCCL (its other build switches quiet)
    'Dockerfile.hvd:2:script.cuda-env',
    // the imports, and every use through the alias or an imported name
    'train_hvd.py:3:dist.horovod',
    'train_hvd.py:4:dist.horovod',
    'train_hvd.py:4:add.import-torch-npu',
    'train_hvd.py:14:dist.horovod-call',
    'train_hvd.py:18:dist.horovod-call',
    'train_hvd.py:19:dist.horovod-call',
    'train_hvd.py:19:dist.horovod-call',
    'train_hvd.py:21:optim.npu-fused',
    'train_hvd.py:22:dist.horovod-call',
    'train_hvd.py:23:dist.horovod-call',
  ],
  'ext-project': [
    // the project's setup.py names its CUDA extensions (CUDAExtension("droid_backends", …),
    // name="lie.lie_backends"): their imports and calls are found by those names
    'setup.py:2:ext.cuda-extension',
    'setup.py:7:ext.setup-ext-modules',
    'setup.py:8:ext.cuda-extension',
    'setup.py:8:ext.cuda-sources',
    'setup.py:9:ext.cuda-extension',
    'setup.py:10:ext.cuda-sources',
    // CUDAExtension under the name the build chose it by: its module found by its name too
    'setup.py:19:ext.cuda-extension',
    // the extension's name given through a variable: `from . import roi_impl` and its call
    'slam/ops/roi.py:2:ext.extension-import',
    'slam/ops/roi.py:7:ext.extension-call',
    'slam/video.py:4:ext.extension-import',
    'slam/video.py:5:ext.extension-import',
    'slam/video.py:13:ext.extension-call',
    'slam/video.py:16:ext.extension-call',
    'slam/video.py:19:ext.extension-call',
    // two ops taken as values on one line
    'slam/video.py:29:ext.extension-call',
    'slam/video.py:29:ext.extension-call',
    'slam/video.py:33:ext.extension-import',
    'slam/video.py:35:ext.extension-call',
  ],
  'ext-calls': [
    // BigVGAN's kernels loaded through the project's own loader module (data loaded into look-alike
    // names, and a folder named cuda, quiet)
    'bigvgan_act.py:10:ext.extension-import',
    'bigvgan_act.py:15:ext.cuda-sources',
    'bigvgan_act.py:20:ext.autograd-function',
    'bigvgan_act.py:21:ext.extension-call',
    'bigvgan_act.py:25:ext.autograd-apply',
    // extension modules imported by name (MONAI's optional_import, importlib): each op called
    // through them (numpy by name, and an example in a comment, quiet)
    // CuPy kernels compiled from CUDA C, launched with grid= and block= or args= (grid_sample's
    // grid=, and a function merely taking both names, quiet)
    'cupy_kernels.py:2:lib.cupy',
    'cupy_kernels.py:14:lib.nvidia-only-call',
    'cupy_kernels.py:16:lib.nvidia-only-call',
    'cupy_kernels.py:22:ext.raw-kernel-launch',
    'cupy_kernels.py:25:lib.nvidia-only-call',
    'cupy_kernels.py:32:ext.raw-kernel-launch',
    // cupyx's SciPy counterparts, imported in a function
    'cupy_kernels.py:47:lib.cupy',
    'cupy_kernels.py:49:lib.nvidia-only-call',
    // imported by name: the import told where the name is bound
    'filtering.py:7:ext.extension-import',
    'filtering.py:8:ext.extension-import',
    'filtering.py:16:ext.autograd-function',
    'filtering.py:18:ext.extension-call',
    'filtering.py:22:ext.extension-call',
    'filtering.py:27:ext.extension-call',
    'focal.py:3:ext.extension-import',
    'focal.py:3:add.import-torch-npu',
    'focal.py:8:device.is-cuda',
    'focal.py:9:ext.extension-call',
    'guarded.py:2:add.import-torch-npu',
    'guarded.py:12:device.is-cuda',
    'guarded.py:13:ext.extension-call',
    'guarded.py:14:lib.torchvision-ops',
    // py-faster-rcnn's Cython gpu_nms, a function of its module's own name (cpu_nms quiet)
    'hrnet_nms.py:5:ext.extension-import',
    'hrnet_nms.py:10:ext.extension-call',
    // an ImportError handler that compiles the same CUDA extension is no fallback
    'jit_fallback.py:7:ext.extension-import',
    'jit_fallback.py:7:lib.cuda-ops',
    'jit_fallback.py:10:ext.cuda-extension',
    'jit_fallback.py:12:ext.cuda-extension',
    'jit_fallback.py:12:ext.cuda-sources',
    'jit_fallback.py:16:ext.extension-call',
    'jit_fallback.py:16:lib.cuda-ops-call',
    'legacy.py:3:ext.extension-import',
    'legacy.py:8:ext.extension-call',
    'legacy.py:14:ext.extension-import',
    'legacy.py:16:ext.extension-call',
    // modules of any name called in an autograd Function's forward or backward (einops quiet)
    'lltm.py:4:ext.extension-import',
    'lltm.py:5:ext.extension-import',
    'lltm.py:11:ext.autograd-function',
    'lltm.py:12:ext.extension-call',
    'lltm.py:19:ext.extension-call',
    'lltm.py:25:ext.autograd-function',
    'lltm.py:28:ext.extension-call',
    'lookalikes.py:16:ext.torch-ops',
    // Deformable DETR's MSDA: the import's handler raises, told where it stops (a handler
    // falling back to None quiet)
    'msda.py:6:ext.extension-import',
    'msda.py:6:lib.cuda-ops',
    'msda.py:13:ext.extension-import-raise',
    'msda.py:24:ext.autograd-function',
    'msda.py:25:ext.autograd-ctx-device',
    'msda.py:26:ext.extension-call',
    'msda.py:26:lib.cuda-ops-call',
    'msda.py:34:ext.extension-call',
    'ops.py:4:ext.extension-import',
    'ops.py:5:ext.extension-import',
    'ops.py:6:ext.extension-import',
    'ops.py:6:add.import-torch-npu',
    'ops.py:11:ext.autograd-function',
    'ops.py:13:ext.extension-call',
    'ops.py:20:ext.extension-call',
    'ops.py:26:ext.extension-call',
    'ops.py:30:ext.extension-call',
    'ops.py:34:ext.torch-ops',
    'ops.py:37:amp.autocast-cuda',
    'ops.py:37:device.cuda-string',
    'ops.py:37:ext.extension-call',
    'ops.py:38:ext.extension-call',
    // ops imported from the compiled module by *_cuda names and called directly (its CPU kernel,
    // in the CPU branch, quiet)
    'point_query.py:5:ext.extension-import',
    'point_query.py:10:ext.autograd-function',
    'point_query.py:18:ext.extension-call',
    'point_query.py:25:ext.extension-call',
    // PreciseRoIPooling's loader imported under another name and bound in a getter (json's
    // renamed load quiet)
    'prroi.py:2:ext.cuda-extension',
    'prroi.py:11:ext.cuda-extension',
    'prroi.py:11:ext.cuda-sources',
    'prroi.py:17:ext.autograd-function',
    'prroi.py:20:ext.extension-call',
    'prroi.py:26:ext.extension-call',
    'scan_ops.py:3:ext.extension-import',
    'scan_ops.py:9:ext.autograd-function',
    'scan_ops.py:10:ext.extension-call',
    'scan_ops.py:17:ext.extension-call',
    // a PyTorch path for the CPU alone beside the extension (StyleGAN2's upfirdn2d and
    // fused_leaky_relu): the NPU joins the CPU's test; a CPU branch calling the extension's own
    // CPU kernel, and a device test in a function without the extension, quiet
    'upfirdn.py:5:ext.extension-import',
    'upfirdn.py:5:add.import-torch-npu',
    'upfirdn.py:10:ext.autograd-function',
    'upfirdn.py:12:ext.extension-call',
    'upfirdn.py:21:ext.cpu-only-path',
    'upfirdn.py:29:ext.cpu-only-path',
    'upfirdn.py:31:ext.extension-call',
    'upfirdn.py:35:ext.cpu-only-path',
    'upfirdn.py:35:ext.extension-call',
    'upfirdn.py:42:ext.extension-call',
    // the Function called where no CPU path was kept (in a CUDA-only branch, quiet: the test is
    // told)
    'upfirdn.py:54:ext.autograd-apply',
    'upfirdn.py:58:device.is-cuda',
    // mmdet3d's compiled voxel_layer: its import, the autograd Function and each call
    'voxelize.py:5:ext.extension-import',
    'voxelize.py:10:ext.autograd-function',
    'voxelize.py:13:ext.extension-call',
    'voxelize.py:18:ext.extension-call',
  ],
  ops: [
    'alibi.py:1:add.import-torch-npu',
    'alibi.py:6:op.baddbmm-method',
    'alibi.py:7:op.baddbmm',
    'alibi.py:8:op.baddbmm-method',
    'alibi.py:16:device.cuda-method',
    // tinygemm's int4 kernels, however torch.ops.aten is reached; other aten ops quiet
    'int4.py:6:op.int4pack',
    'int4.py:10:op.int4pack',
    'int4.py:16:op.int4pack',
    'int4.py:20:op.int-mm',
    // operations on jagged nested tensors, by name and imported (creating one quiet)
    'jagged.py:3:op.nested-jagged',
    'jagged.py:7:op.nested-jagged',
    'jagged.py:8:op.nested-jagged',
    // torch.func's derivative transforms (vmap and autograd.functional quiet)
    'pinn.py:2:op.func-transforms',
    'pinn.py:6:op.func-transforms',
    'pinn.py:7:op.func-transforms',
    'pinn.py:18:op.func-transforms',
    'rope.py:2:op.complex-rope',
    'rope.py:9:op.complex-rope',
    'rope.py:15:op.complex-rope',
    'rope.py:24:op.complex-rope',
    'rope.py:24:op.complex-rope',
    'rope.py:31:op.sparse-grad',
    'rope.py:34:op.inference-mode',
    'rope.py:39:op.inference-mode',
    'rope.py:44:op.baddbmm',
    'rope.py:48:op.float64',
    'rope.py:52:op.float64-method',
    // scatter_reduce in every form (no NPU kernel); scatter_add_, index_add_ and numpy quiet
    'segment_max.py:3:op.scatter-reduce',
    'segment_max.py:8:op.scatter-reduce-method',
    'segment_max.py:12:op.scatter-reduce-method',
    'segment_max.py:17:op.scatter-reduce',
    'segment_max.py:21:op.scatter-reduce',
    'speech_rnn.py:2:op.packed-sequence',
    'speech_rnn.py:11:op.packed-sequence',
    'speech_rnn.py:13:op.packed-sequence',
    'speech_rnn.py:23:op.packed-sequence',
    // ops with no NPU kernel (heaviside, poisson); CuPy chosen as a library's backend, in a keyword
    // and a parameter's default (the prose string quiet)
    'spiking.py:8:op.cpu-fallback',
    'spiking.py:12:op.cpu-fallback',
    'spiking.py:16:lib.cupy-backend',
    'spiking.py:19:lib.cupy-backend',
    // a compressed sparse layout (no NPU kernels, raises)
    'spiking.py:31:op.sparse-compressed',
    // a sparse adjacency times dense features (torch.sparse.mm, torch.spmm; torch.mm quiet)
    'spiking.py:38:op.sparse-mm',
    'spiking.py:39:op.sparse-mm',
  ],
  fused: [
    'mlp.py:16:fused.gated-activation',
    'mlp.py:21:fused.gated-silu',
    'mlp.py:25:fused.gated-activation',
    'mlp.py:30:op.float64-method',
    // an mmengine config's ApexOptimWrapper and FusedAdam (AmpOptimWrapper, AdamW quiet)
    'mm_runtime.py:5:optim.mm-apex-config',
    'mm_runtime.py:7:optim.mm-apex-config',
    // NeMo's and apex's fused optimizers named in a config (adamw quiet)
    'optim.yaml:3:script.cuda-env',
    'optim.yaml:6:script.cuda-env',
  ],
  'gpu-libs': [
    // bitsandbytes' CUDA library through ctypes and torch._C's private CUDA stream (its Python
    // API quiet)
    'bnb_native.py:3:lib.bitsandbytes',
    'bnb_native.py:4:add.import-torch-npu',
    'bnb_native.py:7:lib.bnb-native',
    'bnb_native.py:11:cuda.private-api',
    // the CUDA runtime and NVTX loaded through ctypes, by name and found (libc and a message
    // quiet)
    'cuda_limits.py:7:lib.cuda-ctypes',
    'cuda_limits.py:15:lib.cuda-ctypes',
    // DeepSpeed itself once per file (its four import lines); its CUDA-only ops where used
    'ds_ops.py:4:lib.deepspeed',
    'ds_ops.py:11:lib.deepspeed-ops',
    'ds_ops.py:11:lib.deepspeed-ops',
    'ds_ops.py:12:lib.deepspeed-ops',
    // GPyTorch's MultiDeviceKernel, a DataParallel over the kernel's rows
    'gp_multi.py:3:add.import-torch-npu',
    'gp_multi.py:11:dist.data-parallel',
    'gp_multi.py:20:cuda.api',
    // GPTQ's ExLlama kernels turned on (off quiet)
    'gptq_load.py:6:lib.exllama-kernels',
    // RAPIDS' graph libraries: cuGraph's PyG store and WholeGraph
    'graph_store.py:2:lib.nvidia-only',
    'graph_store.py:3:lib.nvidia-only',
    'graph_store.py:3:add.import-torch-npu',
    'graph_store.py:7:lib.nvidia-only-call',
    'graph_store.py:7:cuda.api',
    'graph_store.py:8:lib.nvidia-only-call',
    // Dao-AILab's Hadamard kernel (QuIP#'s incoherence processing): its import and each call
    'hadamard.py:3:lib.cuda-ops',
    'hadamard.py:8:lib.cuda-ops-call',
    // PyLaia's nnutils-pytorch kernels: import and calls (torch's own pooling quiet)
    'htr_pool.py:3:lib.cuda-ops',
    'htr_pool.py:8:lib.cuda-ops-call',
    'htr_pool.py:11:lib.cuda-ops-call',
    'inference.py:5:lib.nvidia-only',
    'inference.py:6:lib.nvidia-only',
    'inference.py:7:lib.nvidia-only',
    'inference.py:16:lib.onnxruntime-cuda',
    // each use of those libraries (cudf is optional: the project runs on pandas without it)
    'inference.py:20:lib.nvidia-only-call',
    'inference.py:20:lib.nvidia-only-call',
    'inference.py:22:lib.nvidia-only-call',
    'inference.py:26:lib.nvidia-only-call',
    // torch2trt's TensorRT module, imported in a function
    'inference.py:40:lib.nvidia-only',
    'inference.py:42:lib.nvidia-only-call',
    'int8_lora.py:5:lib.bnb-int8',
    'kernels.py:5:lib.numba-cuda',
    // ManiSkill's GPU-simulated environments (the CPU backend and a render backend quiet)
    'maniskill.py:3:add.import-torch-npu',
    'maniskill.py:5:device.cuda-string',
    'maniskill.py:5:cuda.api',
    'maniskill.py:9:lib.gpu-sim-backend',
    // OpenMM's CUDA platform (the CPU one, a printed "CUDA" quiet)
    'md_sim.py:7:lib.openmm-cuda-platform',
    // a body-model fit's CUDA rasteriser (neural_renderer) and collision kernels
    // (torch-mesh-isect): their imports and calls
    'mesh_render.py:2:lib.cuda-ops',
    'mesh_render.py:3:lib.cuda-ops',
    'mesh_render.py:7:lib.cuda-ops-call',
    'mesh_render.py:7:lib.cuda-ops-call',
    // MMDeploy's TensorRT backend: its imports and calls (its ONNX Runtime check quiet)
    'mmdeploy_trt.py:3:lib.nvidia-only',
    'mmdeploy_trt.py:4:lib.nvidia-only',
    'mmdeploy_trt.py:10:lib.nvidia-only-call',
    'mmdeploy_trt.py:11:lib.nvidia-only-call',
    'monitor.py:1:lib.pynvml',
    'monitor.py:2:lib.pynvml',
    'monitor.py:3:lib.pynvml',
    'monitor.py:13:lib.nvidia-only-call',
    'monitor.py:15:lib.nvidia-only-call',
    // pynvml.smi's DeviceQuery on the instance (the docstring naming nvidia-smi quiet); FAISS's GPU
    // brute-force kNN
    'nvsmi.py:4:lib.pynvml',
    'nvsmi.py:9:lib.nvidia-only-call',
    'nvsmi.py:13:lib.nvml-device-query',
    'nvsmi.py:19:lib.faiss-gpu-call',
    // PyG's DataParallel, imported and built (its list loader quiet)
    'pyg_multi.py:3:dist.data-parallel',
    'pyg_multi.py:3:add.import-torch-npu',
    'pyg_multi.py:9:dist.data-parallel',
    'quant.py:2:lib.cuda-ops',
    'quant.py:2:add.import-torch-npu',
    'quant.py:8:lib.cuda-ops-call',
    'quant.py:8:cuda.api',
    'quant.py:12:lib.cuda-ops-call',
    // rapids-singlecell imported and each step of it (scanpy's own quiet)
    'rapids_sc.py:2:lib.nvidia-only',
    'rapids_sc.py:7:lib.nvidia-only-call',
    'rapids_sc.py:8:lib.nvidia-only-call',
    'rapids_sc.py:9:lib.nvidia-only-call',
    'rapids_sc.py:12:lib.nvidia-only-call',
    'requirements.txt:3:lib.pynvml',
    'requirements.txt:4:lib.pynvml',
    'requirements.txt:5:lib.nvidia-only',
    'requirements.txt:6:lib.nvidia-only',
    'requirements.txt:7:lib.nvidia-only',
    'requirements.txt:8:lib.cupy',
    'requirements.txt:9:lib.cuda-ops',
    'requirements.txt:10:lib.nvidia-only',
    'requirements.txt:11:lib.cuda-ops',
    // gpuRIR's simulator: its import and each call (numpy's helpers quiet)
    'room_sim.py:2:lib.cuda-ops',
    'room_sim.py:7:lib.cuda-ops-call',
    'room_sim.py:8:lib.cuda-ops-call',
    'room_sim.py:10:lib.cuda-ops-call',
    'serve.py:3:lib.nvidia-only',
    // and each use of it, as of TensorRT's
    'serve.py:7:lib.nvidia-only-call',
    // spaCy's and thinc's GPU requests, through CuPy (the CPU request quiet)
    'spacy_gpu.py:3:lib.spacy-gpu',
    'spacy_gpu.py:9:lib.spacy-gpu',
    'spacy_gpu.py:14:lib.spacy-gpu',
    // an ImportError handler that prints why, then exits: required (one that goes on, quiet)
    'tcnn_field.py:5:lib.cuda-ops',
    'tcnn_field.py:19:lib.cuda-ops-call',
    // cuda-python's runtime and Polygraphy's CUDA wrapper, imported as submodules of their
    // packages (`from cuda import cudart`), and each call through them
    'trt_runtime.py:3:lib.nvidia-only',
    'trt_runtime.py:4:lib.nvidia-only',
    'trt_runtime.py:9:lib.nvidia-only-call',
    'trt_runtime.py:10:lib.nvidia-only-call',
    'trt_runtime.py:11:lib.nvidia-only-call',
    'trt_runtime.py:14:lib.nvidia-only-call',
  ],
  'vision-ops': [
    // detectron2's config left at its default device, "cuda", AdelaiDet's get_cfg as well, where
    // the file only reads MODEL.DEVICE (a predictor that sets it, d2_predictor.py, and options
    // merged with it, d2_cpu_eval.py, quiet)
    'adet_setup.py:7:device.detectron2-default-device',
    'd2_setup.py:8:device.detectron2-default-device',
    'detect.py:11:lib.torchvision-ops',
    // detection ops imported from elsewhere than torchvision or mmcv
    // (faster-rcnn.pytorch's CFFI-built RoI layers; its config import quiet)
    'frcnn_pytorch.py:4:ext.op-wrapper',
    'frcnn_pytorch.py:5:ext.op-wrapper',
    'frcnn_pytorch.py:6:ext.op-wrapper',
    'msda.py:3:ext.op-wrapper',
    'wrappers.py:6:ext.op-wrapper',
    'wrappers.py:7:ext.op-wrapper',
    'wrappers.py:8:ext.op-wrapper',
    'wrappers.py:9:ext.op-wrapper',
  ],
  installs: [
    // a Dockerfile on the PyTorch image installs around its torch: torch and torch_npu told at
    // the first pip install (an image installing its own torch, own-torch.Dockerfile, quiet)
    'base-torch.Dockerfile:2:script.cuda-env',
    'base-torch.Dockerfile:7:script.cuda-env',
    // inline Python importing CUDA-only libraries (the first of each snippet)
    'check.sh:3:lib.flash-attn',
    'check.sh:4:lib.cuda-ops',
    'check.sh:5:lib.deepspeed',
    'check.sh:10:script.cuda-env',
    // conda's CUDA toolkit installed from a script (faiss-cpu quiet)
    'conda_setup.sh:3:script.cuda-env',
    // conda-forge's CUDA specs on a continued `micromamba create` (a CPU build string quiet)
    'conda_setup.sh:5:script.cuda-env',
    'conda_setup.sh:6:script.cuda-env',
    // the same through the script's own conda_install wrapper (a variable of that name quiet)
    'conda_setup.sh:10:script.cuda-env',
    // PyTorch 0.3–0.4's own CUDA packages (cuda90, cuda92); an environment named so quiet
    'conda_setup.sh:12:script.cuda-env',
    'conda_setup.sh:13:script.cuda-env',
    // warp-ctc's loss and MinkowskiEngine: operator libraries without an NPU build, told at use
    'ctc.py:2:lib.cuda-ops',
    'ctc.py:6:lib.cuda-ops-call',
    'ctc.py:12:lib.cuda-ops',
    'ctc.py:14:lib.cuda-ops-call',
    // `pip install` in a Dockerfile and a script: each package its rule's, as in requirements;
    // paths, URLs, option values, comments and an echo's words are no packages; torch pinned
    // without torch_npu (an install naming its CUDA index already told, and an image that
    // installs torch_npu, quiet)
    'Dockerfile:3:req.torch-npu',
    'Dockerfile:5:lib.cuda-ops',
    'Dockerfile:5:lib.cuda-ops',
    'Dockerfile:6:lib.pyg-ext',
    'Dockerfile:6:lib.pyg-ext',
    'Dockerfile:6:script.cuda-env',
    'Dockerfile:8:lib.flash-attn',
    'Dockerfile:9:lib.xformers',
    // direct references in quotes (`"name @ git+…"`, with extras) and NVIDIA's TensorRT wheel
    'Dockerfile:15:lib.cuda-ops',
    'Dockerfile:16:lib.transformer-engine',
    'Dockerfile:17:lib.nvidia-only',
    // the CUDA build tag kept in an ARG, and the index it selects
    'Dockerfile:19:script.cuda-env',
    'Dockerfile:20:script.cuda-env',
    // a launcher's own torch install: a CUDA wheel index or a +cu build in a string, also written
    // with spaces as an extra's pin (the CPU index and extra quiet)
    'launch_utils.py:8:device.cuda-wheel-index',
    'launch_utils.py:12:device.cuda-wheel-index',
    'launch_utils.py:22:device.cuda-wheel-index',
    // only its NGC image (it installs torch and torch_npu itself)
    'own-torch.Dockerfile:2:script.cuda-env',
    // the list named in the singular (arcface_torch's requirement.txt)
    'requirement.txt:2:req.cuda-wheel',
    'requirement.txt:2:req.torch-npu',
    'requirement.txt:4:lib.nvidia-only',
    // Rye's locked requirements (a dev lock by its own name)
    'requirements-dev.lock:6:req.cuda-wheel',
    'requirements-dev.lock:8:req.torch-npu',
    'requirements.txt:1:req.torch-npu',
    'requirements.txt:2:req.cuda-wheel',
    'requirements.txt:3:lib.pyg-ext',
    'requirements.txt:4:lib.nvidia-only',
    // cuEquivariance's CUDA ops (its -cu12 wheel)
    'requirements.txt:5:lib.cuda-ops',
    // a package built with its CUDA switch on (cmake.define.USE_CUDA=ON)
    'requirements.txt:6:req.cuda-wheel',
    // any key or flag naming a device (`sim_device: cuda:0`), not `--device-ids`
    'rl.yaml:4:script.cuda-env',
    'rl.yaml:5:script.cuda-env',
    'rl.yaml:8:script.cuda-env',
    // TabNet's device_name, told once
    'rl.yaml:13:script.cuda-env',
    'run.sh:2:script.cann-env',
    'run.sh:3:lib.nvidia-only',
    'run.sh:3:lib.cuda-ops',
    'run.sh:4:script.cuda-env',
    // diffusers' xformers switch on the command line
    'run.sh:5:script.cuda-env',
    // nerfstudio's dotted flag (--machine.device-type)
    'run.sh:6:script.cuda-env',
    // FAISS's GPU API (the CPU index quiet)
    'search.py:8:lib.faiss-gpu-call',
    'search.py:9:lib.faiss-gpu-call',
    'search.py:16:lib.faiss-gpu-call',
    'search.py:21:lib.faiss-gpu-call',
    'search.py:27:lib.faiss-gpu-call',
    // PyTorch's image under a tag kept in an ARG of its own: the ARG and the FROM (an ARG that
    // only starts like a CUDA tag quiet), torch and torch_npu at the first pip install
    'tag-arg.Dockerfile:2:script.cuda-env',
    'tag-arg.Dockerfile:3:script.cuda-env',
    'tag-arg.Dockerfile:7:script.cuda-env',
    // an installer's choice of builds: torch_npu goes beside the CPU one (ROCm's, a comment and an
    // unpinned torch quiet)
    'torch_choice.sh:8:req.torch-npu',
    // a requirements file named by its project (notes.txt listing the same lines quiet)
    'vim_requirements.txt:2:req.cuda-wheel',
    'vim_requirements.txt:3:req.cuda-wheel',
    'vim_requirements.txt:3:req.torch-npu',
    'vim_requirements.txt:4:lib.cuda-ops',
    // the tag in a variable and each index it selects (PyTorch's, PyG's, DGL's), DGL's CUDA
    // wheels; an index variable that is not the tag, DGL's CPU wheels quiet
    'wheel_tag.sh:4:script.cuda-env',
    'wheel_tag.sh:5:script.cuda-env',
    'wheel_tag.sh:6:lib.pyg-ext',
    'wheel_tag.sh:6:script.cuda-env',
    'wheel_tag.sh:7:script.cuda-env',
    'wheel_tag.sh:8:script.cuda-env',
  ],
  video: [
    // NVDEC / NVENC codec names and decord's GPU context; software codecs quiet
    'decode.py:4:video.decord-gpu',
    'decode.py:6:video.nvdec-codec',
    'decode.py:6:video.nvdec-codec',
    'decode.py:10:video.decord-gpu',
    'decode.py:18:video.nvdec-codec',
    'transcode.sh:2:script.cuda-env',
  ],
  ray: [
    // a cluster's nodes declaring "GPU" and an NVIDIA accelerator type (a CPU node quiet)
    'cluster.yaml:4:script.cuda-env',
    'cluster.yaml:6:script.cuda-env',
    'cluster.yaml:6:script.cuda-env',
    'cluster.yaml:10:script.cuda-env',
    // GPUs asked of Ray (num_gpus in ray.remote and .options, a "GPU" bundle key) and its
    // switch that leaves CUDA_VISIBLE_DEVICES to the code; CPU requests and "GPU" as a value quiet
    'engines.py:7:dist.ray-num-gpus',
    'engines.py:19:env.ray-noset-visible-devices',
    'engines.py:21:dist.ray-gpu-resource',
    'engines.py:23:dist.ray-options-gpus',
    // and through options dicts (Serve's ray_actor_options, Tune's resources_per_trial); a
    // statistics dict keyed "gpu" quiet
    'engines.py:33:dist.ray-gpu-option',
    'engines.py:34:dist.ray-gpu-option',
    // ray.get_gpu_ids(): empty on an Ascend node
    'engines.py:42:dist.ray-gpu-ids',
    'launch.sh:2:script.cuda-env',
    'launch.sh:3:script.cuda-env',
    // Tune's with_resources given a dict (a dict of statistics quiet)
    'tune_resources.py:6:dist.ray-gpu-option',
    // Ray's GPU count read from the cluster and a node's resources (the CPU count quiet)
    'tune_resources.py:17:dist.ray-gpu-count',
    'tune_resources.py:18:dist.ray-gpu-count',
  ],
  serving: [
    // BentoML's CUDA base chosen by version
    'bentofile.yaml:4:script.cuda-env',
    // a bundle config mapping its checkpoint onto the GPU (`map_location: cpu` quiet)
    'bundle_inference.yaml:10:script.cuda-env',
    // and its device as a Python expression: a literal, a rank's f-string, a concatenation, a
    // conditional (once on a line that also asks torch.cuda; the CPU quiet)
    'bundle_inference.yaml:18:script.cuda-env',
    'bundle_inference.yaml:19:script.cuda-env',
    'bundle_inference.yaml:20:script.cuda-env',
    'bundle_inference.yaml:21:script.cuda-env',
    // Triton Inference Server's GPU instance group (config.pbtxt)
    'config.pbtxt:7:script.cuda-env',
    // an NGC base image given through ARG; NVIDIA's apex cloned; packages installed from their
    // repositories' URLs (tiny-cuda-nn by its repository's name, flash-attn by #egg=; pytorch3d
    // quiet), a github.com/nvidia/… URL in a comment quiet
    'Dockerfile:1:script.cuda-env',
    'Dockerfile:5:script.cuda-env',
    'Dockerfile:6:lib.cuda-ops',
    'Dockerfile:8:lib.flash-attn',
    // the project's own image tagged for CUDA (python:3.10-slim quiet)
    'Dockerfile:9:script.cuda-env',
    // TransformerEngine from its repository (listed under the repository's name)
    'Dockerfile:11:lib.transformer-engine',
    // mmcv's CUDA wheel chosen by mim
    'Dockerfile:12:script.cuda-env',
    // operator libraries cloned to be built, by the repository's name (after clone's options, over
    // ssh); detectron2, an echoed clone and a commented one quiet
    'Dockerfile:14:lib.cuda-ops',
    'Dockerfile:16:lib.flash-attn',
    'Dockerfile:17:lib.cuda-ops',
    // a project's CUDA requirements set and CUDA make target (the CPU set, a plain target quiet)
    'Dockerfile.engine:4:script.cuda-env',
    'Dockerfile.engine:5:script.cuda-env',
    // a serving engine's CUDA image (vllm/vllm-openai, lmsysorg/sglang); its CANN build quiet
    'Dockerfile.engine:8:script.cuda-env',
    'Dockerfile.engine:11:script.cuda-env',
    // a JSON config's backend and device (the per-GPU batch size quiet)
    'ds_config.json:3:script.cuda-env',
    'ds_config.json:4:script.cuda-env',
    // vLLM's compiled ops module: its import and each op it calls
    'engine_ops.py:2:ext.extension-import',
    'engine_ops.py:2:lib.vllm',
    'engine_ops.py:6:ext.extension-call',
    'engine_ops.py:10:ext.extension-call',
    'engine_ops.py:21:fused.rms-norm',
    // a CustomOp's CUDA forward picked by a graph runner (its definition quiet)
    'engine_ops.py:30:ext.custom-op-forward-cuda',
    // InvokeAI's attention implementation chosen by name
    'invokeai.yaml:4:script.cuda-env',
    'launch.sh:1:script.cann-env',
    // serving engines' CUDA kernel libraries chosen by name; an NGC image run by docker
    'launch.sh:2:script.cuda-env',
    'launch.sh:4:script.cuda-env',
    'launch.sh:5:script.cuda-env',
    'launch.sh:7:script.cuda-env',
    // the NCCL process group's watchdog switch (HCCL's own name written in) and its other knobs
    'launch.sh:8:script.cuda-env',
    'launch.sh:9:script.cuda-env',
    // TensorRT's command-line builder (ATC on Ascend)
    'launch.sh:10:script.cuda-env',
    // a Makefile's install depending on the CUDA target (that target's own rule and .PHONY quiet)
    'Makefile:6:script.cuda-env',
    // Kubernetes: NVIDIA's node label, a CUDA-tagged image, the device plugin resource (quoted or
    // not), an NGC image
    'pytorchjob.yaml:12:script.cuda-env',
    'pytorchjob.yaml:17:script.cuda-env',
    'pytorchjob.yaml:20:script.cuda-env',
    'pytorchjob.yaml:22:script.cuda-env',
    'pytorchjob.yaml:27:script.cuda-env',
    // a config's device_type (device_map: auto quiet)
    'pytorchjob.yaml:29:script.cuda-env',
    // Ray Serve's runtime_env pip list read as requirements (a tags list naming xformers quiet)
    'serve_config.yaml:7:lib.xformers',
    'serve_config.yaml:8:lib.flash-attn',
    'submit.py:5:add.import-torch-npu',
    'submit.py:5:add.compile-mode',
    // the resource requested from Python; per-device backend lists (a sentence naming one quiet)
    'submit.py:10:device.k8s-gpu-resource',
    'submit.py:15:add.set-device',
    'submit.py:15:dist.nccl-device-backends',
    'submit.py:16:add.set-device',
    'submit.py:16:dist.nccl-device-backends',
    'submit.py:23:dist.nccl-async-error-handling',
    'submit.py:24:dist.nccl-env',
  ],
  tabular: [
    // LightGBM's and CatBoost's GPU named in params dicts and by keyword, DALI's "mixed" and "gpu"
    // operators, its PyTorch iterator and a pipeline's CUDA device (the CPU, DALI's CPU operators,
    // a pipeline without a device and a label's "gpu" quiet)
    'boosters.py:3:lib.nvidia-only',
    'boosters.py:6:lib.gbdt-gpu-device',
    'boosters.py:7:lib.gbdt-gpu-device',
    'boosters.py:13:lib.gbdt-gpu-device',
    'boosters.py:14:lib.gbdt-gpu-device',
    'boosters.py:20:lib.gbdt-gpu-device',
    'boosters.py:21:lib.gbdt-gpu-device',
    'boosters.py:26:lib.nvidia-only',
    'boosters.py:29:lib.nvidia-only-call',
    'boosters.py:34:lib.nvidia-only',
    'boosters.py:36:lib.dali-device-id',
    // a config's task type, device given as the GPU, cuDF as the dataframe backend
    'boosters.yaml:3:script.cuda-env',
    'boosters.yaml:5:script.cuda-env',
    'boosters.yaml:7:script.cuda-env',
    // NVTabular's ETL on RMM and dask-cuda (dask_cuda is no compiled extension of the project)
    'criteo_etl.py:1:lib.nvidia-only',
    'criteo_etl.py:2:lib.nvidia-only',
    'criteo_etl.py:3:lib.nvidia-only',
    'criteo_etl.py:7:lib.nvidia-only-call',
    'criteo_etl.py:8:lib.nvidia-only-call',
    'criteo_etl.py:9:lib.nvidia-only-call',
    'criteo_etl.py:10:lib.nvidia-only-call',
    // torchaudio's CUDA CTC decoder, imported and called
    'ctc_decode.py:2:lib.torchaudio-cuda-ctc',
    'ctc_decode.py:6:lib.torchaudio-cuda-ctc',
    // cuDF chosen as the dataframe backend (a default, Dask's setting; pandas quiet), a Dask-CUDA
    // cluster by cluster_type, torch bound by data-juicer's LazyLoader
    'curate.py:6:add.import-torch-npu',
    'curate.py:12:lib.gbdt-gpu-device',
    'curate.py:15:lib.cudf-backend',
    'curate.py:16:lib.cudf-backend',
    'curate.py:21:cuda.api',
    'curate.py:21:cuda.api',
    // DGL's layers and sparse matrices where they are used (its imports and dgl.graph quiet)
    'graph_sage.py:5:add.import-torch-npu',
    'graph_sage.py:11:lib.dgl-call',
    'graph_sage.py:11:lib.dgl-call',
    'graph_sage.py:20:lib.dgl-call',
    // DGL's UVA sampling and the graph pinned in place for it (CPU sampling, torch's pin_memory quiet)
    'graph_sage.py:28:lib.dgl-uva',
    'graph_sage.py:29:lib.dgl-pin-graph',
    // DLPack hand-offs (imported and called, and torch's own); a cuDF frame's method quiet
    'interop.py:2:op.dlpack',
    'interop.py:6:op.dlpack',
    'interop.py:10:op.dlpack',
    // requirements: repositories' URLs read for their package (transformers has no rule)
    'requirements.txt:1:req.torch-npu',
    'requirements.txt:2:lib.cuda-ops',
    'requirements.txt:3:lib.flash-attn',
    'requirements.txt:5:lib.cuda-ops',
    // mmcv from OpenMMLab's CUDA wheel index
    'requirements.txt:6:req.mmcv-cuda-ops',
    // a direct reference to one of flash-attention's CUDA extension packages
    'requirements.txt:7:lib.flash-attn',
    // the repository's URL with a slash before its fragment; a fork of a CUDA-ops package under
    // a longer name
    'requirements.txt:8:lib.cuda-ops',
    'requirements.txt:9:lib.cuda-ops',
    // a CUDA-ops package installed from a folder of the repository (3DGS's submodules/), a fork
    // named with a word before the package's name (the project's own folders quiet)
    'requirements.txt:10:lib.cuda-ops',
    'requirements.txt:11:lib.cuda-ops',
    // a prebuilt extension wheel's URL under a folder for its CUDA version (a CPU one quiet)
    'requirements.txt:15:req.cuda-wheel',
    'run_ts.sh:1:script.cann-env',
    // Time-Series-Library's multi-GPU switch (a run without it quiet)
    'run_ts.sh:3:script.cuda-env',
    // RAPIDS imported and used; XGBoost's GPU algorithms and predictor, LightGBM's GPU build
    // (a string that only starts like one quiet, device="cpu" quiet)
    'train_gbdt.py:1:lib.nvidia-only',
    'train_gbdt.py:5:lib.nvidia-only',
    'train_gbdt.py:9:lib.nvidia-only-call',
    'train_gbdt.py:10:lib.nvidia-only-call',
    'train_gbdt.py:15:lib.xgboost-gpu',
    'train_gbdt.py:15:lib.xgboost-gpu-predictor',
    'train_gbdt.py:22:lib.gbdt-gpu-device',
    'train_gbdt.py:29:lib.xgboost-gpu',
    // the same in a config (its commented-out line quiet)
    'xgb.yaml:2:script.cuda-env',
    'xgb.yaml:3:script.cuda-env',
  ],
  accelerators: [
    // a device dispatch with branches for XPU and MPS and none for the NPU: each XPU branch told
    // where the NPU's goes (a file that has one already, ported.py, quiet; a file merely saying
    // "input" does not count as one). Apple's MPS checks are its own workarounds, which real
    // ports leave (0 of 9 changed in the development corpus): quiet
    // torch.cuda kept as the device's module, returned or assigned (an argument of hasattr quiet)
    'device_module.py:1:add.import-torch-npu',
    'device_module.py:6:cuda.module-value',
    'device_module.py:9:cuda.module-value',
    'device_module.py:9:cuda.api',
    // diffusers' CPU offload without device= (which goes to "cuda"); with one quiet
    'offload.py:3:add.import-torch-npu',
    'offload.py:6:device.diffusers-model-offload',
    'offload.py:7:device.diffusers-sequential-offload',
    // torch bound by a project module's star import
    'star_bench.py:2:add.import-torch-npu',
    'star_bench.py:6:cuda.api',
    'star_bench.py:7:cuda.api',
    // torch.nn too (nn.DataParallel; the integer device is CUDA's)
    'star_train.py:2:add.import-torch-npu',
    'star_train.py:6:device.to-rank',
    'star_train.py:8:dist.data-parallel',
    'state.py:3:add.import-torch-npu',
    'state.py:7:device.cuda-string',
    'state.py:9:cuda.api',
    'state.py:10:device.cuda-string',
    'state.py:11:device.other-accelerator-check',
    'state.py:19:device.other-accelerator-name',
    // an enum of random generators by device: its "cuda" told (accelerate's gained an NPU member),
    // no kernel backend switch
    'state.py:28:device.cuda-string',
  ],
  trainers: [
    // axolotl-style config: a bitsandbytes 8-bit optimizer, flash-attn and xformers switched on
    // (sdp_attention and a commented-out line quiet), a fused optimizer named by its module path
    'axolotl.yml:3:script.cuda-env',
    'axolotl.yml:5:script.cuda-env',
    'axolotl.yml:7:script.cuda-env',
    'axolotl.yml:10:script.cuda-env',
    // MPT's Triton flash attention and flash-attn's cross-entropy chosen in a config
    'axolotl.yml:13:script.cuda-env',
    'axolotl.yml:14:script.cuda-env',
    // OpenAI CLIP loaded on its own default device (a device by keyword or position quiet)
    'clip_zero_shot.py:2:add.import-torch-npu',
    'clip_zero_shot.py:7:device.clip-load-default',
    // NCCL's packages installed by apt; a package pinned to a version in a variable (a wheel
    // path quiet)
    'Dockerfile:4:script.cuda-env',
    'Dockerfile:6:lib.flash-attn',
    'finetune.sh:1:script.cann-env',
    // transformers' TF32 on the command line and in a config (off quiet)
    'finetune.sh:3:script.cuda-env',
    'fsdp_qlora.yaml:2:script.cuda-env',
    'fsdp_train.py:7:add.import-torch-npu',
    'fsdp_train.py:7:add.compile-mode',
    // FSDP given a rank as device_id, told where the argument is (a torch.device quiet);
    // torch's ShardedGradScaler without a device (with "npu" quiet); PyG's ToSparseTensor
    'fsdp_train.py:14:dist.fsdp-int-device-id',
    'fsdp_train.py:22:amp.grad-scaler-default',
    'fsdp_train.py:28:lib.pyg-ext-call',
    // gradient caching's RNG fork, CUDA's unless device_type is given
    'grad_cache.py:2:add.import-torch-npu',
    'grad_cache.py:13:device.fork-rng-cuda',
    'grad_cache.py:22:device.fork-rng-cuda',
    // torch.load without map_location: a checkpoint a GPU run may have written (map_location given,
    // optimizer state, the run's own best checkpoint, features, a buffer quiet)
    'load_checkpoints.py:6:add.import-torch-npu',
    'load_checkpoints.py:11:device.load-map-location',
    'load_checkpoints.py:12:device.load-map-location',
    'load_checkpoints.py:13:device.load-map-location',
    'lora.sh:1:script.cann-env',
    // kohya's AdamW8bit and bare --xformers, HF's paged optimizer (--xformers_checkpoint_dir quiet)
    'lora.sh:3:script.cuda-env',
    'lora.sh:4:script.cuda-env',
    'lora.sh:6:script.cuda-env',
    // a leading `import torch.cuda`: torch_npu goes there, not after the last import
    'mem_monitor.py:6:add.import-torch-npu',
    'mem_monitor.py:18:cuda.api',
    // torchsummary's input made for CUDA only (device='cpu' on a CPU copy and torchinfo's
    // summary, quiet); an entry script, so torch_npu and the device choice are added
    'model_summary.py:6:add.import-torch-npu',
    'model_summary.py:6:add.compile-mode',
    'model_summary.py:23:add.select-device',
    'model_summary.py:26:device.torchsummary-cuda-input',
    // a script that never imports torch but calls `.cuda()` (LPIPS's compare scripts): torch_npu
    // imported there (a module doing the same, quiet about the import)
    'pair_distances.py:4:add.import-torch-npu',
    'pair_distances.py:13:device.cuda-method',
    'pair_distances.py:18:device.cuda-method',
    'pair_helpers.py:6:device.cuda-method',
    // tensordict's CudaGraphModule and torch.cuda's own graphs
    'ppo_fast.py:2:cuda.graphs',
    'ppo_fast.py:2:add.import-torch-npu',
    'ppo_fast.py:8:cuda.graphs',
    'ppo_fast.py:9:cuda.graphs',
    'ppo_fast.py:14:cuda.graphs',
    'ppo_fast.py:15:cuda.graphs',
    // Ray Train asked for GPUs (use_gpu=False quiet)
    'ray_train.py:7:lib.use-gpu-flag',
    // `import model` for a registry, the name then bound to a model: its .cuda() is a tensor's
    'registry_train.py:5:add.import-torch-npu',
    'registry_train.py:10:device.cuda-method',
    // RLlib's `torch, nn = try_import_torch()` binds torch as an import would
    'rllib_policy.py:1:add.import-torch-npu',
    'rllib_policy.py:8:cuda.api',
    'rllib_policy.py:9:device.cuda-string',
    'rllib_policy.py:13:cuda.api',
    'snn_dvs.sh:2:script.cann-env',
    // torchrun's `--nproc_per_node gpu`, single-dash `-device cuda:0` and `-cupy`, a yacs override
    // `MODEL.DEVICE "cuda:0"`, `--faiss_on_gpu` (a count, a CPU device and look-alike flags quiet)
    'snn_dvs.sh:3:script.cuda-env',
    'snn_dvs.sh:4:script.cuda-env',
    'snn_dvs.sh:5:script.cuda-env',
    'snn_dvs.sh:7:script.cuda-env',
    'snn_dvs.sh:8:script.cuda-env',
    // a console script without an extension, Python by its #! line (NOTES, plain text, quiet)
    'train_lightcurves:5:add.import-torch-npu',
    'train_lightcurves:8:device.cuda-string',
    // detectron2's AMPTrainer, imported and chosen
    'vitdet_train.py:1:amp.detectron2-amp-trainer',
    'vitdet_train.py:5:amp.detectron2-amp-trainer',
  ],
  builds: [
    // CMake's CUDA language, toolkit and libraries (a CXX-only project quiet); CUDA images and
    // NVIDIA's container runtime in a CI job and a compose file (runc quiet)
    'CMakeLists.txt:2:script.cuda-env',
    'CMakeLists.txt:6:script.cuda-env',
    'CMakeLists.txt:9:script.cuda-env',
    // a Dockerfile named `cuda.Dockerfile`
    'cuda.Dockerfile:1:script.cuda-env',
    'cuda.Dockerfile:2:script.cuda-env',
    'cuda.Dockerfile:5:script.cuda-env',
    'docker-compose.yml:3:script.cuda-env',
    'docker-compose.yml:4:script.cuda-env',
    'docker-compose.yml:9:script.cuda-env',
    // the runtime and the device driver quoted
    'docker-compose.yml:16:script.cuda-env',
    'docker-compose.yml:21:script.cuda-env',
    // native builds configured for CUDA (`-DUSE_CUDA=ON`, `-DWITH_CUDA=1`; OFF quiet)
    'Dockerfile.decord:5:script.cuda-env',
    'Dockerfile.decord:7:script.cuda-env',
    // a package's CUDA extensions forced into its build (FORCE_CUDA, BASICSR_EXT, BUILD_EXT)
    'Dockerfile.decord:11:script.cuda-env',
    'Dockerfile.decord:12:script.cuda-env',
    'Dockerfile.decord:13:script.cuda-env',
    // COLMAP's -DCUDA_ENABLED=ON; CUDA wheels named through a build argument (+cu${CUDA_VER})
    'Dockerfile.decord:18:script.cuda-env',
    'Dockerfile.decord:20:script.cuda-env',
    // llama.cpp's CUDA switch inside CMAKE_ARGS' quotes
    'Dockerfile.decord:22:script.cuda-env',
    // a build's check that the package's compiled extension loads (`import ctr_ops._C`)
    'Dockerfile.ext:3:lib.cuda-ops',
    // CUDA libraries as apt packages (libjpeg quiet)
    'Dockerfile.jpeg:4:script.cuda-env',
    'Dockerfile.jpeg:5:script.cuda-env',
    'Dockerfile.jpeg:6:script.cuda-env',
    // a build switched to CUDA by `ARG USE_CUDA=1`
    'Dockerfile.jpeg:9:script.cuda-env',
    // a setting whose whole value is cuda under ENV; LAMMPS' Kokkos / GPU packages built for
    // CUDA (`-D NAME=ON` with a space), Kokkos' nvcc_wrapper (OpenMP quiet)
    'Dockerfile.lammps:2:script.cuda-env',
    'Dockerfile.lammps:4:script.cuda-env',
    'Dockerfile.lammps:5:script.cuda-env',
    'Dockerfile.lammps:6:script.cuda-env',
    'Dockerfile.lammps:7:script.cuda-env',
    // the device in an exec-form CMD
    'Dockerfile.serve:4:script.cuda-env',
    // a simulator's CUDA + OpenGL image, its build --with-cuda, a CUDA build switched on (headless
    // alone, an OpenGL image, a switch set off quiet)
    'Dockerfile.sim:3:script.cuda-env',
    'Dockerfile.sim:5:script.cuda-env',
    'Dockerfile.sim:7:script.cuda-env',
    // conda's names for PyG's compiled extensions (pyg channel)
    'environment.yml:7:lib.pyg-ext',
    'environment.yml:8:lib.pyg-ext',
    // conda packages pinned to CUDA builds by their build strings (numpy's plain build quiet)
    'environment.yml:9:req.cuda-wheel',
    'environment.yml:9:req.torch-npu',
    'environment.yml:10:req.cuda-wheel',
    // a GPU runner, an NVIDIA image and a container given GPUs
    'gpu-tests.yml:5:script.cuda-env',
    'gpu-tests.yml:7:script.cuda-env',
    'gpu-tests.yml:8:script.cuda-env',
    // IOPaint's `GPUDockerfile`
    'GPUDockerfile:1:script.cuda-env',
    'GPUDockerfile:3:script.cuda-env',
    // settings whose whole value is CUDA (a kernel backend, a context, a platform); names,
    // sentences and list items quiet
    'kernels.yaml:3:script.cuda-env',
    'kernels.yaml:4:script.cuda-env',
    'kernels.yaml:5:script.cuda-env',
    // a CUTLASS kernel backend, and CUDA graphs turned on (off quiet)
    'kernels.yaml:12:script.cuda-env',
    'kernels.yaml:14:script.cuda-env',
    'kernels.yaml:15:script.cuda-env',
    // an implementation named for its CUDA kernel (`corr_implementation: reg_cuda`)
    'kernels.yaml:19:script.cuda-env',
    // MinkowskiEngine with --force_cuda
    'me_install.sh:3:lib.cuda-ops',
    'me_install.sh:4:script.cuda-env',
    // Deformable DETR's setup.py stopping where CUDA is missing (a stop where CUDA is there, and
    // one under a platform test, quiet)
    'msda_setup.py:7:ext.cuda-home',
    'msda_setup.py:7:add.import-torch-npu',
    'msda_setup.py:15:cuda.api',
    'msda_setup.py:15:ext.cuda-home',
    'msda_setup.py:16:ext.cuda-extension',
    'msda_setup.py:19:ext.no-cuda-raise',
    'msda_setup.py:25:cuda.api',
    // a method called on torch.version.cuda (None on an Ascend host): the name told, torch.__version__
    // quiet
    'native_lib.py:5:add.import-torch-npu',
    'native_lib.py:9:cuda.version',
    'native_lib.py:10:cuda.version',
    // GPU runners by label and by name, nightly CUDA wheels (a CPU runner quiet)
    'nightly-ci.yml:6:script.cuda-env',
    'nightly-ci.yml:8:script.cuda-env',
    'nightly-ci.yml:10:script.cuda-env',
    // setup.py switches that build the CUDA extensions by default, one that skips them only when set
    // (off by default, skipping by default, a path quiet)
    'setup_ext.py:8:ext.cuda-build-default',
    'setup_ext.py:9:ext.cuda-build-default',
    'setup_ext.py:12:ext.cuda-build-skip-default',
    'setup_ext.py:14:ext.cuda-build-default',
    // TORCH_CUDA_ARCH_LIST where it is set, not where it is read or tested
    'setup.py:3:env.torch-cuda-arch-list',
    'setup.py:4:env.torch-cuda-arch-list',
    // a norm chosen by its Triton kernel (rmsnorm quiet)
    'titan.toml:4:script.cuda-env',
    // a Dockerfile named by its extension: its CUDA PyTorch image, NCCL setting, first install
    'torch2.1.0-cuda12.1.dockerfile:2:script.cuda-env',
    'torch2.1.0-cuda12.1.dockerfile:3:script.cuda-env',
    'torch2.1.0-cuda12.1.dockerfile:5:script.cuda-env',
    // a gin binding of the process group's backend
    'train.gin:2:script.cuda-env',
    // CUTLASS among Inductor's GEMM backends; ATen and Triton alone quiet
    'tune.py:3:compile.cutlass-backend',
  ],
  lightning: [
    // the accelerator left to Lightning's choice, which has no NPU (a model's device_map and
    // dtype "auto" quiet)
    'auto.py:7:device.lightning-auto',
    // accelerator "gpu" and DDP as command-line options' defaults, click's and argparse's (a
    // --device option and a directory named gpu_runs quiet)
    'cli_flags.py:8:device.lightning-gpu',
    'cli_flags.py:17:device.lightning-gpu',
    'cli_flags.py:18:dist.lightning-ddp-name',
    // its config and CLI: the accelerator, the DDP backend, an MPT-style `attn_impl: flash`
    'config.yaml:3:script.cuda-env',
    'config.yaml:8:script.cuda-env',
    'config.yaml:11:script.cuda-env',
    // apex's fused Adam named in a config, also OpenNMT's `fusedadam` (adamw, adam quiet)
    'config.yaml:15:script.cuda-env',
    'config.yaml:18:script.cuda-env',
    // the accelerator under an upper-case key, with a comment after it
    'config.yaml:21:script.cuda-env',
    // DDP and FSDP strategies (and 1.5's DDPPlugin) left to pick gloo on a device not CUDA; the
    // backend named, or options that may hold it, quiet
    'ddp.py:8:dist.lightning-ddp-backend',
    'ddp.py:13:dist.lightning-ddp-backend',
    'ddp.py:18:dist.lightning-ddp-backend',
    // DDP named as a string, as a plain variable or into kwargs (deepspeed, a log line quiet)
    'ddp.py:27:dist.lightning-ddp-name',
    'ddp.py:28:dist.lightning-ddp-name',
    'fit.sh:1:script.cann-env',
    'fit.sh:2:script.cuda-env',
    // Lightning 1.x's DDP named as the accelerator on a command line (ddp_cpu quiet)
    'fit.sh:4:script.cuda-env',
    'folds.sh:1:script.cann-env',
    // timm's apex FusedLAMB named on a command line (plain lamb quiet)
    'folds.sh:3:script.cuda-env',
    // Lightning 1.x's apex AMP backend, in code and in a config (native quiet)
    'gan_apex.py:6:amp.apex-backend',
    // accelerator "gpu" in a trainer_kwargs dict, as a parameter's default, as a conditional's
    // branch and assigned on a config or into kwargs ("cpu", the log line, a bare variable and a
    // record of what ran quiet)
    'kwargs.py:3:add.import-torch-npu',
    'kwargs.py:7:device.lightning-gpu',
    'kwargs.py:10:device.lightning-gpu',
    'kwargs.py:13:device.lightning-gpu',
    'kwargs.py:13:cuda.api',
    'kwargs.py:14:cuda.api',
    'kwargs.py:27:device.lightning-gpu',
    'kwargs.py:28:device.lightning-gpu',
    // Lightning 1.x's gpus= (devices= quiet)
    'legacy_trainer.py:7:device.lightning-gpus',
    'legacy_trainer.py:10:device.lightning-gpus',
    // and its DDP modes named as the accelerator: a keyword, a config's entry, a plain variable
    // (ddp_cpu and a log line quiet); the same in a config
    'legacy_trainer.py:18:dist.lightning-legacy-accelerator',
    'legacy_trainer.py:19:dist.lightning-legacy-accelerator',
    'legacy_trainer.py:20:dist.lightning-legacy-accelerator',
    'legacy.yaml:3:script.cuda-env',
    'seg.yaml:3:script.cuda-env',
    // the same in a config: DDP and FSDP by name (DeepSpeed, a comment quiet)
    'sweep.yaml:3:script.cuda-env',
    'sweep.yaml:4:script.cuda-env',
    'sweep.yaml:7:script.cuda-env',
    'train.py:8:device.lightning-gpu',
    'train.py:10:dist.lightning-ddp-name',
    'train.py:18:device.lightning-auto',
    'train.py:27:device.lightning-gpu',
    'train.py:28:device.cuda-string',
    // "gpu" chosen into a plain variable the Trainer then takes by keyword (kwargs.py's bare
    // variable that is only recorded stays quiet)
    'transcribe.py:9:device.lightning-gpu',
  ],
  // an operator library's uses are told only where its NPU counterpart is not a drop-in
  // (mx_driving.spconv is), and not mamba_ssm's Triton kernels (triton-ascend runs Triton)
  'op-libs': [
    // BMTrain: the import, and where its CUDA extension runs (its Python helpers quiet)
    'bmt_train.py:1:lib.bmtrain',
    'bmt_train.py:6:lib.bmtrain-call',
    'bmt_train.py:7:lib.bmtrain-call',
    'bmt_train.py:11:lib.bmtrain-call',
    // Transformer Engine and its extension module (transformer_engine_torch, as tex)
    'fp8.py:2:lib.transformer-engine',
    'fp8.py:3:lib.transformer-engine',
    'fp8.py:7:lib.transformer-engine-call',
    'fp8.py:8:lib.transformer-engine-call',
    'fp8.py:11:lib.transformer-engine-call',
    'fp8.py:11:lib.transformer-engine-call',
    // flash-attn's compiled layer-norm extension, imported and called (its PyTorch reference
    // gets the fused-norm suggestion only)
    'fused_norm.py:3:lib.cuda-ops',
    'fused_norm.py:7:lib.cuda-ops-call',
    'fused_norm.py:15:fused.rms-norm',
    'gnn.py:2:lib.pyg-ext',
    'gnn.py:7:lib.pyg-ext-call',
    'gnn.py:11:lib.pyg-ext-call',
    // Megatron's grouped-GEMM wrapper module called as the kernels' own
    'grouped_mlp.py:2:lib.megatron',
    'grouped_mlp.py:3:lib.megatron',
    'grouped_mlp.py:9:lib.cuda-ops-call',
    'grouped_mlp.py:14:lib.cuda-ops-call',
    'grouped_mlp.py:16:lib.cuda-ops-call',
    // k2's Swoosh kernels and RNN-T loss on model tensors (its symbol table and CPU FSAs quiet)
    'k2_loss.py:7:lib.k2-kernels',
    'k2_loss.py:10:lib.k2-kernels',
    'k2_loss.py:14:lib.k2-kernels',
    // FlashFFTConv: the import and its two kernels' construction (the torch.fft path quiet)
    'long_conv.py:4:lib.cuda-ops',
    'long_conv.py:17:lib.cuda-ops-call',
    'long_conv.py:18:lib.cuda-ops-call',
    // PyTorch3D: the operators on pytorch3d._C at their calls (smoothing, Meshes quiet)
    'mesh.py:11:lib.pytorch3d-ops-call',
    'mesh.py:12:lib.pytorch3d-ops-call',
    'mesh.py:13:lib.pytorch3d-ops-call',
    'mesh.py:16:lib.pytorch3d-ops-call',
    'mesh.py:17:lib.pytorch3d-ops-call',
    'moe.py:2:lib.cuda-ops',
    'moe.py:3:lib.cuda-ops',
    'moe.py:7:lib.cuda-ops-call',
    'moe.py:8:lib.cuda-ops-call',
    'moe.py:13:lib.cuda-ops-call',
    'nerf.py:3:lib.cuda-ops',
    'nerf.py:9:lib.cuda-ops-call',
    'nerf.py:10:lib.cuda-ops-call',
    'quantization.py:3:lib.cuda-ops',
    'quantization.py:3:add.import-torch-npu',
    'quantization.py:10:lib.cuda-ops-call',
    'quantization.py:10:lib.cuda-ops-call',
    'quantization.py:15:device.cuda-string',
    'quantization.py:16:cuda.api',
    'quantization.py:18:lib.cuda-ops-call',
    // torch-quiver's UVA sampler and cache (matplotlib's quiver quiet); inplace_abn's import,
    // the class named as a default quiet
    'quiver_abn.py:2:lib.cuda-ops',
    'quiver_abn.py:4:lib.cuda-ops',
    'quiver_abn.py:9:lib.cuda-ops-call',
    'quiver_abn.py:10:lib.cuda-ops-call',
    'quiver_abn.py:11:lib.cuda-ops-call',
    // nvdiffrast's CUDA context where the module comes through a star import (the GL one quiet)
    'raster_star.py:9:lib.nvdiffrast-cuda-context',
    'requirements.txt:1:req.torch-npu',
    'requirements.txt:2:lib.cuda-ops',
    'requirements.txt:3:lib.cuda-ops',
    'requirements.txt:5:lib.bmtrain',
    'requirements.txt:6:lib.cuda-ops',
    'requirements.txt:7:lib.cuda-ops',
    'sampler.py:3:lib.cuda-ops',
    'sampler.py:8:lib.cuda-ops-call',
    'sparse_backbone.py:2:lib.cuda-ops',
    'ssm.py:2:lib.cuda-ops',
    'ssm.py:3:lib.cuda-ops',
    'ssm.py:14:lib.cuda-ops-call',
  ],
  'optim-data': [
    'hf_args.py:7:amp.hf-tf32',
    'hf_args.py:8:optim.hf-cuda-optim',
    'hf_args.py:13:optim.hf-cuda-optim',
    'hf_args.py:14:optim.hf-cuda-optim',
    // the same names as a declared or command-line default
    'hf_args.py:23:optim.hf-cuda-optim-default',
    'hf_args.py:27:optim.hf-cuda-optim-default',
    // transformers' CUDA-only availability helpers (its NPU one quiet)
    'precision_flags.py:1:hf.cuda-availability-helper',
    'precision_flags.py:4:hf.cuda-availability-helper',
    'precision_flags.py:5:hf.cuda-availability-helper',
    'timm_train.py:10:optim.timm-fused',
    'timm_train.py:18:optim.timm-fused',
    'train.py:5:optim.fused',
    'train.py:5:add.import-torch-npu',
    'train.py:10:optim.npu-fused',
    'train.py:12:optim.fused',
    'train.py:21:perf.pin-memory',
    'train.py:33:optim.fused-kwarg',
  ],
  packaging: [
    'environment.yml:5:req.cuda-wheel',
    'environment.yml:9:req.torch-npu',
    'environment.yml:10:req.cuda-wheel',
    'environment.yml:11:req.cuda-wheel',
    'environment.yml:12:req.cuda-wheel',
    'environment.yml:13:req.cuda-wheel',
    'environment.yml:18:lib.nvidia-only',
    'environment.yml:19:lib.cuda-ops',
    'environment.yml:20:lib.xformers',
    'environment.yml:21:req.cuda-wheel',
    'environment.yml:24:script.cuda-env',
    // the project's own CUDA extensions built in an image: make.sh, setup.py, pip install . in an
    // ops / csrc / *cuda* folder or below extensions/ (the project itself and its docs quiet)
    'ops-build.dockerfile:4:script.cuda-env',
    'ops-build.dockerfile:5:script.cuda-env',
    'ops-build.dockerfile:6:script.cuda-env',
    'ops-build.dockerfile:7:script.cuda-env',
    'ops-build.dockerfile:8:script.cuda-env',
    'pyproject.toml:6:req.torch-npu',
    'pyproject.toml:10:lib.fbgemm-gpu',
    'pyproject.toml:11:lib.xformers',
    // a library's CUDA wheel by URL is the library's one finding, not also a CUDA build's
    'pyproject.toml:12:lib.flash-attn',
    // a library and PyTorch's CUDA wheel side by side: each told
    'pyproject.toml:14:lib.xformers',
    'pyproject.toml:14:script.cuda-env',
    'pyproject.toml:17:lib.pynvml',
    'pyproject.toml:18:lib.cupy',
    'pyproject.toml:18:lib.flash-attn',
    'pyproject.toml:18:lib.triton',
    'pyproject.toml:19:req.cuda-wheel',
    'pyproject.toml:21:req.cuda-wheel',
    // uv's source naming the CUDA index, and the index itself
    'pyproject.toml:26:script.cuda-env',
    'pyproject.toml:30:script.cuda-env',
    'requirements.txt:1:req.cuda-wheel',
    'requirements.txt:1:req.torch-npu',
    'setup.py:4:req.torch-npu',
    'setup.py:6:lib.flash-attn',
    'setup.py:13:lib.triton',
    'setup.py:13:amp.apex',
  ],
  poetry: [
    'pyproject.toml:7:req.torch-npu',
    'pyproject.toml:8:lib.flash-attn',
    'pyproject.toml:9:lib.xformers',
    // CUDA builds pinned by their local version, in an inline table and as a plain string (the
    // other platform's constraint and a plain version quiet)
    'pyproject.toml:12:script.cuda-env',
    'pyproject.toml:15:script.cuda-env',
  ],
  profiling: [
    // the legacy autograd profiler timing CUDA events (use_cuda=False and no flag quiet)
    'legacy.py:3:add.import-torch-npu',
    'legacy.py:7:prof.autograd-use-cuda',
    'legacy.py:9:prof.autograd-use-cuda',
    'legacy.py:11:prof.autograd-use-cuda',
    'legacy.py:11:device.cuda-string',
    'nsys.sh:1:script.cann-env',
    // nsys, and its capture range opened by the CUDA profiler API on a continued line
    'nsys.sh:3:script.cuda-env',
    'nsys.sh:5:script.cuda-env',
    'spans.py:3:prof.torch-profiler',
    // NVTX's replacement is torch_npu.npu.mstx: the file imports torch_npu
    'spans.py:3:add.import-torch-npu',
    'spans.py:8:prof.torch-profiler',
    'spans.py:12:prof.torch-profiler',
    'spans.py:19:cuda.nvtx',
    'trace.py:3:prof.torch-profiler',
    'trace.py:4:add.import-torch-npu',
    'trace.py:8:prof.torch-profiler',
    'trace.py:9:prof.cuda-activity',
    'trace.py:10:prof.torch-profiler',
    'trace.py:16:prof.torch-profiler',
    'trace.py:17:prof.cuda-activity',
    'trace.py:18:prof.torch-profiler',
    'trace.py:26:prof.cuda-time-key',
  ],
  removals: [
    // a container entrypoint and a Makefile: the CUDA toolkit's path, NVIDIA's container runtime,
    // a device default, nsys; -gencode, nvcc, libcudart / c10_cuda
    'entrypoint.sh:4:script.cuda-env',
    'entrypoint.sh:5:script.cuda-env',
    'entrypoint.sh:6:script.cuda-env',
    'entrypoint.sh:7:script.cuda-env',
    'entrypoint.sh:9:script.cuda-env',
    'env.py:1:add.import-torch-npu',
    'env.py:3:env.cuda-alloc-conf',
    'env.py:4:env.cuda-launch-blocking',
    'env.py:10:env.cuda-launch-blocking',
    'launch_sft.sh:3:script.cann-env',
    'launch_sft.sh:4:script.cuda-env',
    'launch_sft.sh:6:script.cuda-env',
    'launch_sft.sh:9:script.cuda-env',
    'launch_sft.sh:13:script.cuda-env',
    'launch_sft.sh:14:script.cuda-env',
    'launch_sft.sh:17:script.cuda-env',
    // nvcc run from the CUDA toolkit's path: both told
    'launch_sft.sh:18:script.cuda-env',
    'launch_sft.sh:18:script.cuda-env',
    'launch_sft.sh:19:script.cuda-env',
    'launch_sft.sh:20:script.cuda-env',
    'launch.sbatch:3:script.cann-env',
    'launch.sbatch:4:script.cuda-env',
    'launch.sbatch:6:lib.flash-attn',
    'launch.sbatch:8:script.cuda-env',
    'launch.sbatch:9:script.cuda-env',
    // Habitat's Hydra override in upper case (rewritten HCCL)
    'launch.sbatch:11:script.cuda-env',
    'Makefile:3:script.cuda-env',
    'Makefile:4:script.cuda-env',
    'Makefile:6:script.cuda-env',
    'Makefile:7:script.cuda-env',
    'Makefile:13:script.cuda-env',
    'megatron_init.py:6:lib.megatron',
    'megatron_init.py:11:ext.cuda-home',
    'megatron_init.py:12:ext.fused-kernels-load',
    'oom_retry.py:4:add.import-torch-npu',
    'oom_retry.py:15:device.cuda-oom-text',
    'oom_retry.py:25:device.cuda-oom-text',
    'setup_env.py:4:add.import-torch-npu',
    'setup_env.py:8:cuda.backends',
    'setup_env.py:13:attn.xformers-switch',
    'setup_env.py:19:attn.flash-patch-call',
    'setup_env.py:21:device.cuda-method',
    'sft.yaml:3:script.cuda-env',
    // a batch directive's GPU request and NGC image (a comment naming one quiet)
    'shifter.sbatch:3:script.cuda-env',
    'shifter.sbatch:4:script.cuda-env',
    // a launcher config's setup list loading CUDA's modules (python's quiet)
    'submitit.yaml:5:script.cuda-env',
    'train_mem.py:4:add.import-torch-npu',
    'train_mem.py:4:add.compile-mode',
    'train_mem.py:6:attn.flash-patch-call',
    'train_mem.py:9:lib.flash-attn',
    'train_mem.py:17:lib.flash-attn-call',
    'train_mem.py:18:attn.sdpa',
    'train_mem.py:23:cuda.jit-fuser',
    'train.sh:1:script.cann-env',
    'train.sh:2:script.cuda-env',
    'train.sh:3:script.cuda-env',
  ],
  spawn: [
    // torch's DataParallel imported from its defining module, subclassed (Transformer-XL's
    // BalancedDataParallel)
    'balanced_dp.py:2:dist.data-parallel',
    'balanced_dp.py:2:add.import-torch-npu',
    'balanced_dp.py:5:dist.data-parallel',
    // a project's own DataParallel (CenterNet's, with chunk sizes): its import and its call
    'chunked_dp.py:2:dist.vendored-data-parallel',
    'chunked_dp.py:3:add.import-torch-npu',
    'chunked_dp.py:8:perf.ddp-bucket',
    'chunked_dp.py:9:dist.vendored-data-parallel',
    // buckets left at DDP's default (set, or passed on in **kwargs: quiet)
    'ddp_buckets.py:7:perf.ddp-bucket',
    'ddp_tutorial.py:5:add.import-torch-npu',
    'ddp_tutorial.py:5:add.compile-mode',
    'ddp_tutorial.py:11:add.set-device',
    'ddp_tutorial.py:11:dist.nccl',
    'ddp_tutorial.py:16:device.to-rank',
    'ddp_tutorial.py:22:add.set-device',
    'ddp_tutorial.py:23:dist.nccl',
    'ddp_tutorial.py:28:cuda.api',
    // a launcher with nothing CUDA in its words still starts ranks that need CANN's environment
    'dist_train.sh:1:script.cann-env',
    // a container run with the host's GPUs: nvidia-docker 1's NV_GPU, docker's --gpus
    'docker_run.sh:5:script.cuda-env',
    'docker_run.sh:6:script.cuda-env',
    // nvidia-docker's run alone (a Makefile target's); a mention and a variable set to it quiet
    'docker_run.sh:9:script.cuda-env',
    // CUDA_VISIBLE_DEVICES given as a keyword of a child's environment (OMP_NUM_THREADS quiet)
    'feature_workers.py:10:env.cuda-visible-devices-kwarg',
    // gloo as the only backend of a file that binds its ranks to GPUs or wraps a model in DDP,
    // positional or keyword; a barrier-only group, a CPU fallback beside nccl, a CPU-side
    // new_group and a CPU-only pool quiet
    'gloo_barrier.py:3:add.import-torch-npu',
    'gloo_barrier.py:7:add.set-device',
    'gloo_barrier.py:8:device.cuda-string',
    'gloo_cpu_fallback.py:3:add.import-torch-npu',
    'gloo_cpu_fallback.py:7:cuda.api',
    'gloo_cpu_fallback.py:8:add.set-device',
    'gloo_cpu_fallback.py:8:dist.nccl',
    'gloo_cpu_fallback.py:10:add.set-device',
    'gloo_cpu_only.py:6:add.set-device',
    'gloo_keyword.py:2:add.import-torch-npu',
    'gloo_keyword.py:6:add.set-device',
    'gloo_keyword.py:6:dist.gloo-device',
    'gloo_keyword.py:7:device.cuda-method',
    'gloo_keyword.py:8:perf.ddp-bucket',
    'gloo_ranks.py:6:add.import-torch-npu',
    'gloo_ranks.py:6:add.compile-mode',
    'gloo_ranks.py:12:dist.gloo-device',
    'gloo_ranks.py:17:device.torch-device-rank',
    'gloo_ranks.py:18:cuda.api',
    'gloo_ranks.py:22:perf.ddp-bucket',
    // command lines a launcher builds with CUDA_VISIBLE_DEVICES=… (a job script's template on
    // its own line); printed, logged, Windows' `set` and a help text, quiet
    'gpu_jobs.py:13:env.cuda-visible-devices-command',
    'gpu_jobs.py:18:env.cuda-visible-devices-command',
    // a CUDA device with its index given to a flag named for the GPU (`--gpu cuda:0`,
    // `--dev=cuda:1`) as to `--device`; a commented line, a bare index and an image tag's
    // version (`-t cuda:11.8`) quiet
    'har_job.sh:5:script.cuda-env',
    'har_job.sh:7:script.cuda-env',
    'har_job.sh:7:script.cuda-env',
    'launch.py:2:add.import-torch-npu',
    'launch.py:6:cuda.api',
    'launch.py:7:add.set-device',
    'launch.py:8:dist.nccl',
    // mmcv 1.x's CUDA model wrappers, imported and used (mmengine's quiet)
    'mm_dist.py:2:dist.mmcv-parallel',
    'mm_dist.py:3:add.import-torch-npu',
    'mm_dist.py:5:dist.mmcv-parallel',
    'mm_dist.py:10:dist.mmcv-parallel',
    'mm_dist.py:11:dist.mmcv-parallel',
    // mmcv 1.x's scatter, imported and called under the model's is_cuda (collate quiet)
    'mm_inference.py:2:dist.mmcv-scatter',
    'mm_inference.py:2:add.import-torch-npu',
    'mm_inference.py:9:device.is-cuda',
    'mm_inference.py:10:dist.mmcv-scatter',
    // mmengine's get_max_cuda_memory, imported and called (print_log quiet)
    'mm_memory.py:1:cuda.mmengine-cuda-memory',
    'mm_memory.py:7:cuda.mmengine-cuda-memory',
    // OpenNMT's one-dash -gpu_backend and a --dist_backend name NCCL (a file name quiet)
    'onmt_train.sh:4:script.cuda-env',
    'onmt_train.sh:5:script.cuda-env',
    // the rank as a device by keyword and through torch.device, a config's GPU index, the first
    // of a device_ids list, "cuda:{:d}".format(…), torch.device of a GPU list's element or of a
    // literal 0, a rank read from a config dict; a device from the command line and the CPU quiet
    'rank_devices.py:1:add.import-torch-npu',
    'rank_devices.py:6:device.torch-device-rank',
    'rank_devices.py:8:device.to-rank',
    'rank_devices.py:9:device.torch-device-rank',
    'rank_devices.py:10:device.to-rank',
    'rank_devices.py:18:device.to-rank',
    'rank_devices.py:19:device.to-rank',
    'rank_devices.py:24:device.cuda-string',
    'rank_devices.py:29:device.torch-device-rank',
    'rank_devices.py:30:device.torch-device-rank',
    'rank_devices.py:36:device.torch-device-rank',
    // tensors made on an integer rank, as a name and an attribute (the module's device quiet)
    'rank_tensors.py:2:add.import-torch-npu',
    'rank_tensors.py:10:device.factory-rank',
    'rank_tensors.py:13:device.factory-rank',
    // RPC over TensorPipe (imported and through the module), its backend renamed NPU_TENSORPIPE
    'rpc_worker.py:5:dist.rpc-tensorpipe-options',
    'rpc_worker.py:5:add.import-torch-npu',
    'rpc_worker.py:10:dist.rpc-tensorpipe-options',
    'rpc_worker.py:16:dist.rpc-tensorpipe-backend',
    'rpc_worker.py:24:dist.rpc-tensorpipe-options',
    // a Slurm job's GPU requests, three ways, and a GPU node feature (node and task counts, the
    // log, a partition quiet), and a short -d cuda:0 (a -d naming a folder quiet)
    'slurm_job.sh:5:script.cuda-env',
    'slurm_job.sh:6:script.cuda-env',
    'slurm_job.sh:7:script.cuda-env',
    'slurm_job.sh:8:script.cuda-env',
    'slurm_job.sh:11:script.cann-env',
    'slurm_job.sh:13:script.cuda-env',
    // the vendored Synchronized-BatchNorm's DataParallel and layers: imports and calls
    'sync_bn.py:4:dist.sync-bn-data-parallel',
    'sync_bn.py:5:dist.sync-bn-data-parallel',
    'sync_bn.py:5:add.import-torch-npu',
    'sync_bn.py:12:dist.sync-bn-data-parallel',
    'sync_bn.py:17:dist.sync-bn-data-parallel',
    'sync_bn.py:18:dist.sync-bn-data-parallel',
    // torchpack's dotted flag (a run directory named for it quiet)
    'torchpack_run.sh:3:script.cuda-env',
    // a Snakemake rule file: the GPU probe, the device pinning in its shell block
    'train.smk:2:script.cuda-env',
    'train.smk:10:script.cuda-env',
    'tutorial_process.py:5:add.import-torch-npu',
    'tutorial_process.py:5:add.compile-mode',
    'tutorial_process.py:9:device.cuda-method',
    'tutorial_process.py:13:dist.nccl',
    'tutorial_process.py:15:add.set-device',
    'tutorial_process.py:20:add.set-device',
    'tutorial_process.py:20:dist.nccl',
    // vLLM's PyNcclCommunicator (import and use) and ProcessGroupNCCL.Options
    'weight_sync.py:3:dist.vllm-pynccl',
    'weight_sync.py:3:lib.vllm',
    'weight_sync.py:3:add.import-torch-npu',
    'weight_sync.py:8:dist.nccl-api',
    'weight_sync.py:9:dist.vllm-pynccl',
  ],
  'tensor-types': [
    'legacy.py:1:add.import-torch-npu',
    'legacy.py:6:device.cuda-tensor-type',
    'legacy.py:7:cuda.api',
    'legacy.py:12:device.cuda-tensor-type',
    'legacy.py:13:device.cuda-tensor-type',
    // a tensor's own index as the device (also across lines), a device's index, a literal 0
    // (the tensor's device, a module's get_device(), a device from the command line quiet)
    'own_index.py:2:add.import-torch-npu',
    'own_index.py:7:device.to-rank',
    'own_index.py:9:device.to-rank',
    'own_index.py:11:device.to-rank',
    'own_index.py:12:device.to-rank',
  ],
  triton: [
    'clusters.py:6:lib.triton-kernel',
    'clusters.py:15:triton.num-ctas',
    'fast_math.py:4:add.import-torch-npu',
    'fast_math.py:7:lib.triton-kernel',
    'fast_math.py:11:triton.libdevice',
    'fast_math.py:19:triton.libdevice',
    'fast_math.py:28:triton.atomic-cas',
    'fast_math.py:37:cuda.api',
    'fast_math.py:37:triton.sm-count',
    'fast_math.py:38:cuda.api',
    'fast_math.py:44:triton.num-warps-computed',
    'fast_math.py:46:triton.block-grid',
    'fast_math.py:51:triton.num-warps',
    'fast_math.py:60:triton.inline-asm',
    'fast_math.py:71:triton.libdevice',
    'fast_math.py:80:triton.input-precision',
    'grids.py:10:lib.triton-kernel',
    'grids.py:31:triton.block-grid',
    // kernels registered with torch.library for CUDA's dispatch keys (a printed "CUDA" quiet)
    'registry.py:3:add.import-torch-npu',
    'registry.py:9:device.cuda-dispatch-key',
    'registry.py:10:device.cuda-dispatch-key',
    'registry.py:14:device.cuda-dispatch-key',
    'registry.py:20:device.cuda-dispatch-key-kwarg',
    // the autograd key kept by a helper, wherever it is registered
    'registry.py:25:device.autograd-cuda-key',
    'shim_pow.py:8:triton.libdevice',
    'shim_pow.py:11:lib.triton-kernel',
    'softmax_occupancy.py:6:triton.active-device',
    'softmax_occupancy.py:8:triton.device-limits',
    'softmax_occupancy.py:9:triton.device-limits',
    'softmax_occupancy.py:10:triton.device-limits',
    'softmax_occupancy.py:13:lib.triton-kernel',
    'softmax_occupancy.py:15:triton.num-warps',
    'softmax_occupancy.py:15:triton.num-stages',
    'softmax_occupancy.py:36:triton.kernel-registers',
    'tma.py:4:triton.tma',
    'tma.py:7:lib.triton-kernel',
    'tma.py:10:triton.tma',
    'tma.py:11:triton.tma',
    'tma.py:16:triton.tma',
    'tma.py:17:triton.tma',
    'tma.py:18:triton.block-grid',
  ],
};

describe('every construct, however it is written', () => {
  it.each(Object.keys(EXPECTED))('%s', async (family) => {
    const scan = await scanProject(join(VARIANTS, family));
    expect(where(scan)).toEqual(EXPECTED[family]);
  });
});

describe('what the variants say and fix', () => {
  it('torchvision operators are counted once per file, and quiet once torchvision_npu is imported', async () => {
    const scan = await scanProject(join(VARIANTS, 'vision-ops'));
    // RoIAlign, nms, torchvision.ops.batched_nms, ops.roi_align; not ops.box_area
    const f = find(scan, 'detect.py:11:lib.torchvision-ops');
    expect(f.message).toBe(
      'torchvision.ops.RoIAlign: a torchvision operator; on NPU tensors it runs through torchvision_npu (4 in this file).',
    );
    expect(f.fix?.description).toContain('import torchvision_npu');
    expect(scan.findings.filter((x) => x.file === 'ported.py')).toEqual([]);
  });

  it('each Horovod call is told its torch.distributed counterpart, or that DDP does its work', async () => {
    const scan = await scanProject(join(VARIANTS, 'horovod'));
    const fix = (at: string) => find(scan, at).fix?.description;
    expect(find(scan, 'train_hvd.py:3:dist.horovod').message).toBe(
      'horovod.torch: Horovod has no Ascend backend; NPU training runs on torch.distributed with HCCL.',
    );
    expect(fix('train_hvd.py:18:dist.horovod-call')).toContain('dist.init_process_group("hccl")');
    expect(fix('train_hvd.py:22:dist.horovod-call')).toMatch(
      /^Remove it: wrap the model in DistributedDataParallel/,
    );
    // by its imported name too, averaging as Horovod does
    expect(find(scan, 'train_hvd.py:14:dist.horovod-call').message).toContain(
      'horovod.torch.allreduce: from Horovod',
    );
    expect(fix('train_hvd.py:14:dist.horovod-call')).toContain('divide by the world size');
  });

  it('numba kernels are counted once per file; each monitor library is named', async () => {
    const scan = await scanProject(join(VARIANTS, 'gpu-libs'));
    // the import, @cuda.jit, cuda.grid, cuda.to_device and cuda.device_array_like; not @numba.njit
    expect(find(scan, 'kernels.py:5:lib.numba-cuda').message).toContain('(5 in this file)');
    expect(find(scan, 'monitor.py:2:lib.pynvml').message).toBe('gpustat reads NVIDIA GPUs only.');
    expect(find(scan, 'requirements.txt:4:lib.pynvml').message).toBe(
      'nvitop reads NVIDIA GPUs only.',
    );
  });

  it('NVIDIA-only libraries: each named, its own fix; the ONNX Runtime provider rewritten to CANN; a requirement spelled with its CUDA suffix', async () => {
    const scan = await scanProject(join(VARIANTS, 'gpu-libs'));
    const trt = find(scan, 'inference.py:6:lib.nvidia-only');
    expect(trt.message).toBe('tensorrt runs on NVIDIA GPUs only.');
    expect(trt.fix?.description).toMatch(/^Export the model to ONNX and compile it with ATC/);
    expect(find(scan, 'inference.py:5:lib.nvidia-only').fix?.description).toContain('acl');
    expect(find(scan, 'serve.py:3:lib.nvidia-only').fix?.description).toContain('vllm-ascend');
    expect(find(scan, 'requirements.txt:5:lib.nvidia-only').message).toBe(
      'cudf-cu12 runs on NVIDIA GPUs only.',
    );
    const after = migratedFiles(scan, 'rewrite', await pythonParser()).get('inference.py')!;
    expect(after.parses).toBe(true);
    expect(after.after).toContain('providers=["CANNExecutionProvider", "CPUExecutionProvider"]');
  });

  it('packaging metadata that pins torch gets torch_npu beside it; a CUDA wheel of a library is one finding that removes it', async () => {
    const scan = await scanProject(join(VARIANTS, 'packaging'));
    expect(find(scan, 'setup.py:4:req.torch-npu').message).toBe(
      'torch==2.1.0 pins torch but not torch_npu.',
    );
    const after = migratedFiles(scan, 'rewrite', await pythonParser());
    // the release built for torch 2.1.0 (version matrix), on its own line as the list is written
    expect(after.get('setup.py')!.after).toMatch(
      /\n {4}"torch==2\.1\.0",\n {4}"torch-npu==2\.1\.0\.post\d+",\n {4}"numpy",/,
    );
    // `torch>=2.1` names no release: told, not rewritten
    expect(find(scan, 'pyproject.toml:6:req.torch-npu').message).toBe(
      'torch>=2.1 pins torch but not torch_npu.',
    );
    expect(after.get('pyproject.toml')?.after ?? '').not.toContain('torch-npu');
    const libs = await scanProject(join(VARIANTS, 'gpu-libs'));
    expect(libs.findings.filter((f) => f.file === 'requirements.txt' && f.line === 8)).toHaveLength(
      1,
    );
    expect(
      migratedFiles(libs, 'rewrite', await pythonParser()).get('requirements.txt')!.after,
    ).not.toContain('cupy');
  });

  it('GradScaler without a device is CUDA\'s; device="cuda" is the same as "cuda"', async () => {
    const scan = await scanProject(join(VARIANTS, 'amp'));
    const f = find(scan, 'train.py:33:amp.grad-scaler-default');
    expect(f.message).toContain('torch.GradScaler() without a device');
    expect(f.fix?.description).toContain('torch.GradScaler("npu", …)');
    expect(find(scan, 'train.py:23:amp.grad-scaler-cuda').message).toContain(
      'torch.amp.GradScaler("cuda")',
    );
  });

  it('a float32 training loop is told once; not where the file or a project module it imports uses mixed precision', async () => {
    const scan = await scanProject(join(VARIANTS, 'amp'));
    const f = find(scan, 'fp32_train.py:18:amp.fp32-training');
    expect(f.severity).toBe('info');
    expect(f.fix?.description).toContain('torch.autocast(device_type="npu", dtype=torch.bfloat16)');
    expect(f.fix?.edits ?? []).toEqual([]);
    // advice that adds no device code: no `import torch_npu` with it
    expect(scan.findings.filter((x) => x.file === 'fp32_train.py')).toHaveLength(1);
    // train.py and apex_train.py scale their loss; pkg/loop.py (`from .net import Net`) and
    // run_pkg.py (`from pkg import net`) train a model whose forward runs under autocast
    expect(scan.findings.filter((x) => x.ruleId === 'amp.fp32-training')).toHaveLength(1);
  });

  it("a function imported from an extension gets the op's concrete fix", async () => {
    const scan = await scanProject(join(VARIANTS, 'ext-calls'));
    expect(find(scan, 'ops.py:30:ext.extension-call').fix?.description).toMatch(
      /torchvision\.ops\.nms/,
    );
    expect(find(scan, 'ops.py:11:ext.autograd-function').message).toContain(
      'ext_module.dynamic_voxelize_forward',
    );
  });

  it('set_device takes the rank the launcher passes: spawn(fn), spawn(fn=…), Process(target=…), and a helper the spawned function calls with its rank', async () => {
    const scan = await scanProject(join(VARIANTS, 'spawn'));
    const device = (at: string) => find(scan, at).fix!.edits.map((e) => e.text.trim());
    expect(device('ddp_tutorial.py:11:add.set-device')).toEqual(['torch.npu.set_device(rank)']);
    expect(device('ddp_tutorial.py:22:add.set-device')).toEqual(['torch.npu.set_device(gpu)']);
    expect(device('tutorial_process.py:15:add.set-device')).toEqual(['torch.npu.set_device(rank)']);
    expect(device('tutorial_process.py:20:add.set-device')).toEqual(['torch.npu.set_device(proc)']);
    expect(scan.findings.some((f) => f.fix?.edits.some((e) => e.text.includes('LOCAL_RANK')))).toBe(
      false,
    );
  });

  it('rewrite mode: no_grad for inference_mode (decorator and with), the NPU env variables, GradScaler("npu", …), no num_warps argument, removals removed; every file still compiles', async () => {
    const parser = await pythonParser();
    const out = tempDir();
    const changed = new Map<string, string>();
    for (const family of ['ops', 'removals', 'triton', 'amp']) {
      const scan = await scanProject(join(VARIANTS, family));
      for (const [file, m] of migratedFiles(scan, 'rewrite', parser)) {
        expect(m.parses).toBe(true);
        changed.set(`${family}/${file}`, m.after);
        const path = join(out, `${family}-${file.replace(/\//g, '-')}`);
        writeFileSync(path, m.after);
        if (file.endsWith('.py')) execFileSync('python3', ['-m', 'py_compile', path]);
      }
    }
    const rope = changed.get('ops/rope.py')!;
    expect(rope).toContain('    @torch.no_grad\n    def score(');
    expect(rope).toContain('        with torch.no_grad():\n');
    expect(rope).toContain('sparse=False)');
    const env = changed.get('removals/env.py')!;
    expect(env).toContain('os.environ["PYTORCH_NPU_ALLOC_CONF"] = "expandable_segments:True"');
    expect(env).toContain('os.environ.get("ASCEND_LAUNCH_BLOCKING") == "1"');
    expect(changed.get('removals/train.sh')).toBe(
      '#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\nexport PYTORCH_NPU_ALLOC_CONF=expandable_segments:True\nASCEND_LAUNCH_BLOCKING=1 torchrun --nproc_per_node=8 train_mem.py\n',
    );
    // CANN's environment before `set -u` (set_env.sh reads unset variables), after a job's directives
    expect(changed.get('removals/launch_sft.sh')).toContain(
      'source /usr/local/Ascend/ascend-toolkit/set_env.sh\nset -euo pipefail\n',
    );
    expect(changed.get('removals/launch.sbatch')).toContain(
      '#SBATCH --nodes=2\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n',
    );
    // removals proposed as removals: the patch call with its import, the nvFuser switch
    const mem = changed.get('removals/train_mem.py')!;
    expect(mem).not.toContain('replace_llama_attn_with_flash_attn');
    expect(mem).not.toContain('_jit_set_nvfuser_enabled');
    expect(mem).toContain('    torch._C._jit_set_profiling_executor(True)\n');
    expect(mem).toContain('import torch_npu\n');
    expect(changed.get('removals/setup_env.py')!).toContain('    configure()\n\n    model = ');
    // Megatron's nvcc build of its fused kernels goes; the project's own load() stays
    const megatron = changed.get('removals/megatron_init.py')!;
    expect(megatron).not.toContain('fused_kernels.load(args)');
    expect(megatron).toContain('    load(args)\n');
    // transfer mode applies the same removals (transfer_to_npu patches none of this)
    const transfer = migratedFiles(
      await scanProject(join(VARIANTS, 'removals')),
      'transfer',
      parser,
    ).get('train_mem.py')!;
    expect(transfer.parses).toBe(true);
    expect(transfer.after).not.toContain('replace_llama_attn_with_flash_attn');
    expect(changed.get('amp/train.py')).toContain(
      'scaler = torch.GradScaler("npu", enabled=enabled)',
    );
    // modules bound to aliases are renamed where imported, after torch_npu (which torch loads
    // by itself only from torch_npu 2.5.1 on)
    expect(changed.get('amp/amp_module.py')).toContain(
      'import torch\nimport torch_npu\nimport torch.npu as tcuda\nimport torch.npu.amp as amp\n',
    );
    // an out-of-memory test that holds for both runtimes' messages
    expect(changed.get('removals/oom_retry.py')).toContain('if "out of memory" in str(e):');
    expect(changed.get('triton/clusters.py')).toContain('(x, y, n, BLOCK=1024)\n');
    const triton = changed.get('triton/fast_math.py')!;
    expect(triton).not.toContain('num_warps=num_warps');
    expect(triton).toContain('            BLOCK=self.block,\n        )');
    // `.cuda()` that ends a call begun lines above: reported on its own line, and rewritten
    expect(changed.get('ops/alibi.py')).toContain(
      '        (batch, seq, heads, dim)\n    ).npu()\n',
    );
  });

  it('Hugging Face and diffusers switches, an upper-case backend, CUDA runtime wheels in pyproject: each says what it is and is rewritten', async () => {
    const parser = await pythonParser();
    const after = async (family: string, file: string) =>
      migratedFiles(await scanProject(join(VARIANTS, family)), 'rewrite', parser).get(file)!;
    const args = await after('optim-data', 'hf_args.py');
    expect(args.parses).toBe(true);
    expect(args.after).toContain('        tf32=False,\n        optim="adamw_torch_npu_fused",\n');
    expect(args.after).toContain('eight = dict(optim="adamw_torch_npu_fused")');
    // adamw_torch, tf32=False: left as written
    expect(args.after).toContain('tf32=False, optim="adamw_torch")');
    // timm's apex-fused names lose "fused"; a name passed through is told where it is written
    const timm = await after('optim-data', 'timm_train.py');
    expect(timm.after).toContain('p.add_argument("--opt", default="lamb", help="fusedadamw');
    expect(timm.after).toContain('opt="lookahead_adam"');
    expect(timm.after).toContain('opt=args.opt, lr=args.lr)');
    const hf = await scanProject(join(VARIANTS, 'optim-data'));
    expect(find(hf, 'hf_args.py:7:amp.hf-tf32').message).toContain('--tf32 requires Ampere');
    expect(find(hf, 'hf_args.py:8:optim.hf-cuda-optim').message).toBe(
      'optim="paged_adamw_32bit": a Trainer optimizer built on CUDA kernels.',
    );
    expect((await after('attention', 'diffusers_train.py')).after).toContain(
      '        unet.enable_npu_flash_attention()\n        controlnet.enable_npu_flash_attention()\n',
    );
    // torch reads the backend in any case: "NCCL" is told as written and becomes "HCCL"
    expect(find(await scanProject(join(VARIANTS, 'spawn')), 'launch.py:8:dist.nccl').message).toBe(
      'backend "NCCL" is NVIDIA\'s collective library.',
    );
    expect((await after('spawn', 'launch.py')).after).toContain(
      'backend="HCCL" if has_gpu else "GLOO"',
    );
    const pyproject = (await after('packaging', 'pyproject.toml')).after;
    expect(pyproject).toContain('runtime = [\n  "einops",\n]');
    // a library's CUDA wheel by URL is told, not pointed at a CPU index that has no such wheel;
    // PyTorch's own wheel becomes the CPU wheel of that release, index and build both
    expect(pyproject).toContain('"flash-attn @ https://download.pytorch.org/whl/cu121/flash_attn-');
    const cpuWheel = 'download.pytorch.org/whl/cpu/torch-2.1.0%2Bcpu-cp310-cp310-linux_x86_64.whl';
    expect(pyproject).toContain(`wheels = ["xformers", "torch @ https://${cpuWheel}"]`);
    expect((await after('packaging', 'requirements.txt')).after).toBe(
      `torch @ https://${cpuWheel}\n`,
    );
    // inline, the wheel is told, not cut out of the list
    expect(pyproject).toContain('cuda = ["nvidia-cudnn-cu12>=9", "numpy"]');
    // conda: the nvidia channel and the CUDA stack go, torch_npu joins the pip list
    const conda = (await after('packaging', 'environment.yml')).after;
    expect(conda).not.toMatch(/- nvidia #|pytorch-cuda|cudatoolkit|cudnn|nccl|nvidia-cublas/);
    expect(conda).toContain('  - pytorch\n  - conda-forge\n');
    expect(conda).toContain('  - pytorch=2.1.0\n  - numpy<2\n');
    expect(conda).toMatch(
      / {2}- pip:\n {6}- torch-npu==2\.1\.0\.post\d+\n {6}- lightning==2\.1\.3\n/,
    );
    expect(conda).toContain('      - warp-rnnt==0.7.0\n      - xformers==0.0.23\n  - sox\n');
    // a uv index of CUDA wheels becomes the CPU one (torch_npu runs that build on the NPU)
    expect(pyproject).toContain(
      'name = "pytorch-cu121"\nurl = "https://download.pytorch.org/whl/cpu"',
    );
    // in a launch script: the local version and the index, both on one line, one finding
    const sft = (await after('removals', 'launch_sft.sh')).after;
    expect(sft).toContain(
      'pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/cpu\n',
    );
    // PyG's wheels for a CUDA torch become its CPU ones, in a Dockerfile as in requirements
    expect((await after('installs', 'Dockerfile')).after).toContain(
      'pip install torch-scatter torch-cluster -f https://data.pyg.org/whl/torch-2.1.0+cpu.html\n',
    );
    expect((await after('installs', 'requirements.txt')).after).toContain(
      '-f https://data.pyg.org/whl/torch-2.1.0+cpu.html\ntorch-scatter==2.1.2\n',
    );
    expect((await after('installs', 'rl.yaml')).after).toContain(
      "  sim_device: npu:0\n  rl_device: 'npu:0'\n  graphics_device_id: 0\ntrain:\n  device: npu\n",
    );
    expect((await after('installs', 'run.sh')).after).toContain(
      'python train.py --rl_device npu:0 --sim-device npu:0 --device-ids 0,1\n',
    );
    const installs = await scanProject(join(VARIANTS, 'installs'));
    expect(find(installs, 'run.sh:3:lib.nvidia-only').message).toBe(
      'faiss-gpu runs on NVIDIA GPUs only.',
    );
    expect(find(installs, 'Dockerfile:8:lib.flash-attn').column).toBe(9);
    const removals = await scanProject(join(VARIANTS, 'removals'));
    expect(find(removals, 'launch_sft.sh:6:script.cuda-env').message).toContain(
      'torch.cuda in inline Python',
    );
    expect(find(removals, 'launch_sft.sh:13:script.cuda-env').message).toContain(
      'Turns on flash-attn',
    );
    const triton = await scanProject(join(VARIANTS, 'triton'), { lang: 'zh-CN' });
    expect(find(triton, 'tma.py:16:triton.tma').message).toBe(
      'triton.tools.experimental_descriptor.create_2d_tma_descriptor：Tensor Memory Accelerator 描述符（仅 NVIDIA Hopper）。',
    );
  });

  it('rewrite mode: torch.load gets map_location="cpu" as its last argument, after a trailing comma as written', async () => {
    const parser = await pythonParser();
    const migrated = migratedFiles(
      await scanProject(join(VARIANTS, 'trainers')),
      'rewrite',
      parser,
    ).get('load_checkpoints.py')!;
    expect(migrated.parses).toBe(true);
    expect(migrated.after).toContain('ckpt = torch.load(args.weights, map_location="cpu")\n');
    expect(migrated.after).toContain(
      'torch.load(os.path.join(args.pretrained, "model.pth"), map_location="cpu"))',
    );
    expect(migrated.after).toContain('th.load(\n        args.ckpt, map_location="cpu",\n    )');
    expect(migrated.after).toContain('pos = torch.load(args.weights, "cpu")\n');
  });

  it('rewrite mode: the PyTorch profiler becomes torch_npu.profiler where the module is written by its name, and the patch imports torch_npu', async () => {
    const parser = await pythonParser();
    const migrated = migratedFiles(
      await scanProject(join(VARIANTS, 'profiling')),
      'rewrite',
      parser,
    );
    const trace = migrated.get('trace.py')!;
    expect(trace.parses).toBe(true);
    // an import naming ProfilerActivity first is the profiler's all the same
    expect(trace.after).toContain(
      'from torch_npu.profiler import ProfilerActivity, profile, schedule\nfrom torch.profiler import record_function\nimport torch_npu\n',
    );
    expect(trace.after).toContain('    with torch_npu.profiler.profile(\n');
    expect(trace.after).toContain(
      'on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(logdir),',
    );
    expect(trace.after).not.toContain('ProfilerActivity.CUDA');
    // the profiler table sorted by the device column, not the CUDA one (zero on NPU)
    expect(trace.after).toContain('table(sort_by="self_device_time_total", row_limit=10)');
    expect(trace.after).toContain('table(sort_by="cpu_time_total")');
    // record_function is torch's alone, an alias is not the module's name: told, left as written;
    // the file gets torch_npu for NVTX's replacement (torch_npu.npu.mstx)
    const spans = migrated.get('spans.py')!;
    expect(spans.after).toContain(
      'from torch.profiler import profile, record_function\nimport torch_npu\n',
    );
    expect(spans.after).toContain('with profile(activities=[tp.ProfilerActivity.CPU]) as prof:');
    expect(spans.after).toContain('with tp.profile(activities=[tp.ProfilerActivity.CPU]):');
  });

  it('launch grids: one finding per file, counting every grid sized by blocks', async () => {
    const scan = await scanProject(join(VARIANTS, 'triton'));
    // the lambda, the inline launch, both cdiv of the grid function and of `grid = (…, …)`;
    // not a tile count, not the kernel's own tl.cdiv
    const grid = find(scan, 'grids.py:31:triton.block-grid');
    expect(grid.message).toContain('(6 in this file)');
    expect(grid.fix?.description).toContain('"num_vectorcore"');
    expect(grid.fix?.description).toContain('TRITON_ALL_BLOCKS_PARALLEL=1');
    // mm_kernel's second axis is for the same fix: fold it into the first
    expect(grid.fix?.description).toContain('fold a second or third grid axis into the first');
  });

  it('Inductor without CUTLASS: the backend list keeps ATen and Triton', async () => {
    const parser = await pythonParser();
    const builds = migratedFiles(await scanProject(join(VARIANTS, 'builds')), 'rewrite', parser);
    expect(builds.get('tune.py')!.after).toContain(
      'inductor_config.max_autotune_gemm_backends = "ATEN,TRITON"\ninductor_config.max_autotune_gemm_backends = "ATEN,TRITON"\n',
    );
  });

  it('Ray: GPU requests are told, a "GPU" bundle key and the NOSET switch are rewritten', async () => {
    const parser = await pythonParser();
    const ray = migratedFiles(await scanProject(join(VARIANTS, 'ray')), 'rewrite', parser);
    expect(ray.get('engines.py')!.after).toContain(
      'os.environ.get("RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES")',
    );
    expect(ray.get('engines.py')!.after).toContain('bundles = [{"NPU": 1, "CPU": 1} for');
    expect(ray.get('engines.py')!.after).toContain('info = {"accelerator": "GPU", "count": n}');
    expect(ray.get('launch.sh')!.after).toContain(
      'export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1\n',
    );
    const scan = await scanProject(join(VARIANTS, 'ray'), { lang: 'zh-CN' });
    expect(find(scan, 'engines.py:23:dist.ray-options-gpus').fix?.description).toBe(
      '用 resources={"NPU": n} 代替 num_gpus=n。',
    );
  });

  it('clusters and serving: the Ascend resource, KIND_MODEL, npu:hccl and the CPU tree method are written in', async () => {
    const parser = await pythonParser();
    const serving = migratedFiles(await scanProject(join(VARIANTS, 'serving')), 'rewrite', parser);
    const job = serving.get('pytorchjob.yaml')!.after;
    expect(job).toContain('                  huawei.com/Ascend910: 8\n');
    expect(job).toContain("                  'huawei.com/Ascend910': '8'\n");
    // a node label is told, not guessed at
    expect(job).toContain('nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB');
    expect(job).toContain('            device_type: npu\n');
    expect(serving.get('config.pbtxt')!.after).toContain('    kind: KIND_MODEL\n');
    const submit = serving.get('submit.py')!;
    expect(submit.parses).toBe(true);
    expect(submit.after).toContain('limits={"huawei.com/Ascend910": str(n_gpus)}');
    expect(submit.after).toContain('backend="npu:hccl,cpu:gloo"');
    expect(submit.after).toContain('backend="cpu:gloo,npu:hccl"');
    expect(submit.after).toContain('print("cuda:nccl is the default here")');
    expect(submit.after).toContain('os.environ["HCCL_ASYNC_ERROR_HANDLING"] = "1"');
    expect(serving.get('launch.sh')!.after).toContain(
      'export HCCL_ASYNC_ERROR_HANDLING=1\nexport TORCH_NCCL_AVOID_RECORD_STREAMS=1\n',
    );
    expect(serving.get('ds_config.json')!.after).toContain('"dist_backend": "hccl",');
    const tabular = migratedFiles(await scanProject(join(VARIANTS, 'tabular')), 'rewrite', parser);
    const gbdt = tabular.get('train_gbdt.py')!.after;
    expect(gbdt).toContain('{"tree_method": "hist", "predictor": "cpu_predictor", "max_depth": 8}');
    expect(gbdt).toContain('{"tree_method": "exact"}');
    expect(gbdt).toContain('label = "gpu_hist_runs"');
    expect(tabular.get('xgb.yaml')!.after).toContain(
      '  tree_method: hist\n  predictor: cpu_predictor\n',
    );
    const zh = await scanProject(join(VARIANTS, 'serving'), { lang: 'zh-CN' });
    expect(find(zh, 'submit.py:10:device.k8s-gpu-resource').message).toContain(
      '昇腾节点提供的 NPU 资源名为 huawei.com/Ascend910',
    );
    expect(find(zh, 'pytorchjob.yaml:12:script.cuda-env').message).toContain('节点标签');
  });

  it('trainers: the sharded scaler gets "npu", FSDP\'s rank is told with the NPU device to pass, zh-CN too', async () => {
    const parser = await pythonParser();
    const scan = await scanProject(join(VARIANTS, 'trainers'));
    const after = migratedFiles(scan, 'rewrite', parser).get('fsdp_train.py')!;
    expect(after.parses).toBe(true);
    expect(after.after).toContain('default = ShardedGradScaler("npu")');
    expect(after.after).toContain('on_npu = ShardedGradScaler("npu")\n');
    expect(find(scan, 'fsdp_train.py:14:dist.fsdp-int-device-id').fix?.description).toContain(
      'device_id=torch.device("npu", local_rank)',
    );
    const zh = await scanProject(join(VARIANTS, 'trainers'), { lang: 'zh-CN' });
    expect(find(zh, 'vitdet_train.py:5:amp.detectron2-amp-trainer').message).toContain(
      '基于 CUDA AMP 实现',
    );
    expect(find(zh, 'lora.sh:3:script.cuda-env').message).toContain(
      'bitsandbytes 的 8 位或分页优化器',
    );
  });

  it('a kernel library registered for CUDA dispatch keys is registered for PrivateUse1', async () => {
    const parser = await pythonParser();
    const scan = await scanProject(join(VARIANTS, 'triton'));
    const reg = migratedFiles(scan, 'rewrite', parser).get('registry.py')!;
    expect(reg.parses).toBe(true);
    expect(reg.after).toContain('lib.impl("abs", abs_kernel, "PrivateUse1")');
    expect(reg.after).toContain('lib.impl("gelu", gelu, "AutogradPrivateUse1")');
    expect(reg.after).toContain('        "PrivateUse1",\n    )');
    expect(reg.after).toContain('print("CUDA")');
    expect(reg.after).toContain('VENDOR = dict(vendor_name="nvidia", dispatch_key="PrivateUse1")');
    expect(reg.after).toContain('return "AutogradPrivateUse1" if autograd else "CUDA"');
  });

  it("a branch for another accelerator says where the NPU's goes, in both languages", async () => {
    const en = await scanProject(join(VARIANTS, 'accelerators'));
    expect(find(en, 'state.py:11:device.other-accelerator-check').message).toBe(
      'is_xpu_available(): a branch for another accelerator, and this file has none for the NPU.',
    );
    const zh = await scanProject(join(VARIANTS, 'accelerators'), { lang: 'zh-CN' });
    expect(find(zh, 'state.py:19:device.other-accelerator-name').fix?.description).toContain(
      '在旁边加上 NPU 的分支',
    );
  });

  it('zh-CN text for the new rules', async () => {
    const scan = await scanProject(join(VARIANTS, 'triton'), { lang: 'zh-CN' });
    expect(find(scan, 'softmax_occupancy.py:8:triton.device-limits').message).toContain(
      'Triton 驱动的 CUDA 设备属性',
    );
    expect(find(scan, 'fast_math.py:44:triton.num-warps-computed').fix?.description).toContain(
      '删除这段计算',
    );
    expect(find(scan, 'grids.py:31:triton.block-grid').message).toContain(
      '启动 grid 为每个块分配一个 Triton program',
    );
    const amp = await scanProject(join(VARIANTS, 'amp'), { lang: 'zh-CN' });
    expect(find(amp, 'fp32_train.py:18:amp.fp32-training').message).toContain(
      '本文件及其导入的项目模块都没有使用混合精度',
    );
    const lightning = await scanProject(join(VARIANTS, 'lightning'), { lang: 'zh-CN' });
    const trainer = find(lightning, 'train.py:8:device.lightning-gpu');
    expect(trainer.message).toBe('accelerator="gpu" 选择的是 Lightning 的 CUDA 加速器。');
    expect(trainer.fix?.description).toContain('torch.npu.set_device');
    const vision = await scanProject(join(VARIANTS, 'vision-ops'), { lang: 'zh-CN' });
    expect(find(vision, 'msda.py:3:ext.op-wrapper').fix?.description).toContain(
      'multi_scale_deformable_attn_pytorch',
    );
    const slurm = await scanProject(join(VARIANTS, 'removals'), { lang: 'zh-CN' });
    expect(find(slurm, 'launch.sbatch:4:script.cuda-env').message).toContain('set_env.sh');
    expect(find(slurm, 'launch_sft.sh:4:script.cuda-env').message).toContain('CPU 版本');
    expect(find(slurm, 'launch_sft.sh:9:script.cuda-env').message).toContain('import torch_npu');
    expect(find(slurm, 'launch_sft.sh:14:script.cuda-env').message).toContain('flash-attn');
    expect(find(slurm, 'launch_sft.sh:17:script.cuda-env').message).toContain('nvcc');
    const video = await scanProject(join(VARIANTS, 'video'), { lang: 'zh-CN' });
    expect(find(video, 'decode.py:18:video.nvdec-codec').message).toBe(
      '"h264_nvenc"：使用 NVIDIA NVDEC / NVENC 硬件的 ffmpeg 编解码器，昇腾主机上没有该硬件。',
    );
    expect(find(video, 'decode.py:10:video.decord-gpu').fix?.description).toContain(
      'decord.cpu(0)',
    );
    expect(find(video, 'transcode.sh:2:script.cuda-env').message).toContain('DVPP');
    const int4 = await scanProject(join(VARIANTS, 'ops'), { lang: 'zh-CN' });
    expect(find(int4, 'int4.py:6:op.int4pack').fix?.description).toContain(
      'torch_npu.npu_weight_quant_batchmatmul',
    );
    const rnn = await scanProject(join(VARIANTS, 'ops'), { lang: 'zh-CN' });
    expect(find(rnn, 'speech_rnn.py:11:op.packed-sequence').message).toBe(
      'torch.nn.utils.rnn.pack_padded_sequence：NPU 不支持打包序列。',
    );
    expect(find(slurm, 'launch_sft.sh:20:script.cuda-env').message).toContain('Ascend 的 apex');
    const attention = await scanProject(join(VARIANTS, 'attention'), { lang: 'zh-CN' });
    expect(find(attention, 'sdp_select.py:8:attn.sdp-kernel').message).toBe(
      'torch.backends.cuda.sdp_kernel 在 CUDA 的注意力内核之间做选择；NPU 不支持。',
    );
    const conda = await scanProject(join(VARIANTS, 'packaging'), { lang: 'zh-CN' });
    expect(find(conda, 'environment.yml:5:req.cuda-wheel').message).toBe(
      'channels: nvidia 会安装 CUDA 构建。',
    );
    expect(find(vision, 'wrappers.py:8:ext.op-wrapper').message).toBe(
      'DeformConv（来自 ..ops.dcn）：并非来自 torchvision 或 mmcv 的检测算子，多数是已编译的 CUDA 扩展。',
    );
    expect(find(vision, 'wrappers.py:9:ext.op-wrapper').fix?.description).toContain('nms_rotated');
    const ops = await scanProject(join(VARIANTS, 'op-libs'), { lang: 'zh-CN' });
    expect(find(ops, 'moe.py:2:lib.cuda-ops').fix?.description).toContain('npu_grouped_matmul');
    expect(find(ops, 'sparse_backbone.py:2:lib.cuda-ops').fix?.description).toContain(
      'mx_driving.spconv',
    );
    expect(find(ops, 'ssm.py:14:lib.cuda-ops-call').fix?.description).toContain(
      'selective_scan_ref',
    );
    const en = await scanProject(join(VARIANTS, 'op-libs'));
    expect(find(en, 'requirements.txt:2:lib.cuda-ops').message).toBe(
      'spconv-cu118: an operator library built only for CUDA.',
    );
    expect(find(en, 'nerf.py:9:lib.cuda-ops-call').fix?.description).toContain('nn.Linear');
    const timm = await scanProject(join(VARIANTS, 'optim-data'), { lang: 'zh-CN' });
    expect(find(timm, 'timm_train.py:10:optim.timm-fused').message).toBe(
      '"fusedlamb"：timm 中 apex 融合优化器的名字。',
    );
  });
});

describe('the variants when only what a rule can match is parsed', () => {
  // plain code after each file makes it long enough to be parsed in parts (short files are whole)
  const filler = Array.from(
    { length: 12 },
    (_, i) =>
      `\n\ndef helper_${i}(values, scale=1.0):\n    total = 0.0\n    for v in values:\n        total += v * scale\n    return total\n`,
  ).join('');
  it('find exactly what a whole parse finds, fixes included', async () => {
    const parser = await pythonParser();
    const files = readdirSync(VARIANTS, { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.py'),
    );
    expect(files.length).toBeGreaterThan(15);
    for (const f of files) {
      // between the imports and the code, and after it: what a rule needs is far from its import
      const text = readFileSync(join(VARIANTS, f), 'utf8');
      const cut = Math.max(0, text.indexOf('\n\n\n'));
      const src = `${text.slice(0, cut)}${filler}${text.slice(cut)}${filler}`;
      expect(src.length).toBeGreaterThan(2000);
      const narrowed = analyzeSource(parser, src, f, loadRules(), 'en');
      const whole = analyzeSource(parser, src, f, loadRules(), 'en', true);
      expect({ f, findings: narrowed.findings }).toEqual({ f, findings: whole.findings });
    }
  });
});
