# Labels for probe226: open-vocabulary 3-D scene understanding / 3-D VL research code (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
N_IMPORT = ("entry script: torch.npu / the NPU device only exist after torch_npu is imported "
            "(autoloaded only from torch_npu 2.5.1; these projects pin older torch)")
N_SETENV = "CANN runtime env (LD_LIBRARY_PATH, ASCEND_*); without it torch_npu cannot load the ACL libraries"
N_CUDA_CALL = "Tensor/Module.cuda() raises on a host without CUDA; move to the NPU instead"
N_SEED = ("torch.cuda seeding is a silent lazy no-op on an NPU host; torch.manual_seed already seeds the NPU "
          "generator, so only reproducibility bookkeeping")
N_EMPTY = "torch.cuda.empty_cache() is a silent no-op without CUDA; NPU cache is not released (memory headroom only)"
N_PIN = ("unconfirmed: with no CUDA the DataLoader silently skips pinning unless pin_memory_device='npu' is given; "
         "performance only")
N_FUSED = "performance only: msFmkTransplt advice maps torch.optim.Adam/AdamW/SGD to NPU fused optimizers"
N_VISIBLE = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; the job silently sees every NPU "
             "(ASCEND_RT_VISIBLE_DEVICES is the process-level equivalent)")
N_MAXMEM = "torch.cuda memory stats return 0 when CUDA is not initialised; only the log line is wrong"

# ----------------------------------------------------------------------------------------------
# OpenScene
# ----------------------------------------------------------------------------------------------
E("openscene_distill", "run/distill.py", "explicit_replacement",
  "OpenScene run/distill.py (MinkowskiNet 2D->3D feature distillation, mp.spawn + DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, N_IMPORT),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = \',\'.join(', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = \',\'.join(', N_VISIBLE + "; train_gpu from the yaml would be ignored"),
    C("torch.cuda.manual_seed(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.manual_seed)", N_SEED),
    C("torch.cuda.manual_seed_all(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.manual_seed)", N_SEED),
    C("=args = argss", "compile_mode", "npu_only_addition", False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance: voxel counts change every batch (dynamic shapes); msFmkTransplt recommends jit_compile=False; "
      "set per spawned worker"),
    C("optimizer = torch.optim.Adam(model.parameters(), lr=args.base_lr)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.base_lr)", N_FUSED),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "torch.cuda.set_device raises without CUDA; each spawned worker must bind its NPU"),
    C("model.cuda(), device_ids=[gpu])", "tensor_to_device", "replace", True, "model.npu(), device_ids=[gpu])",
      N_CUDA_CALL + " (device_ids=[gpu] itself is fine for DDP on NPU)"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", N_CUDA_CALL),
    C("args.resume, map_location=lambda storage, loc: storage.cuda())", "tensor_to_device", "replace", True,
      "args.resume, map_location=lambda storage, loc: storage.npu())",
      "map_location moves every storage with .cuda(), which raises on an NPU host"),
    C("num_workers=args.workers, pin_memory=True,", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu',", N_PIN),
    C("pin_memory=True, sampler=val_sampler,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', sampler=val_sampler,", N_PIN),
    C("criterion = nn.CrossEntropyLoss(ignore_index=args.ignore_label).cuda(gpu)", "tensor_to_device", "replace", True,
      "criterion = nn.CrossEntropyLoss(ignore_index=args.ignore_label).npu(gpu)", N_CUDA_CALL),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", N_EMPTY),
    C("text_features = torch.load(clip_file_name).cuda()", "tensor_to_device", "replace", True,
      "text_features = torch.load(clip_file_name, map_location='cpu').npu()",
      "inside a bare try/except: unchanged it always falls into the except branch and re-runs CLIP (and overwrites the "
      "cached embedding) every epoch; a cache written on a GPU box also needs map_location"),
    C("=feat.cuda(non_blocking=True), coords.cuda(non_blocking=True))", "tensor_to_device", "replace", True,
      "feat.npu(non_blocking=True), coords.npu(non_blocking=True))", N_CUDA_CALL),
    C("feat_3d, mask = feat_3d.cuda(", "tensor_to_device", "replace", True, "feat_3d, mask = feat_3d.npu(",
      N_CUDA_CALL),
    C("=non_blocking=True), mask.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "non_blocking=True), mask.npu(non_blocking=True)", N_CUDA_CALL),
    C("sinput = SparseTensor(feat.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "sinput = SparseTensor(feat.npu(non_blocking=True), coords.npu(non_blocking=True))", N_CUDA_CALL),
    C("label = label.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "label = label.npu(non_blocking=True)", N_CUDA_CALL),
])

E("openscene_evaluate", "run/evaluate.py", "explicit_replacement",
  "OpenScene run/evaluate.py (distill / fusion / ensemble open-vocabulary evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, N_IMPORT),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = \',\'.join(str(x) for x in args.test_gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = \',\'.join(str(x) for x in args.test_gpu)', N_VISIBLE),
    C("torch.cuda.manual_seed_all(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.manual_seed)", N_SEED),
    C("args.ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.ngpus_per_node = torch.npu.device_count()",
      "returns 0 on an NPU host: world_size becomes 0 and mp.spawn starts no workers"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "torch.cuda.set_device raises without CUDA"),
    C("model.cuda(), device_ids=[gpu])", "tensor_to_device", "replace", True, "model.npu(), device_ids=[gpu])",
      N_CUDA_CALL),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", N_CUDA_CALL),
    C("shuffle=False, num_workers=args.test_workers, pin_memory=True,", "pin_memory", "replace", False,
      "shuffle=False, num_workers=args.test_workers, pin_memory=True, pin_memory_device='npu',", N_PIN),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      N_SEED),
    C("sinput = SparseTensor(feat.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "sinput = SparseTensor(feat.npu(non_blocking=True), coords.npu(non_blocking=True))", N_CUDA_CALL),
    C("=feat.cuda(non_blocking=True), coords.cuda(non_blocking=True))", "tensor_to_device", "replace", True,
      "feat.npu(non_blocking=True), coords.npu(non_blocking=True))", N_CUDA_CALL),
    C("predictions = feat_3d.cuda(non_blocking=True)[inds_reverse, :]", "tensor_to_device", "replace", True,
      "predictions = feat_3d.npu(non_blocking=True)[inds_reverse, :]", N_CUDA_CALL),
    C("feat_fuse = feat_3d.cuda(non_blocking=True)[inds_reverse, :]", "tensor_to_device", "replace", True,
      "feat_fuse = feat_3d.npu(non_blocking=True)[inds_reverse, :]", N_CUDA_CALL),
])

E("openscene_util", "util/util.py", "explicit_replacement",
  "OpenScene util/util.py (meters, palettes, ply export, CLIP text features)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "only feeds a memory log line; unchanged it silently reports 0"),
    C("return torch.cuda.max_memory_allocated() / 1024.0 / 1024.0", "torch_cuda_api", "replace", False,
      "return torch.npu.max_memory_allocated() / 1024.0 / 1024.0", N_MAXMEM),
    C("clip_pretrained, _ = clip.load(model_name, device='cuda', jit=False)", "device_type", "replace", True,
      "clip_pretrained, _ = clip.load(model_name, device='npu', jit=False)",
      "clip.load moves the model to 'cuda', which fails on an NPU host"),
    C("text = text.cuda()", "tensor_to_device", "replace", True, "text = text.npu()", N_CUDA_CALL),
])

