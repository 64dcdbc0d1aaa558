"""Labels for probe377 (prompt learning / PEFT for vision-language models, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`required` follows the complete-port counterfactual described in README.md.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# Dassl.pytorch (the engine under CoOp / CoCoOp / MaPLe)
# ---------------------------------------------------------------------------------------------
E("dassl_trainer", "dassl/engine/trainer.py", "device_branch_or_abstraction",
  "KaiyangZhou/Dassl.pytorch dassl/engine/trainer.py (SimpleTrainer/TrainerX)", [
    C("if torch.cuda.is_available() and cfg.USE_CUDA:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and cfg.USE_CUDA:",
      "Chooses the trainer device for every Dassl-based method. torch.cuda.is_available() is False on an NPU "
      "host, so training would silently run on the CPU."),
    C('self.device = torch.device("cuda")', "device_type", "replace", True,
      'self.device = torch.device("npu")',
      "All parse_batch_* and model.to(self.device) calls follow this device."),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "device_count = torch.npu.device_count()",
      "Only feeds the multi-card branch (whose DataParallel call is removed) and a log line; left as is it "
      "returns 0 on an NPU host and nothing breaks."),
    C("self.model = nn.DataParallel(self.model)", "unsupported_op_workaround", "removal", True, None,
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 (torch_api_npu_support_2.7.1.tsv, msFmkTransplt "
      "limitations). Once device_count counts NPUs, this line runs on any multi-NPU host. Drop it (one card per "
      "job) or switch to DDP+HCCL."),
])

E("dassl_tools", "dassl/utils/tools.py", "explicit_replacement",
  "KaiyangZhou/Dassl.pytorch dassl/utils/tools.py", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "On an NPU host torch.cuda.manual_seed_all is a lazy no-op, so nothing fails. Recent torch versions also "
      "seed the privateuse1 (NPU) generator from torch.manual_seed (unconfirmed in the knowledge base). Worst "
      "case if left: NPU-side randomness is not reproducible."),
])

E("dassl_torchtools", "dassl/utils/torchtools.py", "explicit_replacement",
  "KaiyangZhou/Dassl.pytorch dassl/utils/torchtools.py (checkpoint helpers)", [
    # map_location = None if torch.cuda.is_available() else "cpu" is deliberately NOT labelled: on an NPU host
    # it yields "cpu", which is exactly what is wanted for checkpoints written on GPU machines.
])

E("dassl_data_manager", "dassl/data/data_manager.py", "explicit_replacement",
  "KaiyangZhou/Dassl.pytorch dassl/data/data_manager.py (build_data_loader)", [
    C("pin_memory=(torch.cuda.is_available() and cfg.USE_CUDA)", "pin_memory", "replace", False,
      "pin_memory=(torch.npu.is_available() and cfg.USE_CUDA)",
      "Performance only: left as is, pinning is silently disabled on an NPU host and host-to-device copies are "
      "slower, but the results do not change."),
])

E("dassl_defaults", "dassl/config/defaults.py", "explicit_replacement",
  "KaiyangZhou/Dassl.pytorch dassl/config/defaults.py", [
    # _C.USE_CUDA = True is a device-neutral switch once the trainer tests torch.npu.is_available(); left alone.
])

# ---------------------------------------------------------------------------------------------
# CoOp / CoCoOp (KaiyangZhou/CoOp)
# ---------------------------------------------------------------------------------------------
E("coop_train", "train.py", "explicit_replacement",
  "KaiyangZhou/CoOp train.py (entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point. The explicit port calls torch.npu.* in the Dassl trainer and in trainers/*.py. Required for "
      "torch_npu < 2.5.1, which has no backend autoload; recommended after that."),
])

E("coop_trainer", "trainers/coop.py", "explicit_replacement",
  "KaiyangZhou/CoOp trainers/coop.py", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "With PREC=amp, the CUDA autocast and GradScaler disable themselves when CUDA is missing. The prompt would "
      "then train in plain fp32 with no loss scaling, and only a warning says so."),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "device_count = torch.npu.device_count()",
      "Only drives the DataParallel branch (removed) and a log line."),
    C("self.model = nn.DataParallel(self.model)", "unsupported_op_workaround", "removal", True, None,
      "nn.DataParallel is unsupported on Ascend. Prompt tuning on one NPU per job is how CoOp is normally run."),
])

E("cocoop_trainer", "trainers/cocoop.py", "explicit_replacement",
  "KaiyangZhou/CoOp trainers/cocoop.py (meta-net conditioned prompts)", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "Same as CoOp: PREC=amp would silently run unscaled fp32 on an NPU host."),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "device_count = torch.npu.device_count()",
      "Only drives the DataParallel branch (removed) and a log line."),
    C("self.model = nn.DataParallel(self.model)", "unsupported_op_workaround", "removal", True, None,
      "nn.DataParallel is unsupported on Ascend."),
])

E("coop_zsclip", "trainers/zsclip.py", "explicit_replacement",
  "KaiyangZhou/CoOp trainers/zsclip.py (zero-shot CLIP baselines)", [
    # Fully device-agnostic: everything goes through self.device from the Dassl trainer.
])

E("coop_clip", "clip/clip.py", "explicit_replacement",
  "KaiyangZhou/CoOp clip/clip.py (vendored openai/CLIP loader)", [
    C('def load(name: str, device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu", jit=False):',
      "device_type", "replace", False,
      'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", jit=False):',
      "In CoOp the default is never used: the trainers build CLIP via clip._download and clip.build_model in "
      "load_clip_to_cpu. It is ported for consistency. Tip-Adapter relies on the same default; see tip_main."),
])

E("coop_main_sh", "scripts/coop/main.sh", "explicit_replacement",
  "KaiyangZhou/CoOp scripts/coop/main.sh", [])

E("coop_cfg", "configs/trainers/CoOp/vit_b16_ep50.yaml", "explicit_replacement",
  "KaiyangZhou/CoOp configs/trainers/CoOp/vit_b16_ep50.yaml", [])

# ---------------------------------------------------------------------------------------------
# MaPLe (muzairkhattak/multimodal-prompt-learning)
# ---------------------------------------------------------------------------------------------
E("maple_train", "train.py", "explicit_replacement",
  "muzairkhattak/multimodal-prompt-learning train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point. Needed so that torch.npu exists before the trainers are imported on torch_npu < 2.5.1."),
])

E("maple_trainer", "trainers/maple.py", "explicit_replacement",
  "muzairkhattak/multimodal-prompt-learning trainers/maple.py", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "PREC=amp path: the CUDA autocast and scaler disable themselves on an NPU host."),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "device_count = torch.npu.device_count()",
      "Only drives the DataParallel branch (removed) and a log line."),
    C("self.model = nn.DataParallel(self.model)", "unsupported_op_workaround", "removal", True, None,
      "nn.DataParallel is unsupported on Ascend."),
])

E("maple_clip_model", "clip/model.py", "explicit_replacement",
  "muzairkhattak/multimodal-prompt-learning clip/model.py (MaPLe-modified CLIP)", [
    # The .half() casts of the compound prompts and fp16 convert_weights stay: fp16 is native on the NPU.
])

E("maple_sh", "scripts/maple/base2new_train_maple.sh", "explicit_replacement",
  "muzairkhattak/multimodal-prompt-learning scripts/maple/base2new_train_maple.sh", [
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "The script pins each seed to the card given as $3. The CANN runtime ignores CUDA_VISIBLE_DEVICES, so "
      "every job would land on NPU 0 and seeds run side by side would share one card."),
])

E("maple_cfg", "configs/trainers/MaPLe/vit_b16_c2_ep5_batch4_2ctx.yaml", "explicit_replacement",
  "muzairkhattak/multimodal-prompt-learning configs/trainers/MaPLe/vit_b16_c2_ep5_batch4_2ctx.yaml", [])

# ---------------------------------------------------------------------------------------------
# Tip-Adapter (gaopengcuhk/Tip-Adapter)
# ---------------------------------------------------------------------------------------------
E("tip_main", "main.py", "explicit_replacement",
  "gaopengcuhk/Tip-Adapter main.py (few-shot datasets)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point. Tensor.npu() / Module.npu() are provided by torch_npu."),
    C(".to(clip_model.dtype).cuda()", "tensor_to_device", "replace", True,
      "adapter = nn.Linear(cache_keys.shape[0], cache_keys.shape[1], bias=False).to(clip_model.dtype).npu()",
      "The learnable cache adapter of Tip-Adapter-F."),
    C("images, target = images.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "images, target = images.npu(), target.npu()",
      "Training batches for Tip-Adapter-F."),
    C("clip_model, preprocess = clip.load(cfg['backbone'])", "device_type", "replace", True,
      "clip_model, preprocess = clip.load(cfg['backbone'], device=\"npu\")",
      "The vendored clip.load defaults to 'cuda' if torch.cuda.is_available() else 'cpu'. On an NPU host that "
      "puts CLIP on the CPU in fp32 while every feature is moved to the NPU. Passing the device (or porting the "
      "default in clip/clip.py) is required."),
])

E("tip_main_imagenet", "main_imagenet.py", "explicit_replacement",
  "gaopengcuhk/Tip-Adapter main_imagenet.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Second entry point (ImageNet)."),
    C(".to(clip_model.dtype).cuda()", "tensor_to_device", "replace", True,
      "adapter = nn.Linear(cache_keys.shape[0], cache_keys.shape[1], bias=False).to(clip_model.dtype).npu()",
      "Learnable cache adapter."),
    C("images, target = images.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "images, target = images.npu(), target.npu()",
      "Training batches."),
    C("clip_model, preprocess = clip.load(cfg['backbone'])", "device_type", "replace", True,
      "clip_model, preprocess = clip.load(cfg['backbone'], device=\"npu\")",
      "Same default-device trap as main.py."),
])

E("tip_utils", "utils.py", "explicit_replacement",
  "gaopengcuhk/Tip-Adapter utils.py (classifier, cache model, feature pre-loading)", [
    C("texts = clip.tokenize(texts).cuda()", "tensor_to_device", "replace", True,
      "texts = clip.tokenize(texts).npu()",
      "Token ids have to be on the model's device."),
    C("clip_weights = torch.stack(clip_weights, dim=1).cuda()", "tensor_to_device", "replace", True,
      "clip_weights = torch.stack(clip_weights, dim=1).npu()",
      "A no-op move on GPU, but Tensor.cuda() raises on a CUDA-less build, so it has to change."),
    C("images = images.cuda()", "tensor_to_device", "replace", True,
      "images = images.npu()",
      "Cache-model construction."),
    C("target = target.cuda()", "tensor_to_device", "replace", True,
      "target = target.npu()",
      "Labels turned into the one-hot cache values."),
    C("images, target = images.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "images, target = images.npu(), target.npu()",
      "Feature pre-loading for the val/test splits."),
])

E("tip_datasets_utils", "datasets/utils.py", "explicit_replacement",
  "gaopengcuhk/Tip-Adapter datasets/utils.py (Dassl-derived DatasetBase/build_data_loader)", [
    C("pin_memory=(torch.cuda.is_available())", "pin_memory", "replace", False,
      "pin_memory=(torch.npu.is_available())",
      "Performance only: pinning is silently off on an NPU host."),
])

E("tip_cfg", "configs/imagenet.yaml", "explicit_replacement",
  "gaopengcuhk/Tip-Adapter configs/imagenet.yaml", [])

# ---------------------------------------------------------------------------------------------
# VPT (KMnP/vpt)
# ---------------------------------------------------------------------------------------------
E("vpt_train", "train.py", "explicit_replacement",
  "KMnP/vpt train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point, which spawned workers re-import. build_model and distributed.run use torch.npu."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "Only guards a cache flush between runs. Left as is, the flush is skipped."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "Memory hygiene only. torch.cuda.empty_cache() is a no-op while CUDA is uninitialised."),
])

E("vpt_build_model", "src/models/build_model.py", "device_branch_or_abstraction",
  "KMnP/vpt src/models/build_model.py", [
    C("cfg.NUM_GPUS <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "cfg.NUM_GPUS <= torch.npu.device_count()",
      "The assertion would fail (1 <= 0) on every NPU host."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "get_current_device(). Left as is, cur_device becomes the CPU device, which the ported .npu(device=...) "
      "below rejects."),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()",
      "Index of the card set by distributed.run / default 0."),
    C("if torch.cuda.is_available():  # GPU run", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # NPU run",
      "Left as is, the else branch runs model.to(<int>), which means cuda:<int>, and fails."),
    C("model = model.cuda(device=cur_device)", "tensor_to_device", "replace", True,
      "model = model.npu(device=cur_device)",
      "Module.npu is added by torch_npu."),
])

E("vpt_config", "src/configs/config.py", "explicit_replacement",
  "KMnP/vpt src/configs/config.py", [
    C('_C.DIST_BACKEND = "nccl"', "dist_backend", "replace", True,
      '_C.DIST_BACKEND = "hccl"',
      "Passed to init_process_group by distributed.run whenever NUM_GPUS > 1. NCCL is not available on Ascend."),
])

E("vpt_distributed", "src/utils/distributed.py", "explicit_replacement",
  "KMnP/vpt src/utils/distributed.py (SlowFast/detectron2-style comm helpers)", [
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)",
      "Each spawned worker must bind its own NPU. Otherwise every rank uses npu:0."),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
      'if dist.get_backend() == "hccl":',
      "This string comparison is not rewritten by any automatic tool (msFmkTransplt README). Left as is, "
      "pickled-object gathers skip the intended gloo side group and go over the HCCL WORLD group, which the "
      "code below only accepts for 'nccl'."),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", False,
      'assert backend in ["gloo", "hccl"]',
      "Once the gloo side group is created again (line above), this only matters when a caller passes an HCCL "
      "group explicitly. Ported for consistency."),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", False,
      'device = torch.device("cpu" if backend == "gloo" else "npu")',
      "Same path as the assert: reached only for an explicitly passed HCCL group."),
])

E("vpt_launch", "launch.py", "device_branch_or_abstraction",
  "KMnP/vpt launch.py (env info, arg parser, logging setup)", [
    C("has_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "has_cuda = torch.npu.is_available()",
      "Environment report only. Left as is, the device block is skipped and the log says 'CUDA available False'."),
    C('data.append(("CUDA ID", os.environ["CUDA_VISIBLE_DEVICES"]))', "env_var", "replace", True,
      'data.append(("NPU ID", os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "<not set>")))',
      "Once the block runs on NPU hosts, this indexes CUDA_VISIBLE_DEVICES, which the ported launcher no longer "
      "sets. The result is a KeyError at start-up."),
    C("for k in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for k in range(torch.npu.device_count()):",
      "Report only. Left as is, the loop is empty (count 0)."),
    C("devices[torch.cuda.get_device_name(k)].append(str(k))", "torch_cuda_api", "replace", True,
      "devices[torch.npu.get_device_name(k)].append(str(k))",
      "Once the loop counts NPUs, torch.cuda.get_device_name raises on a CUDA-less host."),
])

E("vpt_trainer", "src/engine/trainer.py", "explicit_replacement",
  "KMnP/vpt src/engine/trainer.py", [
    # Device-agnostic: inputs.to(self.device, non_blocking=True) follows the device returned by build_model.
])

E("vpt_train_utils", "src/utils/train_utils.py", "explicit_replacement",
  "KMnP/vpt src/utils/train_utils.py (gpu_mem_usage, AverageMeter)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "Logging only. Left as is, the 'max mem' column prints 0."),
    C("mem_usage_bytes = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "mem_usage_bytes = torch.npu.max_memory_allocated()",
      "Logging only. The CUDA allocator stats read 0 while CUDA is uninitialised."),
])

E("vpt_vit", "src/models/vit_prompt/vit.py", "explicit_replacement",
  "KMnP/vpt src/models/vit_prompt/vit.py (PromptedTransformer)", [])

E("vpt_env_setup", "env_setup.sh", "explicit_replacement",
  "KMnP/vpt env_setup.sh", [
    C("conda create -n prompt python=3.7", "import_torch_npu", "replace", True,
      "conda create -n prompt python=3.9",
      "torch 2.1.0 / torch_npu 2.1.0.postN need Python 3.8-3.11 (knowledge section 1.4). torch 1.7.1 has no "
      "torch_npu at all, and the 1.8.1/1.11 lines are EOL."),
    C("conda install pytorch==1.7.1 torchvision==0.8.2 torchaudio==0.7.2 cudatoolkit=10.1 -c pytorch",
      "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
      "A CUDA 10.1 build of torch with no torch_npu counterpart. The torch_npu wheel must equal the torch "
      "version (2.1.0.post10 pairs with CANN 8.0.0)."),
    C("python -m pip install detectron2 -f https://dl.fbaipublicfiles.com/detectron2/wheels/cu101/torch1.7/index.html",
      "custom_cuda_extension", "replace", False,
      "python -m pip install 'git+https://github.com/facebookresearch/detectron2.git'",
      "A prebuilt CUDA 10.1 / torch 1.7 wheel that cannot match torch 2.1. A source build compiles only the CPU "
      "ops. None of the VPT files here import detectron2, and the script has no set -e, so the failure is "
      "harmless."),
])

E("vpt_run_sh", "run.sh", "explicit_replacement",
  "KMnP/vpt README / launch commands for CUB-200 (VPT-deep)", [
    C("model_root=./pretrained", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment. Not needed when the login shell or container image already sources set_env.sh."),
    C("CUDA_VISIBLE_DEVICES=0 python train.py \\", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python train.py \\",
      "Single-card run on device 0. Without the variable the process sees all NPUs but still uses npu:0, so "
      "the result is the same. Ported to keep the restriction."),
])

E("vpt_cfg", "configs/prompt/cub.yaml", "explicit_replacement",
  "KMnP/vpt configs/prompt/cub.yaml", [])
