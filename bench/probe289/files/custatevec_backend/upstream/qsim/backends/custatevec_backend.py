"""cuStateVec backend for the torch-based circuit simulator.

The state vector is an ordinary ``torch.complex64`` CUDA tensor owned by
PyTorch's caching allocator; cuStateVec operates on it in place through its
raw device pointer.  This keeps the rest of the pipeline (parameter-shift
gradients, sampling post-processing, logging) in torch while the heavy
gate applications go through NVIDIA's tuned kernels.

Requires ``cuquantum-python-cu12`` (and therefore a CUDA 12 driver).
"""

import logging
from typing import Dict, List, Optional, Sequence

import numpy as np
import torch

try:
    import cuquantum
    from cuquantum import custatevec as cusv
    from cuquantum import cudaDataType, ComputeType
    HAVE_CUQUANTUM = True
except ImportError:  # pragma: no cover
    HAVE_CUQUANTUM = False

log = logging.getLogger(__name__)

_DTYPE = torch.complex64


def _check_available():
    if not HAVE_CUQUANTUM:
        raise RuntimeError(
            "cuStateVec backend requested but cuquantum-python is not installed "
            "(pip install cuquantum-python-cu12)"
        )
    if not torch.cuda.is_available():
        raise RuntimeError("cuStateVec backend needs a CUDA device")


