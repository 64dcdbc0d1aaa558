"""Labels for probe374 (open-vocabulary semantic segmentation: CAT-Seg, SAN, OVSeg, FC-CLIP, ZegCLIP).

Port target: torch 2.1.0 + torch_npu 2.1.0.postN (the detectron2 / mmcv-1.x era these projects live in), so
`import torch_npu` is still needed explicitly (autoload only since torch_npu 2.5.1).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu  # noqa: F401  registers the 'npu' device (torch_npu < 2.5.1 has no autoload)"

# --------------------------------------------------------------------------------------------------------------
# CAT-Seg (KU-CVLAB/CAT-Seg): detectron2 project, OpenAI-CLIP fork + open_clip, cost-aggregation head
# --------------------------------------------------------------------------------------------------------------
E("catseg_train_net", "train_net.py", "explicit_replacement",
  "KU-CVLAB/CAT-Seg train_net.py (detectron2 DefaultTrainer subclass + launch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry point; without torch_npu the 'npu' device string in cfg.MODEL.DEVICE is unknown to torch 2.1"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True,
      'cfg.MODEL.DEVICE = "npu"',
      "detectron2's default MODEL.DEVICE is 'cuda'; build_model() moves the model there, which fails on an NPU host"),
])

E("catseg_predictor", "cat_seg/modeling/transformer/cat_seg_predictor.py", "explicit_replacement",
  "KU-CVLAB/CAT-Seg cat_seg/modeling/transformer/cat_seg_predictor.py (CLIP text embeddings, .cuda() tokens)", [
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "otherwise CLIP is loaded on CPU while the (ported) tokens are on the NPU: device mismatch in class_embeddings()"),
    C("texts = self.tokenizer(texts).cuda()", "tensor_to_device", "replace", True,
      "texts = self.tokenizer(texts).npu()", "OpenCLIP (ViT-H / ViT-G) path of class_embeddings"),
    C("texts = clip.tokenize(texts).cuda()", "tensor_to_device", "replace", True,
      "texts = clip.tokenize(texts).npu()", "OpenAI-CLIP path of class_embeddings (runs in __init__)"),
    C("zeroshot_weights = torch.stack(zeroshot_weights, dim=1).cuda()", "tensor_to_device", "replace", True,
      "zeroshot_weights = torch.stack(zeroshot_weights, dim=1).npu()",
      "Tensor.cuda() raises without CUDA even if the tensor already lives on the NPU"),
    C("tok = self.tokenizer(texts).cuda()", "tensor_to_device", "replace", True,
      "tok = self.tokenizer(texts).npu()", "get_text_embeds, OpenCLIP path (every forward until cached)"),
    C("tok = clip.tokenize(texts).cuda()", "tensor_to_device", "replace", True,
      "tok = clip.tokenize(texts).npu()", "get_text_embeds, OpenAI-CLIP path"),
])

E("catseg_clip", "cat_seg/third_party/clip.py", "explicit_replacement",
  "KU-CVLAB/CAT-Seg cat_seg/third_party/clip.py (OpenAI clip.load fork with prompt_depth)", [
    C('device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace",
      False,
      'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", jit=False, prompt_depth=0, prompt_length=0):',
      "default argument only; every caller in the project passes device= explicitly, so leaving it just makes "
      "ad-hoc callers load on CPU"),
])

E("catseg_model", "cat_seg/cat_seg_model.py", "explicit_replacement",
  "KU-CVLAB/CAT-Seg cat_seg/cat_seg_model.py (meta-arch, sliding-window inference)", [])

E("catseg_aggregator", "cat_seg/modeling/transformer/model.py", "explicit_replacement",
  "KU-CVLAB/CAT-Seg cat_seg/modeling/transformer/model.py (Swin / linear-attention aggregator)", [])

E("catseg_config", "cat_seg/config.py", "explicit_replacement",
  "KU-CVLAB/CAT-Seg cat_seg/config.py (add_cat_seg_config)", [])

E("catseg_run_sh", "run.sh", "explicit_replacement",
  "KU-CVLAB/CAT-Seg run.sh (train + eval launcher)", [])

# --------------------------------------------------------------------------------------------------------------
# SAN (MendelXu/SAN): detectron2 project, open_clip side-adapter network
# --------------------------------------------------------------------------------------------------------------
E("san_train_net", "train_net.py", "explicit_replacement",
  "MendelXu/SAN train_net.py (Trainer with wandb writer, per-dataset test loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry point; the YAML sets MODEL.DEVICE npu, which torch 2.1 only knows after importing torch_npu"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised, so this only loses the "
      "cache release between datasets (memory headroom), it does not fail"),
])

E("san_predict", "predict.py", "explicit_replacement",
  "MendelXu/SAN predict.py (Predictor used by the demo / cog)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "stand-alone entry point; torch.npu does not exist before torch_npu is imported"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "left as is, the predictor silently runs on CPU on an NPU host"),
    C('self.device = torch.device("cuda")', "device_type", "replace", True, 'self.device = torch.device("npu")',
      "device attribute used by callers"),
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
      "Module.cuda() fails without CUDA"),
])

E("san_model", "san/model/san.py", "explicit_replacement",
  "MendelXu/SAN san/model/san.py (SAN meta-arch)", [])

E("san_classifier", "san/model/clip_utils/classifier.py", "explicit_replacement",
  "MendelXu/SAN san/model/clip_utils/classifier.py (open-vocabulary text classifier with cache)", [])

E("san_install", "install.sh", "explicit_replacement",
  "MendelXu/SAN install.sh (pip install of cu113 wheels + detectron2)", [
    C("pip install torch==1.12.1+cu113", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post10",
      "torch 1.12.1 has no torch_npu release (§1 matrix); the CUDA wheel index is useless on an Ascend host"),
    C("torch.cuda.is_available())", "torch_cuda_api", "replace", False,
      "python -c \"import torch, torch_npu; print(torch.__version__, torch.npu.is_available())\"",
      "sanity print only: prints False instead of failing"),
])

E("san_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "detectron2-style docker/Dockerfile as shipped with SAN-like projects", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "an NVIDIA CUDA base image has no CANN toolkit, so torch_npu cannot load; exact Ascend base-image tag "
      "is a placeholder (choose the one matching the host driver / CANN, see §1.6)"),
    C("RUN pip install --user torch==1.12.1+cu113", "import_torch_npu", "replace", True,
      "RUN pip install --user torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
      "CUDA wheels -> CPU torch + matching torch_npu"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None,
      "forces detectron2's setup.py onto the CUDAExtension/nvcc path; unconfirmed in the knowledge base, "
      "but expected to break the detectron2 build in a CANN image"),
])

E("san_config", "configs/Base-coco-stuff-164K-171.yaml", "explicit_replacement",
  "MendelXu/SAN configs/Base-coco-stuff-164K-171.yaml", [
    C('META_ARCHITECTURE: "SAN"', "device_type", "npu_only_addition", True, '  DEVICE: "npu"',
      "SAN's chosen place for the device switch (every SAN config inherits this base); detectron2 default is 'cuda'"),
    C("ENABLED: True  # detectron2 AMPTrainer", "amp", "replace", False,
      "    ENABLED: False  # detectron2 AMPTrainer uses torch.cuda.amp; re-enable with an NPU autocast trainer",
      "detectron2's AMPTrainer is written against torch.cuda.amp (library code, not in this repo); that it "
      "refuses to run without CUDA is unconfirmed in the knowledge base"),
])

# --------------------------------------------------------------------------------------------------------------
# OVSeg (facebookresearch/ov-seg): detectron2 / MaskFormer project with a mask-adapted CLIP
# --------------------------------------------------------------------------------------------------------------
E("ovseg_predictor", "open_vocab_seg/utils/predictor.py", "explicit_replacement",
  "facebookresearch/ov-seg open_vocab_seg/utils/predictor.py (OVSegPredictor, VisualizationDemo, AsyncPredictor)", [
    C("num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpu = torch.npu.device_count()",
      "returns 0 on an NPU host, so the parallel demo silently runs every worker on CPU"),
    C('cfg.MODEL.DEVICE = "cuda:{}".format(gpuid) if num_gpus > 0 else "cpu"', "device_type", "replace", True,
      'cfg.MODEL.DEVICE = "npu:{}".format(gpuid) if num_gpus > 0 else "cpu"',
      "per-worker device string"),
])

E("ovseg_demo", "demo.py", "explicit_replacement",
  "facebookresearch/ov-seg demo.py (detectron2-style CLI demo)", [
    C("from detectron2.config import get_cfg", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "demo.py never imports torch itself; torch_npu must be imported before the model is built on 'npu'"),
    C('default="cuda",', "device_type", "replace", True, 'default="npu",',
      "--device default feeds cfg.MODEL.DEVICE"),
])

E("ovseg_train_net", "train_net.py", "explicit_replacement",
  "facebookresearch/ov-seg train_net.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True, 'cfg.MODEL.DEVICE = "npu"',
      "detectron2 default MODEL.DEVICE is 'cuda'"),
])

E("ovseg_clip_utils", "open_vocab_seg/modeling/clip_adapter/utils.py", "explicit_replacement",
  "facebookresearch/ov-seg open_vocab_seg/modeling/clip_adapter/utils.py (build_clip_model, crop_with_mask)", [])

E("ovseg_requirements", "requirements.txt", "explicit_replacement",
  "facebookresearch/ov-seg requirements / INSTALL (torch 1.10.1 + cu113)", [
    C("-f https://download.pytorch.org/whl/cu113/torch_stable.html", "import_torch_npu", "removal", False, None,
      "find-links to the CUDA wheel page; harmless once the +cu113 pins are gone"),
    C("torch==1.10.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu exists for torch 1.10 (§1 matrix)"),
    C("torchvision==0.11.2+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "must match the new torch pin or pip refuses the set"),
    C("=cython", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the adapter itself; version must equal the torch pin (§1.1)"),
])

# --------------------------------------------------------------------------------------------------------------
# FC-CLIP (bytedance/fc-clip): Mask2Former-based, frozen convolutional CLIP, MSDeformAttn CUDA op
# --------------------------------------------------------------------------------------------------------------
E("fcclip_msda_func", "fcclip/modeling/pixel_decoder/ops/functions/ms_deform_attn_func.py", "explicit_replacement",
  "bytedance/fc-clip (Mask2Former) pixel_decoder/ops/functions/ms_deform_attn_func.py", [
    C("raise ModuleNotFoundError(info_string)", "custom_cuda_extension", "replace", True,
      "MSDA = None  # no CUDA op on Ascend: MSDeformAttn falls back to ms_deform_attn_core_pytorch (grid_sample)",
      "the nvcc-built MultiScaleDeformableAttention module cannot exist on an NPU host, and the hard raise "
      "at import time kills the whole model import; grid_sampler_2d has a native NPU kernel (ops list)"),
])

E("fcclip_msda_module", "fcclip/modeling/pixel_decoder/ops/modules/ms_deform_attn.py", "explicit_replacement",
  "bytedance/fc-clip (Mask2Former) pixel_decoder/ops/modules/ms_deform_attn.py", [
    C("output = MSDeformAttnFunction.apply(", "unsupported_op_workaround", "add_branch", False,
      "if value.is_npu: output = ms_deform_attn_core_pytorch(value, input_spatial_shapes, sampling_locations, attention_weights)",
      "with MSDA = None the bare `except:` already routes to the PyTorch path, so an explicit NPU branch only "
      "avoids raising/catching an exception on every call"),
])

E("fcclip_msda_setup", "fcclip/modeling/pixel_decoder/ops/setup.py", "explicit_replacement",
  "bytedance/fc-clip (Mask2Former) pixel_decoder/ops/setup.py (CUDAExtension build)", [
    C("raise NotImplementedError('CUDA_HOME is None. Please set environment variable CUDA_HOME.')",
      "custom_cuda_extension", "replace", False,
      "return []  # Ascend: no nvcc; MSDeformAttn uses the PyTorch grid_sample path",
      "the documented `sh make.sh` install step fails on an NPU host; the model no longer needs the op "
      "after the func.py change, so skipping the step is enough"),
])

E("fcclip_msda_header", "fcclip/modeling/pixel_decoder/ops/src/ms_deform_attn.h", "explicit_replacement",
  "bytedance/fc-clip (Mask2Former) pixel_decoder/ops/src/ms_deform_attn.h (CPU/CUDA dispatch)", [])

E("fcclip_matcher", "fcclip/modeling/matcher.py", "explicit_replacement",
  "bytedance/fc-clip (Mask2Former) fcclip/modeling/matcher.py (HungarianMatcher with point sampling)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch.npu.amp import autocast",
      "`with autocast(enabled=False)` must switch off the *NPU* autocast so the matching costs are computed in "
      "fp32 (the configs train with AMP); a CUDA autocast context is a no-op for NPU ops, so the costs would "
      "silently be fp16"),
])

E("fcclip_backbone_clip", "fcclip/modeling/backbone/clip.py", "explicit_replacement",
  "bytedance/fc-clip fcclip/modeling/backbone/clip.py (open_clip ConvNeXt backbone)", [])

E("fcclip_train_net", "train_net.py", "explicit_replacement",
  "bytedance/fc-clip train_net.py (Mask2Former train_net)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point"),
    C("torch.cuda.device_count() > comm.get_rank()", "torch_cuda_api", "replace", True,
      "torch.npu.device_count() > comm.get_rank()",
      "returns 0 on an NPU host, so every Cityscapes evaluation aborts with the assertion"),
    C("add_fcclip_config(cfg)", "device_type", "npu_only_addition", True,
      'cfg.MODEL.DEVICE = "npu"  # default; YAML / opts can still override',
      "detectron2 default MODEL.DEVICE is 'cuda'"),
])

# --------------------------------------------------------------------------------------------------------------
# ZegCLIP (ZiqinZhou66/ZegCLIP): mmsegmentation 0.x / mmcv-full 1.x project
# --------------------------------------------------------------------------------------------------------------
E("zegclip_train", "train.py", "explicit_replacement",
  "ZiqinZhou66/ZegCLIP train.py (mmseg tools/train.py copy)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point"),
    C("cfg.auto_resume = args.auto_resume", "distributed_framework", "npu_only_addition", False,
      "cfg.device = 'npu'",
      "newer mmseg (>=0.27) builds the (D)DP wrapper from cfg.device; unconfirmed in the knowledge base and "
      "a no-op with the mmseg version this script was copied from"),
])

E("zegclip_test", "test.py", "explicit_replacement",
  "ZiqinZhou66/ZegCLIP test.py (mmseg tools/test.py copy)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point"),
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework",
      "npu_only_addition", True,
      "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "needed by the NPUDataParallel line below (mmcv >= 1.7 ships mmcv.device.npu; version not in the knowledge base)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA init; memory headroom only"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "only guards an mmcv version assert for CPU runs; the pinned mmcv passes it either way"),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=[0])",
      "DataParallel is unsupported on NPU (2.7.1 list); without CUDA the wrapper keeps the model on CPU, so "
      "single-card evaluation silently runs on the host"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
      "model = NPUDistributedDataParallel(",
      "MMDistributedDataParallel's scatter is CUDA-stream based; that it breaks on NPU is unconfirmed here"),
    C("model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "Module.cuda() fails without CUDA"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() fails without CUDA"),
])

E("zegclip_runtime", "configs/_base_/default_runtime.py", "explicit_replacement",
  "ZiqinZhou66/ZegCLIP configs/_base_/default_runtime.py", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "passed to mmcv init_dist -> init_process_group; NCCL does not exist on Ascend"),
])

E("zegclip_dist_train", "dist_train.sh", "explicit_replacement",
  "ZiqinZhou66/ZegCLIP dist_train.sh (mmseg tools/dist_train.sh copy)", [
    C("=CONFIG=$1", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced in the login profile / container entrypoint"),
])

E("zegclip_train_voc", "scripts/train_voc12_inductive.sh", "explicit_replacement",
  "ZiqinZhou66/ZegCLIP-style experiment launcher (VOC12 inductive zero-shot)", [
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime: the 4 ranks would silently land on NPUs 0-3, which "
      "the script explicitly reserves for another job"),
])

E("zegclip_segmentor", "models/segmentor/zegclip.py", "explicit_replacement",
  "ZiqinZhou66/ZegCLIP models/segmentor/zegclip.py (EncoderDecoder subclass)", [
    C("novel_ids = torch.from_numpy(self.novel_class).cuda()", "tensor_to_device", "replace", True,
      "novel_ids = torch.from_numpy(self.novel_class).to(x[1].device)",
      "self-training branch; Tensor.cuda() fails without CUDA"),
])

E("zegclip_text_encoder", "models/backbone/text_encoder.py", "explicit_replacement",
  "ZiqinZhou66/ZegCLIP models/backbone/text_encoder.py (CLIPTextEncoder from a JIT archive)", [])