E("openscene_disnet", "models/disnet.py", "kernel_rewrite",
  "OpenScene models/disnet.py (MinkowskiEngine sparse U-Net wrapper)", [
    C("=import MinkowskiEngine as ME", "custom_cuda_extension", "replace", True,
      "import MinkowskiEngine as ME  # CPU-only build (--cpu_only) until the sparse U-Net is ported to an NPU backend",
      "MinkowskiEngine is an nvcc-built extension with CUDA/CPU kernels only; no Ascend backend in the knowledge base, "
      "so the sparse conv backbone has to run from a CPU build or be re-implemented"),
])

E("openscene_feature_loader", "dataset/feature_loader.py", "device_branch_or_abstraction",
  "OpenScene dataset/feature_loader.py (fused 2D feature loader; host-only)", [])

E("openscene_fusion_lseg", "scripts/feature_fusion/scannet_lseg.py", "explicit_replacement",
  "OpenScene scripts/feature_fusion/scannet_lseg.py (multi-view LSeg feature fusion)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, N_IMPORT),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      N_SEED),
    C(").cuda()  # LSeg model has to be in GPU", "tensor_to_device", "replace", True,
      ").npu()  # LSeg model has to be on the accelerator", N_CUDA_CALL),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", N_EMPTY),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host, so the script raises 'needs a CUDA device' before doing anything"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "torch.cuda.set_device raises without CUDA"),
])

E("openscene_cfg", "config/scannet/distill_lseg.yaml", "explicit_replacement",
  "OpenScene config/scannet/distill_lseg.yaml", [
    C("dist_backend: 'nccl'", "dist_backend", "replace", True, "dist_backend: 'hccl'",
      "fed to dist.init_process_group(backend=args.dist_backend); NCCL is not available with torch_npu, HCCL is"),
])

E("openscene_sh", "run/distill.sh", "explicit_replacement", "OpenScene run/distill.sh launcher", [
    C("=set -x", "env_var", "npu_only_addition", True, ". /usr/local/Ascend/ascend-toolkit/set_env.sh",
      N_SETENV + " (POSIX sh: '.' instead of 'source')"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS:-0,1,2,3}", N_VISIBLE),
    C('echo "visible GPUs: ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", False,
      'echo "visible NPUs: ${ASCEND_RT_VISIBLE_DEVICES}"', "log line only"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", False,
      "npu-smi info", "nvidia-smi is absent on an Ascend host; the script does not use set -e so it only prints an error"),
])

E("openscene_env", "environment.yml", "explicit_replacement", "OpenScene environment.yml (conda)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel not needed on an Ascend host"),
    C("- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None,
      "CUDA runtime package; pulls the CUDA build of pytorch, useless next to torch_npu (unconfirmed whether it breaks the solve)"),
    C("- pytorch=1.12.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
      "there is no torch_npu for torch 1.12; torch_npu wheels pair with an exact torch version (2.1.0 <-> 2.1.0.postN)"),
    C("- torchvision=0.13.1", "torch_cuda_api", "replace", True, "- torchvision=0.16.0",
      "torchvision must match the new torch 2.1.0 pin"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch_npu itself (pairs with torch 2.1.0, CANN 8.1.RC1; Python 3.8 is supported for torch 2.1)"),
    C("MinkowskiEngine.git@02fc608bea4c0549b0a7b00ca1bf15dee4a0b228", "custom_cuda_extension", "replace", True,
      '- git+https://github.com/NVIDIA/MinkowskiEngine.git@02fc608bea4c0549b0a7b00ca1bf15dee4a0b228 --install-option="--blas=openblas" --install-option="--cpu_only"',
      "--force_cuda build needs nvcc and fails on an Ascend host; only a CPU build is possible"),
])

