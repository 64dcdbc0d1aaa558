# Labels for probe202 (text-to-motion / human-motion generation, CUDA -> Ascend NPU).
# Target stack assumed by the ported lines: torch 2.1.0 + torch_npu 2.1.0.post12 (CANN 8.1.RC1), Python 3.9/3.10,
# an explicit torch_npu port (no transfer_to_npu). "required" is judged for that port.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
GRU_NOTE = ("pack_padded_sequence is marked unsupported in Ascend's PyTorch 2.7.1 API list and the packed GRU overload "
            "(gru.data) has no NPU kernel; keep the frozen evaluator GRU on CPU (or accept CPU fallback) instead of "
            "rewriting to a padded GRU, which would shift FID / R-precision. Unconfirmed whether it errors or falls back")

# ---------------------------------------------------------------- MDM (motion-diffusion-model)
E("mdm_dist_util", "utils/dist_util.py", "device_branch_or_abstraction",
  "MDM utils/dist_util.py (guided-diffusion helper: setup_dist / dev())", [
    C("import torch as th", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "project-wide device helper imported by every MDM entry script; registers the npu device and torch.npu (no autoload before torch 2.5)"),
    C("=if th.cuda.is_available():", "torch_cuda_api", "replace", True, "if th.npu.is_available():",
      "False on an NPU host, so set_device is skipped and all torchrun ranks pile onto npu:0"),
    C("th.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "th.npu.set_device(local_rank)",
      "bind each torchrun rank to its NPU"),
    C('=backend = "gloo" if not th.cuda.is_available() else "nccl"', "dist_backend", "replace", True,
      'backend = "gloo" if not th.npu.is_available() else "hccl"',
      "NCCL does not exist on Ascend; as written it silently picks gloo, which cannot reduce NPU tensors"),
    C("if th.cuda.is_available() and used_device >= 0:", "torch_cuda_api", "add_branch", True,
      "if th.npu.is_available() and used_device >= 0:",
      "dev() is MDM's single device chooser; without an NPU branch training/sampling silently run on CPU"),
    C('return th.device(f"cuda:{used_device}")', "device_type", "add_branch", True,
      'return th.device(f"npu:{used_device}")', "device string of the added NPU branch in dev()"),
])

E("mdm_model", "model/mdm.py", "device_branch_or_abstraction",
  "MDM model/mdm.py (MDM transformer; CLIP loaded on cpu and moved with the model)", [
    # Deliberately no labels: clip.load(device='cpu') + convert_weights, .to(device) with
    # device = next(self.parameters()).device, device=cond.device, Rotation2xyz(device='cpu')
    # are all device-agnostic once dist_util.dev() returns an npu device.
])

E("mdm_training_loop", "train/training_loop.py", "explicit_replacement",
  "MDM train/training_loop.py (TrainLoop)", [
    C("self.sync_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "self.sync_cuda = torch.npu.is_available()",
      "flag inherited from guided-diffusion and never read; edited for consistency only"),
    C("=self.opt = AdamW(", "fused_optimizer", "replace", False, "self.opt = torch_npu.optim.NpuFusedAdamW(",
      "performance only: tensor-fused AdamW over the fp32 master params (needs import torch_npu in this module)"),
    C("if torch.cuda.is_available() and dist_util.dev() != 'cpu':", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and dist_util.dev() != 'cpu':",
      "False on NPU: batches stay on CPU while the model is on npu -> device mismatch in run_loop"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op when CUDA was never initialised; only frees evaluator memory"),
    C("peak = torch.cuda.max_memory_allocated(self.device) / 2 ** 30", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated(self.device) / 2 ** 30",
      "torch.cuda memory query with an npu device argument raises (expects a cuda device), aborting after the first evaluation"),
])

E("mdm_gaussian_diffusion", "diffusion/gaussian_diffusion.py", "explicit_replacement",
  "MDM diffusion/gaussian_diffusion.py (guided-diffusion port)", [
    C("res = th.from_numpy(arr).to(device=timesteps.device)[timesteps].float()", "unsupported_op_workaround", "replace", False,
      "res = th.from_numpy(arr).float().to(device=timesteps.device)[timesteps]",
      "float64 schedule copied and gathered on device every step; fp64 index ops land on AI CPU on Ascend (msprof advisor dtype check). Cast to fp32 first; performance only"),
])

E("mdm_simplify_loc2rot", "visualize/simplify_loc2rot.py", "device_branch_or_abstraction",
  "MDM visualize/simplify_loc2rot.py (joints2smpl / SMPLify3D fitting before mesh rendering)", [
    C('self.device = torch.device("cuda:" + str(device_id) if cuda else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu:" + str(device_id) if cuda else "cpu")',
      "--cuda defaults to True, so the unchanged line builds a cuda device and smplx .to(self.device) fails"),
    C("device=torch.device('cuda:0')):", "device_type", "replace", False,
      "def __init__(self, smplxmodel, step_size=1e-2, num_iters=100, device=torch.device('npu:0')):",
      "default argument only: building torch.device('cuda:0') does not touch CUDA and the callers pass a device"),
])

E("mdm_fixseed", "utils/fixseed.py", "explicit_replacement",
  "MDM / MoMask utils/fixseed.py", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard is False on NPU, so the explicit device seeding is skipped; torch.manual_seed should already seed the NPU generator (unconfirmed)"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "reproducibility only; unreachable on NPU host until the guard is ported"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)  # if you are using multi-NPU.",
      "reproducibility only; unreachable on NPU host until the guard is ported"),
])

