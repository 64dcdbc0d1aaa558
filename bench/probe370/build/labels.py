# Labels for probe370 (weakly-supervised video anomaly detection, CUDA -> Ascend NPU).
# One label per upstream line a careful porter would edit; see README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_ENTRY = ("entry script: torch_npu must be imported before the first 'npu' device/torch.npu call "
                    "(autoload only from torch_npu 2.5.1; these projects pin older torch)")

# ----------------------------------------------------------------------------------------------
# RTFM (tianyu0207/RTFM): single-GPU, module-level torch.device("cuda"), .cuda() inside forward
# ----------------------------------------------------------------------------------------------
E("rtfm_main", "main.py", "explicit_replacement", "tianyu0207/RTFM main.py (training entry, visdom, 10-crop I3D features)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "hard-coded CUDA device; every .to(device) in train/test follows it"),
])
E("rtfm_train", "train.py", "explicit_replacement", "tianyu0207/RTFM train.py (RTFM_loss, sparsity/smooth losses)", [
    C("label = label.cuda()", "tensor_to_device", "replace", True, "label = label.npu()",
      "labels come from the CPU DataLoader; BCELoss needs them on the score's device"),
])
E("rtfm_model", "model.py", "explicit_replacement", "tianyu0207/RTFM model.py (Aggregate, non-local block, top-k magnitude selection)", [
    C("select_idx = torch.ones_like(nfea_magnitudes).cuda()", "tensor_to_device", "replace", True,
      "select_idx = torch.ones_like(nfea_magnitudes)",
      ".cuda() on an NPU tensor raises on a host without CUDA; ones_like already inherits the NPU device"),
    C("total_select_abn_feature = torch.zeros(0).cuda()", "tensor_to_device", "replace", True,
      "total_select_abn_feature = torch.zeros(0, device=inputs.device)", "accumulator for torch.cat with NPU features"),
    C("select_idx_normal = torch.ones_like(nfea_magnitudes).cuda()", "tensor_to_device", "replace", True,
      "select_idx_normal = torch.ones_like(nfea_magnitudes)", "same as select_idx"),
    C("total_select_nor_feature = torch.zeros(0).cuda()", "tensor_to_device", "replace", True,
      "total_select_nor_feature = torch.zeros(0, device=inputs.device)", "same as the abnormal accumulator"),
])
E("rtfm_test", "test_10crop.py", "explicit_replacement", "tianyu0207/RTFM test_10crop.py (AUC on frame-level GT)", [])
E("rtfm_dataset", "dataset.py", "explicit_replacement", "tianyu0207/RTFM dataset.py (10-crop feature lists)", [])
E("rtfm_utils", "utils.py", "explicit_replacement", "tianyu0207/RTFM utils.py (visdom Visualizer, process_feat)", [])