E("openscene_docker", "docker/Dockerfile", "explicit_replacement", "OpenScene / OpenMask3D style CUDA dev Dockerfile", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "CUDA base image; an Ascend image needs CANN (image tag unconfirmed)"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "CUDA arch list, ignored without nvcc"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
      "forces the CUDA code path of extension builds (MinkowskiEngine, pointnet2), which fails without nvcc"),
    C("RUN pip install torch==1.12.1+cu113 torchvision==0.13.1+cu113", "torch_cuda_api", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 \\",
      "CUDA wheels of an old torch; torch_npu needs the matching CPU torch plus the torch-npu wheel"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
      "        --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 Ascend hosts use the cpu index (aarch64 uses plain PyPI)"),
    C("python setup.py install --force_cuda --blas=openblas", "custom_cuda_extension", "replace", True,
      "    python setup.py install --cpu_only --blas=openblas",
      "MinkowskiEngine CUDA build needs nvcc; only the CPU build is possible"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "nvidia-container-runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (unconfirmed whether an "
      "image-level ENV is honoured; usually passed at docker run)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "nvidia-container-runtime only"),
])

# ----------------------------------------------------------------------------------------------
# LERF (nerfstudio)
# ----------------------------------------------------------------------------------------------
E("lerf_openclip", "lerf/encoders/openclip_encoder.py", "explicit_replacement",
  "LERF lerf/encoders/openclip_encoder.py (OpenCLIP ViT-B/16 relevancy encoder)", [
    C('self.model = model.to("cuda")', "device_type", "replace", True, 'self.model = model.to("npu")',
      "hard-coded 'cuda' device string fails on an NPU host"),
    C("tok_phrases = torch.cat([self.tokenizer(phrase) for phrase in self.positives]).to(\"cuda\")", "device_type",
      "replace", True,
      "tok_phrases = torch.cat([self.tokenizer(phrase) for phrase in self.positives]).to(\"npu\")",
      "hard-coded 'cuda'"),
    C('tok_neg = torch.cat([self.tokenizer(phrase) for phrase in self.negatives]).to("cuda")', "device_type",
      "replace", True, 'tok_neg = torch.cat([self.tokenizer(phrase) for phrase in self.negatives]).to("npu")',
      "hard-coded 'cuda'"),
    C('tok_pos = torch.cat([self.tokenizer(phrase) for phrase in text_list]).to("cuda")', "device_type", "replace",
      True, 'tok_pos = torch.cat([self.tokenizer(phrase) for phrase in text_list]).to(self.pos_embeds.device)',
      "hard-coded 'cuda' (viewer callback path)"),
])

E("lerf_field", "lerf/lerf_field.py", "kernel_rewrite",
  "LERF lerf/lerf_field.py (tiny-cuda-nn hash grids + fully fused MLPs)", [
    C("=import tinycudann as tcnn", "custom_cuda_extension", "replace", False,
      "from nerfstudio.field_components.encodings import HashEncoding; from nerfstudio.field_components.mlp import MLP",
      "the import is wrapped in try/except ImportError: pass, so unchanged it silently does nothing; the failure "
      "surfaces at the tcnn.* call sites below"),
    C("self.clip_net = tcnn.Network(", "custom_cuda_extension", "replace", True,
      "self.clip_net = MLP(in_dim=tot_out_dims + 1, num_layers=5, layer_width=256, out_dim=clip_n_dims, "
      "activation=nn.ReLU(), out_activation=None, implementation=\"torch\")",
      "tiny-cuda-nn is CUDA-only (CutlassMLP); NameError/ImportError on NPU; nerfstudio's torch MLP is the portable path"),
    C("self.dino_net = tcnn.Network(", "custom_cuda_extension", "replace", True,
      "self.dino_net = MLP(in_dim=tot_out_dims, num_layers=2, layer_width=256, out_dim=384, "
      "activation=nn.ReLU(), out_activation=None, implementation=\"torch\")",
      "tiny-cuda-nn is CUDA-only"),
    C("enc = tcnn.Encoding(", "custom_cuda_extension", "replace", True,
      "enc = HashEncoding(num_levels=levels, features_per_level=8, log2_hashmap_size=hash_size, min_res=start_res, "
      "max_res=end_res, implementation=\"torch\")",
      "tiny-cuda-nn HashGrid is CUDA-only; torch hash encoding is slower but runs on NPU"),
    C("tot_out_dims = sum([e.n_output_dims for e in self.clip_encs])", "custom_cuda_extension", "replace", True,
      "tot_out_dims = sum([e.get_out_dim() for e in self.clip_encs])",
      "n_output_dims is a tcnn attribute; the torch encodings expose get_out_dim()"),
    C("hashgrid_field = hashgrid_field.view(-1, self.clip_net.n_input_dims - 1)", "custom_cuda_extension", "replace",
      True, "hashgrid_field = hashgrid_field.view(-1, self.clip_net.in_dim - 1)",
      "n_input_dims is a tcnn attribute; nerfstudio MLP uses in_dim"),
])

E("lerf_dino", "lerf/data/utils/dino_dataloader.py", "explicit_replacement",
  "LERF lerf/data/utils/dino_dataloader.py (DINO ViT-S/8 feature cache)", [
    C('model: torch.nn.Module = None, device: str = "cuda"):', "device_type", "replace", True,
      'model: torch.nn.Module = None, device: str = "npu"):',
      "default device string is used by callers that do not pass one; .to('cuda') fails on NPU"),
    C("_ = self.model(batch.cuda())", "tensor_to_device", "replace", True, "_ = self.model(batch.to(self.device))",
      N_CUDA_CALL),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", N_EMPTY),
])