E("mdm_environment", "environment.yml", "explicit_replacement",
  "MDM environment.yml (conda; python 3.7, pytorch 1.7.1, cudatoolkit 11.0)", [
    C("- python=3.7.13", "import_torch_npu", "replace", True, "- python=3.9",
      "torch 2.1.0 / torch_npu 2.1.0 support Python 3.8-3.11 only"),
    C("- cudatoolkit=11.0.221", "import_torch_npu", "removal", False, None,
      "CUDA runtime for the conda CUDA build of pytorch; dead weight on Ascend (may not resolve on aarch64 - unconfirmed)"),
    C("- pytorch=1.7.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "there is no torch_npu for torch 1.7; torch must equal the torch_npu base version (CPU build; on aarch64 install torch from PyPI)"),
    C("- torchvision=0.8.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision 0.8.2 is pinned to torch 1.7.1 and must move with torch"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
      "torch-npu pin matching torch 2.1.0 (CANN 8.1.RC1)"),
])

# ---------------------------------------------------------------- HumanML3D / T2M evaluators and preprocessing
E("t2m_eval_modules", "data_loaders/humanml/networks/modules.py", "explicit_replacement",
  "T2M / HumanML3D evaluator networks (TextEncoderBiGRUCo, MotionEncoderBiGRUCo) as vendored by MDM, T2M-GPT and MoMask", [
    C("emb = pack_padded_sequence(input_embs, cap_lens, batch_first=True)", "unsupported_op_workaround", "replace", False,
      "emb = pack_padded_sequence(input_embs.cpu(), cap_lens, batch_first=True)  # GRU kept on CPU", GRU_NOTE),
    C("batch_first=True, enforce_sorted=True)", "unsupported_op_workaround", "replace", False,
      "emb = pack_padded_sequence(input_embs.cpu(), cap_lens, batch_first=True, enforce_sorted=True)  # GRU kept on CPU",
      GRU_NOTE + " (text side of the HumanML3D evaluator)"),
    C("=emb = pack_padded_sequence(input_embs, cap_lens, batch_first=True, enforce_sorted=False)", "unsupported_op_workaround",
      "replace", False,
      "emb = pack_padded_sequence(input_embs.cpu(), cap_lens, batch_first=True, enforce_sorted=False)  # GRU kept on CPU",
      GRU_NOTE + " (motion side of the HumanML3D evaluator)"),
    C("# length estimator", "unsupported_op_workaround", "replace", False,
      "emb = pack_padded_sequence(input_embs.cpu(), cap_lens, batch_first=True, enforce_sorted=False)  # length estimator, GRU on CPU",
      GRU_NOTE),
])

E("humanml3d_raw_pose_processing", "raw_pose_processing.py", "device_branch_or_abstraction",
  "HumanML3D raw_pose_processing.ipynb exported to a script (SMPL-H BodyModel over AMASS)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "stand-alone entry script"),
    C('comp_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'comp_device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silently falls back to CPU on an NPU host; the whole AMASS pass (hours) then runs on CPU"),
])

# ---------------------------------------------------------------- T2M-GPT
E("t2mgpt_train_vq", "train_vq.py", "explicit_replacement",
  "T2M-GPT train_vq.py (VQ-VAE motion tokenizer training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("wrapper_opt = get_opt(dataset_opt_path, torch.device('cuda'))", "device_type", "replace", True,
      "wrapper_opt = get_opt(dataset_opt_path, torch.device('npu'))",
      "evaluator checkpoint is loaded with map_location=opt.device and its encoders moved there"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model placement"),
    C("optimizer = optim.AdamW(net.parameters(), lr=args.lr, betas=(0.9, 0.99), weight_decay=args.weight_decay)",
      "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(net.parameters(), lr=args.lr, betas=(0.9, 0.99), weight_decay=args.weight_decay)",
      "performance only: tensor-fused AdamW from torch_npu.optim"),
    C("gt_motion = gt_motion.cuda().float()  # (bs, 64, dim)", "tensor_to_device", "replace", True,
      "gt_motion = gt_motion.npu().float()  # (bs, 64, dim)", "warm-up batch placement"),
    C("gt_motion = gt_motion.cuda().float()  # bs, nb_joints", "tensor_to_device", "replace", True,
      "gt_motion = gt_motion.npu().float()  # bs, nb_joints, joints_dim, seq_len", "training batch placement"),
])

