/**
 * Launch scripts, Dockerfiles and configs: what a porter changes in them, a line at a time (they
 * are not Python): CUDA environment variables and modules, nvidia-smi, NCCL settings, CUDA
 * images, backends and devices named in flags.
 */
import type { Language } from '../../../shared/api';
import { newlineStarts } from './line-matches';
import { ruleMsg } from './rules';
import { TooCostly } from './analyze-file';
import {
  MMCV_CUDA_INDEX,
  scanCloneCommands,
  scanInlineImports,
  scanInstallCommands,
  type AddFinding,
} from './dependency-files';

// with the templates users copy (`config.env.example`, `.env.sample`): porters edit those too;
// Snakemake's workflows (`Snakefile`, `rules/*.smk`), whose shell rules launch the training;
// Dockerfiles by any of their names (`cuda.Dockerfile`, IOPaint's `GPUDockerfile`, `Containerfile`,
// FoundationPose's `docker/dockerfile`, icefall's `torch2.1.0-cuda12.1.dockerfile`)
const DOCKERFILE_NAME = String.raw`(?![^/]*\.py$)[^/]*Dockerfile[^/]*|dockerfile(?:\.[^/]*)?|[^/]*\.dockerfile|Containerfile[^/]*`;
export const SCRIPT_FILE = new RegExp(
  String.raw`(\.(sh|bash|zsh|ya?ml|cfg|ini|toml|env|sbatch|slurm|pbs|cmake|json|pbtxt|gin|smk)(?:\.(?:example|sample|template|tmpl|dist))?|(^|\/)(?:${DOCKERFILE_NAME}|Makefile|CMakeLists\.txt|Snakefile))$`,
);
/** A Dockerfile, by any of its names. */
const DOCKERFILE = new RegExp(String.raw`(?:^|\/)(?:${DOCKERFILE_NAME})$`);

/**
 * A script or config without one of these holds nothing SCRIPT_PATTERNS looks for (nor a
 * distributed launch, which needs CANN's environment).
 */
export const SCRIPT_WORDS =
  /CUDA|NCCL|NVIDIA|NVCC|nvidia|nccl|cuda|nvcc|nvcr|vllm-openai|lmsysorg\/sglang|nsys|compute-sanitizer|gencode|MULTI_GPU|flash|xformers|accelerator|whl\/cu|\+cu\d|pip3?\s+install|_cuvid|_nvenc|hwaccel|num-gpus|--gpus|Fused|fused|FLASH|apex|KIND_GPU|gpu_(?:hist|exact|predictor)|multi[-_]gpu|8bit|bnb|paged|trtexec|openmmlab|mim\s+install|["']GPU["']|cutlass|CUTLASS|\bcu\d{3}\b|whl\/\$|wheels\/\$|python[\d.]*\s+-c\b|:[ \t]*["']?(?:gpu|GPU)\b|strategy["']?\s*[:= ]\s*["']?(?:ddp|fsdp)|\bcudf\b|runs-on:|faiss|cupy|sage_?attn|sage_?attention|nproc[_-]per[_-]node(?:=|\s+)["']?gpu\b|#SBATCH|[Nn]orm\w*["']?\s*[:=]|tf32|torchrun|torch\.distributed\.(?:launch|run)|accelerate\s+launch/;

const DEVICE_CUDA = { en: 'Device cuda: use npu.', 'zh-CN': '设备 cuda：改用 npu。' };