E("lerf_sh", "scripts/train_lerf.sh", "explicit_replacement", "LERF ns-train launcher + relevancy rendering", [
    C("=set -e", "env_var", "npu_only_addition", True, SET_ENV, N_SETENV),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      N_VISIBLE),
    C("export TCNN_CUDA_ARCHITECTURES=86", "env_var", "removal", False, None, "tiny-cuda-nn build knob, meaningless on NPU"),
    C('python -c "import tinycudann" 2>/dev/null || \\', "custom_cuda_extension", "removal", False, None,
      "probe for tiny-cuda-nn; harmless by itself"),
    C("pip install ninja git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch",
      "custom_cuda_extension", "removal", True, None,
      "tiny-cuda-nn build needs nvcc; fails and aborts the script under set -e"),
    C("--machine.device-type cuda \\", "device_type", "replace", True, "    --machine.device-type npu \\",
      "nerfstudio would put the trainer on cuda; needs 'npu' (nerfstudio's accepted choices must be patched to allow it, "
      "unconfirmed)"),
    C("--pipeline.model.implementation tcnn \\", "custom_cuda_extension", "replace", True,
      "    --pipeline.model.implementation torch \\",
      "nerfacto-derived model would build tcnn fields; the torch implementation is the portable one"),
    C("--device cuda:0 \\", "device_type", "replace", True, "    --device npu:0 \\", "device string for the render script"),
])

# ----------------------------------------------------------------------------------------------
# OpenMask3D
# ----------------------------------------------------------------------------------------------
E("om3d_features", "openmask3d/mask_features_computation/features_extractor.py", "device_branch_or_abstraction",
  "OpenMask3D mask_features_computation/features_extractor.py (SAM + CLIP per-mask features)", [
    C("self.predictor_sam.model.cuda()", "tensor_to_device", "replace", True,
      "self.predictor_sam.model.to(self.device)", N_CUDA_CALL + " (optimize_gpu_usage path)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", N_EMPTY),
    C("self.clip_model.to(torch.device('cuda'))", "device_type", "replace", True,
      "self.clip_model.to(torch.device(self.device))", "hard-coded 'cuda' in the optimize_gpu_usage swap"),
])

E("om3d_compute", "openmask3d/compute_features_scannet200.py", "device_branch_or_abstraction",
  "OpenMask3D compute_features_scannet200.py (hydra entry, device selection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, N_IMPORT),
    C('os.system(f"nvidia-smi -q -d Memory | grep -A4 GPU | grep Free > {f.name}")', "torch_cuda_api", "replace",
      True,
      "memory_available = [torch.npu.mem_get_info(i)[0] // 2 ** 20 for i in range(torch.npu.device_count())]",
      "no nvidia-smi on Ascend: the bare except silently returns CPU when gpu.auto_select is on"),
    C('return torch.device("cuda", int(np.argmax(memory_available)))', "device_type", "add_branch", True,
      'return torch.device("npu" if torch.npu.is_available() else "cuda", int(np.argmax(memory_available)))',
      "hard-coded cuda device"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
      'device = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
      "silently selects CPU on an NPU host (SAM ViT-H + CLIP on CPU)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", N_EMPTY),
])

E("om3d_masks", "openmask3d/class_agnostic_mask_computation/get_masks_single_scene.py", "explicit_replacement",
  "OpenMask3D class_agnostic_mask_computation (Mask3D + MinkowskiEngine, pytorch-lightning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, N_IMPORT),
    C("=import MinkowskiEngine as ME", "custom_cuda_extension", "replace", True,
      "import MinkowskiEngine as ME  # CPU-only build; Mask3D backbone has no NPU sparse-conv backend",
      "nvcc-built sparse conv library; ME.SparseTensor(device=...) only knows cpu/cuda"),
    C('cfg.general.gpus = os.environ.get("CUDA_VISIBLE_DEVICES", None)', "env_var", "replace", True,
      'cfg.general.gpus = os.environ.get("ASCEND_RT_VISIBLE_DEVICES", None)',
      "unset on an NPU host, so gpus=None and the Lightning path silently runs on CPU"),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "hard-coded cuda device"),
    C("gpus=cfg.general.gpus,", "distributed_framework", "replace", True,
      "accelerator=\"npu\", devices=cfg.general.gpus,",
      "Lightning Trainer(gpus=...) requires CUDA and raises a MisconfigurationException otherwise; the NPU accelerator "
      "needs a Lightning NPU plugin (unconfirmed)"),
])

E("om3d_sh", "run_openmask3d_scannet200_eval.sh", "explicit_replacement",
  "OpenMask3D run_openmask3d_scannet200_eval.sh", [
    C("=set -e", "env_var", "npu_only_addition", True, SET_ENV, N_SETENV),
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID:-0}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID:-0}", N_VISIBLE + "; GPU_ID would be ignored"),
    C("--device=cuda", "device_type", "replace", True, "--device=npu", "device string for the evaluation script"),
])

# ----------------------------------------------------------------------------------------------
# LL3DA
# ----------------------------------------------------------------------------------------------
E("ll3da_main", "main.py", "explicit_replacement", "LL3DA main.py (3DETR-style launcher, torch.multiprocessing.spawn)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, N_IMPORT),
    C('dist_backend="nccl",', "dist_backend", "replace", True, 'dist_backend="hccl",',
      "NCCL is not available with torch_npu"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "runs even for --ngpus 1; raises without CUDA"),
    C("torch.cuda.manual_seed_all(args.seed + get_rank())", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed + get_rank())",
      "silent no-op on an NPU host; here there is no torch.manual_seed, so NPU RNG stays unseeded (reproducibility only)"),
    C('model = model.to(f"cuda:{local_rank}")', "device_type", "replace", True, 'model = model.to(f"npu:{local_rank}")',
      "f-string cuda device"),
    C("model_no_ddp = model.cuda()", "tensor_to_device", "replace", True, "model_no_ddp = model.npu()", N_CUDA_CALL),
    C("model = model.cuda(local_rank)", "tensor_to_device", "replace", True, "model = model.npu(local_rank)",
      N_CUDA_CALL),
    C("optimizer = torch.optim.AdamW(", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(", N_FUSED),
])