E("t2mgpt_train_t2m_trans", "train_t2m_trans.py", "explicit_replacement",
  "T2M-GPT train_t2m_trans.py (GPT over VQ tokens, CLIP text condition)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("wrapper_opt = get_opt(dataset_opt_path, torch.device('cuda'))", "device_type", "replace", True,
      "wrapper_opt = get_opt(dataset_opt_path, torch.device('npu'))", "evaluator placement"),
    C('clip.load("ViT-B/32", device=torch.device(\'cuda\'), jit=False)', "device_type", "replace", True,
      "clip_model, clip_preprocess = clip.load(\"ViT-B/32\", device=torch.device('npu'), jit=False)  # Must set jit=False for training",
      "CLIP is built directly on the device (fp16 weights kept since device != cpu)"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "VQ-VAE placement"),
    C("=trans_encoder.cuda()", "tensor_to_device", "replace", True, "trans_encoder.npu()", "transformer placement"),
    C("pose = pose.cuda().float()", "tensor_to_device", "replace", True,
      "pose = pose.npu().float()  # bs, nb_joints, joints_dim, seq_len", "tokenisation pass"),
    C("m_tokens, m_tokens_len = m_tokens.cuda(), m_tokens_len.cuda()", "tensor_to_device", "replace", True,
      "m_tokens, m_tokens_len = m_tokens.npu(), m_tokens_len.npu()", "batch placement"),
    C("=target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", "batch placement"),
    C("text = clip.tokenize(clip_text, truncate=True).cuda()", "tensor_to_device", "replace", True,
      "text = clip.tokenize(clip_text, truncate=True).npu()", "CLIP token ids must sit with the CLIP model"),
])

E("t2mgpt_quantize_cnn", "models/quantize_cnn.py", "explicit_replacement",
  "T2M-GPT models/quantize_cnn.py (QuantizeEMAReset / Quantizer / QuantizeReset)", [
    C("self.register_buffer('codebook', torch.zeros(self.nb_code, self.code_dim).cuda())", "tensor_to_device", "replace", True,
      "self.register_buffer('codebook', torch.zeros(self.nb_code, self.code_dim))",
      "unconditional .cuda() at model construction fails on an NPU host; the buffer follows net.npu() anyway"),
])