/** Launch scripts and configs: what a porter changes in them, line by line (not Python). */
const SCRIPT_PATTERNS: {
  re: RegExp;
  say: Record<Language, string>;
  edit?: (m: RegExpMatchArray) => string;
}[] = [
  {
    // Ray's switch that leaves the variable to the code: RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES
    re: /(?:\b|(?<=\bRAY_EXPERIMENTAL_NOSET_))CUDA_VISIBLE_DEVICES\b/,
    say: {
      en: 'CUDA_VISIBLE_DEVICES does not select NPUs: use ASCEND_RT_VISIBLE_DEVICES.',
      'zh-CN': 'CUDA_VISIBLE_DEVICES 不能选择 NPU：改用 ASCEND_RT_VISIBLE_DEVICES。',
    },
    edit: () => 'ASCEND_RT_VISIBLE_DEVICES',
  },
  {
    re: /\bPYTORCH_CUDA_ALLOC_CONF\b/,
    say: {
      en: 'PYTORCH_CUDA_ALLOC_CONF is ignored on NPU: use PYTORCH_NPU_ALLOC_CONF (same value).',
      'zh-CN': 'NPU 上会忽略 PYTORCH_CUDA_ALLOC_CONF：改用 PYTORCH_NPU_ALLOC_CONF（值不变）。',
    },
    edit: () => 'PYTORCH_NPU_ALLOC_CONF',
  },
  {
    re: /\bCUDA_LAUNCH_BLOCKING\b/,
    say: {
      en: 'CUDA_LAUNCH_BLOCKING does nothing on NPU: use ASCEND_LAUNCH_BLOCKING (debugging only).',
      'zh-CN':
        'CUDA_LAUNCH_BLOCKING 在 NPU 上不起作用：改用 ASCEND_LAUNCH_BLOCKING（仅用于调试）。',
    },
    edit: () => 'ASCEND_LAUNCH_BLOCKING',
  },
  {
    // the NCCL process group's watchdog switch has HCCL's own name
    re: /\bTORCH_NCCL_ASYNC_ERROR_HANDLING\b/,
    say: {
      en: "TORCH_NCCL_ASYNC_ERROR_HANDLING is the NCCL process group's: torch_npu's HCCL watchdog reads HCCL_ASYNC_ERROR_HANDLING.",
      'zh-CN':
        'TORCH_NCCL_ASYNC_ERROR_HANDLING 属于 NCCL 进程组：torch_npu 的 HCCL 看门狗读取 HCCL_ASYNC_ERROR_HANDLING。',
    },
    edit: () => 'HCCL_ASYNC_ERROR_HANDLING',
  },
  {
    // NCCL's own variables, and PyTorch's for its NCCL process group (TORCH_NCCL_…)
    re: /\b(?:TORCH_NCCL_(?!ASYNC_ERROR_HANDLING\b)|NCCL_)[A-Z0-9_]+/,
    say: {
      en: 'NCCL setting: HCCL has its own variables (HCCL_CONNECT_TIMEOUT, HCCL_IF_IP, HCCL_BUFFSIZE…).',
      'zh-CN': 'NCCL 设置：HCCL 有自己的变量（HCCL_CONNECT_TIMEOUT、HCCL_IF_IP、HCCL_BUFFSIZE…）。',
    },
  },
  {
    re: /\bnvidia-smi\b/,
    say: {
      en: 'nvidia-smi does not exist on Ascend: use npu-smi info (different output).',
      'zh-CN': '昇腾上没有 nvidia-smi：改用 npu-smi info（输出格式不同）。',
    },
  },
  {
    // a Slurm job asking for GPUs (`#SBATCH --gres=gpu:8`, `--gpus-per-node=4`, `-G 2`, a node
    // feature `-C gpu` / `--constraint=a100`): an Ascend partition has none to grant, and names
    // its NPUs as the site chose
    re: /^\s*#SBATCH\s+(?:--gres[= ](?:\S*[:,])?gpu\b|--gpus(?:-per-(?:node|task|socket))?[= ]|-G\s*\d|(?:-C|--constraint)[= ]\S*(?:gpu|GPU|[avhlAVHL]\d{2,3}|volta|ampere|hopper)\w*\b)/,
    say: {
      en: 'Slurm GPU request: an Ascend cluster grants none, so the job waits or fails; ask for NPUs as the site names them (often --gres=npu:N).',
      'zh-CN':
        'Slurm GPU 资源申请：昇腾集群没有 GPU 可分配，作业会一直排队或失败；按站点的命名申请 NPU（常见为 --gres=npu:N）。',
    },
  },
  {
    // a cluster's environment modules: `module load cuda/12.1 nccl/2.18`, also as an item of a
    // launcher config's setup list (`- module load cuda/12.1`, submitit / Hydra)
    re: /^\s*(?:-\s+)?["']?module\s+(?:load|add)\b.*\b(?:cuda|cudnn|nccl)\b/i,
    say: {
      en: 'CUDA / NCCL environment modules: on Ascend source CANN instead (source /usr/local/Ascend/ascend-toolkit/set_env.sh).',
      'zh-CN':
        'CUDA / NCCL 环境模块：昇腾上改为加载 CANN（source /usr/local/Ascend/ascend-toolkit/set_env.sh）。',
    },
  },
  {
    // a native build configured for CUDA (`cmake .. -DUSE_CUDA=ON`: decord's NVDEC reader, a
    // library's GPU kernels; COLMAP's `-DCUDA_ENABLED=ON`, scikit-build's
    // `--config-settings=cmake.define.USE_CUDA=ON`, LAMMPS' `-D Kokkos_ENABLE_CUDA=ON`, `-D PKG_GPU=ON`,
    // llama.cpp's in quotes: `CMAKE_ARGS="-DGGML_CUDA=on"`)
    re: /(?<=(?:[\s"'[,]-D[ \t]?|\bcmake\.define\.)(?:(?:[A-Za-z]\w*_)?(?:USE|WITH|ENABLE|BUILD)_CUDA\w*|CUDA_ENABLED|GGML_CUDA|\w+_CUBLAS|PKG_GPU)=)(?:ON|On|on|1|TRUE|True|true|YES|yes)\b/,
    say: {
      en: 'A native build switched to CUDA, which an Ascend host does not have: build it with the switch off (the CPU path; an NPU backend, where the library has one, is its own option).',
      'zh-CN':
        '原生构建打开了 CUDA 开关，而昇腾主机上没有 CUDA：关闭该开关构建（走 CPU 路径；若该库有 NPU 后端，那是它单独的选项）。',
    },
    edit: () => 'OFF',
  },
  {
    // a package's CUDA kernels forced into its build where no GPU is visible (`ENV FORCE_CUDA=1`
    // for mmcv / detectron2 / pytorch3d, `BUILD_EXT=1 pip install`, BasicSR's `BASICSR_EXT=True`,
    // MinkowskiEngine's `--install-option="--force_cuda"`, GroundingDINO's `ARG USE_CUDA=1`,
    // habitat-sim's `setup.py install --with-cuda`, auto_LiRPA's `AUTOLIRPA_ENABLE_CUDA_BUILD=1`)
    re: /(?<![\w-])(?:FORCE_CUDA|USE_CUDA|WITH_CUDA|[A-Z][A-Z0-9]*_EXT|[A-Z0-9_]*CUDA_(?:EXT|BUILD)[A-Z0-9_]*)(?=["']?\s*[=:]\s*["']?(?:1|ON|On|on|TRUE|True|true|YES|yes)\b)|(?<![\w-])--(?:force|with)[-_]cuda(?![\w-])/,
    say: {
      en: "Forces the package's CUDA extensions into its build: an Ascend host has no CUDA toolkit, so the build fails (or its ops are left without a kernel). Build without the switch (the package's CPU / PyTorch ops), or with its NPU switch where it has one (mmcv: FORCE_NPU=1).",
      'zh-CN':
        '强制把包的 CUDA 扩展编进构建：昇腾主机上没有 CUDA 工具包，构建会失败（或其算子没有内核可用）。去掉该开关构建（用包的 CPU / PyTorch 算子），包有 NPU 开关时改用它（mmcv：FORCE_NPU=1）。',
    },
  },
  {
    // a project's own CUDA extension built as a step: `cd models/ops && sh make.sh` (Deformable
    // DETR's op, DCNv2), `cd csrc && python setup.py install`, `cd alt_cuda_corr && pip install .`,
    // `cd extensions/chamfer_dist && python setup.py install`
    re: /\bcd[ \t]+["']?(?:[^\s"';&]*\/)?(?:ops|csrc|ext|exts|extensions?|kernels?|[^\s"';&/]*cuda[^\s"';&/]*|[^\s"';&/]*_(?:ops|ext))(?:\/[^\s"';&]*)?["']?[ \t]*&&[ \t]*(?:python3?[ \t]+setup\.py[ \t]+(?:install|build_ext|build|develop)\b|pip3?[ \t]+install[ \t]+(?:-\S+[ \t]+)*\.(?=[\s;&)]|$))|\bcd[ \t]+\S+[ \t]*&&[ \t]*(?:(?:sh|bash)[ \t]+(?:\.\/)?make\.sh|\.\/make\.sh)\b/,
    say: {
      en: "Builds the project's own CUDA extension: an Ascend host has no CUDA toolkit, so the step fails. Drop it and use the op's PyTorch (or torch_npu) path, or build an Ascend C version of the op against CANN.",
      'zh-CN':
        '构建项目自带的 CUDA 扩展：昇腾主机上没有 CUDA 工具包，这一步会失败。去掉这一步并改用该算子的 PyTorch（或 torch_npu）实现，或基于 CANN 构建该算子的 Ascend C 版本。',
    },
  },
  {
    // the CUDA compiler run as a step (`nvcc --version`, a build)
    re: /(?<![\w.-])nvcc(?:_wrapper)?(?![\w-])/,
    say: {
      en: 'nvcc, the CUDA compiler, is not on an Ascend host: drop this step (an extension for the NPU is built against torch_npu and CANN).',
      'zh-CN':
        '昇腾主机上没有 CUDA 编译器 nvcc：去掉这一步（NPU 扩展基于 torch_npu 与 CANN 构建）。',
    },
  },
  {
    // apex built from source with its CUDA kernels (`--build-option=--cuda_ext`, `--cpp_ext`)
    re: /--(?:cuda|cpp)_ext\b/,
    say: {
      en: "Builds NVIDIA apex's CUDA extensions: on Ascend build Ascend's apex (github.com/Ascend/apex), whose amp and fused optimizers run on the NPU.",
      'zh-CN':
        '构建 NVIDIA apex 的 CUDA 扩展：昇腾上改为构建 Ascend 的 apex（github.com/Ascend/apex），其 amp 与融合优化器在 NPU 上运行。',
    },
  },
  {
    // NVIDIA's container runtime picks the GPUs a container sees; Ascend-Docker-Runtime, the NPUs
    re: /\bNVIDIA_VISIBLE_DEVICES\b/,
    say: {
      en: "NVIDIA_VISIBLE_DEVICES is read by NVIDIA's container runtime: with Ascend-Docker-Runtime, ASCEND_VISIBLE_DEVICES selects the NPUs a container gets.",
      'zh-CN':
        'NVIDIA_VISIBLE_DEVICES 由 NVIDIA 容器运行时读取：使用 Ascend-Docker-Runtime 时，由 ASCEND_VISIBLE_DEVICES 选择容器可见的 NPU。',
    },
    edit: () => 'ASCEND_VISIBLE_DEVICES',
  },
  {
    // the CUDA toolkit's place: `export CUDA_HOME=/usr/local/cuda`, `…/cuda/lib64` in a library path
    re: /\bCUDA_HOME\b|\/usr\/local\/(?:cuda|nvidia)\b/,
    say: {
      en: "The CUDA toolkit's path: an Ascend host has CANN instead (source /usr/local/Ascend/ascend-toolkit/set_env.sh, which sets ASCEND_TOOLKIT_HOME and the library paths).",
      'zh-CN':
        'CUDA 工具包路径：昇腾主机上是 CANN（source /usr/local/Ascend/ascend-toolkit/set_env.sh，它会设置 ASCEND_TOOLKIT_HOME 与库路径）。',
    },
  },
  {
    // a build that compiles or links for CUDA: nvcc's -gencode, $(NVCC), libcudart / c10_cuda (a
    // line that names nvcc itself is the nvcc pattern's)
    re: /-gencode\b|\barch=compute_\d+|-l(?:cudart|c10_cuda|torch_cuda|cublas\w*|cudnn|nccl)\b|\$[({]NVCC[)}]|\bNVCCFLAGS\b/,
    say: {
      en: 'Compiles or links for CUDA: an operator for the NPU is an Ascend C kernel built with CANN and registered through torch_npu (or the operation written in PyTorch).',
      'zh-CN':
        '为 CUDA 编译或链接：NPU 上的算子应是用 CANN 构建、通过 torch_npu 注册的 Ascend C 内核（或用 PyTorch 实现该运算）。',
    },
  },
  {
    // NVIDIA's profilers and sanitizers run as a step
    re: /(?<![\w.-])(?:nsys|compute-sanitizer)(?![\w-])/,
    say: {
      en: 'An NVIDIA profiling or checking tool: on Ascend profile with msprof (or torch_npu.profiler).',
      'zh-CN':
        'NVIDIA 的性能分析或检查工具：昇腾上用 msprof（或 torch_npu.profiler）进行性能分析。',
    },
  },
  {
    // nsys's capture range opened by the CUDA profiler API, on a continued line of its command
    // (`--capture-range=cudaProfilerApi \`, `-c cudaProfilerApi`)
    re: /(?<=(?:--capture-range[= ]|(?<![\w-])-c\s+))cudaProfilerApi\b/,
    say: {
      en: "A capture range started and stopped through the CUDA profiler API (cudaProfilerStart/Stop): on Ascend bound the steps with torch_npu.profiler's schedule, or msprof's own options.",
      'zh-CN':
        '通过 CUDA profiler API（cudaProfilerStart/Stop）开始和结束的采集区间：昇腾上用 torch_npu.profiler 的 schedule 或 msprof 自身的选项来限定采集的步数。',
    },
  },
  {
    re: /\bTORCH_CUDA_ARCH_LIST\b/,
    say: {
      en: 'TORCH_CUDA_ARCH_LIST picks the GPU architectures nvcc compiles for: nothing on Ascend reads it (remove it).',
      'zh-CN': 'TORCH_CUDA_ARCH_LIST 指定 nvcc 编译的 GPU 架构：昇腾上没有任何组件读取它（删除）。',
    },
  },
  {
    // a training script's switch that makes it import flash-attn (`--use_flash_attn`,
    // `--use_flash_attention`, kohya's bare `--xformers` (and its TOML config's `xformers = true`),
    // a config's `flash_attention: true` or `enable_xformers_memory_efficient_attention: True`,
    // `--attn_implementation flash_attention_2`, or a config's `attn_implementation:
    // flash_attention_2`, `attn_impl: flash` or `triton` in an MPT-style config, whose Triton
    // flash attention needs the old Triton it was written for, InvokeAI's `attention_type:
    // xformers`, latent-diffusion's `attn_type: "vanilla-xformers"`, and `loss_fn: fused_crossentropy`,
    // flash-attn's cross-entropy), and any setting whose value is `flash_attn` or SageAttention
    // (`implementation: flash_attn`, `ATTENTION_MECHANISM="sageattention"`): the Python side then
    // fails at that import
    re: /--(?:use[-_])?flash[-_]?att(?:n|ention)\w*\b|--(?:(?:enable|use)[-_]xformers[\w-]*|xformers)(?![\w-])|(?<=^\s*(?:(?:use|enable)_)?(?:flash_att(?:n|ention)(?:_2)?|xformers\w*)["']?\s*[:=]\s*)(?:true|True)\b|(?<=(?:--|\b)attn[-_]implementation["']?(?:[= ]|\s*[:=]\s*)["']?)flash_attention_2\b|(?<=\b\w*(?:attn|attention)_(?:impl|implementation|type|backend)["']?\s*[:=]\s*["']?)(?:[a-z]+-)?(?:flash[-_]?attn\w*|flash|triton|xformers)(?![\w-])|(?<=\bloss_fn["']?\s*[:=]\s*["']?)fused_crossentropy\b|(?<=(?<!#egg)[:=][ \t]*["']?)(?:flash_attn|flash_attention_[23]|sage_?attention|sageattn)(?![\w.-])/,
    say: {
      en: 'Turns on flash-attn (or xformers, or a Triton flash-attention kernel), which has no NPU build: drop the switch (attention through SDPA, or torch_npu.npu_fusion_attention where the code offers it).',
      'zh-CN':
        '开启了没有 NPU 版本的 flash-attn（或 xformers、Triton 版 flash attention 内核）：去掉该开关（注意力走 SDPA，或代码支持时改用 torch_npu.npu_fusion_attention）。',
    },
  },
  {
    // PyTorch's CUDA wheels: `--index-url …/whl/cu121`, a uv index, `torch==2.1.0+cu118`, the
    // version from a variable (`+cu${CUDA_VER}`), Poetry's `torch = "2.1.2+cu118"` and
    // `{ version = "2.1.2+cu118", source = "pytorch" }`; a wheel's own URL has its build in its
    // name too (`whl/cu121/torch-2.1.0%2Bcu121-…whl`: both become cpu, a wheel that exists)
    re: /(?<=download\.pytorch\.org\/whl\/(?:nightly\/|test\/)?)cu(?:\d+\b|\$\{?\w+\}?)|(?<=download\.pytorch\.org\/whl\/(?:nightly\/|test\/)?cu\d+\/[\w.-]+-[\d.]+(?:%2B|\+))cu\d+\b|(?<=\btorch[\w-]*\s*==\s*[\d.]+|(?:\btorch[\w-]*|\bversion)\s*=\s*["'][\d.]+)\+cu(?:\d+\b|\$\{?\w+\}?)/,
    say: {
      en: "PyTorch's CUDA build: on Ascend install the CPU build (the torch_npu release for that torch runs it on the NPU).",
      'zh-CN': 'PyTorch 的 CUDA 版本：昇腾上安装 CPU 版本（再配上该 torch 版本对应的 torch_npu）。',
    },
    edit: (m) => (m[0].startsWith('+') ? '' : 'cpu'),
  },
  {
    // the CUDA build tag a script keeps in a variable for its wheel indexes
    // (`CUDA=${CUDA:-cu118}`, `ARG TORCH_CUDA=cu121`, `export CU_TAG="cu124"`)
    re: /(?<=^\s*(?:export\s+|ARG\s+|ENV\s+)?[A-Za-z_]\w*\s*[:?]?=\s*["']?(?:\$\{\w+:-)?)cu\d{2,3}\b/,
    say: {
      en: 'A CUDA build tag for the wheels this script installs: on Ascend use cpu (the CPU build of torch and its companions, with the matching torch_npu).',
      'zh-CN':
        '该脚本安装 wheel 时使用的 CUDA 构建标签：昇腾上改为 cpu（torch 及其配套库的 CPU 版本，再配上对应的 torch_npu）。',
    },
    edit: () => 'cpu',
  },
  {
    // a wheel index chosen through such a variable: `whl/${CUDA}`, PyG's `+${TORCH_CUDA}.html`,
    // DGL's `wheels/${CUDA_TAG}/`, a CI matrix's `${{ matrix.cuda }}`
    re: /(?<=download\.pytorch\.org\/whl\/|data\.pyg\.org\/whl\/torch-[^\s"'+]*\+|data\.dgl\.ai\/wheels\/(?:torch-[\d.]+\/)?)(?:\$\{\{\s*[\w.]*?(?:cu|CU)[\w.]*\s*\}\}|\$\{[A-Za-z_]*(?:cu|CU)\w*\}|\$[A-Za-z_]*(?:cu|CU)\w*)/,
    say: {
      en: 'A wheel index chosen by the CUDA version: on Ascend it must resolve to the CPU wheels (cpu), for the CPU build of torch that torch_npu runs on.',
      'zh-CN':
        '按 CUDA 版本选择的 wheel 索引：昇腾上必须指向 CPU 版 wheel（cpu），与 torch_npu 所依赖的 CPU 版 torch 对应。',
    },
  },
  {
    // DGL's CUDA wheels (`-f https://data.dgl.ai/wheels/cu121/repo.html`)
    re: /(?<=data\.dgl\.ai\/wheels\/(?:torch-[\d.]+\/)?)cu\d+\b/,
    say: {
      en: 'DGL built for CUDA: DGL has no NPU build. Install its CPU wheels (data.dgl.ai/wheels/repo.html); its graph kernels then run on the CPU.',
      'zh-CN':
        'CUDA 版 DGL：DGL 没有 NPU 版本。安装其 CPU 版 wheel（data.dgl.ai/wheels/repo.html），图算子将在 CPU 上运行。',
    },
  },
  {
    // conda's CUDA packages installed from a script (`conda install pytorch cudatoolkit=11.3`,
    // `micromamba create … pytorch-cuda=12.1`, a script's own `conda_install` wrapper), and the
    // specs only conda writes, wherever the command's line is continued: conda-forge's
    // `cuda-version=12.1` and a CUDA build string (`"pytorch=2.2.*=cuda*"`); PyTorch 0.3–0.4's
    // own CUDA packages (`conda install pytorch=0.3.1 torchvision cuda90 -c pytorch`)
    re: /(?<=\b(?:conda|mamba|micromamba)(?:\s+|_)(?:install|create)\b.*)(?<![\w/-])(?<!(?:-n|--name|-p|--prefix)[ \t=]+)(?:cudatoolkit|pytorch-cuda|cuda-toolkit|cuda-runtime|cudnn|cuda[89]\d|cuda100)(?:[=<>][\w.*]*)?(?![\w-])|(?<![\w-])cuda-version\s*[=<>]=?\s*[\d.*]+|(?<=\bpytorch=[\w.*]+=)\*?cuda\w*\*?/,
    say: {
      en: "conda's CUDA packages: on Ascend install torch's CPU build (pip, with the matching torch_npu) and leave the CUDA toolkit out; CANN provides the NPU runtime.",
      'zh-CN':
        'conda 的 CUDA 包：昇腾上安装 torch 的 CPU 版本（pip，配上对应的 torch_npu），不装 CUDA 工具包；NPU 运行时由 CANN 提供。',
    },
  },
  {
    // uv's sources pinned to an index named for a CUDA build (`{ index = "pytorch-cu121" }`)
    re: /(?<=\bindex\s*=\s*["'])[\w.-]*?cu\d+[\w.-]*(?=["'])/,
    say: {
      en: 'A uv source pinned to a CUDA wheel index: on Ascend take torch from the CPU index (the torch_npu release for that torch runs it on the NPU).',
      'zh-CN':
        'uv 的 source 指向 CUDA 版本的 wheel 索引：昇腾上从 CPU 索引安装 torch（再配上该 torch 版本对应的 torch_npu）。',
    },
  },
  {
    // a research script's multi-GPU switch (Time-Series-Library, Informer): its DataParallel path
    re: /--use[-_]multi[-_]gpus?\b/,
    say: {
      en: "Turns on the script's multi-GPU path (nn.DataParallel over --devices), which torch_npu does not support: launch one process per NPU with torchrun and DDP on hccl, or drop the switch for one NPU.",
      'zh-CN':
        '开启脚本的多 GPU 路径（按 --devices 使用 nn.DataParallel），torch_npu 不支持：改用 torchrun 每张 NPU 一个进程、基于 hccl 的 DDP，或单卡时去掉该开关。',
    },
  },
  {
    // PyG's wheels for a CUDA build of torch (`-f https://data.pyg.org/whl/torch-2.1.0+cu118.html`)
    re: /(?<=data\.pyg\.org\/whl\/torch-[\d.]+)\+cu\d+\b/,
    say: {
      en: "PyG's wheels for CUDA: on Ascend the CPU ones (+cpu), for the CPU build of torch that torch_npu runs on.",
      'zh-CN':
        'PyG 的 CUDA 版 wheel：昇腾上使用 CPU 版（+cpu），与 torch_npu 所依赖的 CPU 版 torch 对应。',
    },
    edit: () => '+cpu',
  },
  {
    // ffmpeg on NVIDIA's video hardware: `-hwaccel cuda`, `-c:v h264_nvenc`, `-c:v hevc_cuvid`
    re: /(?<![\w-])-hwaccel\s+(?:cuda|cuvid|nvdec)\b|\b(?:h264|hevc|av1|vp[89]|mpeg[124]|mjpeg|vc1)_(?:cuvid|nvenc|nvdec)\b/,
    say: {
      en: "ffmpeg on NVIDIA's NVDEC / NVENC: not on an Ascend host. Decode and encode on the CPU (h264, hevc; libx264, libx265), or with Ascend DVPP.",
      'zh-CN':
        'ffmpeg 使用 NVIDIA 的 NVDEC / NVENC：昇腾主机上没有。改为在 CPU 上编解码（h264、hevc；libx264、libx265），或使用昇腾 DVPP。',
    },
  },
  {
    // a Ray node started with GPUs: its NPUs are Ray's resource "NPU", found by Ray itself
    re: /(?<=\bray\s+start\b.*)--num-gpus\b/,
    say: {
      en: 'ray start --num-gpus declares GPUs: an Ascend node\'s NPUs are Ray\'s resource "NPU" (detected, or --resources=\'{"NPU": n}\'); tasks ask for them with resources={"NPU": n}.',
      'zh-CN':
        'ray start --num-gpus 声明的是 GPU：昇腾节点的 NPU 在 Ray 中是资源 "NPU"（自动识别，或 --resources=\'{"NPU": n}\'）；任务用 resources={"NPU": n} 申请。',
    },
  },
  {
    // a project's CUDA requirements set installed (`pip install -r requirements-cuda.txt`,
    // vLLM's `requirements/cuda.txt`), or its CUDA build target (`make build-vllm-cuda`, a
    // Makefile's `install: install-cuda`; the CUDA targets' own rules and .PHONY are left)
    re: /(?<=(?:^|\s)(?:-r|--requirement)(?:=|\s+))\S*cuda[\w.-]*\.(?:txt|in)\b|(?<=\bmake\s+(?:-\S+\s+)*)[\w.-]*cuda[\w.-]*|(?<=^(?![\w.-]*cuda)\w[\w.-]*\s*:(?!=)[^#\n]*\s)[\w.-]+-cuda\b/,
    say: {
      en: "The project's CUDA set-up: its CUDA requirements or CUDA build target. On Ascend install the CPU torch build with torch_npu and the project's NPU (or CPU) set, and build no CUDA target.",
      'zh-CN':
        '项目的 CUDA 配置：CUDA 依赖集或 CUDA 构建目标。昇腾上安装 CPU 版 torch 加 torch_npu，以及项目的 NPU（或 CPU）依赖集，不构建 CUDA 目标。',
    },
  },
  {
    // a config switching on an apex kernel (`use_apex_gn: true`, `apex: True`)
    re: /(?<=^\s*["']?\w*apex\w*["']?\s*:\s*)(?:true|True)\b/,
    say: {
      en: "Switches on NVIDIA apex (CUDA kernels, no NPU build): set it off, so the model uses torch's own op (or torch_npu's fused one).",
      'zh-CN':
        '开启了 NVIDIA apex（CUDA 内核，没有 NPU 版本）：关闭它，让模型使用 torch 自带的算子（或 torch_npu 的融合算子）。',
    },
  },
  {
    // Horovod built on NCCL for GPU tensors (`HOROVOD_GPU_OPERATIONS=NCCL`, `HOROVOD_NCCL_LINK`)
    re: /\bHOROVOD_(?:GPU|NCCL|CUDA)_\w+/,
    say: {
      en: "Builds Horovod's GPU collectives on NCCL: Horovod has no HCCL build. Use torch.distributed with the hccl backend (DistributedDataParallel) instead.",
      'zh-CN':
        '把 Horovod 的 GPU 集合通信构建在 NCCL 上：Horovod 没有 HCCL 版本。改用 torch.distributed 的 hccl 后端（DistributedDataParallel）。',
    },
  },
  {
    // a switch putting FAISS's index on the GPU (`--faiss_on_gpu`, `--use-gpu-faiss`)
    re: /(?<![\w-])--?[\w-]*(?:faiss[\w-]*gpu|gpu[\w-]*faiss)[\w-]*/,
    say: {
      en: 'Puts the FAISS index on the GPU: faiss-gpu is a CUDA build, an Ascend host has faiss-cpu. Drop the switch (the index stays on the CPU).',
      'zh-CN':
        '把 FAISS 索引放到 GPU 上：faiss-gpu 是 CUDA 构建，昇腾主机上只有 faiss-cpu。去掉该开关（索引留在 CPU 上）。',
    },
  },
  {
    // a library's CuPy kernels chosen on the command line (SpikingJelly's `-cupy`, `--cupy`)
    re: /(?<![\w-])--?(?:use[-_])?cupy(?![\w-])/,
    say: {
      en: "Chooses the library's CuPy (CUDA) kernels: CuPy needs a CUDA driver. Drop the switch so its torch backend runs on the NPU.",
      'zh-CN':
        '选择了库的 CuPy（CUDA）内核：CuPy 需要 CUDA 驱动。去掉该开关，使用库的 torch 后端在 NPU 上运行。',
    },
  },
  {
    // torchrun's "one process per GPU" count: it counts CUDA devices, none on an Ascend host
    re: /(?<=--nproc[_-]per[_-]node(?:=|\s+)["']?)gpu\b/,
    say: {
      en: 'torchrun --nproc_per_node gpu counts CUDA GPUs and stops with "Cuda is not available" on an Ascend host: give the number of NPUs per node (npu-smi info lists them).',
      'zh-CN':
        'torchrun --nproc_per_node gpu 统计的是 CUDA GPU，在昇腾主机上会以 "Cuda is not available" 退出：写明每个节点的 NPU 数量（npu-smi info 可列出）。',
    },
  },
  {
    // a Ray cluster's nodes declaring GPUs (`resources: {"CPU": 32, "GPU": 8}`): "NPU" on Ascend
    re: /(?<=\bresources["']?\s*[:=]\s*["']?\{[^}]*["'])GPU(?=["']\s*:)/,
    say: {
      en: 'A Ray node\'s "GPU" resource: an Ascend node\'s NPUs are Ray\'s resource "NPU" (tasks then ask for resources={"NPU": n}).',
      'zh-CN':
        'Ray 节点的 "GPU" 资源：昇腾节点的 NPU 在 Ray 中是资源 "NPU"（任务再用 resources={"NPU": n} 申请）。',
    },
    edit: () => 'NPU',
  },
  {
    // Ray's accelerator type named for an NVIDIA GPU (`"accelerator_type:A100": 8`)
    re: /\baccelerator_type:(?:[AHLTVB]\d{1,3}[A-Z]?|A10G|RTX\w*|NVIDIA\w*)\b/,
    say: {
      en: 'Ray\'s accelerator type names an NVIDIA GPU: no Ascend node has it. Ask for the "NPU" resource instead (a custom resource names the NPU model, e.g. Ascend910B, if tasks must tell them apart).',
      'zh-CN':
        'Ray 的 accelerator_type 指定了 NVIDIA GPU 型号：昇腾节点没有。改为申请 "NPU" 资源（若任务需要区分型号，用自定义资源命名 NPU 型号，如 Ascend910B）。',
    },
  },
  {
    // CMake building for CUDA: the language (fails without nvcc), the toolkit, its libraries
    re: /^\s*project\s*\((?=[^)]*\bLANGUAGES\b)[^)]*\bCUDA\b|\benable_language\s*\(\s*CUDA\b|\bfind_package\s*\(\s*(?:CUDA|CUDAToolkit)\b|\bCUDA::\w+/,
    say: {
      en: 'CMake builds for CUDA (its language, toolkit or libraries), which an Ascend host does not have: build the NPU operators with CANN (Ascend C, registered through torch_npu), or leave the CUDA part out of the build.',
      'zh-CN':
        'CMake 为 CUDA 构建（CUDA 语言、工具包或其库），昇腾主机上没有这些：NPU 算子用 CANN 构建（Ascend C，通过 torch_npu 注册），或把 CUDA 部分移出构建。',
    },
  },
  {
    // a container given NVIDIA GPUs: `docker run --gpus all`, compose's `runtime: nvidia`,
    // nvidia-docker 1's `NV_GPU=0,1 nvidia-docker run` (and its wrapper run alone, in a Makefile)
    re: /(?<![\w-])--gpus(?:=|\s+)\S+|(?<=\bruntime:\s*["']?|--runtime[= ])nvidia\b|(?<=\bdriver:\s*["']?)nvidia\b|\bNV_GPU=|(?<![\w/-])nvidia-docker(?=[ \t]+(?:run|create)\b)/,
    say: {
      en: "Gives a container NVIDIA GPUs: with Ascend-Docker-Runtime pass ASCEND_VISIBLE_DEVICES (or map /dev/davinci*, /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc and the driver's folder).",
      'zh-CN':
        '为容器分配 NVIDIA GPU：使用 Ascend-Docker-Runtime 时传入 ASCEND_VISIBLE_DEVICES（或映射 /dev/davinci*、/dev/davinci_manager、/dev/devmm_svm、/dev/hisi_hdc 及驱动目录）。',
    },
  },
  {
    // bitsandbytes' 8-bit and paged optimizers chosen by name: HF's `--optim adamw_bnb_8bit`,
    // axolotl's `optimizer: paged_adamw_8bit`, kohya's `--optimizer_type AdamW8bit`
    re: /(?<=\b\w*optim\w*["']?\s*[:=]\s*["']?|--\w*optim\w*[= ]["']?)(?:\w*(?:bnb|8bit|paged)\w*)(?![\w-])/i,
    say: {
      en: "A bitsandbytes 8-bit or paged optimizer: CUDA kernels, none for NPU (bitsandbytes' Ascend path covers NF4 quantisation only): use adamw_torch, or torch_npu's fused AdamW.",
      'zh-CN':
        'bitsandbytes 的 8 位或分页优化器：只有 CUDA 内核，没有 NPU 版本（bitsandbytes 的昇腾支持只覆盖 NF4 量化）：改用 adamw_torch 或 torch_npu 的融合 AdamW。',
    },
  },
  {
    // mmcv's prebuilt CUDA ops: OpenMMLab's CUDA wheel index, or mim choosing that wheel
    re: new RegExp(
      `${MMCV_CUDA_INDEX.source}|\\bmim\\s+install\\s+(?:-\\S+\\s+)*["']?mmcv(?:-full)?\\b`,
    ),
    say: {
      en: "mmcv's prebuilt wheel for a CUDA version, its ops CUDA kernels: on Ascend build mmcv from source with its NPU ops (mmcv's Ascend build guide), or mmcv-lite where no op is used.",
      'zh-CN':
        'mmcv 针对某个 CUDA 版本的预编译轮子，其算子是 CUDA 内核：昇腾上按 mmcv 的昇腾编译指南从源码构建带 NPU 算子的 mmcv；不用算子时可用 mmcv-lite。',
    },
  },
  {
    // a serving framework's CUDA base chosen by version (BentoML's `cuda_version: "12.1"`)
    re: /^\s*cuda_version(?=["']?\s*:)/,
    say: {
      en: 'A CUDA version the build installs its base from: on Ascend remove it and build on an image with CANN (e.g. ascendai/cann) with torch_npu installed.',
      'zh-CN':
        '构建据此安装 CUDA 基础环境的版本号：昇腾上删除该项，改用带 CANN 的镜像（如 ascendai/cann）并安装 torch_npu。',
    },
  },
  {
    // TensorRT's command-line engine builder
    re: /(?<![\w./-])trtexec(?![\w-])/,
    say: {
      en: "TensorRT's engine builder, NVIDIA-only: on Ascend convert the ONNX model to an offline model with ATC (atc --model=model.onnx --framework=5 --output=model --soc_version=<the SoC npu-smi reports>), or keep the model in PyTorch on the NPU.",
      'zh-CN':
        'TensorRT 的引擎构建工具，仅限 NVIDIA：昇腾上用 ATC 把 ONNX 模型转换为离线模型（atc --model=model.onnx --framework=5 --output=model --soc_version=<npu-smi 显示的芯片型号>），或让模型以 PyTorch 形式在 NPU 上运行。',
    },
  },
  {
    // NCCL's own packages installed into an image (`apt-get install libnccl2 libnccl-dev`)
    re: /(?<![\w-])libnccl[\w.=-]*/,
    say: {
      en: "NCCL's library: Ascend collectives are HCCL, which comes with CANN (remove the package).",
      'zh-CN': 'NCCL 的库：昇腾的集合通信是 CANN 自带的 HCCL（删除该包）。',
    },
  },
  {
    // Hugging Face's TF32 switch in a config or on the command line (`tf32: true`, `--tf32 True`)
    re: /(?<=^\s*["']?tf32["']?\s*:\s*)(?:true|True)\b|(?<![\w-])--tf32(?:[= ](?:True|true|1)\b)/,
    say: {
      en: 'TF32 asked of transformers: it stops with "--tf32 requires Ampere or a newer GPU arch" on NPU. Drop it (set it False); float32 matmuls on NPU are controlled by torch.npu.matmul.allow_hf32.',
      'zh-CN':
        '向 transformers 请求 TF32：在 NPU 上会报 "--tf32 requires Ampere or a newer GPU arch" 并停止。去掉它（设为 False）；NPU 上 float32 矩阵乘由 torch.npu.matmul.allow_hf32 控制。',
    },
  },
  {
    // the CUDA toolkit's own libraries as system packages (`apt-get install libcudnn8
    // libnvjpeg-dev-11-8 cuda-nvcc-12-1`)
    re: /(?<![\w./-])(?:libcudnn\d*|libnvjpeg|libcublas(?:lt)?|libcusparse(?:lt)?|libcufft|libcurand|libcusolver|libnvinfer\d*|libnpp\w*|cuda-(?:toolkit|nvcc|libraries|cudart|compiler|runtime|command-line-tools)(?=-\d|[-\s=\\]|$))[\w.=+~-]*/,
    say: {
      en: "A CUDA library's system package: an Ascend host has none and needs none (CANN provides the NPU's runtime and libraries); remove it.",
      'zh-CN':
        'CUDA 库的系统软件包：昇腾主机上没有也不需要（NPU 的运行时与库由 CANN 提供）；删除该包。',
    },
  },
  {
    // mixed precision through apex chosen in a config (`amp_backend: apex`, `backend: apex`)
    re: /(?<=\b\w*backend["']?\s*[:=]\s*["']?)apex(?![\w.-])/,
    say: {
      en: 'Mixed precision through NVIDIA apex, which has no NPU build: choose the native backend (torch.autocast on the NPU with a GradScaler).',
      'zh-CN':
        '通过 NVIDIA apex 做混合精度，apex 没有 NPU 版本：改用原生后端（NPU 上的 torch.autocast 配合 GradScaler）。',
    },
    edit: () => 'native',
  },
  {
    // a config naming apex's CUDA fused optimizers: `optim_G: FusedAdam`, `name: fused_adam`,
    // `type: sat.ops.FusedEmaAdam`, OpenNMT's `optim: "fusedadam"`, NeMo's `distributed_fused_adam`,
    // timm's `--opt fusedlamb` on a command line
    re: /(?<=(?::[ \t]*|--\w*opt\w*(?:=|\s+))["']?(?:[\w]+\.)*)(?:Fused\w*?(?:Adam[Ww]?|SGD|LAMB|Lamb|NovoGrad|Adagrad)|(?:(?:distributed|apex)_)?fused_?(?:adamw?|sgd|lamb|novograd|adagrad))(?![\w-])/,
    say: {
      en: "apex's fused optimizer, CUDA kernels: on NPU the torch_npu one (torch_npu.optim.NpuFusedAdamW, NpuFusedSGD, NpuFusedLamb…) or torch's own (AdamW, SGD).",
      'zh-CN':
        'apex 的融合优化器（CUDA 内核）：NPU 上改用 torch_npu 的（torch_npu.optim.NpuFusedAdamW、NpuFusedSGD、NpuFusedLamb…）或 torch 自带的（AdamW、SGD）。',
    },
  },
  {
    // Python inside a script (`python -c "…"`, a here-document): torch.cuda there as anywhere
    re: /\btorch\.cuda\.(?:is_available|device_count|get_device_name|get_device_properties|current_device|set_device|mem_get_info|memory_allocated|max_memory_allocated|empty_cache|synchronize|is_bf16_supported|get_device_capability)\b/,
    say: {
      en: 'torch.cuda in inline Python: import torch_npu in that snippet and ask torch.npu (torch.npu.is_available(), torch.npu.device_count()…).',
      'zh-CN':
        '内联 Python 中的 torch.cuda：在该片段中 import torch_npu，改用 torch.npu（torch.npu.is_available()、torch.npu.device_count()…）。',
    },
  },
  {
    // an image build that insists on a CUDA build of torch (`assert torch.version.cuda is not None`):
    // the CPU torch under torch_npu has none, so the build stops there; printing it stays quiet
    re: /\bassert\s+(?:not\s+)?torch\.version\.cuda\b/,
    say: {
      en: 'Asserts a CUDA build of torch: the torch under torch_npu has torch.version.cuda None; assert that torch_npu imports and torch.npu.is_available() instead.',
      'zh-CN':
        '断言 torch 为 CUDA 版本：torch_npu 所配的 torch 中 torch.version.cuda 为 None；改为断言 torch_npu 可导入且 torch.npu.is_available()。',
    },
  },
  {
    // `backend: nccl`, `process_group_backend: nccl` (Lightning), `--distributed-backend nccl`,
    // OpenNMT's one-dash `-gpu_backend nccl`, torchpack's `--dist.backend nccl`, Habitat's Hydra
    // override `distrib_backend=NCCL` (the case kept)
    re: /(?<=\b\w*(?:backend|BACKEND)["']?\s*[:=]\s*["']?|(?<![\w-])--?(?:[\w.-]*[-_.])?backend[= ]["']?)(?:nccl|NCCL)\b/,
    say: { en: 'Backend nccl: use hccl.', 'zh-CN': '后端 nccl：改用 hccl。' },
    edit: (m) => (m[0] === 'NCCL' ? 'HCCL' : 'hccl'),
  },
  {
    // `device: cuda`, `sim_device: cuda:0`, `device_type: cuda`, `--device cuda`, `--rl_device cuda:0`,
    // `DEVICE=${DEVICE:-cuda:0}`, a bundle config's `map_location: cuda:0`, an exec-form
    // `CMD ["--device", "cuda"]`, SpikingJelly's `-device cuda:0`, a yacs override on a command line
    // (`MODEL.DEVICE "cuda:0"`), TabNet's `"device_name": "cuda"`, nerfstudio's
    // `--machine.device-type cuda`, a short `-d cuda:0` (Demucs, Kraken's ketos)
    re: /(?<=\b(?:\w*(?:device|DEVICE)(?:_type|_TYPE|_name|_NAME)?|map_location)["']?\s*[:=]\s*["']?(?:\$\{\w+:-)?|(?<![\w-])--?(?:[\w.-]*[-_.])?device(?:[-_]type)?(?:[= ]|["']\s*,\s*)["']?|(?<![\w-])-d[ \t]+["']?|\b[A-Z]\w*\.(?:DEVICE|device)\s+["']?)cuda\b/,
    say: DEVICE_CUDA,
    edit: () => 'npu',
  },
  {
    // a CUDA device with its index given to a flag of any other name (`--gpu cuda:0`,
    // `--dev=cuda:1`): the index makes it a device, whatever the flag is called
    // (the look-ahead first: the look-behind is tried only where `cuda:N` stands; an image
    // tag's version, `cuda:11.8`, is no index)
    re: /(?=cuda:\d+(?![\w.]))(?<=(?<![\w-])--?(?![\w.-]*device|d[= \t])[A-Za-z][\w.-]*(?:=|[ \t]+)["']?)cuda/,
    say: DEVICE_CUDA,
    edit: () => 'npu',
  },
  {
    // a config's device given as the GPU (`device: gpu`, `device_type: "gpu"`, CatBoost's
    // `task_type: GPU`): the whole value of a key of its own line
    re: /(?<=^\s*["']?(?:\w*_)?(?:device|DEVICE|device_type|DEVICE_TYPE|task_type)["']?\s*[:=]\s*["']?)(?:gpu|GPU)(?=["']?\s*(?:#.*)?$)/,
    say: {
      en: 'Device "gpu": on Ascend use "npu" where the framework takes it; a library with only CPU and GPU builds (LightGBM, CatBoost, XGBoost, DALI) takes "cpu" (CatBoost: task_type CPU).',
      'zh-CN':
        '设备 "gpu"：昇腾上若框架支持则改为 "npu"；只有 CPU 与 GPU 版本的库（LightGBM、CatBoost、XGBoost、DALI）改为 "cpu"（CatBoost：task_type 为 CPU）。',
    },
  },
  {
    // a dataframe backend chosen as RAPIDS' cuDF (`backend: cudf`)
    re: /(?<=\b\w*(?:backend|BACKEND)["']?\s*[:=]\s*["']?)(?:cudf|cuDF|dask_cudf)(?![\w-])/,
    say: {
      en: "cuDF, RAPIDS' GPU dataframes: no Ascend build. Use pandas (or Polars, Dask on the CPU).",
      'zh-CN':
        'cuDF（RAPIDS 的 GPU 数据帧）：没有昇腾版本。改用 pandas（或 Polars、CPU 上的 Dask）。',
    },
  },
  {
    // any other setting whose whole value is CUDA (or CUTLASS): a kernel backend (xLSTM's
    // `backend: cuda`, `kernel_backend: cutlass`),
    // nvdiffrast's `context_type: cuda`, a simulator's `platform: CUDA`, an implementation named
    // for its CUDA kernel (RAFT-Stereo's `corr_implementation: reg_cuda`) (device keys above,
    // accelerators below)
    re: /(?<=^\s*(?:-\s*|(?:ENV|ARG|export)\s+)?["']?[\w.-]*(?<!device|DEVICE|device_type|DEVICE_TYPE|device_name|DEVICE_NAME|map_location|accelerator)["']?\s*[:=]\s*["']?)(?:cuda|CUDA|Cuda|cutlass|CUTLASS|[a-z]\w*_cuda)(?=["']?\s*(?:#.*)?$)/,
    say: {
      en: "A setting that chooses CUDA (a kernel backend, a context, a platform): an Ascend host has none. Choose the library's PyTorch / native implementation, or its NPU one where it has one.",
      'zh-CN':
        '该设置选择了 CUDA（内核后端、上下文或平台）：昇腾主机上没有 CUDA。改选该库的 PyTorch / 原生实现，或其 NPU 实现（若有）。',
    },
  },
  {
    // CUDA graphs turned on from a config or a flag (`cuda_graph: true`, `use_cuda_graph=1`,
    // `--cudagraphs`)
    re: /(?<=\b\w*cuda_?graphs?\w*["']?\s*[:=]\s*["']?)(?:true|True|TRUE|1|yes)\b|(?<![\w-])--(?:(?:use|enable)[-_])?cuda[-_]?graphs?(?![\w-])/,
    say: {
      en: "Turns on CUDA graphs, which an Ascend host does not have: turn it off (torch_npu's graph capture, torch.npu.NPUGraph, is the NPU's counterpart where the framework supports it).",
      'zh-CN':
        '开启了 CUDA Graph，昇腾主机上没有：关闭该选项（NPU 上对应的是 torch_npu 的图捕获 torch.npu.NPUGraph，需框架支持）。',
    },
  },
  {
    // Lightning's Trainer from a config or its CLI: `accelerator: gpu`, `--trainer.accelerator gpu`
    re: /(?<=\b(?:accelerator|ACCELERATOR)["']?\s*[:=]\s*["']?|--(?:trainer\.)?accelerator[= ]["']?)(?:gpu|cuda)\b/,
    say: {
      en: 'accelerator gpu selects Lightning\'s CUDA accelerator, which finds no GPU on an Ascend host: give the Trainer an NPU accelerator (an Accelerator on torch.npu registered as "npu", or your Lightning NPU adapter\'s).',
      'zh-CN':
        'accelerator gpu 选择的是 Lightning 的 CUDA 加速器，在昇腾主机上找不到 GPU：为 Trainer 提供 NPU 加速器（基于 torch.npu、注册为 "npu" 的 Accelerator，或所用 Lightning NPU 适配包提供的加速器）。',
    },
  },
  {
    // Lightning's DDP or FSDP by name from a config or its CLI: `strategy: ddp`,
    // `--trainer.strategy=fsdp`
    re: /(?<=\bstrategy["']?\s*[:=]\s*["']?|--(?:trainer\.)?strategy[= ]["']?)(?:ddp(?:_spawn|_fork|_notebook)?(?:_find_unused_parameters_(?:true|false))?|fsdp(?:_cpu_offload)?)\b/,
    say: {
      en: 'Lightning\'s DDP or FSDP named as a string picks gloo for a device that is not CUDA, and gloo does not reduce NPU tensors: give the Trainer DDPStrategy(process_group_backend="hccl") (in a config: class_path lightning.pytorch.strategies.DDPStrategy, init_args process_group_backend: hccl).',
      'zh-CN':
        '以字符串指定的 Lightning DDP / FSDP 在设备不是 CUDA 时选用 gloo，而 gloo 不能对 NPU 张量做归约：为 Trainer 传入 DDPStrategy(process_group_backend="hccl")（配置中写 class_path lightning.pytorch.strategies.DDPStrategy，init_args 中 process_group_backend: hccl）。',
    },
  },
  {
    // Lightning 1.x named its distributed mode as the accelerator: `accelerator: ddp`,
    // `--accelerator="ddp"`
    re: /(?<=\baccelerator["']?\s*[:=]\s*["']?|--(?:trainer\.)?accelerator[= ]["']?)ddp(?:_spawn|2)?(?![\w-])/,
    say: {
      en: 'accelerator ddp is Lightning 1.x\'s DDP over NCCL on CUDA GPUs, and those releases know no NPU: move to a Lightning with an NPU accelerator and give it strategy DDPStrategy(process_group_backend="hccl").',
      'zh-CN':
        'accelerator ddp 是 Lightning 1.x 在 CUDA GPU 上基于 NCCL 的 DDP，这些版本不认识 NPU：升级到带 NPU 加速器的 Lightning，并传入 strategy DDPStrategy(process_group_backend="hccl")。',
    },
  },
  {
    // a Python expression in a config (a MONAI bundle's `device: $torch.device('cuda:0' if …)`);
    // a line that also asks torch.cuda is told once, by the inline-Python pattern
    re: /(?<=\btorch\.device\(\s*f?["'])cuda\b(?!.*\btorch\.cuda\b)/,
    say: DEVICE_CUDA,
    edit: () => 'npu',
  },
  {
    // accelerate's config: `distributed_type: MULTI_GPU`
    re: /(?<=\bdistributed_type["']?\s*[:=]\s*["']?)MULTI_GPU\b/,
    say: {
      en: 'accelerate on several NPUs is MULTI_NPU.',
      'zh-CN': '多卡 NPU 上的 accelerate 配置为 MULTI_NPU。',
    },
    edit: () => 'MULTI_NPU',
  },
  {
    // an NVIDIA image wherever it is named: a Dockerfile's FROM or `ARG BASE_IMAGE=`, a CI job's
    // or compose service's `image:`, `docker run … nvcr.io/…` (not a URL's path: github.com/nvidia/…)
    // — a serving engine's CUDA build (`vllm/vllm-openai`, `lmsysorg/sglang`; not its -npu tags)
    // — and a project's own image tagged for a CUDA version (`FROM base:2.1-cu121`, `image: x:cu118`)
    // or built on NGC's (`#SBATCH --image=nersc/pytorch:ngc-22.02-v0`, a Shifter image); PyTorch's
    // own image is a CUDA build whatever its tag says (`FROM pytorch/pytorch:${IMAGE_TAG}`), and a
    // tag kept in an ARG of its own is one for a CUDA version (`ARG TAG=1.13.1-cuda11.6-cudnn8-runtime`)
    re: /(?<=^\s*FROM\s+(?:--\S+\s+)*)pytorch\/pytorch(?::\S*)?(?=\s|$)|(?<=^\s*ARG\s+\w+=["']?)[\w.-]*?\d[\w.]*-cuda-?\d[\w.-]*|(?<![\w./-])(?:nvidia\/cuda(?:gl)?(?::\S*)?(?![\w/-])|nvcr\.io\/\S+|pytorch\/pytorch:\S*cuda\S*|(?:vllm\/vllm-openai|lmsysorg\/sglang)(?::(?![\w.-]*(?:npu|cann|ascend))\S*)?(?![\w/:-]))|(?<=^\s*(?:FROM\s+|-?\s*image:\s*["']?|ARG\s+\w*IMAGE\w*=["']?)|(?<![\w-])--image[= ]["']?)[\w./-]+:[\w.-]*?(?<![A-Za-z0-9])(?:cu(?:da)?-?|ngc-?)\d[\w.-]*/i,
    say: {
      en: "CUDA container image (NVIDIA CUDA base, NGC, a serving engine's CUDA build, or one tagged for a CUDA version): build on an Ascend image with CANN (e.g. ascendai/cann; for vLLM, vllm-ascend's image quay.io/ascend/vllm-ascend) instead.",
      'zh-CN':
        'CUDA 容器镜像（NVIDIA CUDA 基础镜像、NGC、推理引擎的 CUDA 版镜像或标注了 CUDA 版本的镜像）：改用带 CANN 的昇腾镜像（如 ascendai/cann；vLLM 用 vllm-ascend 的镜像 quay.io/ascend/vllm-ascend）。',
    },
  },
  {
    // Kubernetes: a pod's request for NVIDIA's device plugin resource (`nvidia.com/gpu: 8`)
    re: /\bnvidia\.com\/gpu(?![\w./-])/,
    say: {
      en: "nvidia.com/gpu is NVIDIA's device plugin resource: Ascend's device plugin offers NPUs as huawei.com/Ascend910 (Ascend310P on inference cards), and a pod without that resource gets no /dev/davinci* devices.",
      'zh-CN':
        'nvidia.com/gpu 是 NVIDIA 设备插件的资源名：昇腾设备插件提供的 NPU 资源为 huawei.com/Ascend910（推理卡为 Ascend310P），未申请该资源的 Pod 拿不到 /dev/davinci* 设备。',
    },
    edit: () => 'huawei.com/Ascend910',
  },
  {
    // NVIDIA's node labels in a nodeSelector / affinity (`nvidia.com/gpu.product: A100…`)
    re: /\bnvidia\.com\/(?:gpu|cuda|mig)[.-][\w.-]+/,
    say: {
      en: "A node label of NVIDIA's GPU feature discovery: Ascend nodes do not carry it, so the pod is never scheduled there; select Ascend nodes by the label your cluster gives them.",
      'zh-CN':
        'NVIDIA GPU 特性发现所打的节点标签：昇腾节点没有该标签，Pod 永远不会调度到昇腾节点；改用集群为昇腾节点设置的标签。',
    },
  },
  {
    // a serving engine's kernel library chosen by name: `--attention-backend flashinfer`,
    // `VLLM_ATTENTION_BACKEND=FLASH_ATTN`
    re: /(?<=--[\w-]*backend[= ]["']?|\b\w*(?:backend|BACKEND)["']?\s*[:=]\s*["']?)(?:flashinfer|FLASHINFER|flash_attn|FLASH_ATTN|fa3|FA3)\b/,
    say: {
      en: "FlashInfer / FlashAttention kernels are CUDA-only: on Ascend drop the choice and let the engine use its NPU backend (vllm-ascend, the engine's Ascend attention backend).",
      'zh-CN':
        'FlashInfer / FlashAttention 内核只支持 CUDA：昇腾上去掉该选择，让推理引擎使用其 NPU 后端（vllm-ascend、引擎的昇腾注意力后端）。',
    },
  },
  {
    // Triton Inference Server's instance group on GPUs (config.pbtxt)
    re: /\bKIND_GPU\b/,
    say: {
      en: "Triton Inference Server's GPU instance group places the model on CUDA devices only: use KIND_MODEL and let the model put itself on the NPU (drop `gpus: [...]`).",
      'zh-CN':
        'Triton Inference Server 的 GPU 实例组只会把模型放到 CUDA 设备上：改用 KIND_MODEL，由模型自己放到 NPU 上（并去掉 `gpus: [...]`）。',
    },
    edit: () => 'KIND_MODEL',
  },
  {
    // XGBoost's GPU tree method and predictor in a config (`tree_method: gpu_hist`)
    re: /\bgpu_(?:hist|exact|predictor)\b/,
    say: {
      en: "XGBoost's GPU algorithm: it needs a CUDA build and an NVIDIA GPU; on an Ascend host train on the CPU (hist / exact, cpu_predictor).",
      'zh-CN':
        'XGBoost 的 GPU 算法：需要 CUDA 版本和 NVIDIA GPU；在昇腾主机上用 CPU 训练（hist / exact、cpu_predictor）。',
    },
    edit: (m) => (m[0] === 'gpu_predictor' ? 'cpu_predictor' : m[0].slice(4)),
  },
  {
    // a CI job on a GPU runner (`runs-on: [self-hosted, gpu, a100]`, `runs-on: linux.aws.a100`)
    re: /(?<=\bruns-on:.*)(?<![\w-])(?:gpu|(?:single|multi|nvidia)-gpu|nvidia|a10g?|a100|h100|h200|h20|l4|l40s?|t4|v100|rtx\w*)(?![\w-])/,
    say: {
      en: 'A CI job on an NVIDIA GPU runner: on Ascend run it on a runner with NPUs (a self-hosted Ascend host, labelled for it).',
      'zh-CN':
        '在 NVIDIA GPU 运行器上执行的 CI 任务：昇腾上改在带 NPU 的运行器上执行（自托管的昇腾主机，并为其打上标签）。',
    },
  },
  {
    // a norm chosen by its CUDA kernel (torchtitan's `norm_type = "fused_rmsnorm"`, a model
    // config's `norm_type: TELayerNorm`)
    re: /(?<=\b\w*(?:norm|NORM)\w*["']?\s*[:=]\s*["']?)(?:fused_rms_?norm|fused_layer_?norm|FusedLayerNorm|FusedRMSNorm|TELayerNorm|TERMSNorm|te_layernorm|te_rmsnorm)(?![\w-])/,
    say: {
      en: "A norm computed by a CUDA kernel (a Triton fused RMSNorm, apex's FusedLayerNorm, Transformer Engine's): choose the plain one (rmsnorm / layernorm), or torch_npu.npu_rms_norm where the code offers it.",
      'zh-CN':
        '由 CUDA 内核计算的归一化（Triton 融合 RMSNorm、apex 的 FusedLayerNorm、Transformer Engine 的）：改选普通实现（rmsnorm / layernorm），代码支持时可用 torch_npu.npu_rms_norm。',
    },
  },
  {
    // a CUDA tensor type handed to the code by a launcher or config (Pyro's Makefile runs its
    // tests with `PYRO_TENSOR_TYPE=torch.cuda.DoubleTensor`): the code makes it its default
    re: /\btorch\.cuda\.[A-Z]\w*Tensor\b/,
    say: {
      en: 'A CUDA tensor type passed to the code: on NPU pass a CPU type (torch.FloatTensor) and set the device to npu (torch.set_default_device("npu")); NPUs compute matmuls in float32, not float64.',
      'zh-CN':
        '传给代码的是 CUDA 张量类型：NPU 上改传 CPU 类型（torch.FloatTensor），并把设备设为 npu（torch.set_default_device("npu")）；NPU 的矩阵乘以 float32 计算，不支持 float64。',
    },
  },
  {
    // a clone of NVIDIA's apex (its CUDA extensions are what the build is for)
    re: /\bgithub\.com\/NVIDIA\/apex\b/i,
    say: {
      en: "NVIDIA's apex: on Ascend build Ascend's apex (gitee.com/ascend/apex), whose amp and fused optimizers run on the NPU.",
      'zh-CN':
        'NVIDIA 的 apex：昇腾上改为构建昇腾的 apex（gitee.com/ascend/apex），其 amp 与融合优化器可在 NPU 上运行。',
    },
  },
];

/**
 * A line's first MAX_LINE characters are what the patterns read: their lookbehinds make a line
 * quadratic to read, and no hand-written script line is this long (a generated one is no porter's).
 */
const MAX_LINE = 2000;

export function scanScript(
  rel: string,
  src: string,
  lang: Language,
  finding: AddFinding,
  /** performance.now() past which the file is given up (TooCostly). */
  deadline = Infinity,
): void {
  const starts = newlineStarts(src);
  // the launcher's CANN environment is told where the script has something to port
  let found = false;
  const tell: AddFinding = (...args) => {
    found = true;
    finding(...args);
  };
  src.split('\n').forEach((whole, i) => {
    if (performance.now() > deadline) throw new TooCostly();
    const line = whole.length > MAX_LINE ? whole.slice(0, MAX_LINE) : whole;
    // comments are skipped, not a batch scheduler's directives (`#SBATCH --image=…`)
    if (/^\s*#/.test(line) && !/^\s*#(?:!|SBATCH\b|PBS\b|BSUB\b)/.test(line)) return;
    for (const p of SCRIPT_PATTERNS) {
      const m = p.re.exec(line);
      if (!m) continue;
      // one finding a line, each match on it edited (`torch==…+cu121 --index-url …/whl/cu121`)
      const edit = p.edit;
      const edits = edit
        ? [...line.matchAll(new RegExp(p.re.source, 'g'))].map((e) => ({
            start: starts[i]! + e.index!,
            end: starts[i]! + e.index! + e[0].length,
            text: edit(e),
          }))
        : undefined;
      tell(
        'script.cuda-env',
        rel,
        { line: i + 1, column: m.index + 1, endColumn: m.index + m[0].length + 1 },
        {
          vars: { text: p.say[lang] },
          text: ruleMsg('script.cuda-env', 'message', { text: p.say }),
          edits,
        },
      );
    }
  });
  // the packages it installs: the same rules as a requirements file's; those inline Python imports
  scanInstallCommands(rel, src, tell, deadline);
  scanCloneCommands(rel, src, tell, deadline);
  scanInlineImports(rel, src, tell, deadline);
  // a distributed launch needs HCCL, which loads from CANN's environment, whatever else it says
  if (found || (SHELL_SCRIPT.test(rel) && DISTRIBUTED_LAUNCH.test(src.replace(COMMENT_LINE, ''))))
    cannEnvironment(rel, src, starts, finding);
  torchFromBaseImage(rel, src, lang, finding);
}

/** A base image that brings a CUDA build of torch (PyTorch's own, NVIDIA's NGC one). */
const TORCH_IMAGE =
  /^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*\S*(?:\bpytorch\/pytorch|nvidia\/pytorch)\b/im;
/** torch installed in the file itself, or torch_npu named: the port already chose its torch. */
const OWN_TORCH =
  /torch[-_]npu|\b(?:pip3?|conda|mamba|micromamba)[ \t]+install\b[^\n]*?[ \t]["']?torch(?:==|>=|~=|["']?(?:[ \t]|$))/im;
const PIP_INSTALL = /^(?![ \t]*#).*\b(?:pip3?|python3?[ \t]+-m[ \t]+pip)[ \t]+install\b/m;

/**
 * A Dockerfile on a CUDA PyTorch image installs its packages around the torch that image carries
 * (requirements with torch filtered out, `--no-deps`): an Ascend CANN image carries none, so
 * torch and its torch_npu have to be installed first; told at the first pip install.
 */
function torchFromBaseImage(rel: string, src: string, lang: Language, finding: AddFinding): void {
  if (!DOCKERFILE.test(rel) || !TORCH_IMAGE.test(src) || OWN_TORCH.test(src)) return;
  const m = PIP_INSTALL.exec(src);
  if (!m) return;
  const line = src.slice(0, m.index).split('\n').length;
  const text = {
    en: "The PyTorch image brought torch; an Ascend CANN image has none: install torch and the torch_npu release paired with it (and with CANN) before the project's packages.",
    'zh-CN':
      'PyTorch 镜像自带 torch，而昇腾 CANN 镜像没有：在安装项目依赖之前先安装 torch 以及与之（和 CANN）配套的 torch_npu。',
  };
  finding(
    'script.cuda-env',
    rel,
    { line, column: 1, endColumn: m[0].length + 1 },
    { vars: { text: text[lang] }, text: ruleMsg('script.cuda-env', 'message', { text }) },
  );
}

const COMMENT_LINE = /^[ \t]*#.*$/gm;

/** torchrun and its older spelling, DeepSpeed's and Accelerate's launchers. */
const DISTRIBUTED_LAUNCH =
  /(?:^|[\s;&|(])(?:torchrun|python3?\s+-m\s+torch\.distributed\.(?:launch|run)|deepspeed|accelerate\s+launch)\s/m;

/** Shell launchers and batch jobs: what runs the program, so what needs CANN's environment. */
const SHELL_SCRIPT = /\.(?:sh|bash|zsh|sbatch|slurm|pbs)$/;
/** What runs a program in Python, by its command word (a path's last part). */
const PYTHON_COMMAND =
  /^(?:python[\d.]*|torchrun|deepspeed|horovodrun|\$\{?(?:PYTHON|python)\w*\}?)$/;
/** Words that run the command after them (with their flags and variables). */
const WRAPPERS = new Set(['exec', 'nohup', 'srun', 'mpirun', 'mpiexec', 'time', 'env', 'numactl']);

/**
 * Whether a line of the script starts a program in Python or a launcher of one (not a `python -c`
 * check): its command word after variables, wrappers and their flags. Read a word at a time, as
 * a regex of those repetitions backtracked exponentially on a line of flags without a command.
 */
function launchesPython(src: string): boolean {
  for (const whole of src.split('\n')) {
    const line = whole.length > MAX_LINE ? whole.slice(0, MAX_LINE) : whole;
    const words = line.trim().split(/[ \t]+/);
    let flagValue = false; // the word after a flag without `=` may be its value
    for (let i = 0; i < words.length; i++) {
      const word = words[i]!.replace(/^["']|["']$/g, '');
      // a command kept in a variable to run later (`LAUNCH="python -m torch.distributed.launch`)
      const assigned = /^[A-Za-z_]\w*=["']?(.*)$/.exec(word)?.[1];
      const run = assigned ?? word;
      const command = run.slice(run.lastIndexOf('/') + 1);
      if (PYTHON_COMMAND.test(command) || (command === 'accelerate' && words[i + 1] === 'launch')) {
        // a variable naming the interpreter alone (`python=python3`) runs nothing yet
        const next = words[i + 1];
        if (next !== '-c' && (assigned === undefined || (next && !next.startsWith('#'))))
          return true;
        break;
      }
      if (WRAPPERS.has(command) || assigned !== undefined) flagValue = false;
      else if (word.startsWith('-')) flagValue = !word.includes('=');
      else if (flagValue) flagValue = false;
      else break;
    }
  }
  return false;
}
/** The environment already set up here (or a line that says where it comes from). */
const SETS_CANN = /set_env\.sh|ascend-toolkit|ASCEND_HOME|ASCEND_TOOLKIT_HOME|\bCANN\b/;
const SET_ENV = 'source /usr/local/Ascend/ascend-toolkit/set_env.sh';

/**
 * A launcher with CUDA settings runs the program on the NPU once they are ported, and torch_npu
 * loads CANN's libraries only from the environment set_env.sh exports: the line porters add,
 * after the shebang, a batch job's directives and `set` options, but before a `set -u` (the
 * script reads variables that may be unset).
 */
function cannEnvironment(
  rel: string,
  src: string,
  starts: ArrayLike<number>,
  finding: AddFinding,
): void {
  if (!SHELL_SCRIPT.test(rel) || SETS_CANN.test(src) || !launchesPython(src)) return;
  const lines = src.split('\n', 200);
  let after = -1; // the header line the source goes below (-1: above the first)
  let before = -1; // or the `set -u` it must come before
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.trim();
    if (/^set[ \t]+-\w*u/.test(l) || /^set[ \t]+-o[ \t]+nounset\b/.test(l)) {
      before = i;
      break;
    }
    if ((i === 0 && l.startsWith('#!')) || /^#(?:SBATCH|PBS|BSUB)\b|^set[ \t]+[-+]/.test(l))
      after = i;
    else if (l && !l.startsWith('#')) break;
  }
  const at = before >= 0 ? before : Math.max(after, 0); // the line the finding is told on
  const offset =
    before >= 0 ? starts[before]! : after >= 0 ? starts[after]! + lines[after]!.length : 0;
  const text = before < 0 && after >= 0 ? `\n${SET_ENV}` : `${SET_ENV}\n`;
  finding(
    'script.cann-env',
    rel,
    { line: at + 1, column: 1, endColumn: lines[at]!.length + 1 },
    { edits: [{ start: offset, end: offset, text }] },
  );
}