class CuStateVecSimulator:
    """Minimal gate-level simulator driving cuStateVec on a torch tensor."""

    def __init__(self, n_qubits: int, device: Optional[int] = None, workspace_mb: int = 64):
        _check_available()
        self.n_qubits = n_qubits
        self.device_index = torch.cuda.current_device() if device is None else device
        torch.cuda.set_device(self.device_index)
        self.device = torch.device("cuda", self.device_index)

        self.sv = torch.zeros(2**n_qubits, dtype=_DTYPE, device=self.device)
        self.sv[0] = 1.0

        self.handle = cusv.create()
        self.stream = torch.cuda.current_stream(self.device)
        cusv.set_stream(self.handle, self.stream.cuda_stream)

        # pre-allocated workspace from torch so it is accounted by the caching allocator
        self._ws_size = workspace_mb * 1024 * 1024
        self._workspace = torch.empty(self._ws_size, dtype=torch.uint8, device=self.device)
        self._n_gates = 0

    # ------------------------------------------------------------------ #
    def close(self):
        if getattr(self, "handle", None) is not None:
            cusv.destroy(self.handle)
            self.handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def reset(self):
        self.sv.zero_()
        self.sv[0] = 1.0

    # ------------------------------------------------------------------ #
    def apply_matrix(self, matrix: torch.Tensor, targets: Sequence[int],
                     controls: Sequence[int] = (), adjoint: bool = False):
        """Apply a dense 2^k x 2^k matrix to ``targets`` (controlled by ``controls``)."""
        mat = matrix.to(device=self.device, dtype=_DTYPE).contiguous()
        targets = np.asarray(targets, dtype=np.int32)
        controls = np.asarray(controls, dtype=np.int32)

        ws_needed = cusv.apply_matrix_get_workspace_size(
            self.handle, cudaDataType.CUDA_C_32F, self.n_qubits,
            mat.data_ptr(), cudaDataType.CUDA_C_32F, cusv.MatrixLayout.ROW, int(adjoint),
            len(targets), len(controls), ComputeType.COMPUTE_32F,
        )
        if ws_needed > self._ws_size:
            self._workspace = torch.empty(ws_needed, dtype=torch.uint8, device=self.device)
            self._ws_size = ws_needed

        cusv.apply_matrix(
            self.handle, self.sv.data_ptr(), cudaDataType.CUDA_C_32F, self.n_qubits,
            mat.data_ptr(), cudaDataType.CUDA_C_32F, cusv.MatrixLayout.ROW, int(adjoint),
            targets.ctypes.data, len(targets),
            controls.ctypes.data, 0, len(controls),
            ComputeType.COMPUTE_32F,
            self._workspace.data_ptr(), self._ws_size,
        )
        self._n_gates += 1

    def apply_pauli_rotation(self, theta: float, paulis: str, targets: Sequence[int]):
        """exp(i theta P) for a Pauli string P on ``targets``."""
        code = {"I": cusv.Pauli.I, "X": cusv.Pauli.X, "Y": cusv.Pauli.Y, "Z": cusv.Pauli.Z}
        pauli_arr = np.asarray([code[p] for p in paulis], dtype=np.int32)
        targets = np.asarray(targets, dtype=np.int32)
        cusv.apply_pauli_rotation(
            self.handle, self.sv.data_ptr(), cudaDataType.CUDA_C_32F, self.n_qubits,
            theta, pauli_arr.ctypes.data, targets.ctypes.data, len(targets),
            0, 0, 0,
        )
        self._n_gates += 1

    # ------------------------------------------------------------------ #
    def probabilities(self, qubits: Optional[Sequence[int]] = None) -> torch.Tensor:
        if qubits is None:
            return self.sv.abs() ** 2
        bits = np.asarray(qubits, dtype=np.int32)
        out = np.empty(2 ** len(bits), dtype=np.float64)
        cusv.abs2sum_array(
            self.handle, self.sv.data_ptr(), cudaDataType.CUDA_C_32F, self.n_qubits,
            out.ctypes.data, bits.ctypes.data, len(bits), 0, 0, 0,
        )
        return torch.from_numpy(out)

    def expectation_z(self, qubit: int) -> float:
        """<Z_q> via cuStateVec's Pauli expectation."""
        pauli = np.asarray([[cusv.Pauli.Z]], dtype=np.int32)
        basis = np.asarray([[qubit]], dtype=np.int32)
        out = np.empty(1, dtype=np.float64)
        cusv.compute_expectations_on_pauli_basis(
            self.handle, self.sv.data_ptr(), cudaDataType.CUDA_C_32F, self.n_qubits,
            out.ctypes.data, pauli.ctypes.data, 1, basis.ctypes.data, np.asarray([1], dtype=np.uint32).ctypes.data,
        )
        return float(out[0])

    def sample(self, shots: int, seed: int = 0) -> Dict[str, int]:
        bits = np.arange(self.n_qubits, dtype=np.int32)
        sampler, ws_size = cusv.sampler_create(
            self.handle, self.sv.data_ptr(), cudaDataType.CUDA_C_32F, self.n_qubits, shots,
        )
        ws = torch.empty(max(ws_size, 1), dtype=torch.uint8, device=self.device)
        cusv.sampler_preprocess(self.handle, sampler, ws.data_ptr(), ws_size)
        rng = np.random.default_rng(seed)
        rnds = rng.random(shots)
        out = np.empty(shots, dtype=np.int64)
        cusv.sampler_sample(
            self.handle, sampler, out.ctypes.data, bits.ctypes.data, len(bits),
            rnds.ctypes.data, shots, cusv.SamplerOutput.ASCENDING_ORDER,
        )
        cusv.sampler_destroy(sampler)
        vals, counts = np.unique(out, return_counts=True)
        return {format(int(v), f"0{self.n_qubits}b"): int(c) for v, c in zip(vals, counts)}

    def statevector(self) -> torch.Tensor:
        self.stream.synchronize()
        return self.sv.clone()

    @property
    def n_gates(self):
        return self._n_gates


def run_circuit(ops: List[dict], n_qubits: int, shots: int = 0, device: Optional[int] = None):
    """Convenience wrapper: ops are dicts {'matrix': Tensor, 'targets': [...], 'controls': [...]}"""
    sim = CuStateVecSimulator(n_qubits, device=device)
    try:
        for op in ops:
            if "pauli" in op:
                sim.apply_pauli_rotation(op["theta"], op["pauli"], op["targets"])
            else:
                sim.apply_matrix(op["matrix"], op["targets"], op.get("controls", ()))
        if shots:
            return sim.sample(shots)
        return sim.statevector()
    finally:
        sim.close()


def cusv_version() -> str:
    if HAVE_CUQUANTUM:
        return f"cuquantum {cuquantum.__version__}, custatevec {cusv.get_version()}"
    return "n/a"
