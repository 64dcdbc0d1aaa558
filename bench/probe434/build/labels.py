"""Labels for probe434 (implicit neural representations: SIREN, COIN/COIN++, NeRV, BACON,
random Fourier features, tiny-cuda-nn image sample). One C(...) per upstream line a careful
porter edits for an explicit torch_npu port (torch 2.1.0 + torch_npu 2.1.0.postN target)."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
NPU_REQ = "torch_npu is not autoloaded on the torch 2.1 target (autoload only since 2.5.1); the explicit torch.npu/.npu() calls below need it imported in the entry script"
PIN_NOTE = ("pin_memory without a CUDA device: DataLoader silently skips pinning unless pin_memory_device is given; "
            "performance only, unconfirmed in knowledge")
LOG_ONLY = ("logging only: on a host without CUDA this torch.cuda memory/device query returns 0 / the fallback value "
            "instead of raising, so the printed figure is wrong but nothing else is affected")

# --------------------------------------------------------------------------------------------
# SIREN (vsitzmann/siren)
# --------------------------------------------------------------------------------------------
E("siren_modules", "modules.py", "device_branch_or_abstraction",
  "vsitzmann/siren modules.py (BatchLinear, FCBlock, SingleBVPNet, PosEncodingNeRF, sine init)", [])

E("siren_training", "training.py", "explicit_replacement",
  "vsitzmann/siren training.py (generic train loop, dict .cuda() moves, optional LBFGS / fp64)", [
    C("model_input = {key: value.cuda() for key, value in model_input.items()}", "tensor_to_device", "replace", True,
      "model_input = {key: value.npu() for key, value in model_input.items()}",
      "batch dict moved to the accelerator; .cuda() fails on a host without CUDA"),
    C("gt = {key: value.cuda() for key, value in gt.items()}", "tensor_to_device", "replace", True,
      "gt = {key: value.npu() for key, value in gt.items()}",
      "ground-truth dict moved to the accelerator"),
])

E("siren_train_img", "experiment_scripts/train_img.py", "explicit_replacement",
  "vsitzmann/siren experiment_scripts/train_img.py (configargparse entry script, image fitting)", [
    C("from torch.utils.data import DataLoader", "import_torch_npu", "npu_only_addition", True,
      IMPORT_NPU, "entry script has no bare `import torch`; insert next to its first torch import. " + NPU_REQ),
    C("pin_memory=True", "pin_memory", "replace", False,
      "dataloader = DataLoader(coord_dataset, shuffle=True, batch_size=opt.batch_size, pin_memory=True, pin_memory_device='npu', num_workers=0)",
      PIN_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
])

E("siren_train_sdf", "experiment_scripts/train_sdf.py", "explicit_replacement",
  "vsitzmann/siren experiment_scripts/train_sdf.py (point-cloud SDF fitting entry script)", [
    C("from torch.utils.data import DataLoader", "import_torch_npu", "npu_only_addition", True,
      IMPORT_NPU, "entry script; inserted next to the first torch import. " + NPU_REQ),
    C("pin_memory=True", "pin_memory", "replace", False,
      "dataloader = DataLoader(sdf_dataset, shuffle=True, batch_size=1, pin_memory=True, pin_memory_device='npu', num_workers=0)",
      PIN_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
])

E("siren_sdf_meshing", "sdf_meshing.py", "explicit_replacement",
  "vsitzmann/siren sdf_meshing.py (DeepSDF-style grid evaluation + marching cubes)", [
    C("0:3].cuda()", "tensor_to_device", "replace", True,
      "sample_subset = samples[head : min(head + max_batch, num_samples), 0:3].npu()",
      "query chunk sent to the device holding the decoder"),
])

E("siren_utils", "utils.py", "explicit_replacement",
  "vsitzmann/siren utils.py (tensorboard summaries; SDF slice / wave / activation probes)", [
    C("input = {'coords': input[None, :].cuda()}", "tensor_to_device", "replace", True,
      "input = {'coords': input[None, :].npu()}", "activation probe input"),
    C("[None,...].cuda() for f in frames]", "tensor_to_device", "replace", True,
      "coords = [dataio.get_mgrid((1, sl, sl), dim=3)[None,...].npu() for f in frames]", "wave-equation summary grid"),
    C("yz_slice_coords.cuda()", "tensor_to_device", "replace", True,
      "yz_slice_model_input = {'coords': yz_slice_coords.npu()[None, ...]}", "SDF slice summary"),
    C("xz_slice_coords.cuda()", "tensor_to_device", "replace", True,
      "xz_slice_model_input = {'coords': xz_slice_coords.npu()[None, ...]}", "SDF slice summary"),
    C("xy_slice_coords.cuda()", "tensor_to_device", "replace", True,
      "xy_slice_model_input = {'coords': xy_slice_coords.npu()[None, ...]}", "SDF slice summary"),
])

E("siren_diff_operators", "diff_operators.py", "device_branch_or_abstraction",
  "vsitzmann/siren diff_operators.py (autograd gradient/laplace/jacobian; .to(y.device) only)", [])

E("siren_env", "environment.yml", "explicit_replacement",
  "vsitzmann/siren environment.yml (conda env pinned to pytorch 1.5.1 / cudatoolkit 10.1)", [
    C("cudatoolkit=10.1.243", "import_torch_npu", "replace", False, "- cpuonly",
      "CUDA runtime is dead weight on an Ascend host; whether conda even resolves it on aarch64 is unconfirmed, so not required"),
    C("- python=3.7.7", "import_torch_npu", "replace", True, "- python=3.9",
      "torch 2.1.0 / torch_npu 2.1.0 need Python 3.8-3.11 (knowledge §1.4)"),
    C("- pytorch=1.5.1=py3.7_cuda10.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "CUDA 10.1 build of torch 1.5 has no torch_npu pairing; torch must equal the torch_npu wheel's base version (§1.1)"),
    C("- torchvision=0.6.1=py37_cu101", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "cu101 torchvision cannot load against torch 2.1; 0.16.0 is the matching release"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "torch_npu is only on PyPI; added to the pip block"),
])

# --------------------------------------------------------------------------------------------
# COIN (EmilienDupont/coin) and COIN++ (EmilienDupont/coinpp)
# --------------------------------------------------------------------------------------------
E("coin_main", "main.py", "device_branch_or_abstraction",
  "EmilienDupont/coin main.py (fit SIREN per Kodak image, fp32 + half-precision bpp/PSNR)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_REQ),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "unchanged it silently falls back to CPU on an NPU host"),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor'", "device_type", "replace", False,
      "torch.set_default_tensor_type('torch.npu.FloatTensor' if torch.npu.is_available() else 'torch.FloatTensor')",
      "only affects tensors created without a device (the coordinate grid in util.py), which main.py moves with .to(device) "
      "anyway; leaving the CPU default costs a host build + copy, not correctness. torch.npu.FloatTensor exists in "
      "torch_npu.npu.__all__ (§2.1)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "guards the half-precision evaluation; unchanged, the NPU run silently skips it and logs hp_psnr = 0.0"),
    C("func_rep = func_rep.half().to('cuda')", "tensor_to_device", "replace", True,
      "func_rep = func_rep.half().to('npu')", "half model placement"),
    C("coordinates = coordinates.half().to('cuda')", "tensor_to_device", "replace", True,
      "coordinates = coordinates.half().to('npu')", "half inputs placement"),
])

E("coin_training", "training.py", "device_branch_or_abstraction",
  "EmilienDupont/coin training.py (Trainer: Adam, best-PSNR state_dict copy)", [])

E("coin_siren", "siren.py", "device_branch_or_abstraction",
  "EmilienDupont/coin siren.py (Sine, SirenLayer, Siren; after lucidrains/siren-pytorch)", [])

E("coin_util", "util.py", "device_branch_or_abstraction",
  "EmilienDupont/coin util.py (coordinates/features, model size in bits, bpp, clamped PSNR)", [])

E("coin_requirements", "requirements.txt", "explicit_replacement",
  "EmilienDupont/coin requirements.txt (pinned torch 1.7.0)", [
    C("torch==1.7.0", "import_torch_npu", "replace", True, "torch==2.1.0",
      "torch must equal the base version of the torch_npu wheel (§1.1)"),
    C("torchvision==0.8.1", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "torchvision has to follow the torch bump"),
    C("tqdm==4.51.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the adapter itself, appended after the last pin"),
])

E("coinpp_main", "main.py", "device_branch_or_abstraction",
  "EmilienDupont/coinpp main.py (meta-learned modulations; wandb config; args.device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_REQ),
    C('"device_name": torch.cuda.get_device_name()', "torch_cuda_api", "replace", False,
      '"device_name": torch.npu.get_device_name() if torch.npu.is_available() else "cpu",',
      "wandb metadata only; the is_available() guard keeps it from raising, it just records 'cpu'"),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C('args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'args.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "single device for the whole run; unchanged it silently trains on CPU"),
])

E("coinpp_training", "coinpp/training.py", "device_branch_or_abstraction",
  "EmilienDupont/coinpp coinpp/training.py (outer loop, patch-wise validation, wandb logging)", [])

# --------------------------------------------------------------------------------------------
# NeRV (haochen-rye/NeRV)
# --------------------------------------------------------------------------------------------
E("nerv_train", "train_nerv.py", "explicit_replacement",
  "haochen-rye/NeRV train_nerv.py (mp.spawn DDP / DataParallel, pruning, quantized eval, FPS timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_REQ),
    C("args.ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.ngpus_per_node = torch.npu.device_count()",
      "0 on an NPU host: no spawn and the single-process path is taken"),
    C("backend='nccl',", "dist_backend", "replace", True, "backend='hccl',", "NCCL is unavailable; HCCL is the Ascend collective backend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)", "per-rank device binding"),
    C("DistributedDataParallel(model.to(local_rank)", "tensor_to_device", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model.to(f'npu:{local_rank}'), device_ids=[local_rank],",
      "Module.to(int) means cuda:<int>; device_ids=[int] is fine once the module sits on the NPU"),
    C("torch.nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
      "model = model.npu()  # nn.DataParallel is not supported on NPU; use -d (DDP) for multi-card",
      "torch.nn.DataParallel is marked unsupported on Ascend (§2.8, §3.7)"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "single-card placement"),
    C("loc = 'cuda:{}'.format(", "device_type", "replace", True,
      "loc = 'npu:{}'.format(local_rank if local_rank is not None else 0)",
      "feeds torch.load(map_location=loc) on resume and the .to(torch.device(loc)) of the best-metric tensors"),
    C("pin_memory=True, sampler=train_sampler", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=train_sampler, drop_last=True, worker_init_fn=worker_init_fn)",
      PIN_NOTE),
    C("pin_memory=True, sampler=val_sampler", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=val_sampler, drop_last=False, worker_init_fn=worker_init_fn)",
      PIN_NOTE),
    C("data = data.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "data = data.npu(local_rank, non_blocking=True)", "training batch"),
    C("embed_input = embed_input.cuda(local_rank", "tensor_to_device", "replace", True,
      "embed_input = embed_input.npu(local_rank, non_blocking=True)", "positional embedding of frame index"),
    C("data, embed_input = data.cuda(non_blocking=True), embed_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "data, embed_input = data.npu(non_blocking=True), embed_input.npu(non_blocking=True)", "non-distributed path"),
    C("train_psnr = all_reduce([train_psnr.to(local_rank)])", "tensor_to_device", "replace", True,
      "train_psnr = all_reduce([train_psnr.to(f'npu:{local_rank}')])", "Tensor.to(int) targets cuda:<int>"),
    C("train_msssim = all_reduce([train_msssim.to(local_rank)])", "tensor_to_device", "replace", True,
      "train_msssim = all_reduce([train_msssim.to(f'npu:{local_rank}')])", "Tensor.to(int) targets cuda:<int>"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print_str += '\\tNPU mem: {:.2f}G'.format(torch.npu.max_memory_allocated() / 1024 ** 3)", LOG_ONLY),
    C("val_psnr = all_reduce([val_psnr.to(local_rank)])", "tensor_to_device", "replace", True,
      "val_psnr = all_reduce([val_psnr.to(f'npu:{local_rank}')])", "Tensor.to(int) targets cuda:<int>"),
    C("val_msssim = all_reduce([val_msssim.to(local_rank)])", "tensor_to_device", "replace", True,
      "val_msssim = all_reduce([val_msssim.to(f'npu:{local_rank}')])", "Tensor.to(int) targets cuda:<int>"),
    C("data, embed_input = data.cuda(local_rank, non_blocking=True), embed_input.cuda(local_rank", "tensor_to_device", "replace", True,
      "data, embed_input = data.npu(local_rank, non_blocking=True), embed_input.npu(local_rank, non_blocking=True)", "eval batch"),
    C("data, embed_input = data.cuda(), embed_input.cuda()", "tensor_to_device", "replace", True,
      "data, embed_input = data.npu(), embed_input.npu()", "eval batch, non-distributed"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "FPS timing barrier; raises on a torch build without CUDA"),
])

E("nerv_model", "model_nerv.py", "device_branch_or_abstraction",
  "haochen-rye/NeRV model_nerv.py (PositionalEncoding, CustomConv/PixelShuffle, NeRVBlock, Generator)", [])

E("nerv_utils", "utils.py", "device_branch_or_abstraction",
  "haochen-rye/NeRV utils.py (all_reduce, per-tensor/channel quantization, losses, PSNR/MS-SSIM)", [])

E("nerv_scripts", "scripts/run_bunny.sh", "explicit_replacement",
  "haochen-rye/NeRV README commands (bunny S/M/L training, 8-bit eval, pruning) as a launcher", [
    C("SIZE=${1:-S}", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before python imports torch_npu (unless the login shell already does it)"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored on Ascend: on an 8-card host device_count() becomes 8, spawning 8 ranks with batch int(4/8)=0"),
    C("CUDA_VISIBLE_DEVICES=0 python train_nerv.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python train_nerv.py -e ${EPOCHS} --cycles 1 --lower-width 96 --num-blocks 1 --dataset bunny --frame_gap 1 \\",
      "eval run is non-distributed; with DataParallel ported to model.npu() it uses npu:0 whatever is visible"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False, "npu-smi info",
      "post-run diagnostic only (but as the last command its failure becomes the script's exit status)"),
])

E("nerv_requirements", "requirements.txt", "explicit_replacement",
  "haochen-rye/NeRV requirements (unpinned torch>=1.9)", [
    C("torch>=1.9.0", "import_torch_npu", "replace", False, "torch==2.1.0",
      "pinning torch to the torch_npu base version avoids pip picking a newer torch; whether torch-npu's own metadata enforces it is unconfirmed"),
    C("torchvision>=0.10.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "adapter inserted between the torch and torchvision lines"),
])

# --------------------------------------------------------------------------------------------
# BACON (computational-imaging/bacon)
# --------------------------------------------------------------------------------------------
E("bacon_modules", "modules.py", "device_branch_or_abstraction",
  "computational-imaging/bacon modules.py (FourierLayer with quantized frequencies, BACON, MultiscaleBACON)", [])

E("bacon_training", "training.py", "device_branch_or_abstraction",
  "computational-imaging/bacon training.py (step-based loop, rank-0 logging, manual gradient all_reduce)", [])

E("bacon_utils", "utils.py", "explicit_replacement",
  "computational-imaging/bacon utils.py (dict2cuda/dict2cpu, chunked evaluation)", [
    C("tmp.update({key: value.cuda()})", "tensor_to_device", "replace", True,
      "tmp.update({key: value.npu()})", "every batch goes through this helper (training.py calls utils.dict2cuda)"),
    C("tmp.update({key: [v.cuda() for v in value]})", "tensor_to_device", "replace", True,
      "tmp.update({key: [v.npu() for v in value]})", "multiscale targets are lists of tensors"),
    C("chunk_batched_in = {k: v.cuda() for k, v in chunk_batched_in.items()}", "tensor_to_device", "replace", True,
      "chunk_batched_in = {k: v.npu() for k, v in chunk_batched_in.items()}", "chunked rendering / evaluation input"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "on a host without CUDA torch.cuda.empty_cache() is a no-op (not initialised), so leaving it only keeps cached NPU "
      "blocks reserved: memory headroom, not correctness (behaviour from torch source, unconfirmed in knowledge)"),
])

E("bacon_train_img", "experiments/train_img.py", "explicit_replacement",
  "computational-imaging/bacon experiments/train_img.py (--gpu flag, BACON/SIREN/FF/PE baselines)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_REQ),
    C("torch.cuda.set_device(opt.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.gpu)",
      "selects the card; raises without CUDA"),
    C("batch_size=opt.batch_size, pin_memory=True", "pin_memory", "replace", False,
      "train_dataloader = DataLoader(coord_dataset, shuffle=False, batch_size=opt.batch_size, pin_memory=True, pin_memory_device='npu',",
      PIN_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement (on the card set above)"),
])

E("bacon_train_radiance", "experiments/train_radiance_field.py", "explicit_replacement",
  "computational-imaging/bacon experiments/train_radiance_field.py (mp.spawn multi-GPU, NCCL, resume)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_REQ),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='tcp://localhost:1492',", "HCCL instead of NCCL"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)", "per-rank binding"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
    C("map_location=f'cuda:{gpu}'", "device_type", "replace", True,
      "resume_checkpoint = torch.load(ckpt_path, map_location=f'npu:{gpu}')", "resume on the rank's NPU"),
])

E("bacon_render_nerf", "experiments/render_nerf.py", "explicit_replacement",
  "computational-imaging/bacon experiments/render_nerf.py (multiscale render of test views, CUDA-event timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_REQ),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "module-level device global used for the model, rays and t_vals"),
    C("map_location='cuda:0'", "device_type", "replace", True, "ckpt = torch.load(ckpt_path, map_location='npu:0')",
      "CUDA map_location cannot be honoured"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA event class is a dummy without CUDA and raises on construction"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "as above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "wait for the end event before elapsed_time"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "f'(peak memory {torch.npu.max_memory_allocated() / 2**30:.2f} GiB)')", LOG_ONLY),
])

E("bacon_config", "experiments/config/nerf/bacon.ini", "device_branch_or_abstraction",
  "computational-imaging/bacon experiments/config/*.ini (configargparse file)", [])

E("bacon_env", "environment.yml", "explicit_replacement",
  "computational-imaging/bacon environment.yml (pytorch 1.9 + cudatoolkit 11.1)", [
    C("- pytorch=1.9.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch must equal the torch_npu wheel's base version"),
    C("- torchvision=0.10.0", "import_torch_npu", "replace", True, "- torchvision=0.16.0", "follows the torch bump"),
    C("- cudatoolkit=11.1", "import_torch_npu", "replace", False, "- cpuonly",
      "drops the CUDA runtime; harmless but useless on Ascend (unconfirmed whether it blocks the solve)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10", "adapter from PyPI"),
])

# --------------------------------------------------------------------------------------------
# Random Fourier features (jmclong/random-fourier-features-pytorch)
# --------------------------------------------------------------------------------------------
E("rff_functional", "rff/functional.py", "device_branch_or_abstraction",
  "jmclong/random-fourier-features-pytorch rff/functional.py (torch.jit.script encodings)", [])

E("rff_layers", "rff/layers.py", "device_branch_or_abstraction",
  "jmclong/random-fourier-features-pytorch rff/layers.py (GaussianEncoding, BasicEncoding, PositionalEncoding)", [])

E("rff_example", "examples/image_regression.py", "explicit_replacement",
  "jmclong/random-fourier-features-pytorch image-regression demo (Tancik et al. comparison) with an --amp flag", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_REQ),
    C("parser.add_argument('--device', type=str, default='cuda:0')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu:0')", "default device string"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
      "lazy no-op without CUDA; torch.manual_seed on the line above already seeds registered custom devices "
      "(torch >= 2.1 behaviour, unconfirmed in knowledge)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "torch.cuda GradScaler disables itself without CUDA; with NPU autocast active, fp16 gradients would then run unscaled"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "cuda autocast warns and disables itself on an NPU host, so --amp silently trains in fp32: same results, slower"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "print(f'max memory allocated: {torch.npu.max_memory_allocated(device) / 2 ** 20:.0f} MiB')", LOG_ONLY),
])

# --------------------------------------------------------------------------------------------
# tiny-cuda-nn PyTorch sample (NVlabs/tiny-cuda-nn)
# --------------------------------------------------------------------------------------------
E("tcnn_sample", "samples/mlp_learning_an_image_pytorch.py", "kernel_rewrite",
  "NVlabs/tiny-cuda-nn samples/mlp_learning_an_image_pytorch.py (HashGrid + FullyFusedMLP image fit)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_REQ),
    C("import tinycudann as tcnn", "custom_cuda_extension", "replace", True,
      "from hashgrid_torch import HashGridMLP  # pure-PyTorch multiresolution hash encoding + MLP",
      "tinycudann is a CUDA-only extension (fully fused MLP and hash-grid kernels); no NPU build, so it becomes torch ops"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")', "device global"),
    C("model = tcnn.NetworkWithInputEncoding(", "custom_cuda_extension", "replace", True,
      'model = HashGridMLP(n_input_dims=2, n_output_dims=n_channels, encoding_config=config["encoding"], network_config=config["network"]).to(device)',
      "call site of the CUDA module; the torch re-implementation reads the same JSON config"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "timing barrier"),
    C("tcnn.free_temporary_memory()", "custom_cuda_extension", "removal", True, None,
      "frees tiny-cuda-nn's scratch arena; nothing equivalent once the module is pure PyTorch"),
])

E("tcnn_config", "data/config_hash.json", "device_branch_or_abstraction",
  "NVlabs/tiny-cuda-nn data/config_hash.json (HashGrid encoding + FullyFusedMLP network config)", [])
