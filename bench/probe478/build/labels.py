# Labels for probe478: text-to-image evaluation and reward models (CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"

# --------------------------------------------------------------------------------------------------
# THUDM/ImageReward
# --------------------------------------------------------------------------------------------------
E("ir_utils", "ImageReward/utils.py", X, "THUDM/ImageReward ImageReward/utils.py (load / load_score)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "package entry (imported first by `import ImageReward as RM`); the default-device expressions below call "
      "torch.npu at import time, which needs torch_npu loaded (autoload only from torch_npu 2.5.1)"),
    C('def load(name: str = "ImageReward-v1.0"', "device_type", "replace", True,
      'def load(name: str = "ImageReward-v1.0", device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", download_root: str = None, med_config: str = None):',
      "default device: on an NPU host torch.cuda.is_available() is False, so RM.load() silently puts the BLIP reward model on CPU"),
    C('def load_score(name: str = "CLIP"', "device_type", "replace", True,
      'def load_score(name: str = "CLIP", device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", download_root: str = None):',
      "same silent CPU fallback for the CLIP/BLIP/Aesthetic baseline scorers"),
])

E("ir_model", "ImageReward/ImageReward.py", X, "THUDM/ImageReward ImageReward/ImageReward.py (BLIP-based reward model)", [
    # device-agnostic: everything goes through self.device, passed in by load()
])

E("ir_refl", "ImageReward/ReFL.py", X, "THUDM/ImageReward ImageReward/ReFL.py (reward feedback learning on SD v1.4, diffusers train_text_to_image style)", [
    C("optimizer_cls = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
      "optimizer_cls = torch.optim.AdamW  # bitsandbytes 8-bit optimizers have no Ascend backend",
      "only with --use_8bit_adam (off in train_refl.sh); bitsandbytes' NPU support covers NF4 quant only, not 8-bit optimizers"),
    C('with torch.autocast("cuda"):', "amp", "replace", True, 'with torch.autocast("npu"):',
      "validation pipeline mixes an fp32 UNet with fp16 text encoder/VAE; with device_type 'cuda' autocast is disabled "
      "(warning only) on an NPU host and the UNet cross-attention hits a dtype mismatch"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op on an NPU host (CUDA never initialised); only frees the NPU cache after validation, memory headroom only"),
])

E("ir_refl_entry", "scripts/refl.py", X, "THUDM/ImageReward scripts/refl.py (ReFL entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "explicit import is good practice, but the ported ImageReward/utils.py (imported via ReFL) and accelerate's "
      "is_npu_available() both import torch_npu already"),
])

E("ir_refl_sh", "scripts/train_refl.sh", X, "THUDM/ImageReward scripts/train_refl.sh (accelerate launcher)", [
    # `accelerate launch --multi_gpu` also drives NPU processes; nothing device-specific to change
])

E("ir_rm_train", "train/src/train.py", X, "THUDM/ImageReward train/src/train.py (reward-model training with DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "training entry point; nothing else imports torch_npu before torch.npu / hccl are used"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed() on the previous line already seeds registered PrivateUse1 devices; redundant on NPU (unconfirmed in the knowledge base)"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', "NCCL does not exist on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "binds each rank to its NPU; torch.cuda.set_device raises without CUDA"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "model and batches are moved to this device"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "single-process path silently trains on CPU otherwise"),
    C("num_workers=opts.num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=opts.num_workers, pin_memory=True, pin_memory_device='npu')",
      "without an accelerator DataLoader drops pinning on a CUDA-less host; H2D copy speed only (unconfirmed)"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3))", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 1024 ** 3))", "log line only: prints 0.0G on an NPU host"),
])

E("ir_rm_options", "train/src/config/options.py", X, "THUDM/ImageReward train/src/config/options.py", [
    # --gpu_num is just a count used to split the batch; name only
])