# ----------------------------------------------------------------------------------------------
# UR-DMU (henrryzh1/UR-DMU): .cuda() chains, wandb, released checkpoints loaded without map_location
# ----------------------------------------------------------------------------------------------
E("urdmu_main", "ucf_main.py", "explicit_replacement", "henrryzh1/UR-DMU ucf_main.py (training loop for UCF-Crime)", [
    C("=import torch.utils.data as data", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NPU_ENTRY + "; the file has no bare 'import torch', so it goes next to the first torch import"),
    C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "model placement"),
    C("shuffle = False, num_workers = config.num_workers, pin_memory = True,", "pin_memory", "replace", False,
      "shuffle = False, num_workers = config.num_workers, pin_memory = True, pin_memory_device = 'npu',",
      "without a pin_memory_device the loader pins for CUDA only and silently skips pinning on an NPU host; "
      "performance only (unconfirmed in knowledge)"),
])
E("urdmu_train", "train.py", "explicit_replacement", "henrryzh1/UR-DMU train.py (AD_Loss, one training step)", [
    C("panomaly_loss = self.bce(panomaly, torch.ones((b)).cuda())", "tensor_to_device", "replace", True,
      "panomaly_loss = self.bce(panomaly, torch.ones((b)).npu())", "target created on CUDA inside the loss"),
    C("A_loss = self.bce(A_att, torch.ones((b)).cuda())", "tensor_to_device", "replace", True,
      "A_loss = self.bce(A_att, torch.ones((b)).npu())", "target created on CUDA inside the loss"),
    C("_data = _data.cuda()", "tensor_to_device", "replace", True, "_data = _data.npu()", "batch to device"),
    C("_label = _label.cuda()", "tensor_to_device", "replace", True, "_label = _label.npu()", "labels to device"),
])
E("urdmu_test", "ucf_test.py", "explicit_replacement", "henrryzh1/UR-DMU ucf_test.py + ucf_infer.py (frame AUC/AP, standalone inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NPU_ENTRY + " (the __main__ block runs inference on its own)"),
    C("net.load_state_dict(torch.load(model_file))", "device_type", "replace", True,
      "net.load_state_dict(torch.load(model_file, map_location='cpu'))",
      "released ucf_trans_2022.pkl was saved from CUDA tensors; torch.load without map_location tries to "
      "restore them on CUDA and fails on an NPU host"),
    C("=temp_predict = torch.zeros((0)).cuda()", "tensor_to_device", "replace", True,
      "temp_predict = torch.zeros((0)).npu()", "accumulator for NPU predictions"),
    C("_data = _data.cuda()", "tensor_to_device", "replace", True, "_data = _data.npu()", "batch to device"),
    C("_label = _label.cuda()", "tensor_to_device", "replace", True, "_label = _label.npu()", "labels to device"),
    C("reset for the next video", "tensor_to_device", "replace", True,
      "temp_predict = torch.zeros((0)).npu()  # reset for the next video (10 crops)", "accumulator reset"),
    C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "model placement in the inference entry"),
])
E("urdmu_model", "model.py", "explicit_replacement", "henrryzh1/UR-DMU model.py (WSAD with dual memory units)", [])
E("urdmu_translayer", "translayer.py", "explicit_replacement", "henrryzh1/UR-DMU translayer.py (einops transformer)", [])
E("urdmu_utils", "utils.py", "explicit_replacement", "henrryzh1/UR-DMU utils.py (feature sampling, set_seed)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.cuda.manual_seed_all is queued lazily and does not raise without CUDA; torch.manual_seed on the "
      "line above already seeds registered accelerator backends in recent torch (unconfirmed for torch_npu) - "
      "reproducibility only"),
])

# ----------------------------------------------------------------------------------------------
# VadCLIP (nwpu-zxr/VadCLIP): "cuda if available else cpu" device string threaded everywhere
# ----------------------------------------------------------------------------------------------
E("vadclip_train", "src/ucf_train.py", "explicit_replacement", "nwpu-zxr/VadCLIP src/ucf_train.py (CLAS2/CLASM losses, training entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; reproducibility only (see urdmu_utils)"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "on an NPU host this silently selects the CPU (CLIP ViT-B/16 + training on CPU): wrong device, no error"),
])
E("vadclip_test", "src/ucf_test.py", "explicit_replacement", "nwpu-zxr/VadCLIP src/ucf_test.py (AUC/AP + detection mAP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "silently falls back to CPU on an NPU host"),
    C("model_param = torch.load(args.model_path)", "device_type", "replace", True,
      "model_param = torch.load(args.model_path, map_location=device)",
      "the released model_ucf.pth holds CUDA tensors; deserialising them needs CUDA"),
])
E("vadclip_model", "src/model.py", "explicit_replacement", "nwpu-zxr/VadCLIP src/model.py (CLIPVAD: temporal transformer + GCN + learnable prompts)", [])
E("vadclip_layers", "src/utils/layers.py", "explicit_replacement", "nwpu-zxr/VadCLIP src/utils/layers.py (GraphConvolution, DistanceAdj)", [
    C("self.dist = torch.from_numpy(squareform(dist)).cuda()", "tensor_to_device", "replace", True,
      "self.dist = torch.from_numpy(squareform(dist)).npu()",
      "DistanceAdj has no device argument and hard-codes CUDA; its output multiplies NPU features in gc3/gc4"),
])
E("vadclip_clip", "src/clip/clip.py", "explicit_replacement", "openai/CLIP clip/clip.py as vendored in VadCLIP src/clip/", [
    C('def load(name: str, device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu"',
      "device_type", "replace", False,
      'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", jit: bool = False, download_root: str = None):',
      "default only; CLIPVAD always passes its device explicitly, so nothing depends on it"),
])
E("vadclip_option", "src/ucf_option.py", "explicit_replacement", "nwpu-zxr/VadCLIP src/ucf_option.py (argparse)", [])