E("t2mgpt_eval_trans", "utils/eval_trans.py", "explicit_replacement",
  "T2M-GPT utils/eval_trans.py (FID / R-precision / diversity evaluation)", [
    C("=motion = motion.cuda()", "tensor_to_device", "replace", True, "motion = motion.npu()", "eval batch placement"),
    C("pred_pose_eval = torch.zeros((bs, seq, motion.shape[-1])).cuda()", "tensor_to_device", "replace", True,
      "pred_pose_eval = torch.zeros((bs, seq, motion.shape[-1])).npu()", "output buffer"),
    C("float().cuda(), num_joints)  # gt joints", "tensor_to_device", "replace", True,
      "pose_xyz = recover_from_ric(torch.from_numpy(pose).float().npu(), num_joints)  # gt joints", "joint recovery input"),
    C("float().cuda(), num_joints)  # reconstructed joints", "tensor_to_device", "replace", True,
      "pred_xyz = recover_from_ric(torch.from_numpy(pred_denorm).float().npu(), num_joints)  # reconstructed joints",
      "joint recovery input"),
    C("text = clip.tokenize(clip_text, truncate=True).cuda()", "tensor_to_device", "replace", True,
      "text = clip.tokenize(clip_text, truncate=True).npu()", "CLIP token ids"),
    C("pred_pose_eval = torch.zeros((bs, seq, pose.shape[-1])).cuda()", "tensor_to_device", "replace", True,
      "pred_pose_eval = torch.zeros((bs, seq, pose.shape[-1])).npu()", "output buffer"),
    C("index_motion = torch.ones(1, 1).cuda().long()", "tensor_to_device", "replace", True,
      "index_motion = torch.ones(1, 1).npu().long()", "fallback token when sampling fails"),
    C("=pred_xyz = recover_from_ric(torch.from_numpy(pred_denorm).float().cuda(), num_joints)", "tensor_to_device", "replace", True,
      "pred_xyz = recover_from_ric(torch.from_numpy(pred_denorm).float().npu(), num_joints)", "visualisation joints"),
    C("pose = pose.cuda().float()", "tensor_to_device", "replace", True, "pose = pose.npu().float()", "GT batch placement"),
    C("=pose_xyz = recover_from_ric(torch.from_numpy(pose).float().cuda(), num_joints)", "tensor_to_device", "replace", True,
      "pose_xyz = recover_from_ric(torch.from_numpy(pose).float().npu(), num_joints)", "visualisation joints"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU host; memory housekeeping only"),
])

# ---------------------------------------------------------------- MoMask
E("momask_base_option", "options/base_option.py", "explicit_replacement",
  "MoMask options/base_option.py (argparse BaseOptions with --gpu_id)", [
    C("torch.cuda.set_device(self.opt.gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(self.opt.gpu_id)",
      "raises on a torch build without CUDA whenever --gpu_id is given"),
])

E("momask_train_vq", "train_vq.py", "explicit_replacement",
  "MoMask train_vq.py (residual VQ tokenizer training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('opt.device = torch.device("cpu" if opt.gpu_id == -1 else "cuda:" + str(opt.gpu_id))', "device_type", "replace", True,
      'opt.device = torch.device("cpu" if opt.gpu_id == -1 else "npu:" + str(opt.gpu_id))',
      "every run passes --gpu_id N; the cuda device then fails at the first .to(opt.device)"),
    C("wrapper_opt = get_opt(dataset_opt_path, torch.device('cuda'))", "device_type", "replace", True,
      "wrapper_opt = get_opt(dataset_opt_path, torch.device('npu'))", "evaluator placement"),
    C("train_loader = DataLoader(train_dataset,", "pin_memory", "replace", False,
      "train_loader = DataLoader(train_dataset, batch_size=opt.batch_size, drop_last=True, num_workers=4, shuffle=True, pin_memory=True, pin_memory_device='npu')",
      "without pin_memory_device the DataLoader only pins when torch.cuda.is_available(), so pinning silently stops; performance only"),
    C("val_loader = DataLoader(val_dataset,", "pin_memory", "replace", False,
      "val_loader = DataLoader(val_dataset, batch_size=opt.batch_size, drop_last=True, num_workers=4, shuffle=True, pin_memory=True, pin_memory_device='npu')",
      "same as the train loader; performance only"),
])

E("momask_mask_transformer", "models/mask_transformer/transformer.py", "explicit_replacement",
  "MoMask models/mask_transformer/transformer.py (MaskTransformer with frozen CLIP)", [
    # Deliberately no labels: CLIP on cpu then moved with the model, every tensor created with
    # device=ids.device / next(self.parameters()).device, nn.TransformerEncoder, Categorical sampling.
])

