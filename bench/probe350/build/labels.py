"""Labels for probe350: image captioning research code (CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. See README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# a-PyTorch-Tutorial-to-Image-Captioning (Show, Attend and Tell)
# ---------------------------------------------------------------------------------------------
IMPORT_NOTE = ("torch_npu must be imported before 'npu' devices/torch.npu exist; these projects pin "
               "torch 1.x/2.1-era stacks where the 2.5.1+ backend autoload is not available")
DEV_NOTE = ("torch.cuda.is_available() is False on an NPU host, so the script silently runs on the CPU")

E("sat_train", "train.py", "explicit_replacement",
  "a-PyTorch-Tutorial-to-Image-Captioning train.py (fork pinning one card)", [
      C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", False,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"',
        "CUDA_VISIBLE_DEVICES is not read by the Ascend runtime; it only pins card 0 here, which is "
        "the default NPU anyway, so leaving it changes nothing"),
      C("=import torch.utils.data", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")', DEV_NOTE),
      C("cudnn.benchmark = True", "torch_cuda_api", "removal", False, None,
        "cuDNN autotuner flag; accepted but has no effect on NPU (silent no-op)"),
      C("checkpoint = torch.load(checkpoint)", "tensor_to_device", "replace", False,
        "checkpoint = torch.load(checkpoint, map_location=device)",
        "resume path only: the checkpoint pickles whole modules, so one written on a GPU box holds cuda "
        "tensors and cannot be deserialised without CUDA; checkpoints written on the NPU box load as is"),
      C("batch_size=batch_size, shuffle=True, num_workers=workers, pin_memory=True)", "pin_memory", "replace",
        False,
        "batch_size=batch_size, shuffle=True, num_workers=workers, pin_memory=True, pin_memory_device='npu')",
        "performance only; whether plain pin_memory=True pins for the NPU depends on the torch version's "
        "accelerator detection (unconfirmed)"),
      C("batch_size=batch_size, shuffle=False, num_workers=workers, pin_memory=True)", "pin_memory", "replace",
        False,
        "batch_size=batch_size, shuffle=False, num_workers=workers, pin_memory=True, pin_memory_device='npu')",
        "performance only, as for the train loader (unconfirmed)"),
  ])

E("sat_models", "models.py", "explicit_replacement",
  "a-PyTorch-Tutorial-to-Image-Captioning models.py (Encoder/Attention/DecoderWithAttention)", [
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "module-level device used for the predictions/alphas buffers in forward(); left as is it is the CPU "
        "while the decoder runs on the NPU, and the loss then mixes devices"),
  ])

E("sat_eval", "eval.py", "explicit_replacement",
  "a-PyTorch-Tutorial-to-Image-Captioning eval.py (beam-search BLEU-4)", [
      C("=import torch.utils.data", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")', DEV_NOTE),
      C("cudnn.benchmark = True", "torch_cuda_api", "removal", False, None,
        "cuDNN autotuner flag; no effect on NPU"),
      C("checkpoint = torch.load(checkpoint)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(checkpoint, map_location=device)",
        "evaluates the released BEST_checkpoint, which pickles modules trained on a GPU; deserialising "
        "cuda tensors on a host without CUDA raises"),
      C("batch_size=1, shuffle=True, num_workers=1, pin_memory=True)", "pin_memory", "replace", False,
        "batch_size=1, shuffle=True, num_workers=1, pin_memory=True, pin_memory_device='npu')",
        "performance only (unconfirmed)"),
  ])

E("sat_caption", "caption.py", "explicit_replacement",
  "a-PyTorch-Tutorial-to-Image-Captioning caption.py (single image + attention plot)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        DEV_NOTE + "; map_location=str(device) below follows automatically"),
  ])

E("sat_utils", "utils.py", "explicit_replacement",
  "a-PyTorch-Tutorial-to-Image-Captioning utils.py (HDF5 prep, checkpointing, meters) - no device code", [])

# ---------------------------------------------------------------------------------------------
# ruotianluo ImageCaptioning.pytorch / self-critical.pytorch
# ---------------------------------------------------------------------------------------------
DP_NOTE = ("nn.DataParallel is unsupported on Ascend (✘ in Ascend's API table; its scatter/replicate path "
           "uses CUDA-only comm kernels); one process per NPU with DDP instead")

E("rl_train", "train.py", "explicit_replacement",
  "ruotianluo/self-critical.pytorch train.py (XE + SCST loop, DataParallel LossWrapper)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("model = models.setup(opt).cuda()", "tensor_to_device", "replace", True,
        "model = models.setup(opt).npu()", "Module.cuda() raises without CUDA"),
      C("dp_model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
        "dp_model = model", DP_NOTE),
      C("dp_lw_model = torch.nn.DataParallel(lw_model)", "distributed_framework", "replace", True,
        "dp_lw_model = lw_model", DP_NOTE),
      C("optimizer.load_state_dict(torch.load(os.path.join(opt.start_from, 'optimizer.pth')))",
        "tensor_to_device", "replace", False,
        "optimizer.load_state_dict(torch.load(os.path.join(opt.start_from, 'optimizer.pth'), map_location='cpu'))",
        "only when resuming a run started on a GPU box: the optimizer state holds cuda tensors"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize() initialises CUDA and raises on an NPU host"),
      C("torch.cuda.synchronize()  # wait for the backward kernels", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the backward kernels before reading the clock",
        "raises without CUDA; NPU launches are asynchronous too, so the timing needs the NPU sync"),
      C("tmp = [_ if _ is None else torch.from_numpy(_).cuda() for _ in tmp]", "tensor_to_device", "replace", True,
        "tmp = [_ if _ is None else torch.from_numpy(_).npu() for _ in tmp]", "Tensor.cuda() raises without CUDA"),
      C("torch.cuda.max_memory_allocated() / 1024 ** 2, iteration)", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 1024 ** 2, iteration)",
        "logging only: returns 0 when CUDA was never initialised"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA is not initialised; the NPU cache is simply not released"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpus", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.gpus",
        "--gpus is silently ignored on NPU and the job lands on card 0; the Ascend variable has to be set "
        "before the NPU runtime initialises (unconfirmed that this point is early enough)"),
  ])

E("rl_eval", "eval.py", "explicit_replacement",
  "ruotianluo/self-critical.pytorch eval.py (--device flag)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--device', type=str, default='cuda',", "device_type", "replace", True,
        "parser.add_argument('--device', type=str, default='npu',",
        "default device string; model.to(opt.device) raises for 'cuda' without CUDA"),
  ])

E("rl_eval_utils", "eval_utils.py", "explicit_replacement",
  "ruotianluo/self-critical.pytorch eval_utils.py (eval_split / language_eval)", [
      C("device = eval_kwargs.get('device', 'cuda')", "device_type", "replace", True,
        "device = eval_kwargs.get('device', 'npu')",
        "train.py calls eval_split without a 'device' key, so the 'cuda' default is used and .to('cuda') raises"),
  ])

E("rl_attmodel", "models/AttModel.py", "explicit_replacement",
  "ruotianluo/self-critical.pytorch models/AttModel.py (Att2in2/UpDown, sampling with bad-ending/trigram blocking)", [
      C("tmp = torch.zeros(logprobs.size()).cuda()", "tensor_to_device", "replace", True,
        "tmp = torch.zeros(logprobs.size(), device=logprobs.device)",
        "hard-coded .cuda() on the remove_bad_endings path (an eval/sampling option)"),
      C("mask = torch.zeros(logprobs.size(), requires_grad=False).cuda()", "tensor_to_device", "replace", True,
        "mask = torch.zeros(logprobs.size(), requires_grad=False, device=logprobs.device)",
        "hard-coded .cuda() on the block_trigrams path"),
  ])

E("rl_loss_wrapper", "misc/loss_wrapper.py", "explicit_replacement",
  "ruotianluo/self-critical.pytorch misc/loss_wrapper.py (SCST reward to device)", [
      C("reward = torch.from_numpy(reward).type(torch.cuda.FloatTensor)", "tensor_to_device", "replace", True,
        "reward = torch.from_numpy(reward).float().to(sample_logprobs.device)",
        "torch.cuda.FloatTensor type cast raises without CUDA"),
  ])

E("rl_rewards", "misc/rewards.py", "explicit_replacement",
  "ruotianluo/self-critical.pytorch misc/rewards.py (CIDEr-D reward on the host) - only .cpu() copies", [])

E("rl_misc_utils", "misc/utils.py", "explicit_replacement",
  "ruotianluo/self-critical.pytorch misc/utils.py (criteria, optimizers, fork's set_seed)", [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "queued no-op without CUDA; torch.manual_seed above also seeds the PrivateUse1 device in torch 2.x "
        "(unconfirmed for every version)"),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)",
        "cuDNN flag, no effect on NPU; determinism there needs the generic switch (per-op coverage unconfirmed)"),
      C("torch.backends.cudnn.benchmark = False", "torch_cuda_api", "removal", False, None,
        "cuDNN flag, no effect on NPU"),
  ])

E("rl_dataloader", "dataloader.py", "explicit_replacement",
  "ruotianluo/self-critical.pytorch dataloader.py (HybridLoader, BlobFetcher) - pin_memory on numpy batches", [])

E("rl_prepro_feats", "scripts/prepro_feats.py", "explicit_replacement",
  "ruotianluo/self-critical.pytorch scripts/prepro_feats.py (ResNet fc/att feature extraction)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("my_resnet.cuda()", "tensor_to_device", "replace", True, "my_resnet.npu()",
        "Module.cuda() raises without CUDA"),
      C("I = torch.from_numpy(I.transpose([2, 0, 1])).cuda()", "tensor_to_device", "replace", True,
        "I = torch.from_numpy(I.transpose([2, 0, 1])).npu()", "Tensor.cuda() raises without CUDA"),
  ])

E("rl_train_sh", "scripts/train_updown_sc.sh", "explicit_replacement",
  "ruotianluo/self-critical.pytorch launcher: XE then SCST then eval", [
      C("=set -e", "import_torch_npu", "npu_only_addition", True, ". /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced before python imports torch_npu (libascendcl/libhccl, ASCEND_OPP_PATH); "
        "a non-interactive sh does not read the login profile. POSIX '.' because the script runs under sh"),
      C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
        "GPU=N selection is silently ignored by the Ascend runtime"),
      C("  --device cuda", "device_type", "replace", True, "  --device npu",
        "eval.py --device cuda -> model.to('cuda') raises"),
  ])

# ---------------------------------------------------------------------------------------------
# ClipCap (rmokady/CLIP_prefix_caption)
# ---------------------------------------------------------------------------------------------
E("cc_train", "train.py", "explicit_replacement",
  "rmokady/CLIP_prefix_caption train.py (fork with --fp16/--bf16 torch.cuda.amp)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
        "hard-coded cuda:0; model.to(device) raises without CUDA"),
      C("if args.bf16 and torch.cuda.get_device_capability(device)[0] < 8:", "device_capability_check", "replace",
        True, "if args.bf16 and not torch.npu.is_bf16_supported():",
        "CUDA compute-capability query raises without CUDA; NPUs have no sm version (get_device_capability is "
        "None/unsupported there), ask for bf16 support directly"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp and not args.bf16)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=use_amp and not args.bf16)",
        "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is unavailable, so --fp16 silently "
        "loses loss scaling"),
      C("with torch.cuda.amp.autocast(enabled=use_amp, dtype=amp_dtype):", "amp", "replace", True,
        "with torch.autocast(device_type='npu', enabled=use_amp, dtype=amp_dtype):",
        "cuda autocast is disabled (warning only) without CUDA: --fp16/--bf16 silently train in fp32"),
  ])

E("cc_parse_coco", "parse_coco.py", "explicit_replacement",
  "rmokady/CLIP_prefix_caption parse_coco.py (CLIP image embeddings)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
        "hard-coded cuda:0 is passed to clip.load and .to(device)"),
  ])

E("cc_predict", "predict.py", "device_branch_or_abstraction",
  "rmokady/CLIP_prefix_caption inference notebook turned into predict.py (get_device/CUDA helper)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if torch.npu.is_available(): return torch.device(f'npu:{min(torch.npu.device_count() - 1, device_id)}')",
        "the get_device helper returns CPU on an NPU host (silent CPU inference); add an NPU branch ahead of the "
        "CUDA one, the CUDA branch itself can stay"),
  ])

E("cc_environment", "environment.yml", "explicit_replacement",
  "rmokady/CLIP_prefix_caption environment.yml (conda, CUDA 11.3)", [
      C("=- nvidia", "import_torch_npu", "removal", False, None,
        "NVIDIA conda channel only serves CUDA packages"),
      C("- cudatoolkit=11.3", "import_torch_npu", "replace", False, "- cpuonly",
        "CUDA runtime is dead weight on an NPU host; cpuonly keeps conda from picking a CUDA build "
        "(availability of cudatoolkit on aarch64 hosts unconfirmed)"),
      C("- pytorch=1.10.1=py3.8_cuda11.3_cudnn8.2.0_0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
        "CUDA build of torch 1.10; torch_npu exists only for matching torch versions (no 1.10 wheel) and "
        "needs a non-CUDA torch of the same version"),
      C("- torchvision=0.11.2=py38_cu113", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "must match the new torch; the cu113 build links CUDA"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
        "torch-npu pin (pip only), same torch version as the conda pytorch; CANN must match its release"),
  ])

E("cc_requirements", "requirements.txt", "explicit_replacement",
  "ClipCap fork requirements.txt (cu113 wheel index)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; x86 Ascend hosts take the CPU torch wheel (aarch64 uses plain PyPI)"),
      C("torch==1.10.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
        "+cu113 build does not exist on the CPU index and has no torch_npu counterpart"),
      C("torchvision==0.11.2+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "must match the new torch"),
      C("=transformers==4.19.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch-npu pin next to the torch stack (placed after the first non-torch line because the torch lines "
        "carry their own edits)"),
  ])

# ---------------------------------------------------------------------------------------------
# Oscar / VinVL (microsoft/Oscar, microsoft/scene_graph_benchmark)
# ---------------------------------------------------------------------------------------------
E("os_run_captioning", "oscar/run_captioning.py", "explicit_replacement",
  "microsoft/Oscar oscar/run_captioning.py (HF-style launcher, apex amp, nccl, SCST)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
        "performance only (unconfirmed whether plain pin_memory targets the NPU on this torch version)"),
      C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)", "amp", "replace",
        False,
        "model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level, combine_grad=True)",
        "runs unchanged with Ascend's apex patch (O1/O2, dynamic loss scale); combine_grad is its NPU fast "
        "path. NVIDIA apex itself cannot be built there (see install_env.sh / Dockerfile)"),
      C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
        'raise ValueError("nn.DataParallel is not supported on NPU: launch one process per NPU")',
        DP_NOTE + "; reached as soon as n_gpu counts NPUs"),
      C("torch.cuda.max_memory_allocated() / 1024.0 / 1024.0))", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 1024.0 / 1024.0))",
        "logging only: returns 0 when CUDA was never initialised"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; the NPU cache after beam search is not released"),
      C('args.device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")',
        "device_type", "replace", True,
        'args.device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")', DEV_NOTE),
      C("args.n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.n_gpu = torch.npu.device_count()",
        "returns 0 on an NPU host: a single-process run silently uses one card and skips per-device seeding"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C('args.device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
        'args.device = torch.device("npu", args.local_rank)', "cuda device string on the distributed path"),
      C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl')", "NCCL is not available on NPU hosts; HCCL is"),
  ])

BYTE_NOTE = ("all_gather buffer created on 'cuda' raises without CUDA. Ascend's 2.7.1 table lists all_gather "
             "dtypes as bf16/fp16/fp32/int8/int32/bool, so these uint8/int64 buffers may also need a dtype "
             "change on HCCL (unconfirmed)")
E("os_comm", "oscar/utils/comm.py", "explicit_replacement",
  "microsoft/Oscar oscar/utils/comm.py (maskrcnn-benchmark style pickled all_gather)", [
      C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
        'tensor = torch.ByteTensor(storage).to("npu")', BYTE_NOTE),
      C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
        'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "hard-coded 'cuda' string"),
      C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device",
        "replace", True, 'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]',
        "hard-coded 'cuda' string"),
      C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
        'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "hard-coded 'cuda' string"),
      C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace",
        True, 'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "hard-coded 'cuda' string"),
      C("tensor = torch.ByteTensor(storage).to('cuda')", "tensor_to_device", "replace", True,
        "tensor = torch.ByteTensor(storage).to('npu')", "hard-coded 'cuda' string (gather_on_master)"),
      C("local_size = torch.LongTensor([tensor.numel()]).to('cuda')", "tensor_to_device", "replace", True,
        "local_size = torch.LongTensor([tensor.numel()]).to('npu')", "hard-coded 'cuda' string"),
      C("size_list = [torch.LongTensor([0]).to('cuda') for _ in range(world_size)]", "tensor_to_device",
        "replace", True, "size_list = [torch.LongTensor([0]).to('npu') for _ in range(world_size)]",
        "hard-coded 'cuda' string"),
      C("padding = torch.ByteTensor(size=(max_size - local_size,)).to('cuda')", "tensor_to_device", "replace",
        True, "padding = torch.ByteTensor(size=(max_size - local_size,)).to('npu')", "hard-coded 'cuda' string"),
      C("tensor_list.append(torch.ByteTensor(size=(max_size,)).to('cuda'))", "tensor_to_device", "replace", True,
        "tensor_list.append(torch.ByteTensor(size=(max_size,)).to('npu'))", "hard-coded 'cuda' string"),
  ])

E("os_misc", "oscar/utils/misc.py", "explicit_replacement",
  "microsoft/Oscar oscar/utils/misc.py (set_seed, yaml helpers)", [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "queued no-op without CUDA; torch.manual_seed already seeds the NPU in torch 2.x (unconfirmed for all "
        "versions)"),
      C("return all(v.is_cuda for v in d.values() if torch.is_tensor(v))", "device_type", "replace", True,
        "return all(v.device.type != 'cpu' for v in d.values() if torch.is_tensor(v))",
        "is_cuda is False for NPU tensors, so the helper reports 'already on host' and callers skip the .cpu() "
        "copy before pickling"),
  ])

E("os_modeling_bert", "oscar/modeling/modeling_bert.py", "explicit_replacement",
  "microsoft/Oscar oscar/modeling/modeling_bert.py (BertImgModel, BertForImageCaptioning, apex BertLayerNorm)", [
      C("from apex.normalization.fused_layer_norm import FusedLayerNorm as LayerNormClass",
        "custom_cuda_extension", "replace", True, "from torch.nn import LayerNorm as LayerNormClass",
        "with Ascend's apex installed (needed for --fp16) the import succeeds, but FusedLayerNorm loads the "
        "fused_layer_norm_cuda extension when constructed, which does not exist on NPU; hit when "
        "use_img_layernorm is set"),
  ])

E("os_train_sh", "scripts/train_coco_captioning.sh", "explicit_replacement",
  "microsoft/Oscar README captioning commands as an 8-GPU launcher", [
      C("=set -x", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced before torch_npu is imported by the workers"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "ignored by the Ascend runtime, but it lists every card of an 8-NPU host, so nothing changes there"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
        "NCCL_* variables are ignored; closest CANN knob is the global log level (equivalence unconfirmed)"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only, ignored on NPU"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "HCCL's NIC selection variable; only matters for multi-node runs, this script is single-node"),
      C("NUM_GPUS=$(nvidia-smi -L | wc -l)", "device_capability_check", "replace", True,
        'NUM_GPUS=$(npu-smi info -l | grep -c "NPU ID")',
        "nvidia-smi is absent: NUM_GPUS becomes 0 and the launcher starts --nproc_per_node=0"),
  ])

E("os_install", "scripts/install_env.sh", "explicit_replacement",
  "microsoft/Oscar INSTALL.md as a script (conda, cudatoolkit, NVIDIA apex)", [
      C("conda create --name $ENV_NAME python=3.7 -y", "import_torch_npu", "replace", True,
        "conda create --name $ENV_NAME python=3.8 -y",
        "torch 2.1 / torch_npu 2.1 need Python >= 3.8"),
      C("conda install -y pytorch==1.7.0 torchvision==0.8.0 cudatoolkit=10.1 -c pytorch", "import_torch_npu",
        "replace", True, "pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
        "CUDA 10.1 build of torch 1.7 has no torch_npu counterpart; install the matched torch + torch-npu pair"),
      C("git clone https://github.com/NVIDIA/apex.git", "amp", "replace", True,
        "git clone https://gitee.com/ascend/apex.git",
        "--fp16 relies on apex amp; on NPU that is Ascend's apex patch, not NVIDIA apex"),
      C("python setup.py install --cuda_ext --cpp_ext", "custom_cuda_extension", "replace", True,
        "bash scripts/build.sh --python=3.8 && pip install apex/dist/apex-*.whl",
        "--cuda_ext compiles CUDA kernels with nvcc, which does not exist on an NPU host"),
      C('python -c "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"',
        "torch_cuda_api", "replace", False,
        'python -c "import torch, torch_npu; print(torch.npu.is_available(), torch.npu.device_count())"',
        "sanity check only: prints 'False 0' on an NPU host without failing the script"),
  ])

E("vv_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "microsoft/scene_graph_benchmark (maskrcnn-benchmark) docker/Dockerfile", [
      C('ARG CUDA="10.1"', "env_var", "removal", False, None, "only feeds the CUDA base image / cudatoolkit pin"),
      C('ARG CUDNN="7"', "env_var", "removal", False, None, "only feeds the CUDA base image tag"),
      C("FROM nvidia/cuda:${CUDA}-cudnn${CUDNN}-devel-ubuntu18.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image carries no CANN toolkit/driver libraries, so torch_npu cannot load in the container"),
      C("&& /miniconda/bin/conda create -y --name py37 python=3.7 \\", "import_torch_npu", "replace", True,
        "&& /miniconda/bin/conda create -y --name py37 python=3.8 \\",
        "torch 2.1 / torch_npu need Python >= 3.8"),
      C("&& conda install -y pytorch=1.7.0 torchvision=0.8.0 cudatoolkit=${CUDA} -c pytorch \\",
        "import_torch_npu", "replace", True,
        "&& pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 \\",
        "CUDA build of torch 1.7; install the matched torch + torch-npu pair"),
      C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0+PTX"', "env_var", "removal", False, None,
        "CUDA arch list for nvcc builds; meaningless without CUDA"),
      C("RUN git clone https://github.com/NVIDIA/apex.git \\", "amp", "replace", True,
        "RUN git clone https://gitee.com/ascend/apex.git \\",
        "NVIDIA apex cannot be built for NPU; Ascend's apex patch provides amp there"),
      C("&& git checkout f3a960f80244cf9e80558ab30f7f7e8cbf03c0a0 \\", "amp", "replace", True,
        "&& git checkout master \\", "pinned NVIDIA apex commit does not exist in Ascend's apex repo"),
      C("&& python setup.py install --cuda_ext --cpp_ext", "custom_cuda_extension", "replace", True,
        "&& bash scripts/build.sh --python=3.8 && pip install apex/dist/apex-*.whl",
        "--cuda_ext needs nvcc"),
      C('ARG FORCE_CUDA="1"', "env_var", "replace", True, 'ARG FORCE_CUDA="0"',
        "forces the CUDAExtension/nvcc branch of setup.py; without nvcc in the image the build fails"),
  ])

EXT_NOTE = ("the unchanged setup.py still builds a CPU-only _C on an NPU host; NPU kernels for roi_align/nms "
            "would come in through torch_npu's NpuExtension (Ascend C) - or, as done here, the call sites move to "
            "torchvision ops with torchvision_npu")
E("vv_setup", "setup.py", "kernel_rewrite",
  "microsoft/scene_graph_benchmark setup.py (maskrcnn_benchmark._C CUDAExtension)", [
      C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", "npu_only_addition", False,
        "from torch_npu.utils.cpp_extension import NpuExtension", EXT_NOTE),
      C('source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))', "custom_cuda_extension",
        "npu_only_addition", False, 'source_npu = glob.glob(os.path.join(extensions_dir, "npu", "*.cpp"))',
        EXT_NOTE),
      C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
        "custom_cuda_extension", "add_branch", False, 'elif os.getenv("FORCE_NPU", "0") == "1":', EXT_NOTE),
  ])

E("vv_roi_align", "maskrcnn_benchmark/layers/roi_align.py", "kernel_rewrite",
  "maskrcnn-benchmark layers/roi_align.py as used by VinVL (plus the nms handle)", [
      C("from maskrcnn_benchmark import _C", "custom_cuda_extension", "npu_only_addition", True,
        "import torchvision, torchvision_npu  # NPU kernels for torchvision.ops.roi_align / nms",
        "torchvision.ops have no NPU kernels until torchvision_npu is imported"),
      C("output = _C.roi_align_forward(", "custom_cuda_extension", "replace", True,
        "output = torchvision.ops.roi_align(input, roi, output_size, spatial_scale, sampling_ratio)",
        "on an NPU host _C is built without WITH_CUDA; its dispatcher falls through to the CPU kernel and reads "
        "NPU memory as host memory"),
      C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", "replace", True,
        "grad_input = torch.ops.torchvision._roi_align_backward(",
        "same extension problem for the backward; NPU backward kernel in torchvision_npu unconfirmed"),
      C("_nms = _C.nms", "custom_cuda_extension", "replace", True, "from torchvision.ops import nms as _nms",
        "nms from the CPU-only extension on NPU tensors; torchvision_npu provides nms"),
  ])

E("vv_test_sg", "tools/test_sg_net.py", "explicit_replacement",
  "microsoft/scene_graph_benchmark tools/test_sg_net.py (VinVL feature extraction driver)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.empty_cache()  # TODO check if it helps", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # TODO check if it helps", "no-op without CUDA"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA on the distributed path"),
  ])

E("vv_config", "sgg_configs/vgattr/vinvl_x152c4.yaml", "explicit_replacement",
  "microsoft/scene_graph_benchmark sgg_configs/vgattr/vinvl_x152c4.yaml", [
      C('DEVICE: "cuda"', "device_type", "replace", True, 'DEVICE: "npu"',
        "cfg.MODEL.DEVICE feeds model.to() and inference(device=...) in tools/test_sg_net.py"),
      C("DISTRIBUTED_BACKEND: 'nccl'", "dist_backend", "replace", True, "DISTRIBUTED_BACKEND: 'hccl'",
        "passed straight to init_process_group by tools/test_sg_net.py"),
  ])