E("ir_rm_sh", "train/scripts/train_one_node.sh", X, "THUDM/ImageReward train/scripts/train_one_node.sh", [
    C("export CUDA_VISIBLE_DEVICES=${GPU_IDS:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS:-0,1,2,3,4,5,6,7}",
      "the script is meant to run on a user-chosen subset (GPU_IDS=4,5,6,7); the CANN runtime ignores CUDA_VISIBLE_DEVICES, "
      "so local ranks would silently land on NPUs 0..3"),
    C("GPUS_PER_NODE=$(echo $CUDA_VISIBLE_DEVICES", "env_var", "replace", True,
      "GPUS_PER_NODE=$(echo $ASCEND_RT_VISIBLE_DEVICES | tr ',' '\\n' | wc -l)",
      "process count is derived from the visibility variable; once it is renamed the old one is empty and only 1 process starts"),
])

# --------------------------------------------------------------------------------------------------
# yuvalkirstain/PickScore
# --------------------------------------------------------------------------------------------------
E("ps_base_acc", "trainer/accelerators/base_accelerator.py", X, "yuvalkirstain/PickScore trainer/accelerators/base_accelerator.py", [
    C('"max_mem_gb": torch.cuda.max_memory_allocated() / 2 ** 30,', "torch_cuda_api", "replace", False,
      '"max_mem_gb": torch.npu.max_memory_allocated() / 2 ** 30,', "logged metric only; reads 0 on an NPU host"),
    C("return round(torch.cuda.max_memory_allocated() / 1024 / 1024 / 1024, 2)", "torch_cuda_api", "replace", False,
      "return round(torch.npu.max_memory_allocated() / 1024 / 1024 / 1024, 2)", "progress-bar field only"),
])

E("ps_ds_acc", "trainer/accelerators/deepspeed_accelerator.py", X, "yuvalkirstain/PickScore trainer/accelerators/deepspeed_accelerator.py", [
    # DeepSpeed config is device-agnostic; torch_adam=True avoids the CUDA FusedAdam op builder
])

E("ps_train", "trainer/scripts/train.py", X, "yuvalkirstain/PickScore trainer/scripts/train.py (hydra + accelerate)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "accelerate's Accelerator/PartialState imports torch_npu itself when it is installed (is_npu_available)"),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "performance only; accelerate's prepared loader moves batches to the NPU either way (unconfirmed)"),
])

E("ps_infer", "scripts/score_images.py", X, "yuvalkirstain/PickScore README inference snippet, wrapped as a folder scorer", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone script; 'npu' device strings need the backend registered"),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"',
      "hard-coded device for the model and every processor output"),
])

# --------------------------------------------------------------------------------------------------
# tgxs002/HPSv2 (open_clip based)
# --------------------------------------------------------------------------------------------------
E("hps_img_score", "hpsv2/img_score.py", X, "tgxs002/HPSv2 hpsv2/img_score.py (hpsv2.score API)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "first module imported by `import hpsv2`; the module-level device expression needs torch.npu"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'", "module-level device: silently CPU on an NPU host"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "cuda autocast is disabled with a warning on NPU tensors, so the ViT-H scorer silently runs in fp32"),
])

E("hps_eval", "hpsv2/evaluation.py", X, "tgxs002/HPSv2 hpsv2/evaluation.py (benchmark / ranking evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "the package __init__ imports img_score (ported, imports torch_npu) before this module runs"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "ImageReward test-set evaluation: mixed precision silently disabled on NPU"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16):", "amp", "replace", True,
      "with torch.autocast(device_type='npu', dtype=torch.float16):", "HPD test-set ranking evaluation"),
    C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=torch.float16):", "benchmark scoring"),
    C("collate_fn=collate_eval, pin_memory=True)", "pin_memory", "replace", False,
      "collate_fn=collate_eval, pin_memory=True, pin_memory_device='npu')", "performance only (unconfirmed)"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'", "silently evaluates ViT-H-14 on CPU otherwise"),
])