# ----------------------------------------------------------------------------------------------
# video_features (v-iashin/video_features): I3D feature extraction used by RTFM/UR-DMU pipelines.
# Multi-backend tool -> the porter keeps CUDA working and adds NPU branches.
# ----------------------------------------------------------------------------------------------
E("vfeat_utils", "utils/utils.py", "device_branch_or_abstraction", "v-iashin/video_features utils/utils.py (sanity_check, IO helpers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "try:\n    import torch_npu  # noqa: F401  registers the 'npu' device\nexcept ImportError:\n    torch_npu = None",
      "main.py imports utils.utils before any extractor, so this is the first torch import of the process; "
      "guarded so CUDA installs keep working"),
    C("args.device = 'cuda:0'", "device_type", "add_branch", False,
      "args.device = 'npu:0' if getattr(torch, 'npu', None) is not None and torch.npu.is_available() else 'cuda:0'",
      "only reached with the deprecated device_ids option"),
    C("if 'cuda' in args.device:", "device_type", "add_branch", False,
      "if 'cuda' in args.device: ...  elif 'npu' in args.device: assert torch.npu.is_available()",
      "adds the matching availability check for npu devices; without it an npu device simply skips the check"),
    C("assert 'cuda' in args.device, 'PWC-Net relies", "device_type", "add_branch", True,
      "assert args.device.startswith(('cuda', 'npu')), 'PWC-Net needs the cupy kernel (CUDA) or the torch correlation path (NPU); cannot run on CPU'",
      "with the torch correlation fallback in correlation.py PWC runs on NPU, but this assert would still reject device=npu"),
])
E("vfeat_cfg", "configs/i3d.yml", "device_branch_or_abstraction", "v-iashin/video_features configs/i3d.yml", [
    C("device: 'cuda:0'", "device_type", "replace", True, "device: 'npu:0'  # device as in `torch`, can be 'cuda:0' or 'cpu'",
      "default device of every run that does not override it on the command line"),
])
E("vfeat_base", "models/_base/base_extractor.py", "device_branch_or_abstraction", "v-iashin/video_features models/_base/base_extractor.py", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "elif 'npu' in str(self.device): torch.npu.empty_cache()",
      "releasing cached activations between long videos is memory hygiene, not correctness"),
])
E("vfeat_i3d", "models/i3d/extract_i3d.py", "device_branch_or_abstraction", "v-iashin/video_features models/i3d/extract_i3d.py (two-stream I3D with RAFT/PWC flow)", [])
E("vfeat_corr", "models/pwc/pwc_src/correlation.py", "kernel_rewrite", "sniklaus/pytorch-pwc correlation.py as vendored in video_features (cupy CUDA kernels)", [
    C("=import cupy", "custom_cuda_extension", "replace", True,
      "try:\n    import cupy\nexcept ImportError:  # no cupy on Ascend hosts\n    cupy = None",
      "cupy has no Ascend build (knowledge §6); the bare import fails on an NPU host"),
    C("@cupy.memoize(for_each_device=True)", "custom_cuda_extension", "replace", True,
      "@(cupy.memoize(for_each_device=True) if cupy is not None else (lambda f: f))",
      "the decorator is evaluated at import time"),
    C("ptr = torch.cuda.current_stream().cuda_stream", "torch_cuda_api", "replace", True,
      "ptr = torch.cuda.current_stream().cuda_stream if torch.cuda.is_available() else None",
      "class body runs at import; torch.cuda.current_stream() raises without CUDA"),
    C("class _FunctionCorrelation(torch.autograd.Function):", "custom_cuda_extension", "npu_only_addition", True,
      "def _correlation_torch(first, second):  # 81-channel (max displacement 4) cost volume with F.pad + shifted products, mean over C; autograd handles backward",
      "rewrite of the rearrange/updateOutput kernels in plain torch ops so PWC-Net runs on NPU"),
    C("return _FunctionCorrelation.apply(tenFirst, tenSecond)", "custom_cuda_extension", "add_branch", True,
      "return _correlation_torch(tenFirst, tenSecond) if tenFirst.device.type == 'npu' else _FunctionCorrelation.apply(tenFirst, tenSecond)",
      "dispatch: NPU tensors take the torch path, CUDA keeps the cupy kernels"),
])
E("vfeat_pwc", "models/pwc/pwc_src/pwc_net.py", "device_branch_or_abstraction", "sniklaus/pytorch-pwc run.py network as vendored in video_features", [
    C("backwarp_tenGrid[str(tenFlow.shape)] = torch.cat([tenHor, tenVer], 1).cuda()", "tensor_to_device", "replace", True,
      "backwarp_tenGrid[str(tenFlow.shape)] = torch.cat([tenHor, tenVer], 1).to(tenFlow.device)",
      "sampling grid is built on CPU and pushed to CUDA; grid_sample needs it on the flow's device"),
])
E("vfeat_docker", "Dockerfile", "device_branch_or_abstraction", "v-iashin/video_features Dockerfile", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-runtime-ubuntu20.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu20.04-py3.8  # CANN base image; exact tag unconfirmed",
      "the CUDA runtime image has no CANN toolkit/driver libraries for torch_npu"),
    C("RUN pip install --no-cache-dir torch==1.12.1+cu113", "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 torch-npu==2.1.0.post10",
      "+cu113 wheels are CUDA builds; torch_npu 2.1.0.post10 pairs with torch 2.1.0 and CANN 8.0.0 (knowledge §1.2)"),
    C("RUN pip install --no-cache-dir cupy-cuda113==10.6.0", "custom_cuda_extension", "removal", False, None,
      "dead weight once correlation.py guards the import; whether the CUDA wheel even installs on the Ascend "
      "(aarch64) image is unconfirmed"),
    C('CMD ["python", "main.py", "feature_type=i3d", "device=cuda:0", "on_extraction=print"]', "device_type", "replace", True,
      'CMD ["python", "main.py", "feature_type=i3d", "device=npu:0", "on_extraction=print"]',
      "the image's default command would trip the CUDA availability assert"),
])