E("momask_gen_t2m", "gen_t2m.py", "explicit_replacement",
  "MoMask gen_t2m.py (text-to-motion generation + BVH export)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("ckpt = torch.load(pjoin(res_opt.checkpoints_dir, res_opt.dataset_name, res_opt.name, 'model', 'net_best_fid.tar'))",
      "tensor_to_device", "replace", True,
      "ckpt = torch.load(pjoin(res_opt.checkpoints_dir, res_opt.dataset_name, res_opt.name, 'model', 'net_best_fid.tar'), map_location='cpu')",
      "released checkpoint was saved from CUDA tensors; without map_location torch.load tries to restore them on CUDA and fails"),
    C('opt.device = torch.device("cpu" if opt.gpu_id == -1 else "cuda:" + str(opt.gpu_id))', "device_type", "replace", True,
      'opt.device = torch.device("cpu" if opt.gpu_id == -1 else "npu:" + str(opt.gpu_id))', "generation device"),
])

E("momask_requirements", "requirements.txt", "explicit_replacement",
  "MoMask-style requirements.txt (pip, CUDA 11.8 wheel index)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index: on x86 Ascend hosts torch should come from the CPU index, on aarch64 from PyPI; with ==2.1.0 pip may still pick the +cu118 build (unconfirmed whether torch_npu tolerates it)"),
    C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch-npu pin matching torch 2.1.0"),
])

E("momask_docker", "Dockerfile", "explicit_replacement",
  "MoMask-style Dockerfile on nvidia/cuda with EGL rendering", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "base image carries CUDA, not CANN; torch_npu cannot load without the CANN toolkit"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "read by the NVIDIA container runtime only; with Ascend Docker Runtime devices are normally chosen at docker run (-e ASCEND_VISIBLE_DEVICES)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", "removal", False, None,
      "NVIDIA container runtime setting, ignored on Ascend"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
      "only affects nvcc extension builds; nothing is compiled here"),
    C("--index-url https://download.pytorch.org/whl/cu118 && \\", "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu && \\",
      "the image must install torch-npu next to a matching CPU torch instead of the cu118 build"),
])

E("t2m_eval_sh", "scripts/eval_all.sh", "explicit_replacement",
  "MoMask / T2M-GPT style evaluation launcher", [
    C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True, "set +u; " + SET_ENV + "; set -u",
      "CANN environment must be sourced; set_env.sh fails under set -u, hence the set +u / set -u bracket"),
    C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
      "ignored on Ascend, so --gpu_id 0 would always hit physical NPU 0 instead of the requested card"),
    C("export CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", "removal", False, None,
      "cuBLAS determinism knob; no effect on NPU"),
    C("nvidia-smi --query-gpu=name", "torch_cuda_api", "replace", False,
      'echo "Evaluating on NPU ${GPU}: $(npu-smi info -t board -i ${GPU} | grep -i \'chip name\')"',
      "informational only; the failing command substitution does not stop the script"),
])

# ---------------------------------------------------------------- MotionGPT (Lightning)
E("motiongpt_train", "train.py", "explicit_replacement",
  "MotionGPT train.py (PyTorch Lightning Trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("strategy=\"ddp_find_unused_parameters_true\" if len(cfg.DEVICE) > 1 else 'auto',", "distributed_framework", "replace", False,
      "strategy=DDPStrategy(process_group_backend=\"hccl\", find_unused_parameters=True) if len(cfg.DEVICE) > 1 else 'auto',",
      "Lightning only defaults to NCCL for cuda devices and would fall back to gloo for npu; depends on the NPU accelerator plugin used (unconfirmed)"),
])

E("motiongpt_config", "configs/default.yaml", "explicit_replacement",
  "MotionGPT configs/default.yaml", [
    C("ACCELERATOR: 'gpu'", "device_type", "replace", True,
      "ACCELERATOR: 'npu' # Devices optioncal: “cpu”, “gpu”, “npu”, “auto”",
      "Lightning's 'gpu' accelerator needs CUDA/MPS and refuses to start on an Ascend host; 'npu' requires a registered NPU accelerator plugin"),
])