E("hps_dist", "hpsv2/src/training/distributed.py", X, "tgxs002/HPSv2 hpsv2/src/training/distributed.py (open_clip init_distributed_device)", [
    C("if torch.cuda.is_available():", "device_capability_check", "replace", True, "if torch.npu.is_available():",
      "otherwise every rank falls through to device='cpu' and DDP trains on CPU"),
    C("device = 'cuda:%d' % args.local_rank", "device_type", "replace", True, "device = 'npu:%d' % args.local_rank",
      "per-rank device string"),
    C("device = 'cuda:0'", "device_type", "replace", True, "device = 'npu:0'", "single-process device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "binds the rank to its NPU before HCCL communicators are used"),
])

E("hps_params", "hpsv2/src/training/params.py", X, "tgxs002/HPSv2 hpsv2/src/training/params.py (open_clip argparse)", [
    C('"--dist-backend", default="nccl"', "dist_backend", "replace", True,
      '"--dist-backend", default="hccl", type=str, help="distributed backend"',
      "default backend used by init_process_group; the launch scripts do not override it"),
])

E("hps_precision", "hpsv2/src/training/precision.py", X, "tgxs002/HPSv2 hpsv2/src/training/precision.py", [
    C("return torch.cuda.amp.autocast", "amp", "replace", True, "return torch.npu.amp.autocast",
      "--precision amp (the default) would silently train ViT-H in fp32 on NPU"),
    C("lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)", "amp", "replace", True,
      "return lambda: torch.npu.amp.autocast(dtype=torch.bfloat16)", "--precision amp_bf16"),
])

E("hps_main", "hpsv2/src/training/main.py", X, "tgxs002/HPSv2 hpsv2/src/training/main.py (open_clip main)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "training entry point (python hpsv2/src/training/main.py)"),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch_npu.npu.amp import GradScaler",
      "torch.cuda.amp.GradScaler disables itself without CUDA, so fp16 gradients go unscaled and can underflow silently"),
])

E("hps_train", "hpsv2/src/training/train.py", X, "tgxs002/HPSv2 hpsv2/src/training/train.py (train_iters / evaluate)", [
    # device-agnostic: uses args.device, get_autocast() and the scaler passed in from main.py
])

E("hps_slurm", "scripts/train_slurm.sh", X, "tgxs002/HPSv2 SLURM launcher (open_clip style srun script)", [
    C("conda activate hpsv2", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced by the node profile or container image"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "lists every device of an 8-card node, so ignoring it changes nothing; renamed for consistency"),
])

# --------------------------------------------------------------------------------------------------
# Karine-Huang/T2I-CompBench
# --------------------------------------------------------------------------------------------------
E("t2i_blipvqa", "BLIPvqa_eval/BLIP_vqa.py", X, "Karine-Huang/T2I-CompBench BLIPvqa_eval/BLIP_vqa.py (attribute binding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "standalone evaluation script"),
    C('device = torch.device("cuda") if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = torch.device("npu") if torch.npu.is_available() else "cpu"',
      "LAVIS loads BLIP-VQA on this device; silently CPU otherwise"),
    C("reward = torch.zeros((sample_num, np_index)).to(device='cuda')", "tensor_to_device", "replace", True,
      "reward = torch.zeros((sample_num, np_index)).to(device='npu')", "hard-coded 'cuda' raises on an NPU host"),
])

E("t2i_blipvqa_sh", "BLIPvqa_eval/test.sh", X, "Karine-Huang/T2I-CompBench BLIPvqa_eval/test.sh", [
    C("CUDA_VISIBLE_DEVICES=0 python BLIP_vqa.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python BLIP_vqa.py --out_dir=$out_dir",
      "device 0 is the default anyway; only matters if someone edits the index"),
])