# ----------------------------------------------------------------------------------------------
# LAVAD (lucazanella/lavad): training-free VAD with BLIP-2 captions + Llama-2 (fairscale MP, torchrun)
# ----------------------------------------------------------------------------------------------
E("lavad_scorer", "src/models/llm_anomaly_scorer.py", "explicit_replacement", "lucazanella/lavad LLM scoring entry (Llama-2-chat prompts -> frame scores)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY + " (torchrun -m target)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA was never initialised, so nothing fails; NPU cache is just not released"),
])
E("lavad_generation", "libs/llama/llama/generation.py", "explicit_replacement", "meta-llama/llama generation.py as vendored in LAVAD libs/llama", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "library module; the torchrun entry (llm_anomaly_scorer) already imports torch_npu first"),
    C('torch.distributed.init_process_group("nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group("hccl")', "NCCL is not available on Ascend; model-parallel collectives go through HCCL"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "per-rank device binding"),
    C("torch.set_default_tensor_type(torch.cuda.HalfTensor)", "torch_cuda_api", "replace", True,
      "torch.set_default_dtype(torch.float16); torch.set_default_device('npu')",
      "Ascend's 2.7.1 API table: set_default_tensor_type does not accept torch.npu.*Tensor types, so the "
      "1:1 rename is not enough; default dtype + default device reproduce 'build the model in fp16 on the device'"),
    C('tokens = torch.full((bsz, total_len), pad_id, dtype=torch.long, device="cuda")', "device_type", "replace", True,
      'tokens = torch.full((bsz, total_len), pad_id, dtype=torch.long, device="npu")', "explicit device string"),
    C('tokens[k, : len(t)] = torch.tensor(t, dtype=torch.long, device="cuda")', "device_type", "replace", True,
      'tokens[k, : len(t)] = torch.tensor(t, dtype=torch.long, device="npu")', "explicit device string"),
    C('eos_reached = torch.tensor([False] * bsz, device="cuda")', "device_type", "replace", True,
      'eos_reached = torch.tensor([False] * bsz, device="npu")', "explicit device string"),
])
E("lavad_model", "libs/llama/llama/model.py", "explicit_replacement", "meta-llama/llama model.py as vendored in LAVAD libs/llama", [
    C("output = self._norm(x.float()).type_as(x)", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]",
      "fused RMSNorm (knowledge §5) replacing _norm + weight multiply (the following return goes with it); "
      "performance only, and it normalises in the input dtype instead of fp32"),
    C("xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)", "npu_fused_op", "replace", False,
      "xq_out = torch_npu.npu_rotary_mul(xq.float(), cos, sin, rotary_mode='interleave').flatten(3)",
      "complex64 RoPE; view_as_complex/view_as_real are supported (fp32), whether the complex multiply has an "
      "NPU kernel is unconfirmed -> at worst a CPU fallback; fused RoPE is the performance option and needs real "
      "cos/sin tables precomputed instead of freqs_cis"),
    C("xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)", "npu_fused_op", "replace", False,
      "xk_out = torch_npu.npu_rotary_mul(xk.float(), cos, sin, rotary_mode='interleave').flatten(3)", "same as xq_out"),
    C("self.cache_k = torch.zeros(", "tensor_to_device", "replace", True,
      "self.cache_k = torch.zeros((args.max_batch_size, args.max_seq_len, self.n_local_kv_heads, self.head_dim)).npu()",
      "KV cache allocated with .cuda()"),
    C("self.cache_v = torch.zeros(", "tensor_to_device", "replace", True,
      "self.cache_v = torch.zeros((args.max_batch_size, args.max_seq_len, self.n_local_kv_heads, self.head_dim)).npu()",
      "KV cache allocated with .cuda()"),
])
E("lavad_caption", "src/models/image_text_caption.py", "explicit_replacement", "lucazanella/lavad BLIP-2 frame captioning script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silently captions on CPU (fp16 BLIP-2 6.7B) on an NPU host"),
])
E("lavad_sh", "scripts/04_query_llm_summaries.sh", "explicit_replacement", "lucazanella/lavad scripts/04_query_llm_summaries.sh", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced in the login profile of an Ascend host"),
    C("CUDA_VISIBLE_DEVICES=$GPU_IDS torchrun", "env_var", "replace", True, "ASCEND_RT_VISIBLE_DEVICES=$GPU_IDS torchrun \\",
      "CUDA_VISIBLE_DEVICES is ignored on Ascend: GPU_IDS=2,3 would silently run both ranks on NPUs 0,1"),
])

