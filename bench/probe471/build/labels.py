"""Labels for probe471 (protein language models / protein design, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port
(torch.npu.*, 'npu', hccl; no transfer_to_npu). Target stack assumed throughout:
torch 2.1.0 (CPU wheel) + torch-npu 2.1.0.post10 + CANN 8.0.0 (knowledge §1.2), i.e. a
torch_npu older than 2.5.1, so `import torch_npu` is still needed in entry scripts.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu < 2.5.1 has no backend autoload, so torch.npu / the 'npu' device "
               "do not exist until torch_npu is imported (knowledge §1.1)")

# --------------------------------------------------------------------------------------------
# facebookresearch/esm
# --------------------------------------------------------------------------------------------
E("esm_extract", "scripts/extract.py", "explicit_replacement",
  "facebookresearch/esm scripts/extract.py (esm-extract CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_gpu = torch.cuda.is_available() and not args.nogpu", "torch_cuda_api", "replace", True,
      "use_gpu = torch.npu.is_available() and not args.nogpu",
      "False on an NPU host, so the model and tokens silently stay on the CPU"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "moves ESM weights to the accelerator"),
    C('toks = toks.to(device="cuda", non_blocking=True)', "device_type", "replace", True,
      'toks = toks.to(device="npu", non_blocking=True)',
      "tokens must follow the model; 'cuda' fails without CUDA"),
])

E("esm_fold", "scripts/fold.py", "explicit_replacement",
  "facebookresearch/esm scripts/fold.py (esm-fold / ESMFold inference CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('backend="nccl", init_method="tcp://localhost:9999"', "dist_backend", "replace", True,
      'backend="hccl", init_method="tcp://localhost:9999", world_size=1, rank=0',
      "--cpu-offload path builds a 1-rank FSDP group; NCCL is not available on Ascend"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "folding trunk of the CPU-offload variant"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "default (non-offload) path"),
    C('if e.args[0].startswith("CUDA out of memory"):', "torch_cuda_api", "replace", False,
      'if e.args[0].startswith(("CUDA out of memory", "NPU out of memory")):',
      "OOM skip-and-continue matches the CUDA allocator message; the torch_npu OOM text is not in "
      "/work/shared/knowledge (unconfirmed) - unchanged, an NPU OOM aborts the whole run instead of skipping"),
])

E("esm_pretrained", "esm/pretrained.py", "explicit_replacement",
  "facebookresearch/esm esm/pretrained.py (hub / local checkpoint loading)", [])

E("esm_esm2", "esm/model/esm2.py", "explicit_replacement",
  "facebookresearch/esm esm/model/esm2.py (ESM-2 model)", [])

E("esm_env", "environment.yml", "explicit_replacement",
  "facebookresearch/esm environment.yml (ESMFold conda env)", [
    C("conda-forge::python=3.7", "import_torch_npu", "replace", True, "- conda-forge::python=3.9",
      "torch 2.1 (the oldest torch with a maintained torch_npu here) supports Python 3.8-3.11 (knowledge §1.4)"),
    C("conda-forge::cudatoolkit==11.3.*", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime is dead weight once torch comes from the CPU wheel; inert rather than fatal"),
    C("pytorch::pytorch=1.12.*", "import_torch_npu", "removal", True, None,
      "there is no torch_npu for torch 1.12; torch moves to pip (CPU wheel) next to torch-npu"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch==2.1.0",
      "CPU torch pinned to the exact version torch-npu was built for (knowledge §1.1)"),
    C("biopython==1.79", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
      "the Ascend adapter itself (pairs with CANN 8.0.0, knowledge §1.2)"),
])

# --------------------------------------------------------------------------------------------
# agemagician/ProtTrans
# --------------------------------------------------------------------------------------------
E("prott5_embed", "Embedding/prott5_embedder.py", "explicit_replacement",
  "agemagician/ProtTrans Embedding/prott5_embedder.py (ProtT5 per-residue/per-protein embeddings)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "module-level device global; unchanged it silently selects the CPU (and then casts the half model to fp32)"),
])

E("prott5_lora", "Fine-Tuning/PT5_LoRA_Finetuning_per_residue_class.py", "explicit_replacement",
  "agemagician/ProtTrans Fine-Tuning/PT5_LoRA_Finetuning_per_residue_class (notebook export, HF Trainer + DeepSpeed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("get_device_map(len(self.encoder.block), range(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "get_device_map(len(self.encoder.block), range(torch.npu.device_count()))",
      "HF naive model-parallel helper; parallelize() is never called in this script"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "in the unused deparallelize(); a no-op without CUDA, so only memory hygiene"),
    C("elif half_precision and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "elif half_precision and torch.npu.is_available():",
      "with mixed=True the script raises 'Half precision can be run on GPU only.' on an NPU host"),
    C(".to(torch.device('cuda'))", "device_type", "replace", True,
      "model = T5EncoderModel.from_pretrained(\"Rostlab/prot_t5_xl_half_uniref50-enc\", torch_dtype=torch.float16).to(torch.device('npu'))",
      "fp16 encoder placement"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu - 1)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu - 1)',
      "the gpu= argument is silently ignored on Ascend otherwise (set before first device use, so the "
      "runtime still reads it)"),
    C('device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type", "replace", True,
      'device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "test-set prediction would silently run on the CPU"),
])

# --------------------------------------------------------------------------------------------
# dauparas/ProteinMPNN
# --------------------------------------------------------------------------------------------
E("mpnn_run", "protein_mpnn_run.py", "explicit_replacement",
  "dauparas/ProteinMPNN protein_mpnn_run.py (sequence design CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; here the imports live inside main()"),
    C('device = torch.device("cuda:0" if (torch.cuda.is_available()) else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if (torch.npu.is_available()) else "cpu")',
      "single device variable that every tensor and torch.load(map_location=device) follow"),
])

E("mpnn_utils", "protein_mpnn_utils.py", "explicit_replacement",
  "dauparas/ProteinMPNN protein_mpnn_utils.py (model + featurisation, abridged)", [])

E("mpnn_train", "training/training.py", "explicit_replacement",
  "dauparas/ProteinMPNN training/training.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "a CUDA GradScaler disables itself without CUDA, so fp16 gradients under NPU autocast go unscaled (underflow)"),
    C('device = torch.device("cuda:0" if (torch.cuda.is_available()) else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if (torch.npu.is_available()) else "cpu")', "training device"),
    C("checkpoint = torch.load(PATH)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(PATH, map_location=device)",
      "--previous_checkpoint files written by GPU runs hold CUDA tensors; deserialising them without CUDA raises"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "--mixed_precision (default True) would silently train in fp32 on NPU"),
])

E("mpnn_train_utils", "training/utils.py", "explicit_replacement",
  "dauparas/ProteinMPNN training/utils.py (PDB dataset / loaders, abridged)", [])

E("mpnn_submit_train", "training/submit_exp_020.sh", "explicit_replacement",
  "dauparas/ProteinMPNN training/submit_exp_020.sh (SLURM)", [
    C("#SBATCH --gres=gpu:a100:1", "device_type", "replace", False, "#SBATCH --gres=npu:1",
      "GRES name is site-specific (unconfirmed); the job still starts on a mis-named request only if the site maps it"),
    C("=source activate mlfold-test", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "sbatch exports the submitting shell's environment by default, so CANN may already be set"),
])

E("mpnn_submit_example", "examples/submit_example_4.sh", "explicit_replacement",
  "dauparas/ProteinMPNN examples/submit_example_4.sh (SLURM, fixed positions)", [
    C("#SBATCH --gres=gpu:rtx2080:1", "device_type", "replace", False, "#SBATCH --gres=npu:1",
      "site-specific GRES name (unconfirmed)"),
    C("=source activate mlfold", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "same as training submit script: inherited environment usually suffices"),
])

# --------------------------------------------------------------------------------------------
# RosettaCommons/RFdiffusion (+ the vendored NVIDIA SE(3)-Transformer)
# --------------------------------------------------------------------------------------------
E("rfd_run", "scripts/run_inference.py", "explicit_replacement",
  "RosettaCommons/RFdiffusion scripts/run_inference.py (hydra entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only picks the start-up log message; device choice lives in model_runners.py"),
    C("device_name = torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "device_name = torch.npu.get_device_name(torch.npu.current_device())",
      "once the guard above is ported this line runs on NPU hosts and the CUDA call raises"),
    C("device=torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "device=torch.npu.get_device_name(torch.npu.current_device())",
      "trb metadata; same guard logic as the start-up log"),
    C("=if torch.cuda.is_available()", "torch_cuda_api", "replace", False, "if torch.npu.is_available()",
      "unchanged it only records 'CPU' in the .trb metadata"),
])

E("rfd_runners", "rfdiffusion/inference/model_runners.py", "explicit_replacement",
  "RosettaCommons/RFdiffusion rfdiffusion/inference/model_runners.py (Sampler)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "the real device decision for the whole sampler; unchanged, diffusion silently runs on the CPU"),
    C("self.device = torch.device('cuda')", "device_type", "replace", True, "self.device = torch.device('npu')",
      "checkpoint map_location and every .to(self.device) follow this"),
])

E("rfd_track", "rfdiffusion/Track_module.py", "explicit_replacement",
  "RosettaCommons/RFdiffusion rfdiffusion/Track_module.py (three-track blocks)", [
    C("@torch.cuda.amp.autocast(enabled=False)", "amp", "replace", False, "@torch.npu.amp.autocast(enabled=False)",
      "keeps the SE(3) block in fp32 under an outer autocast; RFdiffusion inference runs no autocast, so inert here"),
])

E("rfd_util_module", "rfdiffusion/util_module.py", "explicit_replacement",
  "RosettaCommons/RFdiffusion rfdiffusion/util_module.py (DGL graph builders, abridged)", [])

E("rfd_se3_utils", "env/SE3Transformer/se3_transformer/runtime/utils.py", "explicit_replacement",
  "NVIDIA DeepLearningExamples SE3Transformer runtime/utils.py as vendored in RFdiffusion env/", [
    C("return x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "return x.npu(non_blocking=True)",
      "to_cuda() helper used by the SE(3) training/benchmark loops"),
    C("return x.to(device=torch.cuda.current_device(), non_blocking=True)", "torch_cuda_api", "replace", True,
      "return x.to(device=torch.npu.current_device(), non_blocking=True)",
      "graph/object branch of to_cuda(); (DGL itself has no NPU backend - see README)"),
    C("backend = 'nccl' if torch.cuda.is_available() else 'gloo'", "dist_backend", "replace", True,
      "backend = 'hccl' if torch.npu.is_available() else 'gloo'",
      "unchanged it picks gloo, which cannot all-reduce NPU tensors"),
    C("if backend == 'nccl':", "dist_backend", "replace", True, "if backend == 'hccl':",
      "backend-string comparison (never rewritten automatically, knowledge §2.4); unchanged every rank stays on device 0"),
    C("torch.cuda.set_device(get_local_rank())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(get_local_rank())", "per-rank device binding"),
    C("_libcudart = ctypes.CDLL('libcudart.so')", "torch_cuda_api", "replace", True,
      "return  # cudaLimitMaxL2FetchGranularity has no Ascend equivalent",
      "ctypes call into the CUDA runtime; OSError on a host without libcudart (rest of the body becomes dead code)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA; torch.manual_seed on the line above should already seed registered "
      "PrivateUse1 devices (unconfirmed in knowledge), so reproducibility only"),
    C("major_cc, minor_cc = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "major_cc, minor_cc = 8, 0  # Ascend cube units take fp16/bf16 matmuls; no tensor-core generations",
      "raises without CUDA; torch.npu.get_device_capability() returns None (knowledge §2.8) so a plain rename "
      "would fail on unpacking"),
])

E("rfd_docker", "docker/Dockerfile", "explicit_replacement",
  "RosettaCommons/RFdiffusion docker/Dockerfile", [
    C("FROM nvcr.io/nvidia/cuda:11.6.2-cudnn8-runtime-ubuntu20.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu20.04-py3.9",
      "needs a CANN base (driver mounted at run time); exact image tag unconfirmed"),
    C("dgl==1.0.2+cu116 -f https://data.dgl.ai/wheels/cu116/repo.html", "custom_cuda_extension", "replace", True,
      "dgl==2.1.0 -f https://data.dgl.ai/wheels/torch-2.1/repo.html \\",
      "CUDA 11.6 DGL build links libcudart and is built against torch 1.12; CPU DGL matching torch 2.1 instead"),
    C("torch==1.12.1+cu116 --extra-index-url https://download.pytorch.org/whl/cu116", "import_torch_npu", "replace", True,
      "torch==2.1.0 torch-npu==2.1.0.post10 --extra-index-url https://download.pytorch.org/whl/cpu \\",
      "CUDA wheel of a torch version with no torch_npu; CPU torch + matching torch-npu"),
])

E("rfd_env", "env/SE3nv.yml", "explicit_replacement",
  "RosettaCommons/RFdiffusion env/SE3nv.yml", [
    C("=- pytorch=1.9", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch 1.9 has no torch_npu; must equal the torch-npu base version exactly"),
    C("=- cudatoolkit=11.1", "custom_cuda_extension", "replace", False, "- cpuonly",
      "selects the CPU build of pytorch; without it conda may still resolve a CUDA variant (works, wasteful)"),
    C("=- dgl-cuda11.1", "custom_cuda_extension", "replace", True, "- dglteam/label/th21_cpu::dgl",
      "dgl-cuda11.1 pins cudatoolkit 11.1 and torch 1.9"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "the Ascend adapter"),
])

E("rfd_config", "config/inference/base.yaml", "explicit_replacement",
  "RosettaCommons/RFdiffusion config/inference/base.yaml", [])

# --------------------------------------------------------------------------------------------
# aqlaboratory/openfold (PyTorch AlphaFold2; the ColabFold-adjacent piece)
# --------------------------------------------------------------------------------------------
E("of_setup", "setup.py", "kernel_rewrite",
  "aqlaboratory/openfold setup.py (attn_core_inplace_cuda extension)", [])

E("of_attn_core", "openfold/utils/kernel/attention_core.py", "kernel_rewrite",
  "aqlaboratory/openfold openfold/utils/kernel/attention_core.py (custom softmax kernel binding)", [
    C('attn_core_inplace_cuda = importlib.import_module("attn_core_inplace_cuda")', "custom_cuda_extension", "removal", False, None,
      "setup.py builds a CPU stub of the module on hosts without nvcc, so the import itself still succeeds"),
    C("attn_core_inplace_cuda.forward_(", "custom_cuda_extension", "replace", True,
      "attention_logits = torch.softmax(attention_logits, dim=-1)",
      "in-place CUDA softmax cannot take NPU tensors; plain softmax (the argument lines of the call go with it)"),
    C("attn_core_inplace_cuda.backward_(", "custom_cuda_extension", "replace", True,
      "attention_logits = attention_logits * (torch.matmul(grad_output, v.transpose(-1, -2)) - (attention_logits * torch.matmul(grad_output, v.transpose(-1, -2))).sum(-1, keepdim=True))",
      "softmax backward written in torch ops (argument lines go with it)"),
])

E("of_primitives", "openfold/model/primitives.py", "explicit_replacement",
  "aqlaboratory/openfold openfold/model/primitives.py (Linear/LayerNorm/Attention, abridged)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed for the optional npu_fusion_attention rewrite below"),
    C('with torch.autocast("cuda", enabled=False):', "amp", "replace", False,
      'with torch.autocast("npu", enabled=False):',
      "bf16 Linear without autocast: under NPU autocast the matmul is bf16 anyway, same result"),
    C('with torch.amp.autocast("cuda", enabled=False):', "amp", "replace", False,
      'with torch.amp.autocast("npu", enabled=False):',
      "bf16 LayerNorm: autocast would upcast to fp32 - memory, not correctness"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):",
      "softmax_no_cast: an fp32 softmax under NPU autocast is numerically safe, only costs memory"),
    C("out = flash_attn_unpadded_kvpacked_func(", "attention_kernel", "replace", False,
      "out = torch_npu.npu_fusion_attention(q, kv_unpad[:, 0], kv_unpad[:, 1], no_heads, \"TND\", scale=1., actual_seq_qlen=q_cu_seqlens[1:].tolist(), actual_seq_kvlen=kv_cu_seqlens[1:].tolist())[0]",
      "use_flash is opt-in and flash-attn cannot be installed on Ascend (knowledge §6); varlen FA -> TND layout "
      "with cumulative lengths (knowledge §5). Performance only"),
])

E("of_precision", "openfold/utils/precision_utils.py", "explicit_replacement",
  "aqlaboratory/openfold openfold/utils/precision_utils.py", [
    C("fp16_enabled = torch.get_autocast_gpu_dtype() == torch.float16", "amp", "replace", True,
      "fp16_enabled = torch.npu.get_autocast_dtype() == torch.float16",
      "reads the CUDA autocast dtype; under NPU fp16 autocast the overflow guards keyed on is_fp16_enabled() stay off"),
    C("fp16_enabled = fp16_enabled and torch.is_autocast_enabled()", "amp", "replace", True,
      "fp16_enabled = fp16_enabled and torch.npu.is_autocast_enabled()",
      "torch.is_autocast_enabled() with no device reports the CUDA state only"),
])

E("of_trimul", "openfold/model/triangular_multiplicative_update.py", "explicit_replacement",
  "aqlaboratory/openfold openfold/model/triangular_multiplicative_update.py (abridged)", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "fp16 overflow guard: the fp32 matmul must leave NPU autocast, otherwise it is cast back to fp16 and overflows"),
])

E("of_train", "train_openfold.py", "explicit_replacement",
  "aqlaboratory/openfold train_openfold.py (PyTorch Lightning + DeepSpeed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("'accelerator': \"gpu\",", "device_type", "replace", True, "'accelerator': \"npu\",",
      "Lightning's 'gpu' accelerator requires CUDA; 'npu' has to be registered by an Ascend Lightning "
      "adapter (not in knowledge, unconfirmed)"),
    C("strategy = DDPStrategy(find_unused_parameters=False, cluster_environment=cluster_environment)", "dist_backend", "replace", True,
      "strategy = DDPStrategy(find_unused_parameters=False, cluster_environment=cluster_environment, process_group_backend=\"hccl\")",
      "Lightning defaults to nccl only for cuda root devices and gloo otherwise; gloo cannot reduce NPU tensors"),
])

E("of_env", "environment.yml", "explicit_replacement",
  "aqlaboratory/openfold environment.yml", [
    C("=- pytorch::pytorch=2.1", "import_torch_npu", "replace", True, "- pytorch::pytorch=2.1.0",
      "'2.1' resolves to the newest 2.1.x; torch-npu 2.1.0.postN needs torch exactly 2.1.0 (knowledge §1.1)"),
    C("=- pytorch::pytorch-cuda=12.1", "custom_cuda_extension", "replace", True, "- pytorch::cpuonly",
      "forces the CUDA build (and does not exist for aarch64 Ascend hosts)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
      "the Ascend adapter"),
    C("=- flash-attn", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built without CUDA; pip failure aborts env creation (knowledge §6)"),
])

E("of_ds_config", "deepspeed_config.json", "explicit_replacement",
  "aqlaboratory/openfold deepspeed_config.json", [])

E("of_install", "scripts/install_third_party_dependencies.sh", "explicit_replacement",
  "aqlaboratory/openfold scripts/install_third_party_dependencies.sh", [
    C("git clone https://github.com/HazyResearch/flash-attention", "attention_kernel", "removal", False, None,
      "FlashAttention source build; the script has no `set -e`, so the failed build does not stop it"),
    C("=python3 setup.py install", "attention_kernel", "removal", False, None,
      "the flash-attention build itself (needs nvcc); non-fatal for the same reason"),
    C("git clone https://github.com/NVIDIA/cutlass --depth 1", "custom_cuda_extension", "removal", False, None,
      "CUTLASS only serves DeepSpeed's DS4Sci Evoformer kernel (CUDA-only); harmless download"),
    C("conda env config vars set CUTLASS_PATH=$PWD/cutlass", "custom_cuda_extension", "removal", False, None,
      "goes with the CUTLASS clone"),
])