E("t2i_clipscore", "CLIPScore_eval/CLIP_similarity.py", X, "Karine-Huang/T2I-CompBench CLIPScore_eval/CLIP_similarity.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "standalone evaluation script"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "silently CPU otherwise; note clip.load keeps fp16 weights for any non-'cpu' device, as on CUDA"),
])

E("t2i_unidet", "UniDet_eval/determine_position_for_eval.py", X, "Karine-Huang/T2I-CompBench UniDet_eval/determine_position_for_eval.py (spatial, detectron2)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "standalone evaluation script"),
    C("from detectron2.config import get_cfg", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu",
      "detectron2 ROI heads call torchvision nms/roi_align; torchvision_npu provides NPU kernels for them. Whether the "
      "torch_npu CPU fallback would cover torchvision custom ops otherwise is unconfirmed"),
    C('parser.add_argument("--device", type=str, default="cuda", help="cuda or cpu")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu", help="npu or cpu")',
      "feeds cfg.MODEL.DEVICE; detectron2 raises on 'cuda' without CUDA. detectron2 itself has no upstream NPU "
      "support, so this may need an Ascend-adapted detectron2 (unconfirmed)"),
])

E("t2i_3in1", "3_in_1_eval/3_in_1.py", X, "Karine-Huang/T2I-CompBench 3_in_1_eval/3_in_1.py (score aggregation)", [
    # pure json / numpy
])

E("t2i_gors", "GORS_finetune/train_text_to_image.py", X, "Karine-Huang/T2I-CompBench GORS_finetune/train_text_to_image.py (reward-weighted LoRA fine-tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "accelerate imports torch_npu itself (is_npu_available) when the Accelerator is built"),
    C("optimizer_cls = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
      "optimizer_cls = torch.optim.AdamW  # bitsandbytes 8-bit optimizers have no Ascend backend",
      "only with --use_8bit_adam (not used by train.sh)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op on NPU; memory headroom after validation only"),
])

E("t2i_gors_sh", "GORS_finetune/train.sh", X, "Karine-Huang/T2I-CompBench GORS_finetune/train.sh", [
    C('export MODEL_NAME="stabilityai/stable-diffusion-2-base"', "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced by the profile or container image"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "4 processes use local ranks 0..3, i.e. the same NPUs, so ignoring the variable is harmless here"),
    C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
      "allocator tuning only; the NPU allocator reads PYTORCH_NPU_ALLOC_CONF (max_split_size_mb support there is unconfirmed)"),
])

# --------------------------------------------------------------------------------------------------
# djghosh13/geneval
# --------------------------------------------------------------------------------------------------
E("ge_eval", "evaluation/evaluate_images.py", X, "djghosh13/geneval evaluation/evaluate_images.py (Mask2Former + CLIP color classifier)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "standalone evaluation script"),
    C('DEVICE = "cuda"', "device_type", "replace", True, 'DEVICE = "npu"',
      "used for the mmdet detector, open_clip and the zero-shot color classifier"),
    C('assert DEVICE == "cuda"', "device_type", "replace", True, 'assert DEVICE == "npu"',
      "once DEVICE is ported this assert would abort the run"),
])

E("ge_summary", "evaluation/summary_scores.py", X, "djghosh13/geneval evaluation/summary_scores.py", [
    # pandas only
])

E("ge_generate", "generation/diffusers_generate.py", X, "djghosh13/geneval generation/diffusers_generate.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "standalone generation script"),
    C("# SDXL does not fit at 1024px without it", "attention_kernel", "removal", True, None,
      "unconditional for --model SDXL; xformers has no NPU backend. diffusers' default SDPA processor dispatches to NPU "
      "flash attention, and enable_attention_slicing below is device-agnostic"),
    C("=model.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", False,
      'print("--xformers ignored: no xformers backend on Ascend NPU, using SDPA")',
      "only with the opt-in --xformers flag"),
    C('model = model.to("cuda")', "device_type", "replace", True, 'model = model.to("npu")', "pipeline placement"),
    C('generator = torch.Generator(device="cuda")', "device_type", "replace", True,
      'generator = torch.Generator(device="npu")', "cuda generator cannot be created without CUDA"),
])