# ----------------------------------------------------------------------------------------------
# Holmes-VAD (pipixin321/HolmesVAD): Video-LLaVA based multimodal LLM, deepspeed + flash-attn patch
# ----------------------------------------------------------------------------------------------
E("holmes_patch", "holmesvad/train/llama_flash_attn_monkey_patch.py", "kernel_rewrite",
  "pipixin321/HolmesVAD holmesvad/train/llama_flash_attn_monkey_patch.py (from LLaVA/FastChat)", [
    C("=from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func", "attention_kernel", "replace", True,
      "import torch_npu", "flash-attn cannot be installed on Ascend (knowledge §6); npu_fusion_attention replaces it"),
    C("flash_attn_varlen_qkvpacked_func as flash_attn_unpadded_qkvpacked_func", "attention_kernel", "replace", False,
      "raise", "except branch is unreachable once the try imports torch_npu"),
    C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", "replace", True,
      "from holmesvad.train.bert_padding import unpad_input, pad_input  # pure-torch copy of flash_attn.bert_padding",
      "the helpers are plain torch but live in the uninstallable flash_attn package"),
    C("key_padding_mask = attention_mask", "attention_kernel", "npu_only_addition", True,
      "causal_mask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=qkv.device), diagonal=1)",
      "npu_fusion_attention with sparse_mode=3 takes an explicit 2048x2048 upper-triangular mask (knowledge §5)"),
    C("output = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      'output = torch_npu.npu_fusion_attention(qkv[:, 0], qkv[:, 1], qkv[:, 2], self.num_heads, "TND", atten_mask=causal_mask, scale=self.head_dim ** -0.5, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]',
      "varlen packed QKV -> TND layout with cumulative lengths; the following argument line goes with it"),
    C("output_unpad = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      'output_unpad = torch_npu.npu_fusion_attention(qkv[:, 0], qkv[:, 1], qkv[:, 2], self.num_heads, "TND", atten_mask=causal_mask, scale=self.head_dim ** -0.5, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]',
      "padded batch path after unpad_input"),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", "removal", True, None,
      "raises without CUDA (and the NPU returns no capability); the A100 warning is meaningless on Ascend"),
    C("if cuda_major < 8:", "device_capability_check", "removal", True, None, "uses the removed capability variables"),
    C('warnings.warn("Flash attention is only supported on A100', "device_capability_check", "removal", True, None,
      "body of the removed if; left alone it is an indentation error"),
])
E("holmes_builder", "holmesvad/model/builder.py", "explicit_replacement", "pipixin321/HolmesVAD holmesvad/model/builder.py (Video-LLaVA load_pretrained_model)", [
    C('device_map="auto", device="cuda", **kwargs', "device_type", "replace", True,
      'def load_pretrained_model(model_path, model_base, model_name, load_8bit=False, load_4bit=False, device_map="auto", device="npu", **kwargs):',
      "default device; the eval/demo callers rely on it and it reaches image_tower.to(device=device)"),
    C('if device != "cuda":', "device_type", "replace", False, 'if device != "npu":',
      "with device='npu' and the old comparison the model gets device_map={'': 'npu'} instead of 'auto' - "
      "still correct on a single card, so cosmetic"),
    C("video_tower.to(device='cuda', dtype=torch.float16)", "device_type", "replace", True,
      "video_tower.to(device=device, dtype=torch.float16)", "hard-coded CUDA placement of the LanguageBind video tower"),
])
E("holmes_cli", "holmesvad/serve/cli.py", "explicit_replacement", "pipixin321/HolmesVAD holmesvad/serve/cli.py (Video-LLaVA CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C(".unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "input_ids = tokenizer_image_token(prompt, tokenizer, IMAGE_TOKEN_INDEX, return_tensors='pt').unsqueeze(0).to(model.device)",
      "prompt ids to the model's device"),
    C('parser.add_argument("--device", type=str, default="cuda")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu")', "default device passed to load_pretrained_model"),
])
E("holmes_sh", "scripts/finetune_lora.sh", "explicit_replacement", "pipixin321/HolmesVAD scripts/finetune_lora.sh (deepspeed LoRA instruction tuning)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already in the login profile"),
    C("--tf32 True \\", "device_capability_check", "removal", True, None,
      "HF TrainingArguments raises for tf32=True when is_torch_tf32_available() is False (an Ampere/CUDA check; "
      "knowledge §2.7 lists it as CUDA-only) - the flag has to go on Ascend"),
])