E("ll3da_dist", "utils/dist.py", "explicit_replacement", "LL3DA / 3DETR utils/dist.py", [
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)",
      "raises without CUDA"),
    C("torch.distributed.barrier(device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", True,
      "torch.distributed.barrier(device_ids=[torch.npu.current_device()])",
      "torch.cuda.current_device raises without CUDA (whether HCCL honours device_ids is unconfirmed)"),
    C('def init_distributed_from_env(dist_backend="nccl"):', "dist_backend", "replace", True,
      'def init_distributed_from_env(dist_backend="hccl"):', "default backend used by the torchrun entry"),
    C('os.environ["LOCAL_RANK"] = str(int(os.environ["SLURM_PROCID"]) % torch.cuda.device_count())', "torch_cuda_api",
      "replace", True,
      'os.environ["LOCAL_RANK"] = str(int(os.environ["SLURM_PROCID"]) % torch.npu.device_count())',
      "device_count() is 0 on an NPU host -> ZeroDivisionError under slurm"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "add_branch", True,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "backend-string comparison is not rewritten by anything; with hccl it takes the CPU branch and all_gathers host "
      "tensors through HCCL"),
    C('device = torch.device("cuda", torch.cuda.current_device())', "device_type", "replace", True,
      'device = torch.device("npu", torch.npu.current_device())', "hard-coded cuda device"),
])

E("ll3da_engine", "engine.py", "explicit_replacement", "LL3DA engine.py (training loop, eval, speed benchmark)", [
    C("with torch.cuda.amp.autocast(enabled=args.amp, dtype=torch.bfloat16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp, dtype=torch.bfloat16):",
      "CUDA autocast is disabled with a warning on an NPU host; weights are fp32 here, so it only loses the bf16 speed-up"),
    C("mem_mb = torch.cuda.max_memory_allocated() / (1024 ** 2)", "torch_cuda_api", "replace", False,
      "mem_mb = torch.npu.max_memory_allocated() / (1024 ** 2)", N_MAXMEM),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", N_EMPTY),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C('with torch.autocast(device_type="cuda", enabled=args.amp, dtype=torch.bfloat16):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", enabled=args.amp, dtype=torch.bfloat16):',
      "disabled with a warning when CUDA is absent; fp32 weights so performance only"),
    C("torch.cuda.synchronize(net_device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(net_device)",
      "raises without CUDA"),
    C("torch.cuda.get_device_name(net_device)", "torch_cuda_api", "replace", True,
      'logout(f"[speed] {fps:.2f} scenes/s on {torch.npu.get_device_name(net_device)}")',
      "get_device_name initialises CUDA and raises"),
])

E("ll3da_setup", "third_party/pointnet2_ops_lib/setup.py", "kernel_rewrite",
  "pointnet2_ops_lib setup.py (Erik Wijmans' PointNet++ CUDA ops, vendored by LL3DA / 3D-LLM)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "CUDAExtension needs nvcc; torch_npu ships NpuExtension for Ascend C / ACL-based ops"),
    C('osp.join(_ext_src_root, "src", "*.cu")', "custom_cuda_extension", "replace", True,
      '    osp.join(_ext_src_root, "src", "npu", "*.cpp")',
      ".cu kernels (FPS, ball query, grouping, three_nn/interpolate) must be rewritten for Ascend"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST"', "env_var", "removal", False, None, "CUDA arch list, meaningless on NPU"),
    C('if not torch.cuda.is_available() and os.environ.get("FORCE_CUDA", "0") != "1":', "torch_cuda_api", "replace",
      True, 'if not torch.npu.is_available() and os.environ.get("FORCE_NPU", "0") != "1":',
      "aborts the build on an NPU host"),
    C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(", "nvcc-only extension class"),
    C('"nvcc": ["-O3", "-Xfatbin", "-compress-all"],', "custom_cuda_extension", "removal", False, None,
      "nvcc flags are ignored once there are no .cu sources"),
])

_EXT = "pointnet2_ops._ext is an nvcc-built extension; no NPU kernel -> call an Ascend/torch implementation"
E("ll3da_pn2utils", "third_party/pointnet2_ops_lib/pointnet2_ops/pointnet2_utils.py", "kernel_rewrite",
  "pointnet2_ops pointnet2_utils.py (autograd Functions over the _ext CUDA ops)", [
    C("=import pointnet2_ops._ext as _ext", "custom_cuda_extension", "replace", False,
      "import pointnet2_ops_npu as _ext  # Ascend C / torch re-implementation of the same ops",
      "ImportError is caught and falls back to JIT compilation, so the line itself does not fail; the load() below does"),
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = "3.7+PTX;5.0;6.0;6.1;6.2;7.0;7.5"', "env_var", "removal", False, None,
      "CUDA arch list"),
    C("_ext = load(", "custom_cuda_extension", "replace", True,
      "raise ImportError(\"build pointnet2_ops_npu first (NpuExtension)\")",
      "torch.utils.cpp_extension.load is unsupported on NPU (mstt list / Ascend API table) and needs nvcc for the .cu sources"),
    C("out = _ext.furthest_point_sampling(xyz, npoint)", "custom_cuda_extension", "replace", True,
      "out = _ext.furthest_point_sampling(xyz, npoint)  # NPU implementation", _EXT),
    C("return _ext.gather_points(features, idx)", "custom_cuda_extension", "replace", True,
      "return torch.gather(features, 2, idx.long().unsqueeze(1).expand(-1, features.size(1), -1))",
      _EXT + "; gather_points is expressible with torch.gather"),
    C("grad_features = _ext.gather_points_grad(grad_out.contiguous(), idx, N)", "custom_cuda_extension", "replace", True,
      "grad_features = grad_out.new_zeros(grad_out.size(0), grad_out.size(1), N).scatter_add_(2, "
      "idx.long().unsqueeze(1).expand(-1, grad_out.size(1), -1), grad_out)", _EXT),
    C("dist2, idx = _ext.three_nn(unknown, known)", "custom_cuda_extension", "replace", True,
      "dist2, idx = torch.cdist(unknown, known).pow(2).topk(3, dim=-1, largest=False)", _EXT),
    C("return _ext.three_interpolate(features, idx, weight)", "custom_cuda_extension", "replace", True,
      "return _ext.three_interpolate(features, idx, weight)  # NPU implementation", _EXT),
    C("grad_features = _ext.three_interpolate_grad(", "custom_cuda_extension", "replace", True,
      "grad_features = _ext.three_interpolate_grad(  # NPU implementation", _EXT),
    C("return _ext.group_points(features, idx)", "custom_cuda_extension", "replace", True,
      "return _ext.group_points(features, idx)  # NPU implementation", _EXT),
    C("grad_features = _ext.group_points_grad(grad_out.contiguous(), idx, N)", "custom_cuda_extension", "replace", True,
      "grad_features = _ext.group_points_grad(grad_out.contiguous(), idx, N)  # NPU implementation", _EXT),
    C("output = _ext.ball_query(new_xyz, xyz, radius, nsample)", "custom_cuda_extension", "replace", True,
      "output = _ext.ball_query(new_xyz, xyz, radius, nsample)  # NPU implementation", _EXT),
])