E("motiongpt_smpl_render", "mGPT/render/pyrender/smpl_render.py", "device_branch_or_abstraction",
  "MotionGPT mGPT/render/pyrender/smpl_render.py (pyrender + EGL SMPL renderer)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False, "elif torch.npu.is_available():",
      "falls back to CPU, which is adequate for a batch-1 SMPL forward per rendered frame; optional NPU branch"),
    C('self.device = torch.device("cuda")', "device_type", "add_branch", False, 'self.device = torch.device("npu")',
      "device string of the optional NPU branch"),
])

E("motiongpt_demo", "demo.py", "explicit_replacement",
  "MotionGPT demo.py (batch text-to-motion / motion-to-text demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('if cfg.ACCELERATOR == "gpu":', "device_type", "replace", True, 'if cfg.ACCELERATOR == "npu":',
      "with the config switched to 'npu' the unchanged test silently sends the demo to CPU"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join(',
      "device selection from cfg.DEVICE is ignored on Ascend"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "model.to(device) fails on a host without CUDA"),
])

# ---------------------------------------------------------------- MotionDiffuse (mmcv DDP)
E("motiondiffuse_train", "tools/train.py", "explicit_replacement",
  "MotionDiffuse tools/train.py (mmcv init_dist + MMDistributedDataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("init_dist('pytorch')", "dist_backend", "replace", True,
      "init_dist('pytorch', backend='hccl')  # needs an NPU-aware mmcv (>=1.7) init",
      "mmcv's default backend is nccl and its pytorch launcher calls torch.cuda.set_device(rank % device_count())"),
    C('opt.device = torch.device("cuda")', "device_type", "replace", True, 'opt.device = torch.device("npu")',
      "trainer moves batches and the loss to opt.device"),
    C("=encoder = MMDistributedDataParallel(", "distributed_framework", "replace", False,
      "encoder = NPUDistributedDataParallel(",
      "mmcv's MMDDP scatter path is CUDA-stream based; mmcv ships an NPU wrapper in mmcv.device.npu (unconfirmed in the knowledge base)"),
    C("=encoder.cuda(),", "tensor_to_device", "replace", True, "encoder.npu(),", "model placement before DDP wrap"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "raises on a torch build without CUDA"),
    C("=encoder = MMDataParallel(", "distributed_framework", "replace", True,
      "encoder = encoder.npu(opt.gpu_id[0])  # DataParallel is unsupported on NPU, use DDP for >1 card",
      "MMDataParallel subclasses torch.nn.DataParallel, which Ascend lists as unsupported"),
    C("encoder.cuda(opt.gpu_id[0]), device_ids=opt.gpu_id)", "tensor_to_device", "replace", True,
      "encoder.npu(opt.gpu_id[0]), device_ids=opt.gpu_id)", "model placement (single-node DataParallel path)"),
    C("=encoder = encoder.cuda()", "tensor_to_device", "replace", True, "encoder = encoder.npu()", "single-device path"),
])

E("motiondiffuse_ddpm_trainer", "trainers/ddpm_trainer.py", "explicit_replacement",
  "MotionDiffuse trainers/ddpm_trainer.py (DDPMTrainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed for the optional fused optimizer below"),
    C("self.opt_encoder = optim.Adam(self.encoder.parameters(), lr=self.opt.lr)", "fused_optimizer", "replace", False,
      "self.opt_encoder = torch_npu.optim.NpuFusedAdam(self.encoder.parameters(), lr=self.opt.lr)",
      "performance only: tensor-fused Adam"),
])

E("motiondiffuse_dist_train_sh", "tools/dist_train.sh", "explicit_replacement",
  "MotionDiffuse-style tools/dist_train.sh (torch.distributed.launch)", [
    C("=set -x", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu / HCCL"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "card selection silently ignored on Ascend"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL-only; HCCL ignores it"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; no HCCL equivalent needed on one node"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific NCCL knob"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False, "npu-smi info",
      "informational; command not found on an Ascend host but the script continues"),
])

