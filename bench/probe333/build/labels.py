"""Labels for probe333: video temporal grounding / moment retrieval / dense video captioning (CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit. See README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


E("md_config", "moment_detr/config.py", "device_branch_or_abstraction",
  "Moment-DETR moment_detr/config.py (BaseOptions.parse builds opt.device)", [
    C('opt.device = torch.device("cuda" if opt.device >= 0 else "cpu")', "device_type", "replace", True,
      'opt.device = torch.device("npu:{}".format(opt.device) if opt.device >= 0 else "cpu")',
      "every later .to(opt.device) goes through this one torch.device; 'cuda' fails on an NPU-only host"),
])

E("md_train", "moment_detr/train.py", "device_branch_or_abstraction",
  "Moment-DETR moment_detr/train.py (train loop, set_seed, DataLoader)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: registers the npu device/torch.npu namespace (autoload only from torch_npu 2.5.1; this code base pins older torch)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed above already seeds accelerator generators, so only for explicitness"),
    C('if opt.device.type == "cuda":', "device_type", "replace", False, 'if opt.device.type in ("cuda", "npu"):',
      "same gate as setup_model() in inference.py, which already moved model and criterion; redundant here, edited for consistency"),
    C("pin_memory=opt.pin_memory", "pin_memory", "replace", False, 'pin_memory=opt.pin_memory, pin_memory_device="npu"',
      "DataLoader only pins when torch.cuda.is_available() unless pin_memory_device is given; performance only (unconfirmed for every torch_npu version)"),
])

E("md_dataset", "moment_detr/start_end_dataset.py", "device_branch_or_abstraction",
  "Moment-DETR moment_detr/start_end_dataset.py (StartEndDataset, prepare_batch_inputs)", [
    # deliberately empty: prepare_batch_inputs only uses .to(device, non_blocking=...) with the device passed in
])

E("md_inference", "moment_detr/inference.py", "device_branch_or_abstraction",
  "Moment-DETR moment_detr/inference.py (setup_model, compute_mr_results, start_inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "second entry point (python moment_detr/inference.py) needs the npu backend registered too"),
    C('if opt.device.type == "cuda":', "device_type", "replace", True, 'if opt.device.type in ("cuda", "npu"):',
      "device-type gate: with an npu device the model and criterion are never moved and the first forward hits a device mismatch"),
    C("pin_memory=opt.pin_memory", "pin_memory", "replace", False, 'pin_memory=opt.pin_memory, pin_memory_device="npu"',
      "eval DataLoader pinning silently disabled without CUDA; performance only (unconfirmed)"),
])

E("md_run_on_video", "run_on_video/run.py", "device_branch_or_abstraction",
  "Moment-DETR run_on_video/run.py (MomentDETRPredictor demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "demo entry point; without it the 'npu' device string is unknown on pre-2.5.1 torch_npu"),
    C('def __init__(self, ckpt_path, clip_model_name_or_path="ViT-B/32", device="cuda"):', "device_type", "replace", False,
      'def __init__(self, ckpt_path, clip_model_name_or_path="ViT-B/32", device="npu"):',
      "default only: the demo below passes device explicitly; still wrong for callers relying on the default"),
    C('=device="cuda"', "device_type", "replace", True, 'device="npu"',
      "the explicit device handed to CLIP, the model and every tensor of the demo"),
])

E("md_clip_extractor", "run_on_video/data_utils.py", "device_branch_or_abstraction",
  "Moment-DETR run_on_video/data_utils.py (CLIP ClipFeatureExtractor, ffmpeg VideoLoader)", [
    C('def __init__(self, framerate=1/2, size=224, centercrop=True, model_name_or_path="ViT-B/32", device="cuda"):',
      "device_type", "replace", False,
      'def __init__(self, framerate=1/2, size=224, centercrop=True, model_name_or_path="ViT-B/32", device="npu"):',
      "default only; run.py always passes its own device"),
])

E("univtg_config", "main/config.py", "explicit_replacement",
  "UniVTG main/config.py (BaseOptions with --gpu_id, CUDA_VISIBLE_DEVICES pinning)", [
    C("torch.cuda.set_device(opt.gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.gpu_id)",
      "demo/run_on_video path passes args in; torch.cuda.set_device raises without a CUDA driver"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(opt.gpu_id)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(opt.gpu_id)',
      "the Ascend runtime ignores CUDA_VISIBLE_DEVICES, so --gpu_id would silently always land on logical NPU 0"),
    C('opt.device = torch.device("cuda:0")', "device_type", "replace", True, 'opt.device = torch.device("npu:0")',
      "the single device object used by every .to(opt.device) in train_mr.py / inference"),
])

E("univtg_train_mr", "main/train_mr.py", "explicit_replacement",
  "UniVTG main/train_mr.py (moment-retrieval fine-tuning loop, setup_model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "training entry point"),
    C('if opt.device.type == "cuda":', "device_type", "replace", True, 'if opt.device.type == "npu":',
      "with opt.device = npu:0 the model/criterion would stay on CPU and the first forward fails with a device mismatch"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      'logger.info("Peak NPU memory: {:.2f} GB".format(torch.npu.max_memory_allocated() / 1024 ** 3))',
      "uninitialised CUDA returns 0, so the log is silently wrong; training unaffected"),
    C("=pin_memory=True", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu"',
      "pinning silently skipped without CUDA; performance only (unconfirmed)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA was never initialised; only matters for peak NPU memory after eval"),
    C('os.environ["CUDA_LAUNCH_BLOCKING"] = "1"', "env_var", "replace", False, 'os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"',
      "--debug only: synchronous launches for readable device errors; ignored on Ascend"),
])

E("univtg_model", "model/univtg.py", "explicit_replacement",
  "UniVTG model/univtg.py (Model, SetCriterion, build_model)", [
    C("idx_mask = torch.tensor((-1, 1)).unsqueeze(0).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "idx_mask = torch.tensor((-1, 1), device=outputs_coord.device).unsqueeze(0).unsqueeze(0)",
      "hard-coded .cuda() in the forward pass: raises on an NPU host (no CUDA driver)"),
    C("idiag_cls = i_logsm_cls[torch.arange(len(cls_indices)).cuda(), cls_indices]", "tensor_to_device", "replace", True,
      "idiag_cls = i_logsm_cls[torch.arange(len(cls_indices), device=i_logsm_cls.device), cls_indices]",
      "stray .cuda() in the TAL (saliency_cls) loss; only hit for temporal-action-localisation training data"),
])

E("univtg_video_extractor", "run_on_video/video_extractor.py", "explicit_replacement",
  "UniVTG run_on_video feature extraction (CLIP ViT-B/32 + SlowFast R50, HERO-extractor style)", [
    C("=import torch as th", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone script; needs the npu backend before th.device('npu') is built"),
    C('device = th.device("cuda" if th.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = th.device("npu" if th.npu.is_available() else "cpu")',
      "silently falls back to CPU on an NPU host (is_available() is False), extraction runs on the host"),
    C("cfg.NUM_GPUS = 1", "device_type", "replace", True, "cfg.NUM_GPUS = 0  # build on host, moved to the NPU below",
      "SlowFast's build_model calls model.cuda(device=gpu_id) whenever NUM_GPUS > 0"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.to(device)", "hard-coded .cuda()"),
    C("vid_features = th.cuda.FloatTensor(n_chunk, 512).fill_(0)", "torch_cuda_api", "replace", True,
      "vid_features = th.zeros(n_chunk, 512, device=device)",
      "legacy th.cuda.FloatTensor constructor needs CUDA"),
    C("clips = video[i:i + 8].cuda()", "tensor_to_device", "replace", True, "clips = video[i:i + 8].to(device)",
      "hard-coded .cuda()"),
    C("th.cuda.empty_cache()", "torch_cuda_api", "replace", False, "th.npu.empty_cache()",
      "no-op without CUDA; memory hygiene only"),
    C("if th.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", "replace", True,
      "if device.type == \"cpu\":",
      "get_device_capability initialises CUDA and raises on an NPU host; NPUs run the fp16 CLIP forward natively, only the CPU fallback needs fp32"),
    C('print("Running on", device, "-", th.cuda.get_device_name(0))', "torch_cuda_api", "replace", True,
      'print("Running on", device, "-", th.npu.get_device_name(0))',
      "get_device_name initialises CUDA and raises on an NPU-only host"),
])

E("univtg_pretrain_sh", "scripts/pretrain/pretrain_sf_clip.sh", "explicit_replacement",
  "UniVTG scripts/pretrain/*.sh (multi-GPU VLP pretraining launcher)", [
    C("#!/usr/bin/env bash", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu/HCCL; only needed when the shell/container does not already source it"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL_DEBUG is ignored by HCCL; logging only"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 PYTHONPATH=$PYTHONPATH:. \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 PYTHONPATH=$PYTHONPATH:. \\",
      "device mask is ignored by the Ascend runtime; ranks would not be confined to the intended cards"),
])

E("tan_train", "moment_localization/train.py", "explicit_replacement",
  "2D-TAN moment_localization/train.py (Engine hooks, nn.DataParallel, .cuda() batches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "training entry point"),
    C("torch.cuda.manual_seed(0)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(0)",
      "lazy no-op without CUDA; torch.manual_seed(0) on the previous line already seeds the device generators"),
    C("model_checkpoint = torch.load(config.MODEL.CHECKPOINT)", "device_type", "replace", True,
      "model_checkpoint = torch.load(config.MODEL.CHECKPOINT, map_location='cpu')",
      "2D-TAN checkpoints are saved from CUDA tensors; loading them without map_location tries to restore onto cuda and fails"),
    C("=if torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
      "on an NPU host this is 0 so the DataParallel branch is skipped; the block is dropped because DataParallel is unsupported on NPU"),
    C('print("Using", torch.cuda.device_count(), "GPUs")', "torch_cuda_api", "removal", False, None,
      "part of the DataParallel block; would print 0"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", False, None,
      "torch.nn.DataParallel is ✘ on Atlas A2/A3; unreachable with the CUDA device_count guard, must not be re-enabled (multi-card = DDP + HCCL)"),
    C('device = ("cuda" if torch.cuda.is_available() else "cpu" )', "device_type", "replace", True,
      'device = ("npu" if torch.npu.is_available() else "cpu")',
      "silently trains on the CPU on an NPU host"),
    C("textual_input = sample['batch_word_vectors'].cuda()", "tensor_to_device", "replace", True,
      "textual_input = sample['batch_word_vectors'].to(device)", "hard-coded .cuda()"),
    C("textual_mask = sample['batch_txt_mask'].cuda()", "tensor_to_device", "replace", True,
      "textual_mask = sample['batch_txt_mask'].to(device)", "hard-coded .cuda()"),
    C("visual_input = sample['batch_vis_input'].cuda()", "tensor_to_device", "replace", True,
      "visual_input = sample['batch_vis_input'].to(device)", "hard-coded .cuda()"),
    C("map_gt = sample['batch_map_gt'].cuda()", "tensor_to_device", "replace", True,
      "map_gt = sample['batch_map_gt'].to(device)", "hard-coded .cuda()"),
    C("sorted_indexs = torch.from_numpy(sorted_indexs).cuda()", "tensor_to_device", "replace", True,
      "sorted_indexs = torch.from_numpy(sorted_indexs).to(device)",
      "evaluation-time .cuda() on numpy proposals"),
    C("if torch.cuda.device_count() > 1:  # DataParallel wraps the model in .module", "torch_cuda_api", "replace", False,
      "if isinstance(model, torch.nn.DataParallel):",
      "still takes the right (plain state_dict) branch on NPU; edited for consistency once DataParallel is gone"),
])

E("mmn_train_net", "train_net.py", "explicit_replacement",
  "MMN / 2D-TAN++ train_net.py (maskrcnn-benchmark style launcher with torch.distributed.launch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "training entry point"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazy no-op without CUDA; torch.manual_seed already seeds the device"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same as above"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; frees cached NPU memory before the final test only"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "raises without CUDA; each rank must bind its own NPU before HCCL init"),
    C('backend="nccl", init_method="env://"', "dist_backend", "replace", True, 'backend="hccl", init_method="env://"',
      "NCCL backend is not available in torch_npu builds"),
])

E("mmn_comm", "mmn/utils/comm.py", "explicit_replacement",
  "MMN mmn/utils/comm.py (maskrcnn-benchmark / detectron2 comm helpers)", [
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True, 'if dist.get_backend() in ("nccl", "hccl"):',
      "backend-string comparison is not rewritten by anything; under hccl it returns WORLD and all_gather_cpu then feeds CPU tensors to HCCL"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", False, 'assert backend in ["gloo", "nccl", "hccl"]',
      "only reached with a non-gloo group once the comparison above is fixed; would assert for an hccl group passed explicitly"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", False,
      'device = torch.device("cpu" if backend == "gloo" else "npu")',
      "same: non-gloo groups serialise onto the accelerator"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "all_gather over HCCL needs NPU tensors"),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "same"),
    C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', "same"),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "same"),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "same"),
])

E("mmn_defaults", "mmn/config/defaults.py", "explicit_replacement",
  "MMN mmn/config/defaults.py (yacs defaults, MODEL.DEVICE)", [
    C('_C.MODEL.DEVICE = "cuda"', "device_type", "replace", True, '_C.MODEL.DEVICE = "npu"',
      "train_net.py and inference build torch.device(cfg.MODEL.DEVICE) from this default"),
])

E("mmn_trainer", "mmn/engine/trainer.py", "explicit_replacement",
  "MMN mmn/engine/trainer.py (do_train with MetricLogger; AMP option added in a fork)", [
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.SOLVER.USE_AMP)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.SOLVER.USE_AMP)",
      "the CUDA scaler disables itself (warning only) when CUDA is unavailable; must pair with NPU autocast"),
    C("with torch.cuda.amp.autocast(enabled=cfg.SOLVER.USE_AMP):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=cfg.SOLVER.USE_AMP):",
      "autocast('cuda') is silently disabled on an NPU host, so SOLVER.USE_AMP=True would train in fp32"),
    C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,",
      "reports 0 without CUDA; logging only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; memory hygiene before eval"),
])

E("mmn_inference", "mmn/engine/inference.py", "explicit_replacement",
  "MMN mmn/engine/inference.py (compute_on_dataset, multi-GPU accumulation) plus a latency helper", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "reached for every non-CPU device; raises without CUDA (and would not wait for NPU work anyway)"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "same"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "an npu device passed to torch.cuda.synchronize is rejected"),
    C('device="cuda",', "device_type", "replace", False, 'device="npu",',
      "default only; train_net.py passes cfg.MODEL.DEVICE explicitly"),
])

E("mmn_train_sh", "scripts/tacos_train.sh", "explicit_replacement",
  "MMN scripts/*_train.sh (CUDA_VISIBLE_DEVICES + torch.distributed.launch)", [
    C("# find all configs in configs/", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu/HCCL; only needed when not already sourced by the shell or image"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only workaround for PCIe 3090 boxes; HCCL ignores it and has no direct counterpart"),
    C("CUDA_VISIBLE_DEVICES=$gpus python -m torch.distributed.launch \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$gpus python -m torch.distributed.launch \\",
      "the chosen-card mask is ignored on Ascend; local_rank 0..gpun-1 would land on NPU 0..gpun-1 regardless of $gpus"),
])

E("pdvc_opts", "opts.py", "explicit_replacement",
  "PDVC opts.py (argparse options, --device / --gpu_id, YAML cfg merge)", [
    C("parser.add_argument('--device', type=str, default='cuda')  # 'cuda' or 'cpu'", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu')  # 'npu' or 'cpu'",
      "opt.device is passed to every .to(opt.device) / evaluate(device=...); YAML cfgs do not override it"),
    C("parser.add_argument('--use_cuda_msda', type=int, default=1,", "custom_cuda_extension", "replace", True,
      "parser.add_argument('--use_cuda_msda', type=int, default=0,",
      "default routes deformable attention to the nvcc-built MultiScaleDeformableAttention op, which cannot be built for NPU"),
])

E("pdvc_train", "train.py", "explicit_replacement",
  "PDVC train.py (dense video captioning training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "training entry point"),
    C("model_pth = torch.load(os.path.join(save_folder, 'model-best.pth'))", "device_type", "replace", False,
      "model_pth = torch.load(os.path.join(save_folder, 'model-best.pth'), map_location='cpu')",
      "--start_from resumes the run's own checkpoint: fine when it was written on the NPU, fails only when resuming a run begun on a GPU"),
    C("model_pth = torch.load(os.path.join(save_folder, 'model-last.pth'))", "device_type", "replace", False,
      "model_pth = torch.load(os.path.join(save_folder, 'model-last.pth'), map_location='cpu')", "same"),
    C("=if opt.device == 'cuda':", "device_type", "replace", False, "if opt.device == 'npu':",
      "string compare simply goes False on NPU (no crash); only the per-iteration timing sync is lost"),
    C("torch.cuda.synchronize(opt.device)", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "dead while the guard compares with 'cuda'; must change together with it"),
    C("if opt.device == 'cuda':  # make time/iter below meaningful", "device_type", "replace", False,
      "if opt.device == 'npu':  # make time/iter below meaningful", "same as the first guard"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()", "same"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; memory hygiene only"),
    C("torch.cuda.empty_cache()  # release the eval buffers before the next epoch", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release the eval buffers before the next epoch", "same"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ",".join([str(i) for i in opt.gpu_id])', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join([str(i) for i in opt.gpu_id])',
      "--gpu_id is silently ignored by the Ascend runtime otherwise"),
])

E("pdvc_eval", "eval.py", "explicit_replacement",
  "PDVC eval.py (evaluation / test-set inference entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "evaluation entry point"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "on an NPU host this forces num_workers=0: slower data loading, same results"),
    C("parser.add_argument('--eval_device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--eval_device', type=str, default='npu')",
      "default device for torch.load(map_location=...), model.to and evaluate(device=...)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ",".join([str(i) for i in opt.gpu_id])', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join([str(i) for i in opt.gpu_id])',
      "--gpu_id would be ignored by the Ascend runtime"),
])

E("pdvc_msda_func", "pdvc/ops/functions/ms_deform_attn_func.py", "kernel_rewrite",
  "PDVC pdvc/ops/functions/ms_deform_attn_func.py (Deformable-DETR MSDA autograd Function + grid_sample reference)", [
    C("import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", "replace", True,
      "try:\n    import MultiScaleDeformableAttention as MSDA\nexcept ImportError:  # no nvcc build on Ascend\n    MSDA = None",
      "the nvcc-built extension does not exist on an NPU host; the unguarded import breaks importing the whole model package"),
    C("output = MSDA.ms_deform_attn_forward(", "custom_cuda_extension", "replace", False,
      "output = ms_deform_attn_core_pytorch(value, value_spatial_shapes[:, 1], sampling_locations[..., :1], attention_weights)",
      "CUDA-op call site; dead once ms_deform_attn.py calls the grid_sample path (F.grid_sample has an NPU kernel), only needed if the Function is kept as the dispatch point"),
    C("MSDA.ms_deform_attn_backward(", "custom_cuda_extension", "removal", False, None,
      "CUDA-op backward; the PyTorch path is differentiated by autograd, so the hand-written backward goes away with the Function"),
])

E("pdvc_msda_module", "pdvc/ops/modules/ms_deform_attn.py", "kernel_rewrite",
  "PDVC pdvc/ops/modules/ms_deform_attn.py (MSDeformAttn, temporal deformable attention)", [
    C("def __init__(self, d_model=256, n_levels=4, n_heads=8, n_points=4, use_cuda=True):", "custom_cuda_extension", "replace", False,
      "def __init__(self, d_model=256, n_levels=4, n_heads=8, n_points=4, use_cuda=False):",
      "default only; the deformable transformer passes opt.use_cuda_msda explicitly"),
    C("output = MSDeformAttnFunction.apply(", "custom_cuda_extension", "replace", False,
      "output = ms_deform_attn_core_pytorch(value, input_spatial_shapes, sampling_locations, attention_weights)",
      "call site of the CUDA op; only reached when use_cuda is on (opts --use_cuda_msda, whose default is switched to 0 on NPU)"),
])

E("pdvc_ops_setup", "pdvc/ops/setup.py", "kernel_rewrite",
  "PDVC / Deformable-DETR ops/setup.py (CUDAExtension build of MultiScaleDeformableAttention)", [
    C("raise NotImplementedError('Cuda is not availabel')", "custom_cuda_extension", "replace", False,
      "return []  # Ascend NPU: no nvcc; MSDeformAttn uses the PyTorch grid_sample path",
      "the build aborts here on an NPU host; with the kernel replaced by the PyTorch path the extension is simply not built (the Dockerfile step is what gets removed)"),
])

E("pdvc_make_sh", "pdvc/ops/make.sh", "kernel_rewrite",
  "PDVC / Deformable-DETR ops/make.sh", [
    C("python setup.py build install", "custom_cuda_extension", "replace", False,
      'echo "Ascend NPU: MultiScaleDeformableAttention is not built, the PyTorch path is used"',
      "would fail on an NPU host (setup.py raises without CUDA); dropped from the install steps rather than edited"),
])

E("pdvc_requirements", "requirement.txt", "explicit_replacement",
  "PDVC requirement.txt (CUDA-suffixed torch wheels from the PyTorch stable index)", [
    C("# --- framework (CUDA 11.0 build) ---", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10",
      "without the torch_npu wheel (pinned to the same torch x.y.z) the environment has no NPU backend at all"),
    C("-f https://download.pytorch.org/whl/torch_stable.html", "custom_cuda_extension", "removal", False, None,
      "CUDA wheel index; harmless once the +cu110 pins are gone"),
    C("torch==1.7.1+cu110", "custom_cuda_extension", "replace", True, "torch==2.1.0",
      "+cu110 wheel does not exist for aarch64 Ascend hosts and torch 1.7.1 has no torch_npu release"),
    C("torchvision==0.8.2+cu110", "custom_cuda_extension", "replace", True, "torchvision==0.16.0",
      "must match the replaced torch; CUDA-suffixed build cannot be installed"),
])

E("v2s_misc", "vid2seq/utils/misc.py", "explicit_replacement",
  "Vid2Seq-PyTorch (VidChapters) util/misc.py + util/dist.py, DETR/MDETR-derived distributed helpers and MetricLogger", [
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True, 'if dist.get_backend() in ("nccl", "hccl"):',
      "with MDETR_CPU_REDUCE=1 an hccl job would get WORLD back and all-gather CPU tensors over HCCL"),
    C('device = "cuda" if cpu_group is None else "cpu"', "device_type", "replace", True,
      'device = "npu" if cpu_group is None else "cpu"', "all_gather of evaluation results stages bytes on the accelerator"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: device_count() is 0 without CUDA -> ZeroDivisionError"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "num_gpus = torch.npu.device_count()",
      "only exported as LOCAL_SIZE (would be 0); nothing in the training path reads it"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA; binds each rank to its NPU before HCCL init"),
    C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
      "hard-coded NCCL backend"),
    C('t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")', "tensor_to_device", "replace", True,
      't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
      "metric sync across ranks; float64 all_reduce over HCCL is unconfirmed (float32 is the safe fallback)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "False on NPU: the log line just loses its max-mem column"),
    C("if torch.cuda.is_available():  # same format as above", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # same format as above", "same"),
    C("memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB,", "logging only"),
])

E("v2s_train", "tools/train_dvc.py", "explicit_replacement",
  "Vid2Seq-PyTorch / VidChapters dvc.py (T5 dense video captioning: AMP, apex FusedAdam, DDP, generation eval)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "training entry point"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdamW",
      "apex FusedAdam needs the --cuda_ext build; on NPU the guarded import sets HAS_APEX=False and the shipped config (optim.name=fused_adam) then trips the assert"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed already seeds the device"),
    C("if torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True, "if torch.npu.is_bf16_supported():",
      "queries the current CUDA device and raises on an NPU host (A2/A3 support bf16)"),
    C("return FusedAdam(params, lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay, adam_w_mode=True)", "fused_optimizer",
      "replace", True, "return NpuFusedAdamW(params, lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay)",
      "NPU tensor-fused AdamW (decoupled weight decay = apex adam_w_mode=True)"),
    C("=with torch.cuda.amp.autocast(enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):",
      "CUDA autocast is silently disabled on an NPU host: training would run in fp32 while the fp16 GradScaler is also off"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):  # generation", "amp",
      "replace", True,
      "with torch.npu.amp.autocast(enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):  # generation",
      "same for beam-search generation"),
    C("torch.cuda.synchronize()  # wait for the last generate() before reading the clock", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the last generate() before reading the clock", "raises without CUDA"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=amp_dtype == torch.float16)",
      "CUDA GradScaler disables itself on an NPU host; fp16 without loss scaling underflows"),
    C("pin_memory=cfg.data.pin_memory,", "pin_memory", "replace", False,
      'pin_memory=cfg.data.pin_memory, pin_memory_device="npu",',
      "pinning is silently skipped without CUDA; performance only (unconfirmed)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "unlike max_memory_allocated this resolves the current CUDA device and raises when CUDA is absent (from torch's implementation, not checked against the knowledge notes)"),
])

E("v2s_model", "vid2seq/models/vid2seq.py", "explicit_replacement",
  "Vid2Seq-PyTorch vid2seq model (temporal transformer over CLIP features + T5 with time tokens)", [
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):",
      "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # NPU: F.scaled_dot_product_attention picks the NPU fused kernel itself",
      "torch.backends.cuda.sdp_kernel is ✘ on Atlas A2/A3 in Ascend's list; whether it errors or is ignored was not confirmed"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "the fp32 island only switches off CUDA autocast; under NPU autocast the matmul inside silently runs in fp16"),
])

E("v2s_yaml", "configs/yc2_vid2seq.yaml", "explicit_replacement",
  "Vid2Seq-PyTorch configs/*.yaml (OmegaConf run config)", [
    C("=device: cuda", "device_type", "replace", True, "device: npu",
      "train_dvc.py builds torch.device(cfg.device) from it; no CLI default overrides it"),
])

E("v2s_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Vid2Seq-PyTorch docker/Dockerfile (nvidia/cuda devel base, cu118 wheels, apex --cuda_ext, PDVC make.sh)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image has no CANN toolkit/driver libraries; an Ascend CANN image is the base for torch_npu"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
      "only steers nvcc builds; meaningless without CUDA"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "NVIDIA container-runtime hint; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (devices can also be passed with --device)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", "removal", False, None,
      "NVIDIA container-runtime only"),
    C("RUN pip install torch==2.0.1 torchvision==0.15.2 --index-url https://download.pytorch.org/whl/cu118",
      "custom_cuda_extension", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17",
      "cu118 wheel index (no aarch64 CUDA wheels) and no torch_npu; torch_npu must match the torch version"),
    C("RUN git clone https://github.com/NVIDIA/apex /opt/apex && cd /opt/apex && \\", "fused_optimizer", "removal", False, None,
      "clone itself is harmless but goes with the build below; the NPU fused AdamW comes from torch_npu.optim"),
    C('pip install -v --no-cache-dir --no-build-isolation --config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext" ./',
      "fused_optimizer", "removal", True, None,
      "--cuda_ext needs nvcc: the image build fails on an Ascend base"),
    C("RUN cd baselines/pdvc/ops && sh make.sh", "custom_cuda_extension", "removal", True, None,
      "MultiScaleDeformableAttention setup.py raises without CUDA; the PDVC baseline uses the PyTorch path on NPU"),
    C("ENV NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "ENV HCCL_ASYNC_ERROR_HANDLING=1",
      "watchdog setting; torch_npu's HCCL equivalent already defaults to 1"),
])

E("v2s_env", "environment.yml", "explicit_replacement",
  "Vid2Seq-PyTorch environment.yml (conda: pytorch + pytorch-cuda from the pytorch/nvidia channels)", [
    C("=- nvidia", "custom_cuda_extension", "removal", False, None, "CUDA runtime channel; unused once pytorch-cuda is gone"),
    C("=- pytorch=2.0.1", "custom_cuda_extension", "replace", False, "- pytorch=2.1.0",
      "bumped to a torch version with a maintained torch_npu (2.1.0.postN); 2.0.1 only had early torch_npu releases (judgement)"),
    C("=- torchvision=0.15.2", "custom_cuda_extension", "replace", False, "- torchvision=0.16.0",
      "follows the torch bump"),
    C("=- pytorch-cuda=11.8", "custom_cuda_extension", "removal", True, None,
      "selects the CUDA build of pytorch and the CUDA runtime; not what torch_npu expects (CPU torch + torch_npu) and unavailable on aarch64 Ascend hosts"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
      "no NPU backend without the torch-npu wheel (pinned to the same torch version)"),
    C("=- nvidia-ml-py3", "custom_cuda_extension", "removal", False, None,
      "pynvml installs anywhere but only talks to NVIDIA drivers; NPU monitoring uses npu-smi / torch.npu.utilization"),
])