E("ll3da_req", "requirements.txt", "explicit_replacement", "LL3DA requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu116", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("torch==1.13.1+cu116", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA build of a torch version with no torch_npu release"),
    C("torchvision==0.14.1+cu116", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "must follow the torch pin"),
    C("=numpy==1.23.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0"),
    C("=./third_party/pointnet2_ops_lib", "custom_cuda_extension", "replace", True, "./third_party/pointnet2_ops_npu",
      "installing it runs the CUDAExtension build (nvcc) and fails"),
])

# ----------------------------------------------------------------------------------------------
# Chat-3D
# ----------------------------------------------------------------------------------------------
E("chat3d_model", "models/chat3d.py", "explicit_replacement",
  "Chat-3D v2 / Chat-Scene models/chat3d.py (object tokens + Vicuna, LAVIS-style maybe_autocast)", [
    C("load_in_8bit=True,", "custom_cuda_extension", "replace", True, "load_in_8bit=False,",
      "low_resource path: bitsandbytes LLM.int8 is not available for NPU (only NF4 work in progress)"),
    C('attn_implementation="flash_attention_2" if self.use_flash_attn else "eager",', "attention_kernel", "replace",
      True, 'attn_implementation="sdpa",',
      "flash-attn cannot be installed on NPU; transformers routes sdpa to the NPU fused attention"),
    C("return torch.cuda.amp.autocast(dtype=dtype)", "amp", "replace", True, "return torch.npu.amp.autocast(dtype=dtype)",
      "CUDA autocast is disabled on an NPU host, so fp32 projector outputs meet the bf16 LLaMA weights -> dtype "
      "mismatch in the first linear"),
    C("stop_words_ids = [torch.tensor([835]).cuda(), torch.tensor([2277, 29937]).cuda()]", "tensor_to_device",
      "replace", True, "stop_words_ids = [torch.tensor([835]).to(device), torch.tensor([2277, 29937]).to(device)]",
      N_CUDA_CALL),
])

E("chat3d_sh", "scripts/run.sh", "explicit_replacement", "Chat-3D v2 scripts/run.sh (torchrun / srun launcher)", [
    C("=set -x", "env_var", "npu_only_addition", True, SET_ENV, N_SETENV),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      N_VISIBLE),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only workaround for a consumer-GPU box; silently ignored by HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; silently ignored by HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL logging knob; no effect on HCCL"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
      "ignored by HCCL, which then picks its own host NIC for rendezvous; on multi-NIC nodes that can be the wrong one"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog equivalent; its default is already 1"),
    C("srun --partition=mozi-S1 --gres=gpu:${NUM_GPUS} --ntasks-per-node=${NUM_GPUS} \\", "distributed_framework",
      "replace", False, "    srun --partition=mozi-S1 --gres=npu:${NUM_GPUS} --ntasks-per-node=${NUM_GPUS} \\",
      "unconfirmed: Slurm gres naming for Ascend NPUs depends on the site configuration"),
])

# ----------------------------------------------------------------------------------------------
# 3D-LLM (LAVIS / BLIP-2 based)
# ----------------------------------------------------------------------------------------------
E("threedllm_dist", "3DLLM_BLIP2-base/lavis/common/dist_utils.py", "explicit_replacement",
  "3D-LLM 3DLLM_BLIP2-base lavis/common/dist_utils.py", [
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 -> ZeroDivisionError under slurm"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
      "NCCL is not available with torch_npu"),
])