E("ge_env", "environment.yml", X, "djghosh13/geneval environment.yml (conda env with mmcv-full from the cu117 index)", [
    C("=- nvidia", "device_type", "removal", False, None, "channel only serves CUDA packages; inert once pytorch-cuda is gone"),
    C("- pytorch=1.13.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu build exists for torch 1.13 (matrix: 1.11, 2.1+); 2.1.0 pairs with torch-npu 2.1.0.postN and Python 3.8"),
    C("- torchvision=0.14.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision 0.14 pins torch 1.13; 0.16.0 is the torch 2.1 match (also what torchvision_npu pairs with)"),
    C("- pytorch-cuda=11.7", "device_type", "removal", True, None,
      "selects the CUDA build of pytorch; the NPU host needs the CPU build plus torch-npu"),
    C("- --find-links https://download.openmmlab.com/mmcv/dist/cu117", "custom_cuda_extension", "removal", True, None,
      "prebuilt mmcv-full ops from this index are compiled against CUDA 11.7 and fail to load on an NPU host"),
    C("- mmcv-full==1.7.1", "custom_cuda_extension", "replace", False,
      "- mmcv-full==1.7.1  # build from source on the NPU host (MMCV_WITH_OPS=1, NPU ops where available)",
      "without the cu117 index pip builds from source; Mask2Former's deformable attention then uses the pure-PyTorch path. "
      "mmcv NPU op coverage is unconfirmed"),
    C("- open-clip-torch==2.20.0", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "the Ascend backend itself (CANN 8.3.RC1 line per the compatibility matrix)"),
    C("- xformers==0.0.16", "attention_kernel", "removal", True, None,
      "no NPU backend, and the 0.0.16 wheel pins torch 1.13.1, which conflicts with the torch 2.1 pin"),
])

# --------------------------------------------------------------------------------------------------
# kvablack/ddpo-pytorch (reward-weighted / policy-gradient fine-tuning)
# --------------------------------------------------------------------------------------------------
E("ddpo_aesthetic", "ddpo_pytorch/aesthetic_scorer.py", X, "kvablack/ddpo-pytorch ddpo_pytorch/aesthetic_scorer.py (LAION aesthetic MLP)", [
    C('state_dict = torch.load(ASSETS_PATH.joinpath("sac+logos+ava1-l14-linearMSE.pth"))', "tensor_to_device", "replace", False,
      'state_dict = torch.load(ASSETS_PATH.joinpath("sac+logos+ava1-l14-linearMSE.pth"), map_location="cpu")',
      "if the shipped predictor weights were saved as CUDA tensors, torch.load raises on a CUDA-less host; "
      "checkpoint contents unconfirmed"),
])

E("ddpo_rewards", "ddpo_pytorch/rewards.py", X, "kvablack/ddpo-pytorch ddpo_pytorch/rewards.py", [
    C("scorer = AestheticScorer(dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
      "scorer = AestheticScorer(dtype=torch.float32).npu()",
      "aesthetic reward (config reward_fn=aesthetic_score) fails on .cuda(); .npu() uses the current device set by accelerate"),
])

E("ddpo_train", "scripts/train.py", X, "kvablack/ddpo-pytorch scripts/train.py (DDPO with accelerate)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "accelerate imports torch_npu when building the Accelerator; explicit import is only hygiene"),
    C("optimizer_cls = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
      "optimizer_cls = torch.optim.AdamW  # bitsandbytes 8-bit optimizers have no Ascend backend",
      "only with config.train.use_8bit_adam (False in config/base.py)"),
])

E("ddpo_config", "config/base.py", X, "kvablack/ddpo-pytorch config/base.py (ml_collections)", [
    # allow_tf32 / mixed_precision values are consumed by device-agnostic code
])
