"""Labels for probe372: object-centric representation learning (Slot Attention, SAVi, DINOSAUR, SLATE, SPOT).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`required` = with every other labelled line already ported, would leaving this line unchanged
fail, compute something wrong, or silently do the wrong thing on an NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


ADD_NPU = "import torch_npu"
TORCH_NPU_PIN = "torch-npu==2.1.0.post12"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------- evelinehong/slot-attention-pytorch
E("sap_train", "train.py", "explicit_replacement",
  "evelinehong/slot-attention-pytorch train.py (CLEVR slot-attention auto-encoder training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, ADD_NPU,
      "Entry script convention; not required because `from model import *` (above) already imports "
      "torch_npu before this file touches torch.npu."),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "Unported, torch.cuda.is_available() is False on an NPU host and the whole run silently falls back to CPU."),
])

E("sap_model", "model.py", "explicit_replacement",
  "evelinehong/slot-attention-pytorch model.py (SlotAttention, SoftPositionEmbed, CNN encoder/decoder)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_NPU,
      "This module evaluates torch.npu.is_available() at import time (module-level device global) and is "
      "imported by train.py/eval.py before their own torch imports, so torch_npu must be imported here "
      "(explicit import; autoload only exists from torch_npu 2.5.1)."),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "Module-level device used by build_grid() and the per-forward LayerNorm; left as-is the grid is built on "
      "CPU and the forward pass mixes CPU and NPU tensors."),
])

E("sap_dataset", "dataset.py", "explicit_replacement",
  "evelinehong/slot-attention-pytorch dataset.py (CLEVR / CLEVR-with-masks loaders)", [])

E("sap_eval", "eval.py", "explicit_replacement",
  "evelinehong/slot-attention-pytorch eval.ipynb (exported as a script: slot visualisation + FG-ARI)", [
    C('device = torch.device("cuda:0")', "device_type", "replace", True,
      'device = torch.device("npu:0")', "Hard-coded CUDA device."),
    C("model.load_state_dict(torch.load(opt.ckpt)['model_state_dict'])", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(opt.ckpt, map_location='cpu')['model_state_dict'])",
      "Checkpoints written by the original GPU training hold CUDA tensors; without map_location torch.load "
      "tries to restore them on CUDA and fails on an NPU host. The model is moved to the NPU on the next line."),
    C("num_workers=4, pin_memory=True)", "pin_memory", "replace", False,
      "loader = torch.utils.data.DataLoader(val_set, batch_size=32, num_workers=4, pin_memory=True, pin_memory_device='npu')",
      "Performance only: with torch 2.1 the DataLoader pins only when CUDA is available, so pinning is silently "
      "skipped on NPU (unconfirmed in knowledge)."),
])

# ---------------------------------------------------------------- lucidrains/slot-attention
E("lsa_slot_attention", "slot_attention/slot_attention.py", "explicit_replacement",
  "lucidrains/slot-attention slot_attention/slot_attention.py (device-agnostic module)", [])

E("lsa_setup", "setup.py", "explicit_replacement",
  "lucidrains/slot-attention setup.py", [])

# ---------------------------------------------------------------- Wuziyi616/SlotFormer (SAVi / STEVE) + nerv
E("sf_method", "nerv/training/method.py", "explicit_replacement",
  "Wuziyi616/nerv nerv/training/method.py (BaseMethod used by SlotFormer: DDP, native AMP, checkpointing)", [
    C("self.device = torch.device(f'cuda:{local_rank}')", "device_type", "replace", True,
      "self.device = torch.device(f'npu:{local_rank}')", "Per-rank device of the whole training loop."),
    C("self.gpus = torch.cuda.device_count() if use_ddp else 1", "torch_cuda_api", "replace", False,
      "self.gpus = torch.npu.device_count() if use_ddp else 1",
      "Only printed; unported it reports 0 devices under DDP."),
    C("self.grad_scaler = torch.cuda.amp.GradScaler(enabled=self.use_fp16)", "amp", "replace", True,
      "self.grad_scaler = torch.npu.amp.GradScaler(enabled=self.use_fp16)",
      "torch.cuda.amp.GradScaler disables itself when CUDA is absent, so --fp16 runs without loss scaling "
      "(fp16 gradient underflow)."),
    C("with torch.cuda.amp.autocast(enabled=self.use_fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.use_fp16):",
      "CUDA autocast has no effect on NPU ops: --fp16 would silently train in fp32 while the scaler scales."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "Memory hygiene only; torch.cuda.empty_cache() is a no-op when CUDA was never initialised."),
])

E("sf_nerv_misc", "nerv/utils/misc.py", "explicit_replacement",
  "Wuziyi616/nerv nerv/utils/misc.py (seeding, free port, GPU-usage helpers, meters)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the line above already seeds the NPU generators (unconfirmed in knowledge); "
      "the CUDA call is a silent no-op."),
    C("['nvidia-smi', '--query-gpu=memory.used', '--format=csv,nounits,noheader'],", "torch_cuda_api", "replace", False,
      "['npu-smi', 'info', '-t', 'usages', '-i', '0'],",
      "nvidia-smi does not exist on Ascend hosts; npu-smi prints a key/value table, so the parsing below has to "
      "change as well. Only used by optional wait-for-free-GPU helpers, nothing in the training path calls it."),
    C("visible = os.environ.get('CUDA_VISIBLE_DEVICES')", "env_var", "replace", False,
      "visible = os.environ.get('ASCEND_RT_VISIBLE_DEVICES')",
      "Same helper; device visibility on Ascend is ASCEND_RT_VISIBLE_DEVICES."),
])

E("sf_train", "slotformer/base_slots/train.py", "explicit_replacement",
  "Wuziyi616/SlotFormer slotformer/base_slots/train.py (SAVi/STEVE/dVAE training entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_NPU,
      "Entry script: torch.npu.* / hccl are used before any other module would import torch_npu."),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "Bind the rank to its NPU before init_process_group."),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL is unavailable; HCCL."),
])

E("sf_savi", "slotformer/base_slots/models/savi.py", "explicit_replacement",
  "Wuziyi616/SlotFormer slotformer/base_slots/models/savi.py (SlotAttention + StoSAVi)", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "The fp32 island only disables CUDA autocast; under NPU autocast (--fp16) the slot-competition softmax "
      "would silently run in half precision again."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "In the clip-length probing loop; no-op on NPU host, memory only."),
    C("torch.cuda.empty_cache()  # drop activations of the finished clip", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop activations of the finished clip", "Memory only."),
])

E("sf_steve", "slotformer/base_slots/models/steve.py", "explicit_replacement",
  "Wuziyi616/SlotFormer slotformer/base_slots/models/steve.py (STEVE with frozen dVAE tokenizer)", [])

E("sf_models_utils", "slotformer/base_slots/models/utils.py", "explicit_replacement",
  "Wuziyi616/SlotFormer slotformer/base_slots/models/utils.py", [])

E("sf_params", "slotformer/base_slots/configs/savi/savi_movi_params.py", "explicit_replacement",
  "Wuziyi616/SlotFormer slotformer/base_slots/configs/savi/savi_movi_params.py", [])

E("sf_extract", "slotformer/base_slots/extract_slots.py", "explicit_replacement",
  "Wuziyi616/SlotFormer slotformer/base_slots/extract_slots.py (dump SAVi/STEVE slots for SlotFormer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_NPU, "Standalone entry script."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "Memory only."),
    C("in_dict = {'img': data_dict['video'].float().cuda()}", "tensor_to_device", "replace", True,
      "in_dict = {'img': data_dict['video'].float().npu()}", "Input video must live on the model's device."),
    C("torch.cuda.empty_cache()  # free memory between batches", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free memory between batches", "Memory only."),
    C("model = torch.nn.DataParallel(model).cuda().eval()", "distributed_framework", "replace", True,
      "model = model.npu().eval()",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's 2.7.1 API list; the extraction "
      "is single-device anyway, so drop the wrapper and move the model to the NPU."),
])

E("sf_savi_method", "slotformer/base_slots/method.py", "explicit_replacement",
  "Wuziyi616/SlotFormer slotformer/base_slots/method.py (SAViMethod / dVAEMethod video logging)", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "Memory only."),
    C("torch.cuda.empty_cache()  # per chunk of 100 frames", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # per chunk of 100 frames", "Memory only."),
    C("torch.cuda.empty_cache()  # the dVAE decoder keeps large buffers around", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # the dVAE decoder keeps large buffers around", "Memory only."),
])

E("sf_scripts", "scripts/dist_train.sh", "explicit_replacement",
  "Wuziyi616/SlotFormer scripts/dist_train.sh (single-node DDP launcher)", [
    C('if [ -z "$CUDA_VISIBLE_DEVICES" ]; then', "env_var", "replace", True,
      'if [ -z "$ASCEND_RT_VISIBLE_DEVICES" ]; then',
      "Unported, the auto-pick branch always runs on an NPU host and overrides a user-set device list."),
    C("FREE_GPUS=$(nvidia-smi --query-gpu=index,memory.used", "torch_cuda_api", "replace", True,
      "FREE_NPUS=$(npu-smi info -l | awk -F': ' '/NPU ID/ {print $2}' \\",
      "nvidia-smi is absent; npu-smi has no CSV query mode, so the idle-device pick is rewritten "
      "(memory filter dropped)."),
    C("| awk -F', ' '$2 < 1000 {print $1}' | head -n $GPUS | paste -sd, -)", "torch_cuda_api", "replace", True,
      "    | head -n $GPUS | paste -sd, -)",
      "Second half of the same pipeline: the CSV filter yields nothing on npu-smi output."),
    C("export CUDA_VISIBLE_DEVICES=$FREE_GPUS", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=$FREE_NPUS", "Device visibility variable on Ascend."),
    C('echo "Using GPUs: $CUDA_VISIBLE_DEVICES"', "env_var", "replace", False,
      'echo "Using NPUs: $ASCEND_RT_VISIBLE_DEVICES"', "Log only."),
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False, SET_ENV,
      "Interactive launcher; the user's shell usually already sourced CANN's set_env.sh."),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_DEBUG is inert on Ascend; closest CANN knob is the global log level (2=warning assumed, "
      "knowledge only confirms 1=INFO)."),
])

E("sf_sbatch", "scripts/sbatch_run.sh", "explicit_replacement",
  "Wuziyi616/SlotFormer scripts/sbatch_run.sh (SLURM submission with preemption requeue)", [
    C("#SBATCH --gres=gpu:${GPUS}", "env_var", "replace", False, "#SBATCH --gres=npu:${GPUS}",
      "Site-specific: no Ascend-specific Slurm gres convention was found in knowledge (unconfirmed)."),
    C("module load cuda/11.3", "env_var", "replace", True, SET_ENV,
      "Batch jobs do not inherit an interactive shell's CANN environment; without set_env.sh "
      "import torch_npu cannot find the CANN libraries."),
    C("=nvidia-smi", "torch_cuda_api", "replace", False, "npu-smi info",
      "Diagnostic print only; a missing command does not stop the job."),
])

E("sf_env", "environment.yml", "explicit_replacement",
  "Wuziyi616/SlotFormer environment.yml (conda env, PyTorch 1.10 + CUDA 11.3)", [
    C("- pytorch=1.10.1", "import_torch_npu", "replace", True, "  - pytorch=2.1.0",
      "There is no torch_npu for torch 1.10; pair torch 2.1.0 with torch-npu 2.1.0.post12 (CANN 8.1.RC1) "
      "per the version matrix. Conda availability for aarch64 unconfirmed; pip torch==2.1.0 is the alternative."),
    C("- torchvision=0.11.2", "import_torch_npu", "replace", True, "  - torchvision=0.16.0",
      "torchvision 0.11 pins torch 1.10; 0.16 matches torch 2.1."),
    C("- cudatoolkit=11.3", "import_torch_npu", "removal", True, None,
      "CUDA runtime is useless on Ascend and makes the env unsolvable with torch 2.1 / on aarch64 hosts."),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - " + TORCH_NPU_PIN,
      "Add the torch_npu wheel matching torch 2.1.0 (CANN itself is installed outside conda)."),
])

# ---------------------------------------------------------------- amazon-science/object-centric-learning-framework (DINOSAUR)
E("oclf_train", "ocl/cli/train.py", "explicit_replacement",
  "amazon-science/object-centric-learning-framework ocl/cli/train.py (hydra + Lightning training entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_NPU,
      "Entry script: nothing else in the framework imports torch_npu."),
    C("return torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "return torch.npu.device_count()",
      "devices=-1 would resolve to 0 devices on an NPU host (wrong effective batch size, empty device list)."),
    C("torch.cuda.max_memory_allocated() / 1024**3,", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 1024**3,", "Log only; unported it prints 0."),
])

E("oclf_eval", "ocl/cli/eval.py", "explicit_replacement",
  "amazon-science/object-centric-learning-framework ocl/cli/eval.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, ADD_NPU,
      "Not required: `from ocl.cli import train` already imports torch_npu."),
    C('accelerator="gpu",', "device_type", "replace", True, 'accelerator="npu",',
      "Lightning's 'gpu' accelerator fails when CUDA is absent. Stock Lightning has no built-in NPU "
      "accelerator: 'npu' assumes one is registered (unconfirmed in knowledge)."),
    C('model.eval().to("cuda")', "tensor_to_device", "replace", True, 'model.eval().to("npu")',
      "Output dumping runs outside the Trainer on a hard-coded device."),
    C('batch = eval_utils.move_to_device(batch, "cuda")', "tensor_to_device", "replace", True,
      'batch = eval_utils.move_to_device(batch, "npu")', "Same loop."),
])

E("oclf_training_yaml", "configs/training_config.yaml", "explicit_replacement",
  "amazon-science/object-centric-learning-framework configs/training_config.yaml (trainer defaults)", [
    C("accelerator: gpu", "device_type", "replace", True, "  accelerator: npu",
      "Default for every experiment; same Lightning NPU-accelerator caveat as eval.py (unconfirmed)."),
])

E("oclf_dinosaur_yaml", "configs/experiment/projects/bridging/dinosaur/coco_feat_rec_dino_base16.yaml",
  "explicit_replacement",
  "amazon-science/object-centric-learning-framework DINOSAUR COCO experiment config (ViT-B/16 DINO, 8 GPUs)", [
    C("accelerator: gpu", "device_type", "replace", True, "  accelerator: npu",
      "Experiment override of the trainer accelerator."),
    C("process_group_backend: nccl", "dist_backend", "replace", True, "    process_group_backend: hccl",
      "DDPStrategy is told explicitly to use NCCL."),
])

E("oclf_feature_extractors", "ocl/feature_extractors.py", "explicit_replacement",
  "amazon-science/object-centric-learning-framework ocl/feature_extractors.py (timm ViT hooks)", [])

E("oclf_grouping", "ocl/perceptual_grouping.py", "explicit_replacement",
  "amazon-science/object-centric-learning-framework ocl/perceptual_grouping.py (SlotAttentionGrouping, KMeans)", [])

E("oclf_metrics", "ocl/metrics/masks.py", "explicit_replacement",
  "amazon-science/object-centric-learning-framework ocl/metrics/masks.py (FG-ARI, mBO/mIoU)", [])

E("oclf_docker", "Dockerfile", "explicit_replacement",
  "object-centric-learning-framework style Dockerfile (CUDA runtime base + poetry)", [
    C("FROM nvidia/cuda:11.7.1-cudnn8-runtime-ubuntu20.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu20.04-py3.8",
      "Need a CANN userspace instead of the CUDA runtime; exact Ascend image name/tag unconfirmed in knowledge."),
    C("RUN pip install torch==1.13.1+cu117 torchvision==0.14.1+cu117 \\", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 " + TORCH_NPU_PIN + " \\",
      "CUDA wheels -> torch 2.1.0 + matching torch-npu."),
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", "replace", False,
      "        --extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 images should take CPU torch; on aarch64 plain PyPI is used. Not required once the cu117 pins are gone."),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "Only meaningful with the respective container runtime (Ascend Docker runtime variable unconfirmed)."),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "Inert on Ascend."),
    C('ENTRYPOINT ["ocl_train"]', "env_var", "replace", False,
      'ENTRYPOINT ["/bin/bash", "-c", "source /usr/local/Ascend/ascend-toolkit/set_env.sh && exec ocl_train \\"$@\\"", "--"]',
      "Exec-form entrypoint does not source CANN's set_env.sh; whether the base image already exports the CANN "
      "paths via ENV is unconfirmed."),
])

# ---------------------------------------------------------------- singhgautam/slate
E("slate_train", "train.py", "explicit_replacement",
  "singhgautam/slate train.py (dVAE + slot attention + autoregressive transformer decoder)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_NPU, "Entry script."),
    C("parser.add_argument('--use_dp', default=True, action='store_true')", "distributed_framework", "replace", True,
      "parser.add_argument('--use_dp', default=False, action='store_true')",
      "With default=True + store_true the DataParallel wrap can never be switched off; nn.DataParallel is "
      "unsupported on Atlas A2/A3 (Ascend API list), so default it off (DDP is the multi-NPU route)."),
    C("'pin_memory': True,", "pin_memory", "replace", False, "    'pin_memory': True, 'pin_memory_device': 'npu',",
      "Performance only (see sap_eval)."),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ""),
    C("image = image.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "image = image.npu(non_blocking=True)", "Training batch."),
    C("=image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()", "Validation batch."),
])

E("slate_model", "slate.py", "explicit_replacement",
  "singhgautam/slate slate.py (SLATE model)", [])

E("slate_transformer", "transformer.py", "explicit_replacement",
  "singhgautam/slate transformer.py (hand-written multi-head attention decoder)", [])

E("slate_utils", "utils.py", "explicit_replacement",
  "singhgautam/slate utils.py (gumbel-softmax, init helpers, schedules)", [])

# ---------------------------------------------------------------- gkakogeorgiou/spot (DINOSAUR-style, DINO-style utils)
E("spot_utils", "utils_spot.py", "explicit_replacement",
  "gkakogeorgiou/spot utils_spot.py (DINO-style distributed init, MetricLogger)", [
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM path: modulo 0 -> ZeroDivisionError."),
    C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "elif torch.npu.is_available():", "Plain `python train_spot.py` would exit with 'Does not support training without GPU'."),
    C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', ""),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", ""),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed above already seeds the NPU (unconfirmed); no-op otherwise."),
    C("dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "Creating a CUDA tensor fails. fp64 all_reduce over HCCL is kept as upstream; fp64 support on NPU is "
      "limited (unconfirmed), a cautious porter may switch to float32."),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "use_cuda = torch.npu.is_available()", "Only selects whether the log line has a 'max mem' column."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "Must agree with the use_cuda line: once that is ported, log_msg contains {memory} and this unported "
      "check takes the else-branch, whose format() call lacks `memory` -> KeyError on the first log."),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "Log value only (0 when unported)."),
])

E("spot_train", "train_spot.py", "explicit_replacement",
  "gkakogeorgiou/spot train_spot.py (SPOT stage-1 training, DDP + AMP, DINO ViT encoder)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_NPU, "Entry script."),
    C("num_workers=args.num_workers, pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
      "                              num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)",
      "Performance only."),
    C("num_workers=args.num_workers, pin_memory=True, drop_last=False)", "pin_memory", "replace", False,
      "                            num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=False)",
      "Performance only."),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ""),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.use_amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.use_amp)",
      "CUDA GradScaler disables itself without CUDA: fp16 training without loss scaling."),
    C('MBO_c_metric = UnsupervisedMaskIoUMetric(matching="best_overlap"', "tensor_to_device", "replace", True,
      'MBO_c_metric = UnsupervisedMaskIoUMetric(matching="best_overlap", ignore_background=True, ignore_overlaps=True).npu()',
      "torchmetrics state must sit on the NPU with the predictions."),
    C('MBO_i_metric = UnsupervisedMaskIoUMetric(matching="best_overlap"', "tensor_to_device", "replace", True,
      'MBO_i_metric = UnsupervisedMaskIoUMetric(matching="best_overlap", ignore_background=True, ignore_overlaps=True).npu()', ""),
    C('miou_metric = UnsupervisedMaskIoUMetric(matching="hungarian"', "tensor_to_device", "replace", True,
      'miou_metric = UnsupervisedMaskIoUMetric(matching="hungarian", ignore_background=True, ignore_overlaps=True).npu()', ""),
    C("ari_metric = ARIMetric(foreground=True, ignore_overlaps=True).cuda()", "tensor_to_device", "replace", True,
      "ari_metric = ARIMetric(foreground=True, ignore_overlaps=True).npu()", ""),
    C("image = image.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "image = image.npu(non_blocking=True)", "Training batch."),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.use_amp):", "amp", "replace", True,
      "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=args.use_amp):",
      "autocast('cuda') does not cover NPU ops: --use_amp silently trains in fp32 (memory/throughput of the "
      "documented recipe lost) while the NPU scaler is active."),
    C("=image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()", "Validation batch."),
    C("true_mask_i = true_mask_i.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "true_mask_i = true_mask_i.npu(non_blocking=True)", ""),
    C("true_mask_c = true_mask_c.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "true_mask_c = true_mask_c.npu(non_blocking=True)", ""),
    C("mask_ignore = mask_ignore.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "mask_ignore = mask_ignore.npu(non_blocking=True)", ""),
    C("with torch.cuda.amp.autocast(enabled=args.use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.use_amp):",
      "Validation under no_grad: unported it just evaluates in fp32 (slower, not wrong)."),
])

E("spot_eval", "eval_spot.py", "explicit_replacement",
  "gkakogeorgiou/spot eval_spot.py (single-GPU metric evaluation with CUDA-event timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_NPU, "Entry script."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", ""),
    C("device = torch.device('cuda', args.gpu)", "device_type", "replace", True,
      "device = torch.device('npu', args.gpu)", ""),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "record() on a CUDA event initialises CUDA and fails."),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", ""),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "Needed before elapsed_time(); the CUDA call fails without CUDA."),
    C("torch.cuda.get_device_name(args.gpu)", "torch_cuda_api", "replace", True,
      "1000. * n_images / total_ms, torch.npu.get_device_name(args.gpu)))",
      "Raises on an NPU host when --benchmark is given."),
])