E("threedllm_train", "3DLLM_BLIP2-base/train_ds.py", "explicit_replacement",
  "3D-LLM style DeepSpeed ZeRO-2 training entry (LAVIS task/model registry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      N_IMPORT + "; DeepSpeed also selects its npu accelerator only when torch_npu is importable"),
    C("from deepspeed.ops.adam import FusedAdam, DeepSpeedCPUAdam", "fused_optimizer", "replace", False,
      "from deepspeed.ops.adam import DeepSpeedCPUAdam",
      "the import itself is pure Python; the CUDA op is only built when FusedAdam is constructed"),
    C("return tensor.cuda()", "tensor_to_device", "replace", True, "return tensor.npu()", N_CUDA_CALL),
    C("optimizer = FusedAdam(optim_params, lr=float(cfg.run_cfg.init_lr), betas=(0.9, beta2))", "fused_optimizer",
      "replace", True,
      "optimizer = torch_npu.optim.NpuFusedAdamW(optim_params, lr=float(cfg.run_cfg.init_lr), betas=(0.9, beta2))",
      "DeepSpeed FusedAdam is a CUDA op builder, not available on NPU; torch_npu fused AdamW has the same "
      "(adam_w_mode) semantics"),
    C('os.environ["CUDA_LAUNCH_BLOCKING"] = "1"', "env_var", "replace", False,
      'os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"',
      "debug-only; the Ascend variable name is unconfirmed in the knowledge base"),
    C('deepspeed.init_distributed(dist_backend="nccl")', "dist_backend", "replace", True,
      'deepspeed.init_distributed(dist_backend="hccl")', "DeepSpeed's npu accelerator communicates over hccl"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "hard-coded cuda device"),
    C('cuda_enabled = device.type == "cuda"', "device_type", "replace", True,
      'cuda_enabled = device.type in ("cuda", "npu")',
      "once the device is npu this flag turns False and batches silently stay on the host -> device mismatch"),
    C("with torch.cuda.amp.autocast(dtype=torch.bfloat16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=torch.bfloat16):",
      "CUDA autocast is disabled on an NPU host; fp32 point features would meet the bf16 DeepSpeed engine"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 2,", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 1024 ** 2,", N_MAXMEM),
])

# ----------------------------------------------------------------------------------------------
# ScanRefer (votenet-based 3D visual grounding)
# ----------------------------------------------------------------------------------------------
N_LOAD = ("checkpoint written on a GPU box holds CUDA storages; torch.load without map_location tries to restore them "
          "on CUDA and raises on an NPU host")
E("scanrefer_train", "scripts/train.py", "explicit_replacement", "ScanRefer scripts/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, N_IMPORT),
    C("dataloader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True)",
      "pin_memory", "replace", False,
      "dataloader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True, "
      "pin_memory_device='npu')", N_PIN),
    C("pretrained_model.load_state_dict(torch.load(pretrained_path), strict=False)", "tensor_to_device", "replace", True,
      "pretrained_model.load_state_dict(torch.load(pretrained_path, map_location='cpu'), strict=False)", N_LOAD),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", N_CUDA_CALL),
    C("optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.wd)", "fused_optimizer", "replace",
      False, "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.lr, weight_decay=args.wd)", N_FUSED),
    C('checkpoint = torch.load(os.path.join(CONF.PATH.OUTPUT, args.use_checkpoint, "checkpoint.tar"))',
      "tensor_to_device", "replace", True,
      'checkpoint = torch.load(os.path.join(CONF.PATH.OUTPUT, args.use_checkpoint, "checkpoint.tar"), map_location="cpu")',
      N_LOAD),
    C('info["device"] = torch.cuda.get_device_name(0)', "torch_cuda_api", "replace", True,
      'info["device"] = torch.npu.get_device_name(0)', "get_device_name raises without CUDA"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu', N_VISIBLE + "; --gpu would be ignored"),
    C('os.environ["CUDA_LAUNCH_BLOCKING"] = "1"', "env_var", "removal", False, None,
      "left on unconditionally upstream; no effect on NPU (an Ascend blocking-launch switch would only slow training)"),
])

E("scanrefer_solver", "lib/solver.py", "explicit_replacement", "ScanRefer lib/solver.py (training / validation loop)", [
    C("data_dict[key] = data_dict[key].cuda()", "tensor_to_device", "replace", True,
      "data_dict[key] = data_dict[key].npu()", N_CUDA_CALL),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", N_EMPTY),
    C("peak_mem = torch.cuda.max_memory_allocated() / 1024 ** 2 if torch.cuda.is_available() else 0", "torch_cuda_api",
      "replace", False,
      "peak_mem = torch.npu.max_memory_allocated() / 1024 ** 2 if torch.npu.is_available() else 0", N_MAXMEM),
])