# ---------------------------------------------------------------- MotionLCM / MLD-style latent diffusion
E("motionlcm_train", "train_motionlcm.py", "explicit_replacement",
  "MotionLCM-style train_motionlcm.py (latent consistency distillation, diffusers-derived loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "silently trains on CPU otherwise"),
    C('logger.info(f"device: {device}, {torch.cuda.device_count()} GPU(s) visible")', "torch_cuda_api", "replace", False,
      'logger.info(f"device: {device}, {torch.npu.device_count()} NPU(s) visible")', "log line only (reports 0)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards a log line only"),
    C('logger.info(f"GPU 0: {torch.cuda.get_device_name(0)}")', "torch_cuda_api", "replace", False,
      'logger.info(f"NPU 0: {torch.npu.get_device_name(0)}")', "log only; unreachable until the guard is ported"),
    C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW",
      "behind use_8bit_adam (off by default); bitsandbytes 8-bit optimizers have no Ascend support"),
    C("=optimizer_class = torch.optim.AdamW", "fused_optimizer", "replace", False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW", "performance only"),
    C("scaler = torch.cuda.amp.GradScaler(", "amp", "replace", True,
      'scaler = torch.npu.amp.GradScaler(enabled=cfg.TRAIN.mixed_precision == "fp16")',
      "torch.cuda.amp.GradScaler disables itself without CUDA, so fp16 runs without loss scaling"),
    C('=with torch.autocast("cuda", dtype=weight_dtype):', "amp", "replace", True,
      'with torch.autocast("npu", dtype=weight_dtype):',
      "cuda autocast is disabled on an NPU host; fp16 VAE/text encoder then receive fp32 inputs -> dtype mismatch"),
    C('with torch.autocast("cuda", enabled=cfg.TRAIN.mixed_precision != "no", dtype=weight_dtype):', "amp", "replace", False,
      'with torch.autocast("npu", enabled=cfg.TRAIN.mixed_precision != "no", dtype=weight_dtype):',
      "student runs in fp32 if autocast is off: correct but slower and heavier"),
    C("# teacher runs in half precision", "amp", "replace", True,
      'with torch.autocast("npu", dtype=weight_dtype):  # teacher runs in half precision',
      "fp32 teacher weights with fp16 inputs fail once cuda autocast is silently disabled"),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_event = torch.npu.Event(enable_timing=True)", "CUDA event class cannot be instantiated without CUDA"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_event = torch.npu.Event(enable_timing=True)", "CUDA event class cannot be instantiated without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "lazy CUDA init raises on a torch build without CUDA"),
    C("max_memory = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "max_memory = torch.npu.max_memory_allocated() / 1024 ** 3", "silently reports 0; metric only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op"),
])

E("motion_attention_xformers", "mld/models/operator/attention.py", "kernel_rewrite",
  "latent motion denoiser attention blocks with xformers / SDPA paths (ldm-style attention.py as used in motion LDMs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed for the optional torch_npu fused kernels below"),
    C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8 and _HAS_SDPA:",
      "device_capability_check", "replace", False,
      "if _HAS_SDPA and (torch.npu.is_available() or (torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8)):",
      "False on NPU, so the einsum 'softmax' path is chosen; SDPA dispatches to the NPU flash-attention kernel. Performance only"),
    C("x, gate = self.proj(x).chunk(2, dim=-1)", "npu_fused_op", "replace", False,
      "return torch_npu.npu_geglu(self.proj(x), dim=-1, approximate=0)[0]",
      "fused GEGLU (gelu on the second half, exact erf gelu with approximate=0); performance only"),
    C("with torch.autocast(enabled=False, device_type='cuda'):", "amp", "replace", True,
      "with torch.autocast(enabled=False, device_type='npu'):",
      "autocast is per device type: on NPU this leaves npu autocast on and the fp32 guard for q.k^T is silently lost on the default (softmax) path"),
    C("out = xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None, op=self.attention_op)", "attention_kernel",
      "replace", False,
      "out = torch_npu.npu_fusion_attention(q, k, v, 1, \"BSH\", scale=self.dim_head ** -0.5)[0]",
      "xformers has no NPU backend; import is guarded so this class is simply not selected on NPU"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):",
      "attention_kernel", "replace", False, "with contextlib.nullcontext():",
      "torch.backends.cuda.sdp_kernel is marked unsupported for NPU; only reached once the capability check selects sdpa (unconfirmed effect)"),
])
