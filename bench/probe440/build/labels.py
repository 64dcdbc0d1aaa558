"""Labels for probe440: interactive image segmentation with clicks (RITM, FocalClick, SimpleClick, CDNet, EdgeFlow).

One label per upstream line a careful porter would edit for an explicit torch_npu port.
`sub` must occur on exactly one line of the upstream file ("=text" = whole stripped line).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("explicit port: register the NPU backend before any torch.npu.* / 'npu' device use "
               "(mandatory before torch_npu 2.5.1 autoload; these repos pin torch 1.x-2.1 era)")

# --------------------------------------------------------------------------------------------
# RITM (SamsungLabs/ritm_interactive_segmentation)
# --------------------------------------------------------------------------------------------
E("ritm_train", "train.py", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation train.py (argparse entry, cudnn.benchmark, model-script loader)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
  ])

E("ritm_exp", "isegm/utils/exp.py", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation isegm/utils/exp.py (init_experiment: NCCL init, gpu ids, cfg.device)", [
      C("init_process_group(backend='nccl'", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl', init_method='env://')",
        "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("cfg.device = torch.device('cuda')", "device_type", "replace", True,
        "cfg.device = torch.device('npu')",
        "distributed branch: per-process default device"),
      C("torch.cuda.set_device(cfg.gpu_ids[0])", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(cfg.gpu_ids[0])",
        "bind the process to its NPU; torch.cuda.set_device fails on a CUDA-less build"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = cfg.gpus", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = cfg.gpus",
        "CUDA_VISIBLE_DEVICES does not restrict NPUs; without the Ascend runtime variable every NPU stays "
        "visible and the device-count assert below fails on a host with more NPUs than --gpus"),
      C("ngpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "ngpus = torch.npu.device_count()",
        "torch.cuda.device_count() is 0 on an NPU host, so the assert always fails"),
      C("cfg.device = torch.device(f'cuda:{cfg.gpu_ids[0]}')", "device_type", "replace", True,
        "cfg.device = torch.device(f'npu:{cfg.gpu_ids[0]}')",
        "single-process device used by every model.to(cfg.device) in the model scripts and trainer"),
  ])

E("ritm_distributed", "isegm/utils/distributed.py", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation isegm/utils/distributed.py (rank helpers, reduce_loss_dict, DP/DDP wrapper)", [
      C("else torch.nn.DataParallel):", "unsupported_op_workaround", "replace", True,
        "class DPWrapper(torch.nn.parallel.DistributedDataParallel):",
        "torch.nn.DataParallel is unsupported on Ascend (Ascend 2.7.1 API list: ✘); multi-NPU runs must "
        "go through torch.distributed.launch / DDP, so the single-process multi-device wrapper is dropped"),
  ])

E("ritm_trainer", "isegm/engine/trainer.py", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation isegm/engine/trainer.py (ISTrainer, iterative click simulation)", [])

E("ritm_ops", "isegm/model/ops.py", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation isegm/model/ops.py (DistMaps with Cython cpu_mode)", [])

E("ritm_cython", "isegm/utils/cython/dist_maps.py", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation isegm/utils/cython/dist_maps.py (pyximport CPU distance maps)", [])

E("ritm_inference_utils", "isegm/inference/utils.py", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation isegm/inference/utils.py (load_is_model, NoC metrics)", [])

E("ritm_evaluate", "scripts/evaluate_model.py", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation scripts/evaluate_model.py (NoC evaluation, --gpus/--cpu)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("args.device = torch.device(f\"cuda:{args.gpus.split(',')[0]}\")", "device_type", "replace", True,
        "args.device = torch.device(f\"npu:{args.gpus.split(',')[0]}\")",
        "evaluation device; passed to load_is_model and the predictors"),
  ])

E("ritm_demo", "demo.py", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation demo.py (Tk interactive demo launcher)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("args.device = torch.device(f'cuda:{args.gpu}')", "device_type", "replace", True,
        "args.device = torch.device(f'npu:{args.gpu}')",
        "demo device for the loaded model"),
  ])

E("ritm_model_script", "models/iter_mask/hrnet18_cocolvis_itermask_3p.py", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation models/iter_mask/hrnet18_cocolvis_itermask_3p.py (model/training recipe)", [])

E("ritm_config", "config.yml", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation config.yml (dataset and weight paths)", [])

E("ritm_requirements", "requirements.txt", "explicit_replacement",
  "SamsungLabs/ritm_interactive_segmentation requirements.txt", [
      C("torch>=1.4.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "the NPU adapter must be installed next to a matching CPU torch (2.1.0 <-> torch-npu 2.1.0.postN); "
        "the torch line itself can stay as long as the resolver lands on 2.1.0"),
  ])

# --------------------------------------------------------------------------------------------
# ClickSEG (XavierCHEN34/ClickSEG): FocalClick + CDNet
# --------------------------------------------------------------------------------------------
E("clickseg_train", "train.py", "explicit_replacement",
  "XavierCHEN34/ClickSEG train.py (RITM-style entry with seeding)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)",
        "no-op on an NPU host (lazily queued CUDA call); torch.manual_seed above should already seed the "
        "PrivateUse1 generator — unconfirmed in the knowledge base, so not required"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "same as torch.cuda.manual_seed: silently ignored, redundant with torch.manual_seed (unconfirmed)"),
  ])

E("clickseg_trainer", "isegm/engine/focalclick_trainer.py", "explicit_replacement",
  "XavierCHEN34/ClickSEG isegm/engine/focalclick_trainer.py (FocalClick trainer with refiner losses)", [
      C("peak_mb = torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", "replace", True,
        "peak_mb = torch.npu.max_memory_allocated(self.device) / 1024 ** 2",
        "torch.cuda memory stats called with an npu device raise on a CUDA-less build"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "torch.cuda.empty_cache() is a silent no-op when CUDA is not initialised; only releases cached "
        "memory, so performance/memory only"),
  ])

E("focalclick_model", "isegm/model/is_segformer_model.py", "explicit_replacement",
  "XavierCHEN34/ClickSEG isegm/model/is_segformer_model.py (FocalClick SegFormer + RefineLayer, roi_align focus crops)", [
      C("from torchvision.ops.roi_align import roi_align", "unsupported_op_workaround", "npu_only_addition", False,
        "import torchvision_npu",
        "torchvision::roi_align has no NPU kernel in stock torchvision; torchvision_npu (Ascend/vision) "
        "registers one. Without it the op should take torch_npu's CPU fallback (slow, host round-trip); "
        "whether that fallback covers torchvision ops and their backward is unconfirmed"),
  ])

E("focalclick_segformer", "isegm/model/modeling/segformer/mix_transformer.py", "explicit_replacement",
  "XavierCHEN34/ClickSEG isegm/model/modeling/segformer/mix_transformer.py (MiT backbone)", [])

E("focalclick_predictor", "isegm/inference/predictors/focalclick.py", "explicit_replacement",
  "XavierCHEN34/ClickSEG isegm/inference/predictors/focalclick.py (FocalPredictor, focus refinement)", [])

E("clickseg_evaluation", "isegm/inference/evaluation.py", "explicit_replacement",
  "XavierCHEN34/ClickSEG isegm/inference/evaluation.py (per-click timing, progressive merge)", [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():",
        "guard is False on an NPU host so the pre-timing sync is skipped; get_prediction already ends with a "
        ".cpu() copy, so nothing is pending and the SPC numbers barely change"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "once the guard is ported this line runs and torch.cuda.synchronize() raises without CUDA"),
      C("torch.cuda.synchronize(predictor.device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(predictor.device)",
        "unguarded: lazy CUDA init raises on an NPU host (and an npu device is not a CUDA device)"),
  ])

E("clickseg_run_local", "run_local.sh", "explicit_replacement",
  "XavierCHEN34/ClickSEG run_local.sh (train / eval launcher)", [
      C("export PYTHONPATH=$PYTHONPATH:$(pwd)", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; needed unless the shell/container already sources it"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "ignored on Ascend; the 4 ranks still bind NPUs 0-3 through --local_rank, so only isolation is lost"),
      C("=export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0",
        "eval branch: ignored on Ascend; --gpus=0 already selects npu:0"),
  ])

E("cdnet_model", "isegm/model/is_cdnet_model.py", "explicit_replacement",
  "XavierCHEN34/ClickSEG isegm/model/is_cdnet_model.py (CDNet: DeepLabV3+ with FDM/PDM)", [
      C("pos_map = torch.zeros(bs, 1, fh, fw).cuda()", "tensor_to_device", "replace", True,
        "pos_map = torch.zeros(bs, 1, fh, fw).npu()",
        "hard-coded .cuda() in the forward pass"),
      C("neg_map = torch.zeros(bs, 1, fh, fw).cuda()", "tensor_to_device", "replace", True,
        "neg_map = torch.zeros(bs, 1, fh, fw).npu()",
        "hard-coded .cuda() in the forward pass"),
      C("return torch.from_numpy(weights).float().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "return torch.from_numpy(weights).float().npu(non_blocking=True)",
        "click weights moved with .cuda()"),
  ])

E("cdnet_fdm", "isegm/model/modeling/cdnet/FDM.py", "explicit_replacement",
  "XavierCHEN34/ClickSEG isegm/model/modeling/cdnet/FDM.py (feature diffusion module)", [
      C("yy = torch.arange(h).view(h, 1).float().cuda()", "tensor_to_device", "replace", True,
        "yy = torch.arange(h).view(h, 1).float().npu()",
        "distance prior grid built with .cuda()"),
      C("xx = torch.arange(w).view(1, w).float().cuda()", "tensor_to_device", "replace", True,
        "xx = torch.arange(w).view(1, w).float().npu()",
        "distance prior grid built with .cuda()"),
  ])

E("cdnet_pdm", "isegm/model/modeling/cdnet/PDM.py", "explicit_replacement",
  "XavierCHEN34/ClickSEG isegm/model/modeling/cdnet/PDM.py (pixel diffusion module)", [])

# --------------------------------------------------------------------------------------------
# SimpleClick (uncbiag/SimpleClick)
# --------------------------------------------------------------------------------------------
AMP_NOTE = ("torch.cuda.amp autocast/GradScaler disable themselves with a warning when CUDA is unavailable, "
            "so --amp silently trains in fp32 without loss scaling on an NPU host")

E("simpleclick_train", "train.py", "explicit_replacement",
  "uncbiag/SimpleClick train.py (entry with --layerwise-decay/--upsample/--amp)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if cfg.amp and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if cfg.amp and not torch.npu.is_available():",
        "CUDA availability check forces cfg.amp = False on every NPU host"),
  ])

E("simpleclick_trainer", "isegm/engine/trainer.py", "explicit_replacement",
  "uncbiag/SimpleClick isegm/engine/trainer.py (ISTrainer with layer-wise decay and AMP)", [
      C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast, GradScaler", AMP_NOTE),
      C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=self.use_amp):", "amp", "replace", True,
        "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=self.use_amp):",
        "device_type='cuda' autocast is disabled (warning) on an NPU host; validation would not use the "
        "configured precision"),
  ])

E("simpleclick_vit", "isegm/model/modeling/models_vit.py", "explicit_replacement",
  "uncbiag/SimpleClick isegm/model/modeling/models_vit.py (plain ViT backbone, checkpointing)", [])

E("simpleclick_pos_embed", "isegm/model/modeling/pos_embed.py", "explicit_replacement",
  "uncbiag/SimpleClick isegm/model/modeling/pos_embed.py (MAE sin-cos / interpolated pos-embed)", [])

E("simpleclick_plainvit_model", "isegm/model/is_plainvit_model.py", "explicit_replacement",
  "uncbiag/SimpleClick isegm/model/is_plainvit_model.py (PlainVitModel + SimpleFPN)", [])

E("simpleclick_model_script", "models/iter_mask/plainvit_base448_cocolvis_itermask.py", "explicit_replacement",
  "uncbiag/SimpleClick models/iter_mask/plainvit_base448_cocolvis_itermask.py (ViT-B recipe)", [])

E("simpleclick_train_sh", "scripts/train_plainvit.sh", "explicit_replacement",
  "uncbiag/SimpleClick training launcher (torch.distributed.launch, wait-for-idle-GPU loop)", [
      C("FREE=$(nvidia-smi --query-gpu=memory.used", "device_capability_check", "replace", True,
        "FREE=$(for i in $(seq 0 7); do npu-smi info -t usages -i $i; done | "
        "awk -F: '/HBM Usage Rate/ {if ($2+0 < 5) n++} END {print n+0}')",
        "nvidia-smi is absent on Ascend hosts; the pipeline then yields 0 idle devices and the loop waits forever"),
      C("export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPUS - 1)))", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((NGPUS - 1)))",
        "ignored on Ascend; ranks 0..N-1 bind NPUs 0..N-1 through --local_rank anyway"),
      C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; needed unless the shell/container already sources it"),
  ])

E("simpleclick_requirements", "requirements.txt", "explicit_replacement",
  "uncbiag/SimpleClick requirements.txt (cu113 wheels, timm, mmcv-full)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu runs on the CPU build of torch (x86 from the cpu index, aarch64 from PyPI); the cu113 index "
        "would still satisfy torch==1.11.0 with a +cu113 local build"),
      C("torch==1.11.0+cu113", "import_torch_npu", "replace", True, "torch==1.11.0",
        "no +cu113 wheel for aarch64 Ascend hosts; torch-npu 1.11.0.postN pairs with plain torch 1.11.0"),
      C("torchvision==0.12.0+cu113", "import_torch_npu", "replace", True, "torchvision==0.12.0",
        "CUDA-tagged torchvision must follow torch to the CPU build"),
      C("timm==0.5.4", "import_torch_npu", "npu_only_addition", True, "torch-npu==1.11.0.post14",
        "the adapter itself (1.11.0.post14 <-> CANN 8.0.RC2 in the compatibility matrix), inserted after torchvision"),
      C("mmcv-full==1.5.0", "custom_cuda_extension", "replace", False, "mmcv==1.5.0",
        "cu113 mmcv-full wheels carry CUDA ops; the seg head only needs mmcv's pure-Python helpers, so the lite "
        "package should do — unconfirmed which mmcv ops SimpleClick imports"),
  ])

E("simpleclick_controller", "interactive_demo/controller.py", "explicit_replacement",
  "uncbiag/SimpleClick interactive_demo/controller.py (RITM-derived demo controller)", [
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host; only affects cached memory between clicks"),
  ])

# --------------------------------------------------------------------------------------------
# EISeg / EdgeFlow (PaddlePaddle/PaddleSeg contrib/EISeg) — PaddlePaddle, not PyTorch
# --------------------------------------------------------------------------------------------
E("eiseg_predictor", "EISeg/eiseg/inference/predictor/static_predictor.py", "explicit_replacement",
  "PaddlePaddle/PaddleSeg EISeg static predictor (Paddle Inference, enable_use_gpu)", [])

E("edgeflow_train", "EISeg/tool/train/train.py", "explicit_replacement",
  "PaddlePaddle/PaddleSeg EISeg EdgeFlow training entry (paddle.set_device, DataParallel)", [])

E("eiseg_requirements", "EISeg/requirements.txt", "explicit_replacement",
  "PaddlePaddle/PaddleSeg EISeg requirements.txt (paddlepaddle-gpu installed separately)", [])