N_LOSS = N_CUDA_CALL + " (loss targets are built on the accelerator)"
E("scanrefer_loss", "lib/loss_helper.py", "explicit_replacement", "ScanRefer lib/loss_helper.py (votenet losses + reference loss)", [
    C("objectness_label = torch.zeros((B,K), dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "objectness_label = torch.zeros((B,K), dtype=torch.long, device=aggregated_vote_xyz.device)", N_LOSS),
    C("objectness_mask = torch.zeros((B,K)).cuda()", "tensor_to_device", "replace", True,
      "objectness_mask = torch.zeros((B,K), device=aggregated_vote_xyz.device)", N_LOSS),
    C("criterion = nn.CrossEntropyLoss(torch.Tensor(OBJECTNESS_CLS_WEIGHTS).cuda(), reduction='none')",
      "tensor_to_device", "replace", True,
      "criterion = nn.CrossEntropyLoss(torch.Tensor(OBJECTNESS_CLS_WEIGHTS).to(objectness_label.device), reduction='none')",
      N_LOSS),
    C("heading_label_one_hot = torch.cuda.FloatTensor(", "torch_cuda_api", "replace", True,
      "heading_label_one_hot = torch.zeros(batch_size, heading_class_label.shape[1], num_heading_bin, "
      "device=heading_class_label.device)",
      "legacy torch.cuda.FloatTensor constructor allocates on CUDA; fails on an NPU host"),
    C("size_label_one_hot = torch.cuda.FloatTensor(", "torch_cuda_api", "replace", True,
      "size_label_one_hot = torch.zeros(batch_size, size_class_label.shape[1], num_size_cluster, "
      "device=size_class_label.device)", "legacy torch.cuda.FloatTensor constructor"),
    C("mean_size_arr_expanded = torch.from_numpy(mean_size_arr.astype(np.float32)).cuda()", "tensor_to_device",
      "replace", True,
      "mean_size_arr_expanded = torch.from_numpy(mean_size_arr.astype(np.float32)).to(size_class_label.device).unsqueeze(0).unsqueeze(0) # (1,1,num_size_cluster,3)",
      N_LOSS),
    C("cluster_labels = torch.FloatTensor(labels).cuda()", "tensor_to_device", "replace", True,
      "cluster_labels = torch.FloatTensor(labels).to(cluster_preds.device)", N_LOSS),
    C("data_dict['pos_ratio'] = torch.sum(objectness_label.float().cuda())", "tensor_to_device", "replace", True,
      "data_dict['pos_ratio'] = torch.sum(objectness_label.float())/float(total_num_proposal)",
      "redundant .cuda() on a tensor already on the device still raises on an NPU host"),
    C("data_dict['vote_loss'] = torch.zeros(1)[0].cuda()", "tensor_to_device", "replace", True,
      "data_dict['vote_loss'] = torch.zeros(1)[0].npu()", N_CUDA_CALL + " (--no_detection path)"),
    C("data_dict['objectness_loss'] = torch.zeros(1)[0].cuda()", "tensor_to_device", "replace", True,
      "data_dict['objectness_loss'] = torch.zeros(1)[0].npu()", N_CUDA_CALL + " (--no_detection path)"),
    C("data_dict['center_loss'] = torch.zeros(1)[0].cuda()", "tensor_to_device", "replace", True,
      "data_dict['center_loss'] = torch.zeros(1)[0].npu()", N_CUDA_CALL + " (--no_detection path)"),
    C("data_dict['heading_cls_loss'] = torch.zeros(1)[0].cuda()", "tensor_to_device", "replace", True,
      "data_dict['heading_cls_loss'] = torch.zeros(1)[0].npu()", N_CUDA_CALL + " (--no_detection path)"),
    C("data_dict['heading_reg_loss'] = torch.zeros(1)[0].cuda()", "tensor_to_device", "replace", True,
      "data_dict['heading_reg_loss'] = torch.zeros(1)[0].npu()", N_CUDA_CALL + " (--no_detection path)"),
    C("data_dict['size_cls_loss'] = torch.zeros(1)[0].cuda()", "tensor_to_device", "replace", True,
      "data_dict['size_cls_loss'] = torch.zeros(1)[0].npu()", N_CUDA_CALL + " (--no_detection path)"),
    C("data_dict['size_reg_loss'] = torch.zeros(1)[0].cuda()", "tensor_to_device", "replace", True,
      "data_dict['size_reg_loss'] = torch.zeros(1)[0].npu()", N_CUDA_CALL + " (--no_detection path)"),
    C("data_dict['sem_cls_loss'] = torch.zeros(1)[0].cuda()", "tensor_to_device", "replace", True,
      "data_dict['sem_cls_loss'] = torch.zeros(1)[0].npu()", N_CUDA_CALL + " (--no_detection path)"),
    C("data_dict['box_loss'] = torch.zeros(1)[0].cuda()", "tensor_to_device", "replace", True,
      "data_dict['box_loss'] = torch.zeros(1)[0].npu()", N_CUDA_CALL + " (--no_detection path)"),
    C('data_dict["cluster_labels"] = objectness_label.new_zeros(objectness_label.shape).cuda()', "tensor_to_device",
      "replace", True, 'data_dict["cluster_labels"] = objectness_label.new_zeros(objectness_label.shape)',
      "new_zeros already allocates on the right device; the trailing .cuda() raises on NPU (--no_reference path)"),
    C('data_dict["cluster_ref"] = objectness_label.new_zeros(objectness_label.shape).float().cuda()', "tensor_to_device",
      "replace", True, 'data_dict["cluster_ref"] = objectness_label.new_zeros(objectness_label.shape).float()',
      "trailing .cuda() raises on NPU (--no_reference path)"),
    C('data_dict["ref_loss"] = torch.zeros(1)[0].cuda()', "tensor_to_device", "replace", True,
      'data_dict["ref_loss"] = torch.zeros(1)[0].npu()', N_CUDA_CALL),
    C('data_dict["lang_loss"] = torch.zeros(1)[0].cuda()', "tensor_to_device", "replace", True,
      'data_dict["lang_loss"] = torch.zeros(1)[0].npu()', N_CUDA_CALL),
])

E("scanrefer_eval", "scripts/eval.py", "explicit_replacement", "ScanRefer scripts/eval.py (grounding + detection eval)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, N_IMPORT),
    C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", N_CUDA_CALL),
    C("model.load_state_dict(torch.load(path), strict=False)", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(path, map_location='cpu'), strict=False)", N_LOAD),
    C("data[key] = data[key].cuda()", "tensor_to_device", "replace", True, "data[key] = data[key].npu()", N_CUDA_CALL),
    C("data = {k: v.cuda() for k, v in data.items()}", "tensor_to_device", "replace", True,
      "data = {k: v.npu() for k, v in data.items()}", N_CUDA_CALL),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu', N_VISIBLE),
    C('os.environ["CUDA_LAUNCH_BLOCKING"] = "1"', "env_var", "removal", False, None,
      "debug switch left on upstream; no effect on NPU"),
])
